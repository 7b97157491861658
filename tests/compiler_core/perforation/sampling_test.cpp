// Irregular sampling (compiler_core/perforation/importance_sampling.h, adaptive_sampling.h)
// and its reconstruction (irregular_reconstruction.h): the Appendix A remap reaches f·n
// within 0.5%, both samplers place f·n points within 1%, f = 1 is exact, and each
// reconstruction agrees with a direct implementation written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/perforation/apply_perforation.h"
#include "compiler_core/perforation/irregular_reconstruction.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::perforation {
namespace {

std::string source(const std::string& rel) { return std::string(STIPPLE_SOURCE_DIR) + "/" + rel; }

struct Image {
  Pipeline pipeline;
  InputImages inputs;
  int64_t width = 0, height = 0;
};

Image two_pass_blur_on(const std::string& fixture) {
  Image im;
  im.pipeline = load_pipeline_file(source("datasets/pipelines/two_pass_blur.stp"));
  im.inputs["in"] = photo_to_input(read_image(source("datasets/fixtures/" + fixture)),
                                   im.pipeline.inputs[0], fixture);
  im.width = im.inputs["in"].extent(0);
  im.height = im.inputs["in"].extent(1);
  return im;
}

// The pipeline `text` with the people fixture (256x192) as its input.
Image on_people(const char* text, const std::string& file_name) {
  Image im;
  im.pipeline = compile_pipeline(text, file_name);
  Buffer photo = read_image(source("datasets/fixtures/people-256x192.png"));
  im.inputs["in"] = photo_to_input(photo, im.pipeline.inputs[0], "people");
  im.width = photo.extent(0);
  im.height = photo.extent(1);
  return im;
}

// Func `name` of the pipeline `text` perforates into, computed over the image (x, y), by
// compiled code (or by the evaluator).
Buffer compute_func(const Image& im, const std::string& schedule, const std::string& name,
                    bool evaluator = false) {
  Schedule s = compile_schedule(schedule, "<test>", im.pipeline);
  PerforatedPipeline pp = apply_perforation(im.pipeline, s);
  Pipeline q = pp.pipeline;
  q.output.func = name;
  q.output.extents.resize(2);
  q.output.metric = ErrorMetric::Rmse;
  if (evaluator) return evaluate_pipeline(q, im.inputs);
  Schedule t = pp.schedule;
  // The func as the output: at root, as the pipeline's output always is.
  t.funcs[name].compute.reset();
  t.funcs[name].store.reset();
  if (t.funcs[name].stages.empty() && !t.funcs[name].compute) t.funcs.erase(name);
  LoweredFunction f = lower(q, t);
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  return run_lowered(*fn, f, q, im.inputs, {}, {im.width, im.height});
}

double total(const Buffer& b) {
  double sum = 0;
  for (int64_t i = 0; i < b.element_count(); ++i) sum += b.get_flat(i);
  return sum;
}

TEST(ImportanceSampling, AUserMapPlacesThePoints) {
  // importance(f, map = m): m is 1 left of x = 40 and 0.05 elsewhere (plus the floor of
  // 1e-3). With f = 0.2 the remap saturates the left band (40 of 256 columns, 15.6% of
  // the points) and spreads the rest, 4.4% of all points, over the other 84.4%: about
  // 5.2% of them. (A map at the floor alone would fall in the histogram's first bin,
  // whose centre is half the floor: Appendix A's bins assume a spread of values.)
  Image im = on_people(R"(pipeline mapped
input in : f32[x, y, c]
func m(x, y) = select(x < 40, 1.0, 0.05)
func out(x, y, c) = in(x, y, c) * 2.0
func r(x, y) = out(x, y, 0)
output out
)",
                       "mapped.stp");
  const std::string schedule = "out.perforate(importance(0.2, map = m), nearest)";
  Buffer mask = compute_func(im, schedule, "out$importance$mask");
  EXPECT_TRUE(mask.same_contents(compute_func(im, schedule, "out$importance$mask", true)));
  double left = 0, right = 0;
  for (int64_t y = 0; y < im.height; ++y) {
    for (int64_t x = 0; x < im.width; ++x) {
      const int64_t at[] = {x, y};
      (x < 40 ? left : right) += mask.get(at);
    }
  }
  const double n = double(im.width * im.height);
  EXPECT_EQ(left, double(40 * im.height));
  EXPECT_NEAR(right / double((im.width - 40) * im.height), 0.044 / 0.844, 0.005);
  EXPECT_NEAR(left + right, 0.2 * n, 0.01 * 0.2 * n);
  // The checker: a map that reads the func whose points it places, or is not (x, y).
  for (auto [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"out.perforate(importance(0.2, map = r))", "reads 'out', the func whose points"},
           {"out.perforate(importance(0.2, map = out))", "must have 2 dimensions (x, y)"},
           {"m.perforate(grid(2, 2))\nout.perforate(importance(0.2, map = m))",
            "'out''s importance map 'm' is approximated itself"},
           {"out.perforate(importance(0.2, map = in))", "'in' is not a func of the pipeline"},
           {"out.perforate(importance(0.2, map = 3))", "importance's map must name a func"}}) {
    try {
      compile_schedule(text, "t.sched", im.pipeline);
      ADD_FAILURE() << text << " was accepted";
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(ImportanceSampling, RemapSumsToTheTargetWithinHalfAPercent) {
  Image im = two_pass_blur_on("natural-820x614.png");
  const double n = double(im.width * im.height);
  for (double f : {0.05, 0.25, 0.5, 0.75, 0.95}) {
    SCOPED_TRACE(f);
    Buffer remapped = compute_func(im, "out.perforate(importance(" + std::to_string(f) + "))",
                                   "out$importance$remapped");
    double sum = total(remapped);
    std::printf("f = %.2f: remap sums to %.1f, target %.1f (%.3f%%)\n", f, sum, f * n,
                100 * (sum - f * n) / (f * n));
    EXPECT_NEAR(sum, f * n, 0.005 * f * n);
  }
}

TEST(ImportanceSampling, PlacesTheTargetCountWithinOnePercent) {
  for (const char* fixture : {"natural-820x614.png", "people-256x192.png"}) {
    Image im = two_pass_blur_on(fixture);
    const double n = double(im.width * im.height);
    for (double f : {0.1, 0.25, 0.5, 0.75}) {
      SCOPED_TRACE(std::string(fixture) + " f = " + std::to_string(f));
      Buffer mask = compute_func(im, "out.perforate(importance(" + std::to_string(f) + "))",
                                 "out$importance$mask");
      double count = total(mask);
      std::printf("%s f = %.2f: %.0f points, target %.0f (%.3f%%)\n", fixture, f, count, f * n,
                  100 * (count - f * n) / (f * n));
      EXPECT_NEAR(count, f * n, 0.01 * f * n);
    }
  }
}

TEST(AdaptiveSampling, PlacesTheTargetCountWithinOnePercent) {
  for (const char* fixture : {"natural-820x614.png", "people-256x192.png"}) {
    Image im = two_pass_blur_on(fixture);
    const double n = double(im.width * im.height);
    for (auto [k, f] : std::vector<std::pair<int, double>>{
             {2, 0.28}, {2, 0.5}, {3, 0.25}, {3, 0.6}, {4, 0.2}, {5, 0.3}}) {
      SCOPED_TRACE(std::string(fixture) + " k = " + std::to_string(k) +
                   " f = " + std::to_string(f));
      Buffer mask = compute_func(
          im, "out.perforate(adaptive(" + std::to_string(k) + ", " + std::to_string(f) + "))",
          "out$adaptive$mask");
      double count = total(mask);
      std::printf("%s adaptive(%d, %.2f): %.0f points, target %.0f (%.3f%%)\n", fixture, k, f,
                  count, f * n, 100 * (count - f * n) / (f * n));
      EXPECT_NEAR(count, f * n, 0.01 * f * n);
    }
  }
}

TEST(IrregularSampling, MaskIsTheSameEvaluatedAndCompiled) {
  Image im = two_pass_blur_on("people-256x192.png");
  for (const char* s : {"out.perforate(importance(0.3))", "out.perforate(adaptive(2, 0.4))"}) {
    SCOPED_TRACE(s);
    std::string name =
        std::string("out$") + (std::strstr(s, "adaptive") ? "adaptive" : "importance") + "$mask";
    Buffer a = compute_func(im, s, name, false), b = compute_func(im, s, name, true);
    ASSERT_EQ(a.size_in_bytes(), b.size_in_bytes());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size_in_bytes()), 0);
  }
}

