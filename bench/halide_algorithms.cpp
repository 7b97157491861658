// The Halide versions of the benchmark pipelines (halide_algorithms.h says what for).
#include "bench/halide_algorithms.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace stipple::bench {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Var;

const Var x("x"), y("y"), c("c"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), i("i"), j("j");

/// Vectorises a stage computed per tile of `consumer`, and each of its updates.
void per_tile(Func f, Func consumer) {
  f.compute_at(consumer, xo).vectorize(x, 16);
  for (int u = 0; u < f.num_update_definitions(); ++u) f.update(u).vectorize(x, 16);
}

HalideAlgorithm blur3x3() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("blur_y"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  Func bx("blur_x");
  bx(x, y, c) = (in(x - 1, y, c) + in(x, y, c) + in(x + 1, y, c)) / 3.0f;
  a.output(x, y, c) = (bx(x, y - 1, c) + bx(x, y, c) + bx(x, y + 1, c)) / 3.0f;
  a.stages = {bx};
  a.schedule_manually = [a, bx]() mutable {
    // apps/blur's schedule with 16 lanes (AVX-512), as blur3x3.sched.
    a.output.tile(x, y, xo, yo, xi, yi, 256, 32).vectorize(xi, 16).parallel(yo);
    bx.compute_at(a.output, xo).vectorize(x, 16);
  };
  a.schedule_for_gpu = [a]() mutable {
    // apps/blur's best GPU schedule ("slide"): each thread computes a column of 8 rows,
    // unrolled, so that blur_x (inlined) is shared between rows; the channel is a third
    // grid dimension (one launch), blocks of 64x2 threads as Stipple's hand GPU schedule.
    const Var yr("yr"), ci("ci");
    a.output.split(y, y, yr, 8)
        .reorder(yr, x, y, c)
        .unroll(yr)
        .gpu_tile(x, y, c, xo, yo, c, xi, yi, ci, 64, 2, 1);
  };
  return a;
}

/// The separable Gaussian of two_pass_blur.stp (h = 8, sigma = 4); `sharpen` makes it
/// unsharp_mask.stp (s = 3).
HalideAlgorithm gaussian(bool sharpen) {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const float sigma = 4.0f;
  Func k("k"), norm("norm"), pass_x("A"), pass_y("blur");
  RDom r(-8, 17, "r");
  k(i) = Halide::exp(-Halide::cast<float>(i * i) / (2 * sigma * sigma));
  norm() = 0.0f;
  norm() += k(r);
  pass_x(x, y, c) = 0.0f;
  pass_x(x, y, c) += k(r) * in(x - r, y, c);
  pass_x(x, y, c) = pass_x(x, y, c) / norm();
  pass_y(x, y, c) = 0.0f;
  pass_y(x, y, c) += k(r) * pass_x(x, y - r, c);
  if (sharpen) {
    const float s = 3.0f;
    a.output(x, y, c) = s * in(x, y, c) + (1 - s) * (pass_y(x, y, c) / norm());
  } else {
    a.output(x, y, c) = pass_y(x, y, c) / norm();
  }
  a.stages = {k, norm, pass_x, pass_y};
  a.schedule_manually = [a, k, norm, pass_x, pass_y]() mutable {
    k.compute_root();
    norm.compute_root();
    a.output.tile(x, y, xo, yo, xi, yi, 256, 64).vectorize(xi, 16).parallel(yo);
    per_tile(pass_y, a.output);
    per_tile(pass_x, a.output);
  };
  a.schedule_for_gpu = [a, k, norm, pass_x]() mutable {
    // apps/blur's separable-filter schedule on the GPU: each pass a kernel of 32x8-thread
    // tiles with the channel as the third grid dimension; the taps and their sum once.
    const Var ci("ci");
    k.compute_root();
    norm.compute_root();
    pass_x.compute_root().gpu_tile(x, y, c, xo, yo, c, xi, yi, ci, 32, 8, 1);
    pass_x.update(0).gpu_tile(x, y, c, xo, yo, c, xi, yi, ci, 32, 8, 1);
    pass_x.update(1).gpu_tile(x, y, c, xo, yo, c, xi, yi, ci, 32, 8, 1);
    a.output.gpu_tile(x, y, c, xo, yo, c, xi, yi, ci, 32, 8, 1);
  };
  return a;
}

HalideAlgorithm bilateral() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const float sigma_r = 0.015686275f, sigma_s = 0.8f;
  Func spatial("spatial"), sums("sums");
  RDom r(-4, 9, -4, 9, "r");
  spatial(i, j) = Halide::exp(-Halide::cast<float>(i * i + j * j) / (2 * sigma_s * sigma_s));
  // Both sums of the .stp in one update (a Tuple), so the range weight is computed once
  // per tap, as Stipple's hand schedule gets by inlining norm into out.
  Expr v = in(x - r.x, y - r.y, c);
  Expr d = in(x, y, c) - v;
  Expr weight = spatial(r.x, r.y) * Halide::exp(-d * d / (2 * sigma_r * sigma_r));
  sums(x, y, c) = Halide::Tuple(0.0f, 0.0f);
  sums(x, y, c) = Halide::Tuple(sums(x, y, c)[0] + weight * v, sums(x, y, c)[1] + weight);
  a.output(x, y, c) = sums(x, y, c)[0] / sums(x, y, c)[1];
  a.stages = {spatial, sums};
  a.schedule_manually = [a, spatial, sums]() mutable {
    spatial.compute_root();
    a.output.tile(x, y, xo, yo, xi, yi, 256, 16).vectorize(xi, 16).parallel(yo);
    per_tile(sums, a.output);
  };
  return a;
}

/// The comparators of Batcher's odd-even merge sort of `n` (a power of two) wires.
void batcher(int lo, int n, int r, std::vector<std::pair<int, int>>& out) {
  int step = r * 2;
  if (step < n) {
    batcher(lo, n, step, out);
    batcher(lo + r, n, step, out);
    for (int k = lo + r; k + r < lo + n; k += step) out.push_back({k, k + r});
  } else {
    out.push_back({lo, lo + r});
  }
}
void batcher_sort(int lo, int n, std::vector<std::pair<int, int>>& out) {
  if (n <= 1) return;
  batcher_sort(lo, n / 2, out);
  batcher_sort(lo + n / 2, n / 2, out);
  batcher(lo, n, 1, out);
}

/// The lower median of `values` (25 of them: element 12 in sorted order) by a sorting
/// network: Batcher's network on 32 wires, the 7 padding wires +infinity (so comparators
/// against them vanish) and only the comparators that reach wire 12 kept.
Expr median_network(std::vector<Expr> values) {
  const int n = static_cast<int>(values.size()), wires = 32, want = (n - 1) / 2;
  std::vector<std::pair<int, int>> network;
  batcher_sort(0, wires, network);
  std::vector<bool> needed(wires, false);
  needed[want] = true;
  std::vector<std::pair<int, int>> kept;
  for (auto it = network.rbegin(); it != network.rend(); ++it) {
    if (needed[it->first] || needed[it->second]) {
      kept.push_back(*it);
      needed[it->first] = needed[it->second] = true;
    }
  }
  std::vector<Expr> w(values);
  std::vector<bool> infinite(wires, false);
  for (int k = n; k < wires; ++k) {
    infinite[k] = true;
    w.push_back(Expr());
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    auto [a, b] = *it;
    if (infinite[b]) continue;  // min(a, inf) = a stays on a
    if (infinite[a]) {          // the finite value moves down, infinity up
      std::swap(w[a], w[b]);
      infinite[a] = false;
      infinite[b] = true;
      continue;
    }
    Expr lo = Halide::min(w[a], w[b]), hi = Halide::max(w[a], w[b]);
    w[a] = lo;
    w[b] = hi;
  }
  return w[want];
}

HalideAlgorithm median() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  std::vector<Expr> window;
  for (int dy = -2; dy <= 2; ++dy) {
    for (int dx = -2; dx <= 2; ++dx) window.push_back(in(x + dx, y + dy, c));
  }
  a.output(x, y, c) = median_network(window);
  a.schedule_manually = [a]() mutable {
    a.output.tile(x, y, xo, yo, xi, yi, 256, 32).vectorize(xi, 16).parallel(yo);
  };
  return a;
}

