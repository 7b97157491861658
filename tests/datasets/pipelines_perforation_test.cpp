// The seven benchmark pipelines of Image Perforation section 7 (datasets/pipelines/*.stp)
// run through the reference evaluator and compared with straightforward C++ written here
// from the paper's description: plain loops, clamp-to-edge (or mirror) reads, double
// precision where the language computes in f32, so each tolerance covers f32 rounding
// and summation order only.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/datasets/pipeline_test_support.h"

namespace stipple::testing {
namespace {

// ---------------------------------------------------------------------------------------
// Inputs: random values and the committed 64x48 fixture photos (when present).

/// A committed fixture, if it is there (the tests fall back to random inputs without it).
std::optional<Image> fixture_if_present(const std::string& name) {
  if (!std::filesystem::exists(source_path("datasets/fixtures/" + name))) {
    std::cout << "note: fixture " << name << " is missing; using random inputs only\n";
    return std::nullopt;
  }
  return load_fixture(name);
}

/// The inputs every colour pipeline is checked on: random noise (the hardest case for
/// data-dependent code) and two 64x48 photos, one highly textured (a mandrill) and one
/// smooth (a facade), so that edge-aware filters meet both edges and flat regions.
std::vector<std::pair<std::string, Image>> colour_inputs(uint32_t seed) {
  std::vector<std::pair<std::string, Image>> inputs;
  inputs.emplace_back("random 40x30", random_image(40, 30, 3, seed));
  for (const char* name : {"natural-high-64x48.png", "man-made-low-64x48.png"})
    if (auto photo = fixture_if_present(name)) inputs.emplace_back(name, *photo);
  return inputs;
}

Image run(const std::string& name, const Image& in, const ParamValues& params = {},
          bool two_d = false) {
  Pipeline p = load_benchmark_pipeline(name);
  return from_buffer(
      evaluate_pipeline(p, {{"in", to_buffer(in, ScalarType::Float32, two_d)}}, params));
}

int clamp_index(int v, int extent) { return std::min(std::max(v, 0), extent - 1); }

/// Reflection about the edge pixel without repeating it: -1 -> 1, n -> n - 2.
int mirror_index(int v, int extent) {
  if (extent == 1) return 0;
  int period = 2 * (extent - 1);
  v = ((v % period) + period) % period;
  return v < extent ? v : period - v;
}

// ---------------------------------------------------------------------------------------
// Reference implementations.

/// Separable Gaussian blur: normalised 1-D kernel of 2h+1 taps, along x then along y,
/// clamping reads at the image edges (sampling the intermediate image at the clamped row
/// is what blurring the clamped input gives).
Image gaussian_blur_reference(const Image& in, double sigma, int h) {
  std::vector<double> kernel(2 * h + 1);
  double total = 0;
  for (int i = -h; i <= h; ++i) total += kernel[i + h] = std::exp(-i * i / (2 * sigma * sigma));
  for (double& k : kernel) k /= total;
  std::vector<double> horizontal(in.data.size());
  auto at = [&](int x, int y, int c) { return (size_t(c) * in.height + y) * in.width + x; };
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        double acc = 0;
        for (int i = -h; i <= h; ++i) acc += kernel[i + h] * in.clamped(x - i, y, c);
        horizontal[at(x, y, c)] = acc;
      }
  Image out(in.width, in.height, in.channels);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        double acc = 0;
        for (int i = -h; i <= h; ++i)
          acc += kernel[i + h] * horizontal[at(x, clamp_index(y - i, in.height), c)];
        out(x, y, c) = float(acc);
      }
  return out;
}

/// 5x5 per-channel median.
Image median_reference(const Image& in) {
  Image out(in.width, in.height, in.channels);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        std::vector<float> window;
        for (int dy = -2; dy <= 2; ++dy)
          for (int dx = -2; dx <= 2; ++dx) window.push_back(in.clamped(x + dx, y + dy, c));
        std::nth_element(window.begin(), window.begin() + 12, window.end());
        out(x, y, c) = window[12];
      }
  return out;
}

/// Tomasi-Manduchi bilateral filter per channel over a (2h+1)^2 window.
Image bilateral_reference(const Image& in, double sigma_r, double sigma_s, int h) {
  Image out(in.width, in.height, in.channels);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        double centre = in(x, y, c), acc = 0, norm = 0;
        for (int dy = -h; dy <= h; ++dy)
          for (int dx = -h; dx <= h; ++dx) {
            double tap = in.clamped(x + dx, y + dy, c);
            double w = std::exp(-(dx * dx + dy * dy) / (2 * sigma_s * sigma_s)) *
                       std::exp(-(tap - centre) * (tap - centre) / (2 * sigma_r * sigma_r));
            acc += w * tap;
            norm += w;
          }
        out(x, y, c) = float(acc / norm);
      }
  return out;
}