// Reconstructions against direct implementations: a pipeline whose output is twice its
// input, perforated by importance sampling, so that the points computed are known.
struct ReconstructionCase {
  Image im;
  Buffer mask, got;
  std::string schedule, prefix;
  explicit ReconstructionCase(const std::string& how,
                              const std::string& sampling = "importance(0.2)") {
    im = on_people(R"(pipeline double_it
input in : f32[x, y, c]
func out(x, y, c) = in(x, y, c) * 2.0
output out
)",
                   "double_it.stp");
    schedule = "out.perforate(" + sampling + ", " + how + ")";
    prefix = sampling.rfind("importance", 0) == 0 ? "out$importance$" : "out$adaptive$";
    mask = compute_func(im, schedule, prefix + "mask");
    Schedule s = compile_schedule(schedule, "<test>", im.pipeline);
    LoweredFunction f = lower(im.pipeline, s);
    auto jit = codegen::JitCompiler::create();
    auto fn = jit->compile(f);
    got = run_lowered(*fn, f, im.pipeline, im.inputs, {}, {im.width, im.height, 3});
  }
  bool sampled(int64_t x, int64_t y) const {
    const int64_t at[] = {x, y};
    return mask.get(at) != 0;
  }
  double value(int64_t x, int64_t y, int64_t c) const {
    const int64_t at[] = {x, y, c};
    return double(float(im.inputs.at("in").get(at) * 2.0f));
  }
  double result(int64_t x, int64_t y, int64_t c) const {
    const int64_t at[] = {x, y, c};
    return got.get(at);
  }
};