HalideAlgorithm demosaic() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 2, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::mirror_interior(a.input);
  // demosaic.stp's colour, row_has, wx and wy, as expressions.
  auto colour = [](Expr px, Expr py) {
    return Halide::select(px % 2 == 0 && py % 2 == 0, 0,
                          Halide::select(px % 2 == 1 && py % 2 == 1, 2, 1));
  };
  auto row_has = [](Expr py, int ch) { return ch == 1 || (ch == 0 ? py % 2 == 0 : py % 2 == 1); };
  std::vector<Func> along_x, along_y;
  for (int ch = 0; ch < 3; ++ch) {
    Func fx(std::string("xpass") + char('0' + ch)), fy(std::string("ypass") + char('0' + ch));
    Expr sx = 0.0f, sy = 0.0f;
    for (int k = -1; k <= 1; ++k) {
      Expr wx = Halide::select(colour(x, y) == ch, k == 0 ? 1.0f : 0.0f,
                               Halide::select(k != 0 && colour(x + k, y) == ch, 0.5f, 0.0f));
      sx = sx + wx * in(x + k, y);
    }
    fx(x, y) = sx;  // defined before the y pass calls it
    for (int k = -1; k <= 1; ++k) {
      Expr wy = Halide::select(row_has(y, ch), k == 0 ? 1.0f : 0.0f,
                               Halide::select(k != 0 && row_has(y + k, ch), 0.5f, 0.0f));
      sy = sy + wy * fx(x, y + k);
    }
    fy(x, y) = sy;
    along_x.push_back(fx);
    along_y.push_back(fy);
  }
  a.output(x, y, c) = Halide::select(c == 0, along_y[0](x, y),
                                     Halide::select(c == 1, along_y[1](x, y), along_y[2](x, y)));
  a.stages = {along_x[0], along_x[1], along_x[2], along_y[0], along_y[1], along_y[2]};
  a.schedule_manually = [a]() mutable {
    // camera_pipe's demosaic: channels unrolled inside 256x32 tiles, stages per tile.
    a.output.bound(c, 0, 3)
        .reorder(c, x, y)
        .tile(x, y, xo, yo, xi, yi, 256, 32)
        .unroll(c)
        .vectorize(xi, 16)
        .parallel(yo);
    for (Func f : a.stages) f.compute_at(a.output, xo).vectorize(x, 16);
  };
  return a;
}

/// The left-to-right sum of f over the 3x3 box, x fastest: a reduction over
/// (i in -1..1, j in -1..1) as Stipple iterates it (its first variable innermost).
Expr box3x3(Func f) {
  Expr s;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) {
      Expr t = f(x + dx, y + dy);
      s = s.defined() ? s + t : t;
    }
  }
  return s;
}

/// Rec. 601 luminance of channels 0..2 of `in` at (x, y), as the .stp files write it.
Expr rec601(Func in, Expr px, Expr py) {
  return 0.299f * in(px, py, 0) + 0.587f * in(px, py, 1) + 0.114f * in(px, py, 2);
}

HalideAlgorithm bilateral_grid() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const int s = 13;            // s_sigma
  const float r_sigma = 0.1f;  // 1 / r_sigma in f32 is 10
  const int z_max = 10;        // i32(1.0 / r_sigma)
  const Var z("z");
  Func lum("lum"), grid("grid"), K("K"), blurx("blurx"), blury("blury"), blurz("blurz");
  Func zv("zv"), zi("zi"), zf("zf"), xf("xf"), yf("yf"), lo("lo"), hi("hi"), interp("interp");
  // lum becomes a grid index (a cast to i32), where an FMA's one-ulp difference would
  // move a pixel to another cell: it is computed as written (strict_float: no FMA), and so
  // are the divisions by r_sigma (Halide multiplies by a constant's reciprocal otherwise).
  // (On the bench's photo no pixel happens to move either way.)
  lum(x, y) = Halide::strict_float(rec601(in, x, y));
  // The .stp's splat: one update with the channel a pure variable, so every cell sums the
  // same values in the same order. The clamp changes no
  // value (the index is in 0..10 already); it gives Halide the bound the checker infers.
  RDom r(0, a.input.width(), 0, a.input.height(), "r");
  Expr splat_z = Halide::clamp(Halide::cast<int>(Halide::strict_float(
                                   Halide::clamp(lum(r.x, r.y), 0.0f, 1.0f) / r_sigma + 0.5f)),
                               0, z_max);
  grid(x, y, z, c) = 0.0f;
  grid((r.x + s / 2) / s, (r.y + s / 2) / s, splat_z, c) +=
      Halide::select(c == 3, 1.0f, in(r.x, r.y, Halide::min(c, 2)));
  K(i) = Halide::select(i == 0, 6.0f, Halide::select(i == 1 || i == -1, 4.0f, 1.0f)) / 16;
  // sum(i in -2..2 : K(i) * f(... - i ...)), i from -2 up.
  auto blur5 = [&](std::function<Expr(int)> tap) {
    Expr sum = K(-2) * tap(2);
    for (int k = -1; k <= 2; ++k) sum = sum + K(k) * tap(-k);
    return sum;
  };
  blurx(x, y, z, c) = blur5([&](int d) { return grid(x + d, y, z, c); });
  blury(x, y, z, c) = blur5([&](int d) { return blurx(x, y + d, z, c); });
  blurz(x, y, z, c) = blur5([&](int d) { return blury(x, y, z + d, c); });
  zv(x, y) = Halide::strict_float(Halide::clamp(lum(x, y), 0.0f, 1.0f) / r_sigma);
  zi(x, y) = Halide::cast<int>(zv(x, y));
  zf(x, y) = zv(x, y) - Halide::cast<float>(zi(x, y));
  xf(x) = Halide::cast<float>(x % s) / static_cast<float>(s);
  yf(y) = Halide::cast<float>(y % s) / static_cast<float>(s);
  auto bilinear = [&](Expr level) {
    Expr gx = x / s, gy = y / s;
    return (1 - yf(y)) *
               ((1 - xf(x)) * blurz(gx, gy, level, c) + xf(x) * blurz(gx + 1, gy, level, c)) +
           yf(y) * ((1 - xf(x)) * blurz(gx, gy + 1, level, c) +
                    xf(x) * blurz(gx + 1, gy + 1, level, c));
  };
  lo(x, y, c) = bilinear(Halide::clamp(zi(x, y), 0, z_max));
  hi(x, y, c) = bilinear(Halide::clamp(zi(x, y) + 1, 0, z_max + 1));
  interp(x, y, c) = (1 - zf(x, y)) * lo(x, y, c) + zf(x, y) * hi(x, y, c);
  a.output(x, y, c) = interp(x, y, c) / interp(x, y, 3);
  a.stages = {lum, grid, K, blurx, blury, blurz, zv, zi, zf, xf, yf, lo, hi, interp};
  a.schedule_manually = [a, r, z, grid, blurx, blury, blurz, interp]() mutable {
    // apps/bilateral_grid's CPU schedule for this algorithm: the splat is a scatter here
    // (the app gathers per cell), so the grid is at root and its update serial, with the
    // four channels unrolled inside the pixel loop (one index computation per pixel, as the
    // app's reorder(c, r.x, r.y).unroll(c)); the blurs at root in parallel rows of the
    // small grid; the slice in parallel strips of rows, 16 lanes, with the four channels of
    // interp per vector of pixels (the count channel divides the other three).
    grid.compute_root().vectorize(x, 16);
    grid.update().reorder(c, r.x, r.y).unroll(c);
    for (Func f : {blurx, blury, blurz}) {
      f.compute_root().reorder(x, z, c, y).vectorize(x, 16).parallel(y);
    }
    a.output.bound(c, 0, 3)
        .split(x, xo, xi, 16)
        .reorder(xi, c, xo, y)
        .unroll(c)
        .vectorize(xi)
        .parallel(y, 8);
    interp.compute_at(a.output, xo).vectorize(x, 16).unroll(c);
  };
  a.schedule_for_gpu = [a, r, z, grid, blurx, blury, blurz]() mutable {
    // apps/bilateral_grid's GPU schedule for this algorithm: the splat is a scatter here
    // (the app gathers per cell), so its update is atomic (floating-point atomicAdd) over
    // 16x16-thread tiles of pixels, the four channels unrolled in each thread; the blurs at
    // root in 16x16-thread tiles of the grid (x, y); the slice in 32x8 tiles of the output.
    const Var zi("zi");
    const Halide::RVar rxo("rxo"), ryo("ryo"), rxi("rxi"), ryi("ryi");
    grid.compute_root().gpu_tile(x, y, xi, yi, 16, 16);
    grid.update()
        .atomic()
        .reorder(c, r.x, r.y)
        .unroll(c)
        .gpu_tile(r.x, r.y, rxo, ryo, rxi, ryi, 16, 16);
    for (Func f : {blurx, blury, blurz}) {
      f.compute_root().gpu_tile(x, y, z, xi, yi, zi, 16, 16, 1);
    }
    a.output.compute_root().bound(c, 0, 3).gpu_tile(x, y, xi, yi, 32, 8);
  };
  return a;
}