/// RGGB mosaic of a colour image: red at (even, even), blue at (odd, odd), green elsewhere.
Image mosaic_of(const Image& colour) {
  Image m(colour.width, colour.height, 1);
  for (int y = 0; y < colour.height; ++y)
    for (int x = 0; x < colour.width; ++x) {
      int c = (x % 2 == 0 && y % 2 == 0) ? 0 : (x % 2 == 1 && y % 2 == 1) ? 2 : 1;
      m(x, y) = colour(x, y, c);
    }
  return m;
}

/// Demosaic in closed form: each missing red or blue value is the mean of its nearest
/// same-colour neighbours (left/right, above/below, or the four diagonals); a missing
/// green value is the mean of its left and right neighbours (green is completed by the
/// x pass, see demosaic.stp). Reads mirror at the borders.
Image demosaic_reference(const Image& m) {
  auto at = [&](int x, int y) {
    return double(m(mirror_index(x, m.width), mirror_index(y, m.height)));
  };
  Image out(m.width, m.height, 3);
  for (int y = 0; y < m.height; ++y)
    for (int x = 0; x < m.width; ++x) {
      bool even_x = x % 2 == 0, even_y = y % 2 == 0;
      double horizontal = (at(x - 1, y) + at(x + 1, y)) / 2;
      double vertical = (at(x, y - 1) + at(x, y + 1)) / 2;
      double diagonal =
          (at(x - 1, y - 1) + at(x + 1, y - 1) + at(x - 1, y + 1) + at(x + 1, y + 1)) / 4;
      double here = at(x, y);
      // Red lives on (even, even), blue on (odd, odd).
      double red = even_y ? (even_x ? here : horizontal) : (even_x ? vertical : diagonal);
      double blue = !even_y ? (!even_x ? here : horizontal) : (!even_x ? vertical : diagonal);
      double green = (even_x == even_y) ? horizontal : here;
      out(x, y, 0) = float(red);
      out(x, y, 1) = float(green);
      out(x, y, 2) = float(blue);
    }
  return out;
}

/// The artistic blur's deterministic jitter in -1..1: a hash of (x, y, k) in wrapping
/// 32-bit arithmetic, with floor division and a non-negative remainder.
int jitter(int x, int y, int k) {
  uint32_t h1 = uint32_t(x) * 374761393u + uint32_t(y) * 668265263u + uint32_t(k) * 1442695041u;
  int32_t h1s = int32_t(h1);
  int32_t high = h1s >> 16;  // floor(h1 / 65536)
  uint32_t h2 = h1 * (uint32_t(high) + 1274126177u);
  int32_t q = int32_t(h2) >> 16;
  return ((q % 3) + 3) % 3 - 1;
}

struct ArtisticParams {
  int h = 4;
  double cutoff = 0.3, sigma_min = 0.5, sigma_max = 3.0, tangential = 0.5;
};

/// Artistic blur: identity inside the cutoff radius; outside, a pre-normalised
/// anisotropic Gaussian (radial deviation growing linearly with the distance from the
/// centre, tangential a fixed fraction of it) centred on a jittered source pixel.
Image artistic_reference(const Image& in, const ArtisticParams& p) {
  Image out(in.width, in.height, in.channels);
  double cx = (in.width - 1) / 2.0, cy = (in.height - 1) / 2.0;
  double corner = std::hypot(cx, cy);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      double ox = x - cx, oy = y - cy, r = std::hypot(ox, oy), rn = r / corner;
      if (rn < p.cutoff) {
        for (int c = 0; c < in.channels; ++c) out(x, y, c) = in(x, y, c);
        continue;
      }
      double radial = p.sigma_min + (p.sigma_max - p.sigma_min) * (rn - p.cutoff) / (1 - p.cutoff);
      double tangent = p.tangential * radial;
      double ex = ox / std::max(r, 1.0), ey = oy / std::max(r, 1.0);  // unit radial vector
      int n = 2 * p.h + 1;
      std::vector<double> w(size_t(n) * n);
      double total = 0;
      for (int j = -p.h; j <= p.h; ++j)
        for (int i = -p.h; i <= p.h; ++i) {
          double along = i * ex + j * ey, across = j * ex - i * ey;
          double v = std::exp(-along * along / (2 * radial * radial) -
                              across * across / (2 * tangent * tangent));
          w[size_t(j + p.h) * n + (i + p.h)] = v;
          total += v;
        }
      int sx = x + jitter(x, y, 1), sy = y + jitter(x, y, 2);
      for (int c = 0; c < in.channels; ++c) {
        double acc = 0;
        for (int j = -p.h; j <= p.h; ++j)
          for (int i = -p.h; i <= p.h; ++i)
            acc += w[size_t(j + p.h) * n + (i + p.h)] / total * in.clamped(sx - i, sy - j, c);
        out(x, y, c) = float(acc);
      }
    }
  return out;
}