TEST(IrregularReconstruction, ComputedPointsKeepTheirValues) {
  ReconstructionCase r("nearest");
  int64_t checked = 0;
  for (int64_t y = 0; y < r.im.height; ++y) {
    for (int64_t x = 0; x < r.im.width; ++x) {
      if (!r.sampled(x, y)) continue;
      for (int64_t c = 0; c < 3; ++c) ASSERT_EQ(r.result(x, y, c), r.value(x, y, c));
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(IrregularReconstruction, NearestIsAComputedPointAtTheLeastManhattanDistance) {
  ReconstructionCase r("nearest");
  std::vector<std::pair<int64_t, int64_t>> points;
  for (int64_t y = 0; y < r.im.height; ++y) {
    for (int64_t x = 0; x < r.im.width; ++x) {
      if (r.sampled(x, y)) points.push_back({x, y});
    }
  }
  int64_t wrong = 0, total_checked = 0;
  for (int64_t y = 0; y < r.im.height; y += 3) {
    for (int64_t x = 0; x < r.im.width; x += 3) {
      if (r.sampled(x, y)) continue;
      int64_t best = INT64_MAX;
      for (auto [px, py] : points) best = std::min(best, std::abs(px - x) + std::abs(py - y));
      bool found = false;
      for (auto [px, py] : points) {
        if (std::abs(px - x) + std::abs(py - y) != best) continue;
        bool same = true;
        for (int64_t c = 0; c < 3; ++c) same = same && r.result(x, y, c) == r.value(px, py, c);
        found = found || same;
      }
      ++total_checked;
      if (!found) ++wrong;
    }
  }
  // Two raster passes find the nearest point exactly for the city-block distance.
  EXPECT_EQ(wrong, 0) << "of " << total_checked;
}

TEST(IrregularReconstruction, GaussianIsTheRecursiveNormalisedConvolution) {
  const double sigma = 2.0;
  ReconstructionCase r("gaussian(sigma = 2.0)");
  const int64_t W = r.im.width, H = r.im.height;
  const RecursiveGaussian g = young_van_vliet(sigma);
  // Young-van Vliet written out: causal and anticausal passes along x, then along y,
  // zero outside the image.
  auto filter = [&](std::vector<double> img) {
    auto pass = [&](int64_t n, auto at) {
      std::vector<double> w(size_t(n) + 6, 0.0);
      for (int64_t i = 0; i < n; ++i) {
        w[size_t(i) + 3] =
            g.B * at(i) +
            (g.b1 * w[size_t(i) + 2] + g.b2 * w[size_t(i) + 1] + g.b3 * w[size_t(i)]) / g.b0;
      }
      std::vector<double> out(size_t(n) + 3, 0.0);
      for (int64_t i = n - 1; i >= 0; --i) {
        out[size_t(i)] =
            g.B * w[size_t(i) + 3] +
            (g.b1 * out[size_t(i) + 1] + g.b2 * out[size_t(i) + 2] + g.b3 * out[size_t(i) + 3]) /
                g.b0;
      }
      return out;
    };
    for (int64_t y = 0; y < H; ++y) {
      auto row = pass(W, [&](int64_t x) { return img[size_t(y * W + x)]; });
      for (int64_t x = 0; x < W; ++x) img[size_t(y * W + x)] = row[size_t(x)];
    }
    for (int64_t x = 0; x < W; ++x) {
      auto col = pass(H, [&](int64_t y) { return img[size_t(y * W + x)]; });
      for (int64_t y = 0; y < H; ++y) img[size_t(y * W + x)] = col[size_t(y)];
    }
    return img;
  };
  std::vector<double> weights(size_t(W * H));
  for (int64_t y = 0; y < H; ++y) {
    for (int64_t x = 0; x < W; ++x) weights[size_t(y * W + x)] = r.sampled(x, y) ? 1.0 : 0.0;
  }
  std::vector<double> den = filter(weights);
  double worst = 0, worst_gaussian = 0;
  for (int64_t c = 0; c < 3; ++c) {
    std::vector<double> values(size_t(W * H));
    for (int64_t y = 0; y < H; ++y) {
      for (int64_t x = 0; x < W; ++x) {
        values[size_t(y * W + x)] = r.sampled(x, y) ? double(float(r.value(x, y, c))) : 0.0;
      }
    }
    std::vector<double> num = filter(values);
    for (int64_t y = 0; y < H; ++y) {
      for (int64_t x = 0; x < W; ++x) {
        if (r.sampled(x, y) || den[size_t(y * W + x)] < 1e-3) continue;
        worst = std::max(
            worst, std::abs(r.result(x, y, c) - num[size_t(y * W + x)] / den[size_t(y * W + x)]));
      }
    }
    // Against the true Gaussian, at some points: Young and van Vliet's filter is an
    // approximation (at sigma 2 its tails are heavier).
    for (int64_t y = 4; y < H; y += 9) {
      for (int64_t x = 4; x < W; x += 9) {
        if (r.sampled(x, y)) continue;
        double n = 0, d = 0;
        for (int64_t v = std::max<int64_t>(0, y - 12); v <= std::min(H - 1, y + 12); ++v) {
          for (int64_t u = std::max<int64_t>(0, x - 12); u <= std::min(W - 1, x + 12); ++u) {
            if (!r.sampled(u, v)) continue;
            double w =
                std::exp(-double((u - x) * (u - x) + (v - y) * (v - y)) / (2 * sigma * sigma));
            n += w * r.value(u, v, c);
            d += w;
          }
        }
        if (d > 0.05)
          worst_gaussian = std::max(worst_gaussian, std::abs(r.result(x, y, c) - n / d));
      }
    }
  }
  std::printf(
      "largest difference from the recursive filter in double: %g; from a true "
      "Gaussian: %g (values in [0, 2])\n",
      worst, worst_gaussian);
  EXPECT_LT(worst, 1e-4);
  EXPECT_LT(worst_gaussian, 0.1);
}

// The tent of two boxes of the local radius, written out as direct sums in double, against
// the reconstruction of `r`. Returns the radii at the points checked.
std::set<int64_t> expect_varying_tent(const ReconstructionCase& r) {
  const int64_t W = r.im.width, H = r.im.height, M = 40;
  // The sigma map over the image and a margin (the boxes of points near the edges reach
  // past it), from the evaluator.
  Schedule s = compile_schedule(r.schedule, "<test>", r.im.pipeline);
  Pipeline q = apply_perforation(r.im.pipeline, s).pipeline;
  q.output.func = r.prefix + "sigma";
  q.output.extents.resize(2);
  q.output.metric = ErrorMetric::Rmse;
  Buffer sigma = evaluate_pipeline_region(q, r.im.inputs, {}, {-M, -M}, {W + 2 * M, H + 2 * M});
  auto radius = [&](int64_t x, int64_t y) -> int64_t {
    const int64_t at[] = {x, y};  // the buffer's mins are -M: absolute coordinates
    float sg = float(sigma.get(at));
    float h = std::round((std::sqrt(6.0f * sg * sg + 1.0f) - 1.0f) / 2.0f);
    return std::clamp<int64_t>(int64_t(h), 0, 32);
  };
  // Direct sums of the computed points (value, or 1 for the weights): two boxes along x,
  // then two along y, each of the half-width at the point it computes.
  auto filtered = [&](int64_t x, int64_t y, int64_t c, bool weight) {
    auto along_x = [&](int64_t row) {
      double sum = 0;
      const int64_t h2 = radius(x, row);
      for (int64_t t = x - h2; t <= x + h2; ++t) {
        const int64_t h1 = radius(t, row);
        for (int64_t u = std::max<int64_t>(t - h1, 0); u <= std::min(t + h1, W - 1); ++u) {
          if (r.sampled(u, row)) sum += weight ? 1.0 : double(float(r.value(u, row, c)));
        }
      }
      return sum;
    };
    double sum = 0;
    const int64_t h4 = radius(x, y);
    for (int64_t t = y - h4; t <= y + h4; ++t) {
      const int64_t h3 = radius(x, t);
      for (int64_t v = std::max<int64_t>(t - h3, 0); v <= std::min(t + h3, H - 1); ++v) {
        sum += along_x(v);
      }
    }
    return sum;
  };
  double worst = 0;
  int64_t checked = 0;
  std::set<int64_t> radii;
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 3; y < H; y += 11) {
      for (int64_t x = 5; x < W; x += 11) {
        if (r.sampled(x, y)) continue;
        radii.insert(radius(x, y));
        double den = filtered(x, y, c, true);
        if (den == 0) continue;
        double want = filtered(x, y, c, false) / den;
        worst =
            std::max(worst, std::abs(r.result(x, y, c) - want) / std::max(std::abs(want), 1e-3));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_LT(worst, 1e-4);
  return radii;
}

TEST(IrregularReconstruction, VaryingGaussianIsTwoBoxFiltersOfTheLocalRadius) {
  // Importance sampling's sigma has no bound: prefix sums in f64.
  expect_varying_tent(ReconstructionCase("varying_gaussian(sigma0 = 0.7)"));
}

TEST(IrregularReconstruction, VaryingGaussianOfSmallRadiiIsTheSameTent) {
  // Adaptive sampling's radii are 0 (fine points) and 5 (sigma0 k = 4.5): direct sums in
  // f32. The points reconstructed are never fine ones (those are computed), so they have
  // radius 5; the first boxes of their tents reach fine points, of radius 0.
  ReconstructionCase r("varying_gaussian(sigma0 = 1.5)", "adaptive(3, 0.3)");
  EXPECT_EQ(expect_varying_tent(r), (std::set<int64_t>{5}));
  // The direct sums, not the prefix sums (which importance sampling's unbounded radii
  // need, as the test above checks).
  auto funcs = [](const ReconstructionCase& c) {
    Schedule s = compile_schedule(c.schedule, "<test>", c.im.pipeline);
    return apply_perforation(c.im.pipeline, s).pipeline;
  };
  Pipeline direct = funcs(r);
  EXPECT_NE(direct.find_func(r.prefix + "r$num_bx1"), nullptr);
  EXPECT_EQ(direct.find_func(r.prefix + "r$num_bx1_sum"), nullptr);
  ReconstructionCase unbounded("varying_gaussian(sigma0 = 1.5)");
  EXPECT_NE(funcs(unbounded).find_func(unbounded.prefix + "r$num_bx1_sum"), nullptr);
}

}  // namespace
}  // namespace stipple::perforation