HalideAlgorithm harris() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const float k = 0.04f;
  Func gray("gray"), Ix("Ix"), Iy("Iy"), Ixx("Ixx"), Iyy("Iyy"), Ixy("Ixy");
  Func Sxx("Sxx"), Syy("Syy"), Sxy("Sxy"), det("det"), trace("trace");
  gray(x, y) = rec601(in, x, y);
  Ix(x, y) = (gray(x + 1, y - 1) - gray(x - 1, y - 1) + 2 * (gray(x + 1, y) - gray(x - 1, y)) +
              gray(x + 1, y + 1) - gray(x - 1, y + 1)) /
             12;
  Iy(x, y) = (gray(x - 1, y + 1) - gray(x - 1, y - 1) + 2 * (gray(x, y + 1) - gray(x, y - 1)) +
              gray(x + 1, y + 1) - gray(x + 1, y - 1)) /
             12;
  Ixx(x, y) = Ix(x, y) * Ix(x, y);
  Iyy(x, y) = Iy(x, y) * Iy(x, y);
  Ixy(x, y) = Ix(x, y) * Iy(x, y);
  Sxx(x, y) = box3x3(Ixx);
  Syy(x, y) = box3x3(Iyy);
  Sxy(x, y) = box3x3(Ixy);
  det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
  trace(x, y) = Sxx(x, y) + Syy(x, y);
  a.output(x, y) = det(x, y) - k * trace(x, y) * trace(x, y);
  a.stages = {gray, Ix, Iy, Ixx, Iyy, Ixy, Sxx, Syy, Sxy, det, trace};
  a.schedule_manually = [a, gray, Ix, Iy]() mutable {
    // apps/harris: strips of 32 rows in parallel, Ix and Iy computed a row at a time and
    // kept over the strip (sliding windows), in one loop, the rest inlined; gray too gets
    // a window here (the app's inlined gray is computed for each of their taps: 4.0 ->
    // 2.4 ms at one thread).
    a.output.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
    gray.store_at(a.output, yo).compute_at(a.output, yi).vectorize(x, 16);
    Iy.store_at(a.output, yo).compute_at(a.output, yi).vectorize(x, 16);
    Ix.store_at(a.output, yo).compute_at(a.output, yi).vectorize(x, 16);
    Ix.compute_with(Iy, x);
  };
  a.schedule_for_gpu = [a, gray, Ix, Iy]() mutable {
    // apps/harris's GPU schedule: the output in 16x16-thread tiles with the gradients
    // computed per block (in shared memory, by the block's threads); the rest inlined.
    a.output.gpu_tile(x, y, xi, yi, 16, 16);
    gray.compute_at(a.output, x).gpu_threads(x, y);
    Ix.compute_at(a.output, x).gpu_threads(x, y);
    Iy.compute_at(a.output, x).gpu_threads(x, y);
  };
  return a;
}