/// Colour bilateral grid (Chen et al. 2007): splat each pixel's colour and a count into
/// the nearest cell of a (x / s, y / s, luminance / r) grid, blur the grid with
/// [1 4 6 4 1] / 16 along each axis, then read it back with trilinear interpolation at
/// the pixel's continuous grid position and divide by the interpolated count.
Image bilateral_grid_reference(const Image& in, int s, float r_sigma) {
  auto luminance = [&](int x, int y) {
    // Computed in f32 in the pipeline's order so that the same cell is chosen.
    float l = 0.299f * in(x, y, 0) + 0.587f * in(x, y, 1) + 0.114f * in(x, y, 2);
    return std::min(std::max(l, 0.f), 1.f);
  };
  const int margin = 3;  // zero cells around the splatted region: the blur reads 2 away
  int zmax = int(1.f / r_sigma + 0.5f);
  int nx = (in.width - 1 + s / 2) / s + 1 + 2 * margin + 1;
  int ny = (in.height - 1 + s / 2) / s + 1 + 2 * margin + 1;
  int nz = zmax + 2 + 2 * margin;
  auto idx = [&](int gx, int gy, int gz, int c) {
    return ((size_t(c) * nz + (gz + margin)) * ny + (gy + margin)) * nx + (gx + margin);
  };
  auto inside = [&](int gx, int gy, int gz) {
    return gx + margin >= 0 && gx + margin < nx && gy + margin >= 0 && gy + margin < ny &&
           gz + margin >= 0 && gz + margin < nz;
  };
  std::vector<double> grid(size_t(nx) * ny * nz * 4, 0.0);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      int gx = (x + s / 2) / s, gy = (y + s / 2) / s;
      int gz = int(luminance(x, y) / r_sigma + 0.5f);
      for (int c = 0; c < 3; ++c) grid[idx(gx, gy, gz, c)] += in(x, y, c);
      grid[idx(gx, gy, gz, 3)] += 1;
    }
  const double taps[5] = {1 / 16.0, 4 / 16.0, 6 / 16.0, 4 / 16.0, 1 / 16.0};
  auto blur_axis = [&](const std::vector<double>& src, int axis) {
    std::vector<double> dst(src.size(), 0.0);
    for (int c = 0; c < 4; ++c)
      for (int gz = -margin; gz < nz - margin; ++gz)
        for (int gy = -margin; gy < ny - margin; ++gy)
          for (int gx = -margin; gx < nx - margin; ++gx) {
            double acc = 0;
            for (int k = -2; k <= 2; ++k) {
              int ax = gx + (axis == 0 ? k : 0), ay = gy + (axis == 1 ? k : 0),
                  az = gz + (axis == 2 ? k : 0);
              if (inside(ax, ay, az)) acc += taps[k + 2] * src[idx(ax, ay, az, c)];
            }
            dst[idx(gx, gy, gz, c)] = acc;
          }
    return dst;
  };
  std::vector<double> blurred = blur_axis(blur_axis(blur_axis(grid, 0), 1), 2);
  Image out(in.width, in.height, 3);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      double gx = double(x) / s, gy = double(y) / s, gz = luminance(x, y) / r_sigma;
      int x0 = int(std::floor(gx)), y0 = int(std::floor(gy)), z0 = std::min(int(gz), zmax);
      double fx = gx - x0, fy = gy - y0, fz = gz - z0;
      double value[4] = {0, 0, 0, 0};
      for (int corner = 0; corner < 8; ++corner) {
        int dx = corner & 1, dy = (corner >> 1) & 1, dz = (corner >> 2) & 1;
        double weight = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * (dz ? fz : 1 - fz);
        for (int c = 0; c < 4; ++c) value[c] += weight * blurred[idx(x0 + dx, y0 + dy, z0 + dz, c)];
      }
      for (int c = 0; c < 3; ++c) out(x, y, c) = float(value[c] / value[3]);
    }
  return out;
}