HalideAlgorithm camera_pipe() {
  HalideAlgorithm a{Halide::ImageParam(Halide::UInt(16), 2, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::mirror_interior(a.input);
  // The float params are run-time params, as in the app (its Param<float>s) and in
  // Stipple, so that nothing of the tone curve is folded at compile time; the integer
  // params are constants (they change no rounding).
  Halide::Param<float> color_temp("color_temp", 3700.0f), gamma("gamma", 2.0f),
      contrast("contrast", 50.0f);
  color_temp.set_estimate(3700.0f);
  gamma.set_estimate(2.0f);
  contrast.set_estimate(50.0f);
  const int black_level = 25, white_level = 1023;
  const Var v("v");
  Func raw("raw"), denoised("denoised"), deinterleaved("deinterleaved");
  Func g_gr("g_gr"), r_r("r_r"), b_b("b_b"), g_gb("g_gb"), g_r("g_r"), g_b("g_b");
  Func r_gr("r_gr"), b_gr("b_gr"), r_gb("r_gb"), b_gb("b_gb"), rp_b("rp_b"), rn_b("rn_b");
  Func r_b("r_b"), bp_r("bp_r"), bn_r("bn_r"), b_r("b_r"), red("red"), green("green"), blue("blue");
  Func demosaiced("demosaiced"), m3200("m3200"), m7000("m7000"), alpha("alpha"), matrix("matrix");
  Func corrected("corrected"), curve_b("curve_b"), curve_a("curve_a"), curve_g("curve_g");
  Func curve_z("curve_z"), curve("curve");
  // The mosaic is 10-bit (the .stp's white level). Saying so costs no code and keeps
  // Halide's interval arithmetic for the LUT index in range: from u16's 0..65535,
  // corrected's bounds overflow i32 at run time, so the LUT is computed and clamped to a
  // wrong region (every output 255), and Adams2019 stops on the overflow.
  raw(x, y) = Halide::cast<int>(Halide::unsafe_promise_clamped(in(x, y), Halide::cast<uint16_t>(0),
                                                               Halide::cast<uint16_t>(1023)));
  denoised(x, y) = Halide::clamp(raw(x, y), 0,
                                 Halide::max(Halide::max(raw(x - 2, y), raw(x + 2, y)),
                                             Halide::max(raw(x, y - 2), raw(x, y + 2))));
  deinterleaved(x, y, c) = Halide::select(
      c == 0, denoised(2 * x, 2 * y),
      Halide::select(
          c == 1, denoised(2 * x + 1, 2 * y),
          Halide::select(c == 2, denoised(2 * x, 2 * y + 1), denoised(2 * x + 1, 2 * y + 1))));
  g_gr(x, y) = deinterleaved(x, y, 0);
  r_r(x, y) = deinterleaved(x, y, 1);
  b_b(x, y) = deinterleaved(x, y, 2);
  g_gb(x, y) = deinterleaved(x, y, 3);
  // Halide's abs of an i32 is a u32: the same order for these small values.
  g_r(x, y) = Halide::select(
      Halide::abs(g_gr(x + 1, y) - g_gr(x, y)) < Halide::abs(g_gb(x, y - 1) - g_gb(x, y)),
      (g_gr(x + 1, y) + g_gr(x, y) + 1) / 2, (g_gb(x, y - 1) + g_gb(x, y) + 1) / 2);
  g_b(x, y) = Halide::select(
      Halide::abs(g_gb(x - 1, y) - g_gb(x, y)) < Halide::abs(g_gr(x, y + 1) - g_gr(x, y)),
      (g_gb(x - 1, y) + g_gb(x, y) + 1) / 2, (g_gr(x, y + 1) + g_gr(x, y) + 1) / 2);
  r_gr(x, y) =
      g_gr(x, y) - (g_r(x, y) + g_r(x - 1, y) + 1) / 2 + (r_r(x - 1, y) + r_r(x, y) + 1) / 2;
  b_gr(x, y) =
      g_gr(x, y) - (g_b(x, y) + g_b(x, y - 1) + 1) / 2 + (b_b(x, y) + b_b(x, y - 1) + 1) / 2;
  r_gb(x, y) =
      g_gb(x, y) - (g_r(x, y) + g_r(x, y + 1) + 1) / 2 + (r_r(x, y) + r_r(x, y + 1) + 1) / 2;
  b_gb(x, y) =
      g_gb(x, y) - (g_b(x, y) + g_b(x + 1, y) + 1) / 2 + (b_b(x, y) + b_b(x + 1, y) + 1) / 2;
  rp_b(x, y) =
      g_b(x, y) - (g_r(x, y) + g_r(x - 1, y + 1) + 1) / 2 + (r_r(x, y) + r_r(x - 1, y + 1) + 1) / 2;
  rn_b(x, y) =
      g_b(x, y) - (g_r(x - 1, y) + g_r(x, y + 1) + 1) / 2 + (r_r(x - 1, y) + r_r(x, y + 1) + 1) / 2;
  r_b(x, y) = Halide::select(
      Halide::abs(r_r(x, y) - r_r(x - 1, y + 1)) < Halide::abs(r_r(x - 1, y) - r_r(x, y + 1)),
      rp_b(x, y), rn_b(x, y));
  bp_r(x, y) =
      g_r(x, y) - (g_b(x, y) + g_b(x + 1, y - 1) + 1) / 2 + (b_b(x, y) + b_b(x + 1, y - 1) + 1) / 2;
  bn_r(x, y) =
      g_r(x, y) - (g_b(x + 1, y) + g_b(x, y - 1) + 1) / 2 + (b_b(x + 1, y) + b_b(x, y - 1) + 1) / 2;
  b_r(x, y) = Halide::select(
      Halide::abs(b_b(x, y) - b_b(x + 1, y - 1)) < Halide::abs(b_b(x + 1, y) - b_b(x, y - 1)),
      bp_r(x, y), bn_r(x, y));
  // Interleave back: on even rows G R G R ..., on odd rows B G B G ...
  auto interleave = [](Func even_even, Func even_odd, Func odd_even, Func odd_odd) {
    Expr hx = x / 2, hy = y / 2;
    return Halide::select(y % 2 == 0,
                          Halide::select(x % 2 == 0, even_even(hx, hy), even_odd(hx, hy)),
                          Halide::select(x % 2 == 0, odd_even(hx, hy), odd_odd(hx, hy)));
  };
  red(x, y) = interleave(r_gr, r_r, r_b, r_gb);
  green(x, y) = interleave(g_gr, g_r, g_b, g_gb);
  blue(x, y) = interleave(b_gr, b_r, b_b, b_gb);
  demosaiced(x, y, c) =
      Halide::select(c == 0, red(x, y), Halide::select(c == 1, green(x, y), blue(x, y)));
  // Colour correction and tone curve: computed once (12 coefficients, a 1024-entry LUT)
  // and each turned into an integer, where a one-ulp difference would change a
  // coefficient or a LUT entry: strict_float, as the .stp computes them (no FMA, true
  // division).
  auto row3 = [](Expr i, Expr j, std::array<float, 12> m) {
    auto row = [&](int r) {
      return Halide::select(
          i == 0, m[4 * r],
          Halide::select(i == 1, m[4 * r + 1], Halide::select(i == 2, m[4 * r + 2], m[4 * r + 3])));
    };
    return Halide::select(j == 0, row(0), Halide::select(j == 1, row(1), row(2)));
  };
  m3200(i, j) = row3(i, j,
                     {1.6697f, -0.2693f, -0.4004f, -42.4346f, -0.3576f, 1.0615f, 1.5949f, -37.1158f,
                      -0.2175f, -1.8751f, 6.9640f, -26.6970f});
  m7000(i, j) = row3(i, j,
                     {2.2997f, -0.4478f, 0.1706f, -39.0923f, -0.3826f, 1.5906f, -0.2080f, -25.4311f,
                      -0.0888f, -0.7344f, 2.2832f, -20.0826f});
  alpha() = Halide::strict_float((1 / color_temp - 1 / 3200.0f) / (1 / 7000.0f - 1 / 3200.0f));
  matrix(i, j) = Halide::cast<int>(
      Halide::strict_float((m3200(i, j) * alpha() + m7000(i, j) * (1 - alpha())) * 256));
  corrected(x, y, c) = (matrix(3, c) + matrix(0, c) * demosaiced(x, y, 0) +
                        matrix(1, c) * demosaiced(x, y, 1) + matrix(2, c) * demosaiced(x, y, 2)) /
                       256;
  curve_b() = Halide::strict_float(2 - Halide::pow(2.0f, contrast / 100));
  curve_a() = Halide::strict_float(2 - 2 * curve_b());
  curve_g(v) = Halide::strict_float(
      Halide::pow(Halide::clamp(Halide::cast<float>(v - black_level) *
                                    (1.0f / static_cast<float>(white_level - black_level)),
                                0.0f, 1.0f),
                  1.0f / gamma));
  Expr g = curve_g(v);
  curve_z(v) = Halide::strict_float(
      Halide::select(g > 0.5f, 1 - (curve_a() * (1 - g) * (1 - g) + curve_b() * (1 - g)),
                     curve_a() * g * g + curve_b() * g));
  curve(v) = Halide::select(v <= black_level, Halide::cast<uint8_t>(0),
                            Halide::select(v > white_level, Halide::cast<uint8_t>(255),
                                           Halide::cast<uint8_t>(Halide::strict_float(Halide::clamp(
                                               curve_z(v) * 255 + 0.5f, 0.0f, 255.0f)))));
  a.output(x, y, c) = curve(Halide::clamp(corrected(x, y, c), 0, 1023));
  a.stages = {raw,       denoised, deinterleaved, g_gr,    r_r,        b_b,   g_gb,  g_r,   g_b,
              r_gr,      b_gr,     r_gb,          b_gb,    rp_b,       rn_b,  r_b,   bp_r,  bn_r,
              b_r,       red,      green,         blue,    demosaiced, m3200, m7000, alpha, matrix,
              corrected, curve_b,  curve_a,       curve_g, curve_z,    curve};
  a.schedule_manually = [a, in, denoised, deinterleaved, g_r, g_b, demosaiced, corrected, matrix,
                         curve]() mutable {
    // apps/camera_pipe's CPU schedule with i32 vectors of 16 lanes (the app's are i16 of
    // 32): strips of 32 rows in parallel (the app's 128 leave 2 cores unbalanced at 1080
    // rows), tiles of 32x2 output pixels; denoised, deinterleaved, g_r and g_b computed
    // per half-resolution row and kept over the strip (sliding windows, folded); the
    // demosaiced and corrected values per tile, channels unrolled; the rest inlined.
    // Unlike the app (which crops instead), the mosaic is read through a mirror boundary:
    // its rows are also made per strip, as the other windows, rather than evaluating the
    // mirror at each of denoised's five reads (12 -> 4.2 ms at one thread).
    const int vec = 16;
    const Var yii("yii");
    matrix.compute_root();
    curve.compute_root();
    a.output.bound(c, 0, 3)
        .reorder(c, x, y)
        .split(y, yo, yi, 32)
        .tile(x, yi, x, yi, xi, yii, 2 * vec, 2)
        .vectorize(xi)
        .unroll(yii)
        .unroll(c)
        .parallel(yo);
    in.compute_at(a.output, yi)
        .store_at(a.output, yo)
        .vectorize(in.args()[0], 2 * vec, Halide::TailStrategy::RoundUp);
    denoised.compute_at(a.output, yi)
        .store_at(a.output, yo)
        .fold_storage(y, 8)
        .tile(x, y, x, y, xi, yii, 2 * vec, 2)
        .vectorize(xi)
        .unroll(yii);
    deinterleaved.compute_at(a.output, yi)
        .store_at(a.output, yo)
        .fold_storage(y, 4)
        .reorder(c, x, y)
        .vectorize(x, 2 * vec, Halide::TailStrategy::RoundUp)
        .unroll(c);
    for (Func f : {g_r, g_b}) {
      f.compute_at(a.output, yi)
          .store_at(a.output, yo)
          .vectorize(x, 2 * vec, Halide::TailStrategy::RoundUp)
          .fold_storage(y, 2);
    }
    demosaiced.compute_at(a.output, x).vectorize(x).unroll(y).reorder(c, x, y).unroll(c);
    corrected.compute_at(a.output, x).reorder(c, x, y).vectorize(x).unroll(y).unroll(c);
  };
  a.schedule_for_gpu = [a, deinterleaved, g_r, g_b, corrected, matrix, curve, v]() mutable {
    // After apps/camera_pipe's GPU schedule: the output in 32x8-thread tiles, the colour
    // correction per thread for the three channels, the matrix and the curve at root. The
    // app computes the stages before the correction per block, in shared memory; for this
    // version of the algorithm (full-resolution red, green and blue selecting by parity,
    // 32-bit values) Halide found those allocations non-monotonic in the block index and
    // the launch failed (CUDA_ERROR_INVALID_VALUE on an H200), so here the half-resolution
    // deinterleaved, g_r and g_b are kernels of their own at root and the rest is inlined.
    const Var vi("vi"), ci("ci");
    matrix.compute_root();
    curve.compute_root().gpu_tile(v, vi, 256);
    deinterleaved.compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xi, yi, 32, 8);
    g_r.compute_root().gpu_tile(x, y, xi, yi, 32, 8);
    g_b.compute_root().gpu_tile(x, y, xi, yi, 32, 8);
    a.output.compute_root().bound(c, 0, 3).reorder(c, x, y).unroll(c).gpu_tile(x, y, xi, yi, 32, 8);
    corrected.compute_at(a.output, xi).reorder(c, x, y).unroll(c);
  };

  return a;
}

HalideAlgorithm interpolate() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const int levels = 5;
  std::vector<Func> down, downx, interp;
  for (int l = 0; l < levels; ++l) {
    down.emplace_back("down" + std::to_string(l));
    downx.emplace_back("downx" + std::to_string(l));
    interp.emplace_back("interp" + std::to_string(l));
  }
  std::vector<Func> upx(levels - 1), up(levels - 1);
  for (int l = 0; l + 1 < levels; ++l) {
    upx[l] = Func("upx" + std::to_string(l));
    up[l] = Func("up" + std::to_string(l));
  }
  Func clamped3("clamped3");
  down[0](x, y, c) = Halide::select(c < 3, in(x, y, c) * in(x, y, 3), in(x, y, 3));
  for (int l = 1; l < levels; ++l) {
    Func prev = down[l - 1];
    if (l == 4) {
      clamped3(x, y, c) = down[3](Halide::clamp(x, 0, a.input.width() / 16),
                                  Halide::clamp(y, 0, a.input.height() / 16), c);
      prev = clamped3;
    }
    downx[l](x, y, c) =
        (prev(2 * x - 1, y, c) + 2 * prev(2 * x, y, c) + prev(2 * x + 1, y, c)) * 0.25f;
    down[l](x, y, c) =
        (downx[l](x, 2 * y - 1, c) + 2 * downx[l](x, 2 * y, c) + downx[l](x, 2 * y + 1, c)) * 0.25f;
  }
  interp[levels - 1](x, y, c) = down[levels - 1](x, y, c);
  for (int l = levels - 2; l >= 0; --l) {
    upx[l](x, y, c) = (interp[l + 1](x / 2, y, c) + interp[l + 1]((x + 1) / 2, y, c)) / 2;
    up[l](x, y, c) = (upx[l](x, y / 2, c) + upx[l](x, (y + 1) / 2, c)) / 2;
    interp[l](x, y, c) = down[l](x, y, c) + (1 - down[l](x, y, 3)) * up[l](x, y, c);
  }
  a.output(x, y, c) = interp[0](x, y, c) / interp[0](x, y, 3);
  a.stages = {down[0], clamped3};
  for (int l = 1; l < levels; ++l) {
    a.stages.push_back(downx[l]);
    a.stages.push_back(down[l]);
  }
  for (int l = 0; l < levels; ++l) a.stages.push_back(interp[l]);
  for (int l = 0; l + 1 < levels; ++l) {
    a.stages.push_back(upx[l]);
    a.stages.push_back(up[l]);
  }
  a.schedule_manually = [a, down, downx, interp]() mutable {
    // apps/interpolate's CPU schedule with 16 lanes: the downsampled levels but the last
    // at root in parallel strips of 8 rows, down0 cloned into downx1 and computed a row
    // at a time per strip of down1; the output in parallel strips of 32 rows, channels
    // unrolled, with the interpolated levels computed a row at a time per strip (sliding
    // windows), but for the two coarsest (below).
    const int vec = 16;
    for (int l = 1; l < levels - 1; ++l) {
      down[l].compute_root().reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, vec);
    }
    down[0]
        .clone_in(downx[1])
        .store_at(down[1], yo)
        .compute_at(down[1], yi)
        .reorder(c, x, y)
        .unroll(c)
        .vectorize(x, vec);
    a.output.bound(x, 0, a.input.width())
        .bound(y, 0, a.input.height())
        .bound(c, 0, 3)
        .split(x, xo, xi, vec)
        .split(y, yo, yi, 32)
        .reorder(xi, c, xo, yi, yo)
        .unroll(c)
        .vectorize(xi)
        .parallel(yo);
    for (int l = 1; l < levels; ++l) {
      interp[l].store_at(a.output, yo).compute_at(a.output, yi).vectorize(x, vec);
    }
    // With 5 levels rather than the app's 10, the two coarsest (1/8 and 1/16) are not
    // negligible when every strip recomputes their windows: at root, as the downsampled
    // levels (10 -> 8.1 ms at one thread).
    for (int l = 3; l < levels; ++l) {
      interp[l]
          .compute_root()
          .store_root()
          .reorder(x, c, y)
          .split(y, yo, yi, 8)
          .parallel(yo)
          .vectorize(x, vec);
    }
  };
  return a;
}

HalideAlgorithm local_laplacian() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const int levels = 8, J = 4;  // intensity levels, pyramid levels
  const float alpha = 1.0f, beta = 1.0f;
  const Var k("k");
  Func remap("remap"), gray("gray");
  // remap is a LUT and gray becomes its index (a cast to i32) at every pixel, where an
  // FMA's one-ulp difference picks the next entry (a step of 1/256 in t; 4.3e-3 at the
  // output without strict_float): both are computed as written (strict_float, which costs
  // gray its two FMAs).
  Expr t = Halide::cast<float>(i) / 256;
  remap(i) = Halide::strict_float(alpha * t * Halide::exp(-t * t / 2));
  gray(x, y) = Halide::strict_float(rec601(in, x, y));
  auto downsample = [k](Func f, Func downx, Func down, bool has_k) {
    auto at = [&](Func g, Expr px, Expr py) { return has_k ? g(px, py, k) : g(px, py); };
    Expr dx =
        (at(f, 2 * x - 1, y) + 3 * (at(f, 2 * x, y) + at(f, 2 * x + 1, y)) + at(f, 2 * x + 2, y)) /
        8;
    if (has_k) {
      downx(x, y, k) = dx;
    } else {
      downx(x, y) = dx;
    }
    Expr dy = (at(downx, x, 2 * y - 1) + 3 * (at(downx, x, 2 * y) + at(downx, x, 2 * y + 1)) +
               at(downx, x, 2 * y + 2)) /
              8;
    if (has_k) {
      down(x, y, k) = dy;
    } else {
      down(x, y) = dy;
    }
  };
  // upsample(f) at (x, y): 0.25 / 0.75 in x, then in y; the x pass is its own func.
  auto upsample_x = [](Func f, std::vector<Expr> rest) {
    auto at = [&](Expr px) {
      std::vector<Expr> args = {px, y};
      args.insert(args.end(), rest.begin(), rest.end());
      return f(args);
    };
    return 0.25f * at(x / 2 - 1 + 2 * (x % 2)) + 0.75f * at(x / 2);
  };
  auto upsample_y = [](Func f, std::vector<Expr> rest) {
    auto at = [&](Expr py) {
      std::vector<Expr> args = {x, py};
      args.insert(args.end(), rest.begin(), rest.end());
      return f(args);
    };
    return 0.25f * at(y / 2 - 1 + 2 * (y % 2)) + 0.75f * at(y / 2);
  };
  auto named = [](const std::string& base, int j) { return Func(base + std::to_string(j)); };
  std::vector<Func> gPyramid, gDownx(J), gUpx(J), gUp(J), lPyramid, inGPyramid, inDownx(J);
  std::vector<Func> li, lf, outLPyramid, outGPyramid(J), outUpx(J);
  for (int j = 0; j < J; ++j) {
    gPyramid.push_back(named("gPyramid", j));
    lPyramid.push_back(named("lPyramid", j));
    inGPyramid.push_back(j == 0 ? gray : named("inGPyramid", j));
    li.push_back(named("li", j));
    lf.push_back(named("lf", j));
    outLPyramid.push_back(named("outLPyramid", j));
    outGPyramid[j] = named("outGPyramid", j);
    if (j > 0) {
      gDownx[j] = named("gDownx", j);
      gUpx[j] = named("gUpx", j);
      gUp[j] = named("gUp", j);
      inDownx[j] = named("inDownx", j);
    }
    if (j < J - 1) outUpx[j] = named("outUpx", j);
  }
  const float step = 1.0f / static_cast<float>(levels - 1);
  Expr level = Halide::cast<float>(k) * step;
  Expr index = Halide::clamp(
      Halide::cast<int>(Halide::strict_float(gray(x, y) * static_cast<float>(levels - 1) * 256)), 0,
      (levels - 1) * 256);
  gPyramid[0](x, y, k) = beta * (gray(x, y) - level) + level + remap(index - 256 * k);
  for (int j = 1; j < J; ++j) {
    downsample(gPyramid[j - 1], gDownx[j], gPyramid[j], true);
    downsample(inGPyramid[j - 1], inDownx[j], inGPyramid[j], false);
    gUpx[j](x, y, k) = upsample_x(gPyramid[j], {k});
    gUp[j](x, y, k) = upsample_y(gUpx[j], {k});
  }
  for (int j = 0; j < J; ++j) {
    lPyramid[j](x, y, k) =
        j == J - 1 ? gPyramid[j](x, y, k) : gPyramid[j](x, y, k) - gUp[j + 1](x, y, k);
    li[j](x, y) = Halide::clamp(
        Halide::cast<int>(inGPyramid[j](x, y) * static_cast<float>(levels - 1)), 0, levels - 2);
    lf[j](x, y) =
        inGPyramid[j](x, y) * static_cast<float>(levels - 1) - Halide::cast<float>(li[j](x, y));
    Expr l = Halide::clamp(li[j](x, y), 0, levels - 2);
    outLPyramid[j](x, y) =
        (1 - lf[j](x, y)) * lPyramid[j](x, y, l) + lf[j](x, y) * lPyramid[j](x, y, l + 1);
  }
  outGPyramid[J - 1](x, y) = outLPyramid[J - 1](x, y);
  for (int j = J - 2; j >= 0; --j) {
    outUpx[j](x, y) = upsample_x(outGPyramid[j + 1], {});
    outGPyramid[j](x, y) = upsample_y(outUpx[j], {}) + outLPyramid[j](x, y);
  }
  a.output(x, y, c) = Halide::clamp(
      outGPyramid[0](x, y) * (in(x, y, c) + 0.01f) / (gray(x, y) + 0.01f), 0.0f, 1.0f);
  a.stages = {remap, gray};
  for (int j = 0; j < J; ++j) {
    for (Func f : {gPyramid[j], gDownx[j], gUpx[j], gUp[j], lPyramid[j], inDownx[j], li[j], lf[j],
                   outLPyramid[j], outGPyramid[j], outUpx[j]}) {
      if (f.defined()) a.stages.push_back(f);
    }
    if (j > 0) a.stages.push_back(inGPyramid[j]);
  }
  a.schedule_manually = [a, remap, gray, gPyramid, gDownx, inGPyramid, outGPyramid, k]() mutable {
    // apps/local_laplacian's CPU schedule with 16 lanes: the LUT at root; gray, the input
    // pyramid and the processed pyramids (levels 1..3, k inside y) at root in parallel
    // rows; the output in parallel strips of 64 rows with the collapsed output pyramid
    // computed a row at a time per strip (sliding windows); level 0 and the Laplacian
    // levels inlined. One change: the app inlines the horizontal half of each processed
    // downsample, which evaluates level 0 (a LUT read per intensity level) four times per
    // level-1 point; here it is computed per strip of 8 rows (52 -> 41 ms at one thread).
    remap.compute_root();
    a.output.reorder(c, x, y).split(y, yo, y, 64).parallel(yo).vectorize(x, 16);
    gray.compute_root().parallel(y, 32).vectorize(x, 16);
    for (int j = 1; j < J; ++j) {
      inGPyramid[j].compute_root().parallel(y, 32).vectorize(x, 16);
      gPyramid[j]
          .compute_root()
          .reorder_storage(x, k, y)
          .reorder(x, k, y)
          .split(y, yo, yi, 8)
          .parallel(yo)
          .vectorize(x, 16);
      gDownx[j]
          .compute_at(gPyramid[j], yo)
          .reorder_storage(x, k, y)
          .reorder(x, k, y)
          .vectorize(x, 16);
      outGPyramid[j]
          .store_at(a.output, yo)
          .compute_at(a.output, y)
          .fold_storage(y, 8)
          .vectorize(x, 16);
    }
    outGPyramid[0].compute_at(a.output, y).vectorize(x, 16);
  };
  a.schedule_for_gpu = [a, remap, gPyramid, inGPyramid, outGPyramid, k]() mutable {
    // apps/local_laplacian's GPU schedule: the LUT at root; the input pyramid, the
    // processed pyramids (the intensity levels k innermost, in each thread) and the output
    // pyramid at root, each a kernel of 16x8-thread tiles; everything else inlined.
    remap.compute_root();
    a.output.compute_root().gpu_tile(x, y, xi, yi, 16, 8);
    for (size_t j = 0; j < gPyramid.size(); ++j) {
      if (j > 0) {
        inGPyramid[j].compute_root().gpu_tile(x, y, xi, yi, 16, 8);
        gPyramid[j].compute_root().reorder(k, x, y).gpu_tile(x, y, xi, yi, 16, 8);
      }
      outGPyramid[j].compute_root().gpu_tile(x, y, xi, yi, 16, 8);
    }
  };
  return a;
}