// ---------------------------------------------------------------------------------------

TEST(PipelinesPerforation, AllSevenCompile) {
  for (const char* name : {"artistic_blur", "bilateral_filter", "two_pass_blur", "bilateral_grid",
                           "demosaic", "median", "unsharp_mask"}) {
    SCOPED_TRACE(name);
    Pipeline p = load_benchmark_pipeline(name);
    EXPECT_EQ(p.name, name);
    EXPECT_NE(p.find_func(p.output.func), nullptr);
    EXPECT_EQ(p.output.extents.size(), 3u) << "every benchmark outputs an (x, y, c) image";
    EXPECT_EQ(p.output.metric, ErrorMetric::Lab) << "every benchmark outputs an RGB image";
  }
}

TEST(PipelinesPerforation, TwoPassBlurMatchesSeparableGaussian) {
  for (const auto& [label, in] : colour_inputs(11)) {
    SCOPED_TRACE(label);
    // Sums of positive weights of values in [0, 1], normalised: f32 rounding only.
    expect_images_near(run("two_pass_blur", in), gaussian_blur_reference(in, 4.0, 8), 2e-6, 1e-5);
  }
  // The stages the perforation schedules name exist with their roles.
  Pipeline p = load_benchmark_pipeline("two_pass_blur");
  EXPECT_NE(p.find_func("A"), nullptr);
  EXPECT_EQ(p.output.func, "out");
}

TEST(PipelinesPerforation, TwoPassBlurTakesItsParams) {
  Image in = random_image(24, 20, 3, 12);
  expect_images_near(run("two_pass_blur", in, {{"sigma", 1.5}, {"h", 3}}),
                     gaussian_blur_reference(in, 1.5, 3), 2e-6, 1e-5);
}

TEST(PipelinesPerforation, UnsharpMaskSharpensWithTheTwoPassBlur) {
  for (const auto& [label, in] : colour_inputs(21)) {
    SCOPED_TRACE(label);
    Image blur = gaussian_blur_reference(in, 4.0, 8);
    Image expected(in.width, in.height, in.channels);
    for (size_t k = 0; k < in.data.size(); ++k)
      expected.data[k] = float(3.0 * in.data[k] + (1.0 - 3.0) * blur.data[k]);
    // The blur's f32 error is amplified by |1 - s| = 2, the input term by s = 3.
    expect_images_near(run("unsharp_mask", in), expected, 1e-5, 2e-5);
  }
}

TEST(PipelinesPerforation, MedianIsThe5x5PerChannelMedian) {
  for (const auto& [label, in] : colour_inputs(31)) {
    SCOPED_TRACE(label);
    // A selection, not arithmetic: exact.
    expect_images_near(run("median", in), median_reference(in), 0);
  }
}

TEST(PipelinesPerforation, BilateralFilterMatchesTomasiManduchi) {
  for (const auto& [label, in] : colour_inputs(41)) {
    SCOPED_TRACE(label);
    // The paper's parameters: sigma_r = 4/255, sigma_s = 0.8 px. The centre weight is 1,
    // so the normaliser is >= 1 and the ratio has f32 relative error.
    expect_images_near(run("bilateral_filter", in), bilateral_reference(in, 4.0 / 255, 0.8, 4),
                       1e-5, 1e-5);
  }
  // Wider range and spatial deviations mix many taps, which noise with sigma_r = 4/255
  // does not.
  Image in = random_image(30, 22, 3, 42);
  expect_images_near(run("bilateral_filter", in, {{"sigma_r", 0.2}, {"sigma_s", 2.0}}),
                     bilateral_reference(in, 0.2, 2.0, 4), 1e-5, 1e-5);
}