HalideAlgorithm nl_means() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  // sigma is a run-time param, as the app's Input<float> and the .stp's param; the radii
  // are constants (the app's patch_size and search_area of 7).
  Halide::Param<float> sigma("sigma", 0.12f);
  sigma.set_estimate(0.12f);
  const int patch_radius = 3, search_radius = 3, patch = 2 * patch_radius + 1;
  const Var dx("dx"), dy("dy");
  Func d("d"), blur_d_y("blur_d_y"), blur_d("blur_d"), w("w"), with_alpha("with_alpha");
  Func nlm_sum("nlm_sum");
  // The sums as the app writes them (inline reductions, computed inside their func), each
  // from 0 in the .stp's order.
  RDom channels(0, 3, "channels"), patch_dom(-patch_radius, patch, "patch_dom");
  Expr diff = in(x, y, channels) - in(x + dx, y + dy, channels);
  d(x, y, dx, dy) = Halide::sum(diff * diff);
  blur_d_y(x, y, dx, dy) = Halide::sum(d(x, y + patch_dom, dx, dy));
  blur_d(x, y, dx, dy) = Halide::sum(blur_d_y(x + patch_dom, y, dx, dy));
  // Halide's exp where the app has fast_exp, as the .stp has exp.
  w(x, y, dx, dy) =
      Halide::exp(blur_d(x, y, dx, dy) * (-1.0f / (sigma * sigma * float(patch * patch))));
  with_alpha(x, y, c) = Halide::select(c < 3, in(x, y, c), 1.0f);
  // dx innermost, as the .stp's sum (and the app's s_dom.x).
  RDom s_dom(-search_radius, 2 * search_radius + 1, -search_radius, 2 * search_radius + 1, "s_dom");
  nlm_sum(x, y, c) = 0.0f;
  nlm_sum(x, y, c) += w(x, y, s_dom.x, s_dom.y) * with_alpha(x + s_dom.x, y + s_dom.y, c);
  a.output(x, y, c) = Halide::clamp(nlm_sum(x, y, c) / nlm_sum(x, y, 3), 0.0f, 1.0f);
  a.stages = {d, blur_d_y, blur_d, w, with_alpha, nlm_sum};
  a.schedule_manually = [a, s_dom, d, blur_d_y, blur_d, nlm_sum]() mutable {
    // apps/nl_means's CPU schedule (Halide 14) with 16 lanes, its natural_vector_size on
    // AVX-512: 16x8 output tiles in parallel rows of tiles, channels innermost; the patch
    // distances d and their vertical sum per tile (all 49 offsets); the four channels of
    // the weighted sum per vector of output pixels, over the offsets, with the horizontal
    // patch sum per offset and vector; the weight and the alpha channel inlined.
    const int vec = 16;
    const Var tx("tx"), ty("ty");
    a.output.bound(c, 0, 3)
        .reorder(c, x, y)
        .tile(x, y, tx, ty, x, y, 16, 8)
        .parallel(ty)
        .vectorize(x, vec);
    blur_d_y.compute_at(a.output, tx).reorder(y, x).vectorize(x, vec);
    d.compute_at(a.output, tx).vectorize(x, vec);
    nlm_sum.compute_at(a.output, x).reorder(c, x, y).bound(c, 0, 4).unroll(c).vectorize(x, vec);
    nlm_sum.update(0).reorder(c, x, y, s_dom.x, s_dom.y).unroll(c).vectorize(x, vec);
    blur_d.compute_at(nlm_sum, x).vectorize(x, vec);
  };
  return a;
}

HalideAlgorithm max_filter() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  const int radius = 26;
  // The tallest slice, floor(log2(2 radius + 3)) = 5: the .stp's bound, which for radius
  // 26 is also the app's (ceil(log2(radius)) + 1 slices).
  const int top = static_cast<int>(std::floor(std::log(float(2 * radius + 3)) / std::log(2.0f)));
  const Var t("t");
  Func vert_log("vert_log"), slice_for_radius("slice_for_radius"), slice_height("slice_height");
  Func vert("vert"), filter_height("filter_height");
  // The powers of two are the .stp's i32(pow(2.0, f32(k))) where the app shifts: Halide's
  // pow is exp(log(x) * y) with its own polynomials, which gives 2^k exactly for these k
  // (the max is exact, so the check's tolerance 0 would show a sample one row off).
  auto pow2 = [](Expr k) { return Halide::cast<int>(Halide::pow(2.0f, Halide::cast<float>(k))); };
  vert_log(x, y, c, t) = in(x, y, c);
  // Rows from -radius to height + radius - 1 (ry innermost), as the .stp.
  RDom r(-radius, a.input.height() + 2 * radius, 1, top, "r");
  vert_log(x, r.x, c, r.y) =
      Halide::max(vert_log(x, r.x, c, r.y - 1),
                  vert_log(x, r.x + Halide::clamp(pow2(r.y - 1), 0, 2 * radius + 3), c, r.y - 1));
  slice_for_radius(t) =
      Halide::clamp(Halide::cast<int>(Halide::floor(Halide::log(Halide::cast<float>(2 * t + 1)) /
                                                    Halide::log(2.0f))),
                    0, top);
  slice_height(t) = pow2(slice_for_radius(t));
  Expr slice = Halide::clamp(slice_for_radius(t), 0, top);
  vert(x, y, c, t) = Halide::max(
      vert_log(x, y - t, c, slice),
      vert_log(x, y + t + 1 - Halide::clamp(slice_height(t), 0, 2 * radius + 3), c, slice));
  RDom dy(0, radius + 1, "dy");
  filter_height(i) = Halide::sum(Halide::select(
      Halide::cast<float>(i * i + dy * dy) < (float(radius) + 0.25f) * (float(radius) + 0.25f), 1,
      0));
  RDom dx(-radius, 2 * radius + 1, "dx");
  a.output(x, y, c) =
      Halide::maximum(vert(x + dx, y, c, Halide::clamp(filter_height(dx), 0, radius + 1)));
  a.stages = {vert_log, slice_for_radius, slice_height, vert, filter_height};
  a.schedule_manually = [a, r, t, vert_log, slice_for_radius, vert, filter_height]() mutable {
    // apps/max_filter's CPU schedule (Halide 14), its 8 lanes made 16: the output in
    // strips of 256 columns, the strip and channel loops fused and parallel, the table of
    // vertical maxima per strip and channel (its update with x innermost, vectorised), the
    // vertical maxima of every radius per output row; the LUTs at root, slice_height
    // inlined (the app's 1 << slice).
    const int vec = 16;
    const Var tx("tx");
    slice_for_radius.compute_root();
    filter_height.compute_root();
    a.output.split(x, tx, x, 256).reorder(x, y, c, tx).fuse(c, tx, t).parallel(t).vectorize(x, vec);
    vert_log.compute_at(a.output, t).vectorize(x, vec);
    vert_log.update().reorder(x, r.x, r.y, c).vectorize(x, vec);
    vert.compute_at(a.output, y).vectorize(x, vec);
  };
  return a;
}

HalideAlgorithm unsharp() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 3, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  // sigma is a constant, as the app's GeneratorParam; the kernel's constants as the .stp
  // computes them (2 * 3.14159265 folded in double, then f32).
  const float sigma = 1.5f;
  Func kernel("kernel"), gray("gray"), blur_y("blur_y"), blur_x("blur_x"), sharpen("sharpen");
  Func ratio("ratio");
  kernel(i) = Halide::exp(-Halide::cast<float>(i * i) / (2 * sigma * sigma)) /
              (Halide::sqrt(Expr(static_cast<float>(2 * 3.14159265))) * sigma);
  gray(x, y) = rec601(in, x, y);
  blur_y(x, y) = kernel(0) * gray(x, y) + kernel(1) * (gray(x, y - 1) + gray(x, y + 1)) +
                 kernel(2) * (gray(x, y - 2) + gray(x, y + 2)) +
                 kernel(3) * (gray(x, y - 3) + gray(x, y + 3));
  blur_x(x, y) = kernel(0) * blur_y(x, y) + kernel(1) * (blur_y(x - 1, y) + blur_y(x + 1, y)) +
                 kernel(2) * (blur_y(x - 2, y) + blur_y(x + 2, y)) +
                 kernel(3) * (blur_y(x - 3, y) + blur_y(x + 3, y));
  sharpen(x, y) = 2 * gray(x, y) - blur_x(x, y);
  ratio(x, y) = sharpen(x, y) / Halide::max(gray(x, y), 1e-6f);
  // The app reads the input without its boundary condition here: the output's pixels are
  // inside the image, where both read the same values.
  a.output(x, y, c) = ratio(x, y) * a.input(x, y, c);
  a.stages = {kernel, gray, blur_y, blur_x, sharpen, ratio};
  a.schedule_manually = [a, gray, blur_y, ratio]() mutable {
    // apps/unsharp's CPU schedule with 16 lanes (its natural_vector_size on AVX-512):
    // strips of 32 rows in parallel, channels inside rows; gray, blur_y and ratio computed
    // a row at a time and kept over the strip (gray's rows a sliding window); the kernel
    // inlined (Halide folds its seven taps to constants) as are blur_x and sharpen.
    const int vec = 16;
    a.output.split(y, yo, yi, 32).vectorize(x, vec).parallel(yo).reorder(x, c, yi, yo);
    gray.compute_at(a.output, yi).store_at(a.output, yo).vectorize(x, vec);
    blur_y.compute_at(a.output, yi).store_at(a.output, yo).vectorize(x, vec);
    ratio.compute_at(a.output, yi).store_at(a.output, yo).vectorize(x, vec);
  };
  return a;
}