TEST(PipelinesPerforation, DemosaicInterpolatesRggb) {
  std::vector<std::pair<std::string, Image>> mosaics;
  mosaics.emplace_back("random 40x30", random_image(40, 30, 1, 51));
  mosaics.emplace_back("odd size 31x17", random_image(31, 17, 1, 52));
  if (auto photo = fixture_if_present("man-made-low-64x48.png"))
    mosaics.emplace_back("mosaic of man-made-low-64x48.png", mosaic_of(*photo));
  // The committed RGGB mosaic of the mandrill photo, as the benchmark feeds the pipeline.
  if (auto raw = fixture_if_present("bayer-rggb-64x48.png")) {
    ASSERT_EQ(raw->channels, 1);
    mosaics.emplace_back("bayer-rggb-64x48.png", *raw);
  }
  for (const auto& [label, m] : mosaics) {
    SCOPED_TRACE(label);
    Image out = run("demosaic", m, {}, /*two_d=*/true);
    // Means of two or four samples in f32.
    expect_images_near(out, demosaic_reference(m), 1e-6, 1e-6);
    // Every pixel keeps its own sample in its own channel, exactly.
    for (int y = 0; y < m.height; ++y)
      for (int x = 0; x < m.width; ++x) {
        int c = (x % 2 == 0 && y % 2 == 0) ? 0 : (x % 2 == 1 && y % 2 == 1) ? 2 : 1;
        ASSERT_EQ(out(x, y, c), m(x, y)) << "at (" << x << ", " << y << ")";
      }
  }
  // A flat colour survives the mosaic and the interpolation, borders included (mirroring
  // keeps the Bayer parity).
  Image flat(20, 14, 3);
  for (int y = 0; y < 14; ++y)
    for (int x = 0; x < 20; ++x) flat(x, y, 0) = 0.25f, flat(x, y, 1) = 0.5f, flat(x, y, 2) = 0.75f;
  expect_images_near(run("demosaic", mosaic_of(flat), {}, true), flat, 0);
}

TEST(PipelinesPerforation, ArtisticBlurMatchesJitteredVaryingBlur) {
  for (const auto& [label, in] : colour_inputs(61)) {
    SCOPED_TRACE(label);
    Image out = run("artistic_blur", in);
    // Pre-normalised positive weights in f32 (exp of arguments up to ~20).
    expect_images_near(out, artistic_reference(in, {}), 2e-5, 1e-5);
    // The centre is untouched.
    EXPECT_EQ(out(in.width / 2, in.height / 2, 1), in(in.width / 2, in.height / 2, 1));
  }
  // Other params: a larger window and a wider, isotropic kernel starting nearer the centre.
  Image in = random_image(33, 25, 3, 62);
  ArtisticParams p;
  p.h = 5, p.cutoff = 0.1, p.sigma_max = 2.0, p.tangential = 1.0;
  expect_images_near(run("artistic_blur", in,
                         {{"h", 5}, {"cutoff", 0.1}, {"sigma_max", 2.0}, {"tangential", 1.0}}),
                     artistic_reference(in, p), 2e-5, 1e-5);
}

TEST(PipelinesPerforation, ArtisticBlurJitterCoversMinusOneToOne) {
  // The jitter is a property of the pipeline's definition; check that the hash spreads
  // over all three values rather than collapsing onto one.
  int counts[3] = {0, 0, 0};
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) ++counts[jitter(x, y, 1) + 1], ++counts[jitter(x, y, 2) + 1];
  for (int n : counts) EXPECT_GT(n, 64 * 48 * 2 / 5);
}

TEST(PipelinesPerforation, BilateralGridMatchesSplatBlurSlice) {
  for (const auto& [label, in] : colour_inputs(71)) {
    SCOPED_TRACE(label);
    // Cell sizes: the default 13 (1/64 of the benchmark's 820-pixel-wide photos; a
    // 64x48 image then has a 6x5 grid) and 5, a finer grid with more partial cells at the
    // borders.
    for (int s : {13, 5}) {
      SCOPED_TRACE("s_sigma " + std::to_string(s));
      ParamValues params;
      if (s != 13) params["s_sigma"] = s;
      // f32 sums of up to s*s splatted values and of blurred cells, then a ratio.
      expect_images_near(run("bilateral_grid", in, params), bilateral_grid_reference(in, s, 0.1f),
                         1e-4, 1e-4);
    }
  }
}

TEST(PipelinesPerforation, FlatImagesStayFlat) {
  // Every filter here is a normalised average, a selection or (unsharp) an affine
  // combination whose weights sum to 1, so a constant colour comes out unchanged,
  // borders included.
  Image flat(36, 28, 3);
  const float colour[3] = {0.2f, 0.55f, 0.8f};
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < flat.height; ++y)
      for (int x = 0; x < flat.width; ++x) flat(x, y, c) = colour[c];
  for (const char* name : {"artistic_blur", "bilateral_filter", "two_pass_blur", "bilateral_grid",
                           "median", "unsharp_mask"}) {
    SCOPED_TRACE(name);
    expect_images_near(run(name, flat), flat, 2e-6, 2e-6);
  }
}

}  // namespace
}  // namespace stipple::testing