HalideAlgorithm bilateral_grid_halide() {
  HalideAlgorithm a{Halide::ImageParam(Halide::Float(32), 2, "in"), Func("out"), {}, {}};
  Func in = Halide::BoundaryConditions::repeat_edge(a.input);
  // r_sigma is a run-time param, as the app's Input<float> and the .stp's param; s_sigma a
  // constant, as the app's GeneratorParam.
  Halide::Param<float> r_sigma("r_sigma", 0.1f);
  r_sigma.set_estimate(0.1f);
  const int s = 8;
  const Var z("z"), t("t"), k("k");
  Func histogram("histogram"), blurz("blurz"), blurx("blurx"), blury("blury");
  Func zv("zv"), zf("zf"), xf("xf"), yf("yf"), lerp_x("lerp_x"), lerp_xy("lerp_xy");
  Func interpolated("interpolated");
  // The .stp's scatter: pixels from two cells before the image to two cells after it,
  // px innermost, the channel a pure variable (Halide's and Stipple's outermost loop), so
  // every cell sums its values in the .stp's order. The bin index is a cast to i32 of
  // v / r_sigma + 0.5, where an FMA would move a pixel to the next bin: computed as
  // written (strict_float), as is zv, which zf subtracts its integer part from.
  RDom p(-2 * s - s / 2, ((a.input.width() - 1) / s + 6) * s, -2 * s - s / 2,
         ((a.input.height() - 1) / s + 6) * s, "p");
  Expr v = Halide::clamp(in(p.x, p.y), 0.0f, 1.0f);
  histogram(x, y, z, c) = 0.0f;
  histogram((p.x + s / 2) / s, (p.y + s / 2) / s,
            Halide::cast<int>(Halide::strict_float(v * (1.0f / r_sigma) + 0.5f)), c) +=
      Halide::select(c == 0, v, 1.0f);
  blurz(x, y, z, c) = histogram(x, y, z - 2, c) + histogram(x, y, z - 1, c) * 4 +
                      histogram(x, y, z, c) * 6 + histogram(x, y, z + 1, c) * 4 +
                      histogram(x, y, z + 2, c);
  blurx(x, y, z, c) = blurz(x - 2, y, z, c) + blurz(x - 1, y, z, c) * 4 + blurz(x, y, z, c) * 6 +
                      blurz(x + 1, y, z, c) * 4 + blurz(x + 2, y, z, c);
  blury(x, y, z, c) = blurx(x, y - 2, z, c) + blurx(x, y - 1, z, c) * 4 + blurx(x, y, z, c) * 6 +
                      blurx(x, y + 1, z, c) * 4 + blurx(x, y + 2, z, c);
  zv(x, y) = Halide::strict_float(Halide::clamp(in(x, y), 0.0f, 1.0f) * (1.0f / r_sigma));
  zf(x, y) = zv(x, y) - Halide::cast<float>(Halide::cast<int>(zv(x, y)));
  xf(x) = Halide::cast<float>(x % s) / static_cast<float>(s);
  yf(y) = Halide::cast<float>(y % s) / static_cast<float>(s);
  // The bin written out where it indexes, as in the .stp, so that its bounds follow from
  // the clamp.
  Expr zi = Halide::cast<int>(Halide::clamp(in(x, y), 0.0f, 1.0f) * (1.0f / r_sigma));
  lerp_x(x, y, t, c) = blury(x / s, y / s + t % 2, zi + t / 2, c) * (1 - xf(x)) +
                       blury(x / s + 1, y / s + t % 2, zi + t / 2, c) * xf(x);
  lerp_xy(x, y, k, c) = lerp_x(x, y, 2 * k, c) * (1 - yf(y)) + lerp_x(x, y, 2 * k + 1, c) * yf(y);
  interpolated(x, y, c) = lerp_xy(x, y, 0, c) * (1 - zf(x, y)) + lerp_xy(x, y, 1, c) * zf(x, y);
  a.output(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);
  a.stages = {histogram, blurz, blurx, blury, zv, zf, xf, yf, lerp_x, lerp_xy, interpolated};
  a.schedule_manually = [a, p, z, histogram, blurz, blurx, blury]() mutable {
    // apps/bilateral_grid's CPU schedule (Halide 14), its 8 lanes made 16: blurz at root
    // in parallel grid rows, blurx and blury at root in parallel z slices, channels
    // unrolled innermost; the output in parallel rows with the trilinear slice inlined.
    // The histogram is a scatter here (the app gathers per cell and computes it per row
    // of blurz): wherever it is computed its update runs over every pixel, so it is at
    // root, its update serial with the two channels unrolled inside the pixel loop (one
    // bin computation per pixel, as the app's reorder(c, r.x, r.y, ...).unroll(c)).
    const int vec = 16;
    histogram.compute_root().vectorize(x, vec);
    histogram.update().reorder(c, p.x, p.y).unroll(c);
    blurz.compute_root().reorder(c, z, x, y).parallel(y).vectorize(x, vec).unroll(c);
    blurx.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, vec).unroll(c);
    blury.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, vec).unroll(c);
    a.output.compute_root().parallel(y).vectorize(x, vec);
  };
  return a;
}

/// Every pipeline with a Halide version, by name.
const std::map<std::string, std::function<HalideAlgorithm()>>& algorithms() {
  static const std::map<std::string, std::function<HalideAlgorithm()>> table = {
      {"blur3x3", blur3x3},
      {"two_pass_blur", [] { return gaussian(false); }},
      {"unsharp_mask", [] { return gaussian(true); }},
      {"bilateral_filter", bilateral},
      {"median", median},
      {"demosaic", demosaic},
      {"bilateral_grid", bilateral_grid},
      {"harris", harris},
      {"camera_pipe", camera_pipe},
      {"interpolate", interpolate},
      {"local_laplacian", local_laplacian},
      {"nl_means", nl_means},
      {"max_filter", max_filter},
      {"unsharp", unsharp},
      {"bilateral_grid_halide", bilateral_grid_halide},
  };
  return table;
}

}  // namespace

bool has_algorithm(const std::string& pipeline) { return algorithms().count(pipeline) > 0; }

HalideAlgorithm algorithm(const std::string& pipeline) {
  auto it = algorithms().find(pipeline);
  if (it == algorithms().end()) {
    std::fprintf(stderr, "halide: no Halide version of %s\n", pipeline.c_str());
    std::exit(1);
  }
  return it->second();
}

double tolerance_for(const std::string& pipeline) {
  // Exact where only +, * by constants, min/max and selects are involved; Halide's exp
  // (a polynomial) differs from the JIT's by an ulp or so, which the weighted sums carry.
  if (pipeline == "median" || pipeline == "demosaic" || pipeline == "max_filter") return 0;
  if (pipeline == "blur3x3") return 1e-6;
  if (pipeline == "bilateral_filter") return 1e-4;
  if (pipeline == "two_pass_blur" || pipeline == "unsharp_mask") return 5e-5;
  // Integers but for the colour matrix and the tone curve, which are computed strictly
  // (see camera_pipe()): bit-exact.
  if (pipeline == "camera_pipe") return 0;
  // Halide contracts a * b + c into FMAs, which Stipple's JIT does not: the pyramid's
  // blends down + (1 - alpha) * up round once instead of twice (6e-8 measured, where an
  // autoscheduler inlines a level; the other schedules are bit-exact).
  if (pipeline == "interpolate") return 1e-6;
  // FMAs in the blurs and the trilinear slice and x / 13 as x * (1 / 13), divided by the
  // interpolated count (4.8e-7 measured on outputs up to 1).
  if (pipeline == "bilateral_grid") return 5e-6;
  // FMAs in the gradients, the products and det, and x / 12 as x * (1 / 12); det is a
  // difference of near-equal products (2.3e-9 measured on responses up to 3e-3).
  if (pipeline == "harris") return 2e-8;
  // Halide's exp in the remap LUT (not Stipple's) and FMAs in the pyramids
  // (1.1e-6 measured on outputs in [0, 1]).
  if (pipeline == "local_laplacian") return 1e-5;
  // Halide's exp in the 49 weights of every pixel, not Stipple's (1.0e-6 measured on
  // outputs in [0, 1]; the same with strict_float throughout, so not FMAs).
  if (pipeline == "nl_means") return 1e-5;
  // The kernel's seven taps: Halide's exp (its polynomial where the kernel is computed, the
  // C library's in double where it is inlined and folded), not Stipple's; out scales an
  // error in sharpen by in / gray, up to 1 / 0.114 (3.6e-7 measured on outputs in
  // [-0.8, 1.2]; the same with strict_float throughout).
  if (pipeline == "unsharp") return 5e-6;
  // FMAs in the blurs and the trilinear slice (4.2e-7 measured on outputs in [0, 1];
  // bit-exact with strict_float throughout: the bins are computed strictly, see
  // bilateral_grid_halide()).
  if (pipeline == "bilateral_grid_halide") return 5e-6;
  return 0;
}

double stray_fraction_for(const std::string& pipeline) {
  // Stipple's language contracts `gray - k * (1 / (levels - 1))` into an FMA where Halide's
  // LLVM does not (the product has two uses), so gPyramid0 and the pyramids below differ
  // by an ulp; where that moves a level index (li) or a remap LUT index across an integer,
  // the pixel reads the neighbouring level or entry: 468 of 6.2M values at 1920x1080 differ
  // by more than 1e-5, the largest by 4.3e-3, the rest within 1.1e-6.
  if (pipeline == "local_laplacian") return 1e-4;
  return 0;
}

}  // namespace stipple::bench
