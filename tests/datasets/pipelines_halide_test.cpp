// The Halide / reuse-analysis benchmark pipelines (datasets/pipelines/*.stp: blur3x3,
// unsharp, harris, camera_pipe, local_laplacian, interpolate, bilateral_grid_halide,
// nl_means, max_filter) run through the reference evaluator on small images and compared
// with straightforward C++ written here from the algorithms' descriptions (Halide's apps
// and the papers): plain loops or on-demand functions over the integer plane, clamp-to-edge
// (or mirror) reads, double precision where the language computes in f32. Each tolerance
// therefore covers f32 rounding and summation order only. Where a pipeline truncates a
// float to an integer (a LUT or histogram index), the reference computes that one value in
// f32 exactly as the pipeline does, because a one-ulp difference there moves the index.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tests/datasets/pipeline_test_support.h"

namespace stipple::testing {
namespace {

// ---------------------------------------------------------------------------------------
// Inputs: committed 64x48 fixture photos (datasets/fixtures) when they are there, random
// values otherwise, so that the tests never depend on files another change may rename.

std::optional<Image> fixture(const std::string& name) {
  if (!std::filesystem::is_regular_file(source_path("datasets/fixtures/" + name))) return {};
  return load_fixture(name);
}

/// A colour photo fixture, else random RGB.
Image colour_input(const std::string& name, uint32_t seed) {
  if (auto img = fixture(name); img && img->channels == 3) return *img;
  return random_image(48, 36, 3, seed);
}

/// The gray photo fixture, else random gray.
Image gray_input(uint32_t seed) {
  if (auto img = fixture("gray-64x48.png"); img && img->channels == 1) return *img;
  return random_image(48, 36, 1, seed);
}

// ---------------------------------------------------------------------------------------
// Small helpers for the references.

int floor_div(int a, int b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int floor_mod(int a, int b) { return a - b * floor_div(a, b); }

/// A function over the integer lattice (x, y, k), computed on first use and cached, so that
/// a reference can read a stage anywhere a later stage needs it, as the language's funcs
/// (which are defined everywhere; only inputs have a boundary) can be.
class LazyFunc {
 public:
  using Fn = std::function<double(int, int, int)>;
  LazyFunc() = default;
  explicit LazyFunc(Fn f) : f_(std::move(f)) {}
  double operator()(int x, int y, int k = 0) {
    uint64_t key = (uint64_t(uint32_t(x + (1 << 20))) << 42) |
                   (uint64_t(uint32_t(y + (1 << 20))) << 21) | uint64_t(uint32_t(k + (1 << 20)));
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    double v = f_(x, y, k);
    cache_.emplace(key, v);
    return v;
  }

 private:
  Fn f_;
  std::unordered_map<uint64_t, double> cache_;
};

Image evaluate(const std::string& name, const Buffer& in, const ParamValues& params = {}) {
  Pipeline p = load_benchmark_pipeline(name);
  return from_buffer(evaluate_pipeline(p, {{"in", in}}, params));
}

/// Largest |v| in an image, for tolerances relative to an output's scale.
double max_abs(const Image& img) {
  double m = 0;
  for (float v : img.data) m = std::max(m, double(std::abs(v)));
  return m;
}

/// Rec. 601 luminance of a clamped pixel, in f32 as the pipelines compute it (needed where
/// it is truncated to an index): 0.299 r + 0.587 g + 0.114 b as the language contracts it.
float gray601_f32(const Image& in, int x, int y) {
  return std::fma(0.114f, in.clamped(x, y, 2),
                  std::fma(0.299f, in.clamped(x, y, 0), 0.587f * in.clamped(x, y, 1)));
}

double gray601(const Image& in, int x, int y) {
  return 0.299 * in.clamped(x, y, 0) + 0.587 * in.clamped(x, y, 1) + 0.114 * in.clamped(x, y, 2);
}

// ---------------------------------------------------------------------------------------
// blur3x3: mean of the 3x3 neighbourhood, as a horizontal then a vertical 3-tap mean.

Image blur3x3_reference(const Image& in) {
  Image out(in.width, in.height, in.channels);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        double total = 0;
        for (int j = -1; j <= 1; ++j) {
          double row = 0;
          for (int i = -1; i <= 1; ++i) row += in.clamped(x + i, y + j, c);
          total += row / 3;
        }
        out(x, y, c) = float(total / 3);
      }
  return out;
}

TEST(HalidePipelines, Blur3x3MatchesBoxMean) {
  Image in = colour_input("man-made-high-64x48.png", 11);
  Image got = evaluate("blur3x3", to_buffer(in));
  // Values in [0, 1], five f32 operations per pass: a few ulps of 1.
  expect_images_near(got, blur3x3_reference(in), 1e-6);
}

// ---------------------------------------------------------------------------------------
// unsharp: sharpen the luminance with a 7-tap Gaussian (sigma 1.5, the app's unnormalised
// kernel), apply it to the colour as the ratio sharpened / original luminance.

Image unsharp_reference(const Image& in, double sigma) {
  const double pi = 3.14159265358979323846;
  auto kernel = [&](int i) {
    return std::exp(-double(i * i) / (2 * sigma * sigma)) / (std::sqrt(2 * pi) * sigma);
  };
  const int w = in.width, h = in.height, m = 3;
  // The vertical blur on columns -3..w+2 so that the horizontal one can read them.
  std::vector<double> blur_y(size_t(w + 2 * m) * h);
  for (int y = 0; y < h; ++y)
    for (int x = -m; x < w + m; ++x) {
      double s = 0;
      for (int j = -m; j <= m; ++j) s += kernel(j) * gray601(in, x, y + j);
      blur_y[size_t(y) * (w + 2 * m) + (x + m)] = s;
    }
  Image out(w, h, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double blur = 0;
      for (int i = -m; i <= m; ++i)
        blur += kernel(i) * blur_y[size_t(y) * (w + 2 * m) + (x + i + m)];
      double gray = gray601(in, x, y);
      double ratio = (2 * gray - blur) / std::max(gray, 1e-6);
      for (int c = 0; c < 3; ++c) out(x, y, c) = float(ratio * in(x, y, c));
    }
  return out;
}

TEST(HalidePipelines, UnsharpMatchesGaussianRatio) {
  Image in = colour_input("natural-high-64x48.png", 12);
  Image got = evaluate("unsharp", to_buffer(in));
  // The blur is f32 to ~1e-7; dividing by the luminance amplifies it where the
  // luminance is small (random inputs reach ~0.02), so allow 1e-5 relative and absolute.
  expect_images_near(got, unsharp_reference(in, 1.5), 1e-5, 1e-5);

  // A black pixel (luminance 0) gives 0, not NaN.
  Image dark = in;
  for (int c = 0; c < 3; ++c) dark(5, 5, c) = 0;
  Image got_dark = evaluate("unsharp", to_buffer(dark));
  for (int c = 0; c < 3; ++c) EXPECT_EQ(got_dark(5, 5, c), 0.f);
}

// ---------------------------------------------------------------------------------------
// harris: Sobel gradients (/12) of the luminance, 3x3 box sums of their products, and
// det - 0.04 trace^2 of the structure tensor.

struct HarrisResult {
  Image response;
  double scale = 0;  // the largest det and trace^2 terms, for the tolerance
};

HarrisResult harris_reference(const Image& in, double k) {
  auto ix = [&](int x, int y) {
    double s = 0;
    for (int j = -1; j <= 1; ++j) {
      double wgt = j == 0 ? 2 : 1;
      s += wgt * (gray601(in, x + 1, y + j) - gray601(in, x - 1, y + j));
    }
    return s / 12;
  };
  auto iy = [&](int x, int y) {
    double s = 0;
    for (int i = -1; i <= 1; ++i) {
      double wgt = i == 0 ? 2 : 1;
      s += wgt * (gray601(in, x + i, y + 1) - gray601(in, x + i, y - 1));
    }
    return s / 12;
  };
  HarrisResult r;
  r.response = Image(in.width, in.height, 1);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      double sxx = 0, syy = 0, sxy = 0;
      for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i) {
          double gx = ix(x + i, y + j), gy = iy(x + i, y + j);
          sxx += gx * gx;
          syy += gy * gy;
          sxy += gx * gy;
        }
      double trace = sxx + syy;
      r.response(x, y) = float(sxx * syy - sxy * sxy - k * trace * trace);
      r.scale = std::max(r.scale, sxx * syy + sxy * sxy + k * trace * trace);
    }
  return r;
}

TEST(HalidePipelines, HarrisMatchesStructureTensorResponse) {
  Image in = colour_input("man-made-high-64x48.png", 13);
  Pipeline p = load_benchmark_pipeline("harris");
  Buffer out = evaluate_pipeline(p, {{"in", to_buffer(in)}});
  EXPECT_EQ(out.dimensions(), 2);  // one response per pixel
  HarrisResult ref = harris_reference(in, 0.04);
  // det and k trace^2 nearly cancel: the f32 error is relative to the terms, not to the
  // response, so the tolerance is 1e-5 of the largest term.
  expect_images_near(from_buffer(out), ref.response, 1e-5 * ref.scale);
  EXPECT_GT(max_abs(ref.response), 100 * 1e-5 * ref.scale);  // the test is not vacuous
}

// ---------------------------------------------------------------------------------------
// camera_pipe: GRBG mosaic -> hot pixel suppression -> edge-directed demosaic with green
// correction -> Q8.8 colour matrix -> gamma/contrast LUT to 8 bits. All integer except
// the matrix and the LUT, which are computed in f32 as the app does; compared exactly.

struct RawImage {
  int width = 0, height = 0;
  std::vector<uint16_t> data;
  /// Mirror boundary without repeating the edge: -1 reads 1, width reads width - 2.
  int at(int x, int y) const {
    auto mirror = [](int i, int n) {
      while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
      return i;
    };
    return data[size_t(mirror(y, height)) * width + mirror(x, width)];
  }
};

Buffer raw_to_buffer(const RawImage& raw) {
  Buffer b(ScalarType::UInt16, {raw.width, raw.height});
  for (int y = 0; y < raw.height; ++y)
    for (int x = 0; x < raw.width; ++x) {
      int64_t coords[2] = {x, y};
      b.set(coords, raw.data[size_t(y) * raw.width + x]);
    }
  return b;
}

/// GRBG: green at (even, even) and (odd, odd), red at (odd x, even y), blue at (even x, odd y).
enum class Site { GreenOnRedRow, Red, Blue, GreenOnBlueRow };
Site site_of(int x, int y) {
  bool xo = floor_mod(x, 2) == 1, yo = floor_mod(y, 2) == 1;
  if (!yo) return xo ? Site::Red : Site::GreenOnRedRow;
  return xo ? Site::GreenOnBlueRow : Site::Blue;
}

class CameraReference {
 public:
  CameraReference(const RawImage& raw, float color_temp, float gamma, float contrast) : raw_(raw) {
    build_matrix(color_temp);
    build_curve(gamma, contrast);
  }

  Image run() const {
    Image out(raw_.width, raw_.height, 3);
    for (int y = 0; y < raw_.height; ++y)
      for (int x = 0; x < raw_.width; ++x) {
        int rgb[3] = {colour(0, x, y), colour(1, x, y), colour(2, x, y)};
        for (int c = 0; c < 3; ++c) {
          int v = matrix_[c][3] + matrix_[c][0] * rgb[0] + matrix_[c][1] * rgb[1] +
                  matrix_[c][2] * rgb[2];
          v = std::clamp(floor_div(v, 256), 0, 1023);
          out(x, y, c) = float(curve_[v]);
        }
      }
    return out;
  }

 private:
  static int avg(int a, int b) { return floor_div(a + b + 1, 2); }

  /// Hot pixel suppression: no brighter than the brightest same-colour neighbour 2 away.
  int denoised(int x, int y) const {
    int limit = std::max(std::max(raw_.at(x - 2, y), raw_.at(x + 2, y)),
                         std::max(raw_.at(x, y - 2), raw_.at(x, y + 2)));
    return std::clamp(raw_.at(x, y), 0, limit);
  }

  /// Green everywhere: measured at green sites; at red and blue sites the mean of the
  /// horizontal or the vertical pair of greens, whichever differs less (a tie takes the
  /// vertical pair, as the app's strict comparison does).
  int green(int x, int y) const {
    Site s = site_of(x, y);
    if (s == Site::GreenOnRedRow || s == Site::GreenOnBlueRow) return denoised(x, y);
    int l = denoised(x - 1, y), r = denoised(x + 1, y);
    int u = denoised(x, y - 1), d = denoised(x, y + 1);
    return std::abs(l - r) < std::abs(u - d) ? avg(l, r) : avg(u, d);
  }

  /// Red or blue at (x, y) from two samples of it at (x1, y1) and (x2, y2): their mean,
  /// corrected by how far green at (x, y) is from the same mean of green there.
  int corrected_mean(int x, int y, int x1, int y1, int x2, int y2) const {
    return green(x, y) - avg(green(x1, y1), green(x2, y2)) +
           avg(denoised(x1, y1), denoised(x2, y2));
  }

  int colour(int c, int x, int y) const {
    if (c == 1) return green(x, y);
    Site s = site_of(x, y);
    Site own = c == 0 ? Site::Red : Site::Blue;
    if (s == own) return denoised(x, y);
    if (s == Site::GreenOnRedRow || s == Site::GreenOnBlueRow) {
      // Red lies left/right on red rows and above/below on blue rows; blue the other way.
      bool horizontal = (s == Site::GreenOnRedRow) == (c == 0);
      return horizontal ? corrected_mean(x, y, x - 1, y, x + 1, y)
                        : corrected_mean(x, y, x, y - 1, x, y + 1);
    }
    // Red at a blue site or blue at a red site: the four diagonal neighbours. Take the
    // anti-diagonal pair (up-right, down-left) when its values differ less than the main
    // diagonal pair's.
    int anti = std::abs(denoised(x + 1, y - 1) - denoised(x - 1, y + 1));
    int main = std::abs(denoised(x - 1, y - 1) - denoised(x + 1, y + 1));
    return anti < main ? corrected_mean(x, y, x + 1, y - 1, x - 1, y + 1)
                       : corrected_mean(x, y, x - 1, y - 1, x + 1, y + 1);
  }

  void build_matrix(float kelvin) {
    // The app's Nokia N900 calibrations (apps/camera_pipe/process.cpp): rows R, G, B;
    // columns the R, G, B weights and the offset.
    const float m3200[3][4] = {{1.6697f, -0.2693f, -0.4004f, -42.4346f},
                               {-0.3576f, 1.0615f, 1.5949f, -37.1158f},
                               {-0.2175f, -1.8751f, 6.9640f, -26.6970f}};
    const float m7000[3][4] = {{2.2997f, -0.4478f, 0.1706f, -39.0923f},
                               {-0.3826f, 1.5906f, -0.2080f, -25.4311f},
                               {-0.0888f, -0.7344f, 2.2832f, -20.0826f}};
    float alpha = (1.0f / kelvin - 1.0f / 3200.0f) / (1.0f / 7000.0f - 1.0f / 3200.0f);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) {
        float a = m3200[r][c] * alpha;
        float b = m7000[r][c] * (1.0f - alpha);
        matrix_[r][c] = int((a + b) * 256.0f);  // Q8.8, truncated
      }
  }

  void build_curve(float gamma, float contrast) {
    const int black = 25, white = 1023;
    float b = 2.0f - std::pow(2.0f, contrast / 100.0f);
    float a = 2.0f - 2.0f * b;
    float inv_range = 1.0f / float(white - black);
    for (int v = 0; v < 1024; ++v) {
      float xf = std::clamp(float(v - black) * inv_range, 0.0f, 1.0f);
      float g = std::pow(xf, 1.0f / gamma);
      float z =
          g > 0.5f ? 1.0f - (a * (1.0f - g) * (1.0f - g) + b * (1.0f - g)) : a * g * g + b * g;
      int val = int(std::clamp(z * 255.0f + 0.5f, 0.0f, 255.0f));
      curve_[v] = v <= black ? 0 : v > white ? 255 : val;
    }
  }

  const RawImage& raw_;
  int matrix_[3][4] = {};
  int curve_[1024] = {};
};

/// A 10-bit GRBG mosaic of a colour image, with a few hot and dead pixels.
RawImage mosaic_of(const Image& rgb, uint32_t seed) {
  RawImage raw{rgb.width, rgb.height, std::vector<uint16_t>(size_t(rgb.width) * rgb.height)};
  std::mt19937 rng(seed);
  for (int y = 0; y < rgb.height; ++y)
    for (int x = 0; x < rgb.width; ++x) {
      Site s = site_of(x, y);
      int c = s == Site::Red ? 0 : s == Site::Blue ? 2 : 1;
      int v = int(std::lround(rgb(x, y, c) * 1023));
      uint32_t roll = rng() % 100;
      if (roll == 0) v = 1023;  // hot
      if (roll == 1) v = 0;     // dead
      raw.data[size_t(y) * raw.width + x] = uint16_t(v);
    }
  return raw;
}

RawImage random_raw(int w, int h, uint32_t seed) {
  RawImage raw{w, h, std::vector<uint16_t>(size_t(w) * h)};
  std::mt19937 rng(seed);
  for (auto& v : raw.data) v = uint16_t(rng() % 1024);
  return raw;
}

TEST(HalidePipelines, CameraPipeMatchesExactly) {
  std::vector<RawImage> raws;
  // The committed RGGB mosaic, read one column to the right so that it starts with green
  // (GRBG; the width becomes odd, which the mirror boundary handles), scaled to 10 bits.
  if (auto rggb = fixture("bayer-rggb-64x48.png"); rggb && rggb->channels == 1) {
    RawImage raw{rggb->width - 1, rggb->height, {}};
    for (int y = 0; y < raw.height; ++y)
      for (int x = 0; x < raw.width; ++x)
        raw.data.push_back(uint16_t(std::lround((*rggb)(x + 1, y) * 1023)));
    raws.push_back(raw);
  }
  raws.push_back(mosaic_of(colour_input("man-made-high-64x48.png", 14), 140));
  raws.push_back(random_raw(36, 26, 141));
  Pipeline p = load_benchmark_pipeline("camera_pipe");
  for (const RawImage& raw : raws) {
    Buffer out = evaluate_pipeline(p, {{"in", raw_to_buffer(raw)}});
    ASSERT_EQ(out.type(), ScalarType::UInt8);
    ASSERT_EQ(out.dimensions(), 3);
    // Integer arithmetic and the same f32 LUT and matrix: exact.
    expect_images_near(from_buffer(out), CameraReference(raw, 3700, 2, 50).run(), 0);
  }
  // Another colour temperature changes the matrix, and the reference follows it.
  const RawImage& raw = raws.front();
  Buffer warm = evaluate_pipeline(p, {{"in", raw_to_buffer(raw)}}, {{"color_temp", 5000}});
  expect_images_near(from_buffer(warm), CameraReference(raw, 5000, 2, 50).run(), 0);
}

// ---------------------------------------------------------------------------------------
// local_laplacian: Paris et al.'s filter with Aubry et al.'s sampled intensity levels,
// 4 pyramid levels, 8 intensity levels, alpha = beta = 1.

Image local_laplacian_reference(const Image& in, int levels, double alpha, double beta) {
  const int J = 4;
  const double step = 1.0 / (levels - 1);
  auto remap = [&](int i) {
    double fx = i / 256.0;
    return alpha * fx * std::exp(-fx * fx / 2);
  };
  // Downsampling by [1 3 3 1] / 8 and bilinear upsampling (0.25 / 0.75), separably.
  auto down = [](LazyFunc& f, int x, int y, int k) {
    auto row = [&](int yy) {
      return (f(2 * x - 1, yy, k) + 3 * (f(2 * x, yy, k) + f(2 * x + 1, yy, k)) +
              f(2 * x + 2, yy, k)) /
             8;
    };
    return (row(2 * y - 1) + 3 * (row(2 * y) + row(2 * y + 1)) + row(2 * y + 2)) / 8;
  };
  auto up = [](LazyFunc& f, int x, int y, int k) {
    auto near_x = [&](int yy) {
      int far = floor_div(x, 2) - 1 + 2 * floor_mod(x, 2);
      return 0.25 * f(far, yy, k) + 0.75 * f(floor_div(x, 2), yy, k);
    };
    int far_y = floor_div(y, 2) - 1 + 2 * floor_mod(y, 2);
    return 0.25 * near_x(far_y) + 0.75 * near_x(floor_div(y, 2));
  };

  std::vector<LazyFunc> gray(J), processed(J), laplacian(J), out_lap(J), out_gauss(J);
  // Level 0 of the input pyramid; its LUT index is truncated from the f32 luminance.
  gray[0] = LazyFunc([&](int x, int y, int) { return double(gray601_f32(in, x, y)); });
  processed[0] = LazyFunc([&](int x, int y, int k) {
    float g = gray601_f32(in, x, y);
    int idx = std::clamp(int(g * float(levels - 1) * 256.0f), 0, (levels - 1) * 256);
    double level = k * step;
    return beta * (g - level) + level + remap(idx - 256 * k);
  });
  for (int j = 1; j < J; ++j) {
    gray[j] = LazyFunc([&, j](int x, int y, int) { return down(gray[j - 1], x, y, 0); });
    processed[j] =
        LazyFunc([&, j](int x, int y, int k) { return down(processed[j - 1], x, y, k); });
  }
  for (int j = 0; j < J; ++j) {
    laplacian[j] = LazyFunc([&, j](int x, int y, int k) {
      return j == J - 1 ? processed[j](x, y, k)
                        : processed[j](x, y, k) - up(processed[j + 1], x, y, k);
    });
    // Blend the two processed pyramids whose intensity levels bracket the input's value.
    out_lap[j] = LazyFunc([&, j](int x, int y, int) {
      double v = gray[j](x, y) * (levels - 1);
      int li = std::clamp(int(v), 0, levels - 2);
      double lf = v - li;
      return (1 - lf) * laplacian[j](x, y, li) + lf * laplacian[j](x, y, li + 1);
    });
  }
  for (int j = J - 1; j >= 0; --j) {
    out_gauss[j] = LazyFunc([&, j](int x, int y, int) {
      return j == J - 1 ? out_lap[j](x, y) : up(out_gauss[j + 1], x, y, 0) + out_lap[j](x, y);
    });
  }
  Image out(in.width, in.height, 3);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < 3; ++c) {
        double v = out_gauss[0](x, y) * (in(x, y, c) + 0.01) / (gray601(in, x, y) + 0.01);
        out(x, y, c) = float(std::clamp(v, 0.0, 1.0));
      }
  return out;
}

TEST(HalidePipelines, LocalLaplacianMatchesPyramidFilter) {
  Image in = colour_input("natural-high-64x48.png", 15);
  Image got = evaluate("local_laplacian", to_buffer(in));
  Image want = local_laplacian_reference(in, 8, 1.0, 1.0);
  // About 30 f32 stages of values near 1, then the colour ratio (up to ~10x): 2e-5.
  expect_images_near(got, want, 2e-5);

  // A stronger detail boost (alpha = 3) and a compressed base (beta = 0.5) on an odd size.
  Image odd = random_image(37, 29, 3, 16);
  Image got_odd = evaluate("local_laplacian", to_buffer(odd), {{"alpha", 3}, {"beta", 0.5}});
  expect_images_near(got_odd, local_laplacian_reference(odd, 8, 3.0, 0.5), 2e-5);
}

// ---------------------------------------------------------------------------------------
// interpolate: fill the holes of an RGBA image (alpha 0) from a pyramid of premultiplied
// colour, 5 levels, [1 2 1] / 4 downsampling, 2-tap mean upsampling, blend by alpha.

Image interpolate_reference(const Image& in) {
  const int L = 5;
  std::vector<LazyFunc> down(L), interp(L);
  down[0] = LazyFunc([&](int x, int y, int c) {
    double a = in.clamped(x, y, 3);
    return c < 3 ? in.clamped(x, y, c) * a : a;
  });
  for (int l = 1; l < L; ++l) {
    down[l] = LazyFunc([&, l](int x, int y, int c) {
      // The app reads level 3 clamped to [0, width / 16] x [0, height / 16] when building
      // level 4, to keep the coarse levels' footprint near the image.
      auto prev = [&](int px, int py) {
        if (l == 4) {
          px = std::clamp(px, 0, in.width / 16);
          py = std::clamp(py, 0, in.height / 16);
        }
        return down[l - 1](px, py, c);
      };
      auto row = [&](int py) {
        return (prev(2 * x - 1, py) + 2 * prev(2 * x, py) + prev(2 * x + 1, py)) / 4;
      };
      return (row(2 * y - 1) + 2 * row(2 * y) + row(2 * y + 1)) / 4;
    });
  }
  for (int l = L - 1; l >= 0; --l) {
    interp[l] = LazyFunc([&, l](int x, int y, int c) {
      if (l == L - 1) return down[l](x, y, c);
      auto coarse_row = [&](int cy) {
        return (interp[l + 1](floor_div(x, 2), cy, c) + interp[l + 1](floor_div(x + 1, 2), cy, c)) /
               2;
      };
      double upsampled = (coarse_row(floor_div(y, 2)) + coarse_row(floor_div(y + 1, 2))) / 2;
      return down[l](x, y, c) + (1 - down[l](x, y, 3)) * upsampled;
    });
  }
  Image out(in.width, in.height, 3);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < 3; ++c) out(x, y, c) = float(interp[0](x, y, c) / interp[0](x, y, 3));
  return out;
}

/// RGBA: the colour input, alpha 1 on about a third of the pixels, 0 on half and
/// fractional on the rest.
Image rgba_input(uint32_t seed) {
  Image rgb = colour_input("natural-low-64x48.png", seed);
  Image rgba(rgb.width, rgb.height, 4);
  std::mt19937 rng(seed);
  for (int y = 0; y < rgb.height; ++y)
    for (int x = 0; x < rgb.width; ++x) {
      for (int c = 0; c < 3; ++c) rgba(x, y, c) = rgb(x, y, c);
      uint32_t roll = rng() % 6;
      rgba(x, y, 3) = roll < 3 ? 0.f : roll < 5 ? 1.f : float(rng() % 1000) / 1000.f;
    }
  return rgba;
}

TEST(HalidePipelines, InterpolateMatchesPyramidFill) {
  Image in = rgba_input(17);
  Pipeline p = load_benchmark_pipeline("interpolate");
  Buffer out = evaluate_pipeline(p, {{"in", to_buffer(in)}});
  ASSERT_EQ(out.extent_or_one(2), 3);
  // Colour in [0, 1] divided by an alpha of at least ~0.1 after filling: 1e-5 relative.
  expect_images_near(from_buffer(out), interpolate_reference(in), 1e-6, 1e-5);
  // Known pixels (alpha 1) keep their colour.
  Image got = from_buffer(out);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      if (in(x, y, 3) == 1.f) {
        EXPECT_NEAR(got(x, y, 1), in(x, y, 1), 1e-5);
      }
}

// ---------------------------------------------------------------------------------------
// bilateral_grid_halide: splat into a grid of 8x8-pixel cells and 0.1-wide intensity bins,
// blur [1 4 6 4 1] in z, x, y, slice trilinearly, divide by the weight.

Image bilateral_grid_reference(const Image& in, int s, float r_sigma) {
  const float inv_r = 1.0f / r_sigma;
  const int gx0 = -3, gy0 = -3, gz0 = -3;
  const int gw = in.width / s + 8, gh = in.height / s + 8, gd = int(inv_r) + 8;
  // grid[c][z][y][x] over cells gx0.., gy0.., bins gz0..
  auto index = [&](int x, int y, int z, int c) {
    return ((size_t(c) * gd + (z - gz0)) * gh + (y - gy0)) * gw + (x - gx0);
  };
  std::vector<double> grid(size_t(2) * gd * gh * gw, 0.0);
  // Each cell gathers its s x s pixels (centred: cell * s - s/2 .. cell * s + s/2 - 1,
  // clamped to the image), into the bin nearest the value (computed in f32).
  for (int cy = gy0; cy < gy0 + gh; ++cy)
    for (int cx = gx0; cx < gx0 + gw; ++cx)
      for (int ry = 0; ry < s; ++ry)
        for (int rx = 0; rx < s; ++rx) {
          float v = std::clamp(in.clamped(cx * s + rx - s / 2, cy * s + ry - s / 2), 0.0f, 1.0f);
          int z = int(v * inv_r + 0.5f);
          grid[index(cx, cy, z, 0)] += v;
          grid[index(cx, cy, z, 1)] += 1;
        }
  // Blur along z, then x, then y; each pass leaves the two cells at each end of its own
  // axis at 0 (the three cells of margin keep them away from every cell the slice reads).
  const double taps[5] = {1, 4, 6, 4, 1};
  auto blur = [&](int dx, int dy, int dz) {
    std::vector<double> out(grid.size(), 0.0);
    for (int c = 0; c < 2; ++c)
      for (int z = gz0 + 2 * dz; z < gz0 + gd - 2 * dz; ++z)
        for (int y = gy0 + 2 * dy; y < gy0 + gh - 2 * dy; ++y)
          for (int x = gx0 + 2 * dx; x < gx0 + gw - 2 * dx; ++x) {
            double sum = 0;
            for (int t = -2; t <= 2; ++t)
              sum += taps[t + 2] * grid[index(x + t * dx, y + t * dy, z + t * dz, c)];
            out[index(x, y, z, c)] = sum;
          }
    grid = std::move(out);
  };
  blur(0, 0, 1);
  blur(1, 0, 0);
  blur(0, 1, 0);
  Image out(in.width, in.height, 1);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      float zv = std::clamp(in(x, y), 0.0f, 1.0f) * inv_r;
      int zi = int(zv);
      double zf = zv - float(zi);
      int xi = x / s, yi = y / s;
      double xf = double(x % s) / s, yf = double(y % s) / s;
      double v[2];
      for (int c = 0; c < 2; ++c) {
        double acc = 0;
        for (int dz = 0; dz <= 1; ++dz)
          for (int dy = 0; dy <= 1; ++dy)
            for (int dx = 0; dx <= 1; ++dx) {
              double wgt = (dx ? xf : 1 - xf) * (dy ? yf : 1 - yf) * (dz ? zf : 1 - zf);
              acc += wgt * grid[index(xi + dx, yi + dy, zi + dz, c)];
            }
        v[c] = acc;
      }
      out(x, y) = float(v[0] / v[1]);
    }
  return out;
}

TEST(HalidePipelines, BilateralGridHalideMatchesSplatBlurSlice) {
  Image in = gray_input(18);
  Pipeline p = load_benchmark_pipeline("bilateral_grid_halide");
  Buffer out = evaluate_pipeline(p, {{"in", to_buffer(in, ScalarType::Float32, true)}});
  ASSERT_EQ(out.dimensions(), 2);
  // Weighted means of values in [0, 1] with f32 grid sums of up to ~1e5: 1e-5.
  expect_images_near(from_buffer(out), bilateral_grid_reference(in, 8, 0.1f), 1e-5, 1e-5);

  // Another cell size on an odd-sized image.
  Image odd = random_image(29, 23, 1, 19);
  Buffer out_odd =
      evaluate_pipeline(p, {{"in", to_buffer(odd, ScalarType::Float32, true)}}, {{"s_sigma", 5}});
  expect_images_near(from_buffer(out_odd), bilateral_grid_reference(odd, 5, 0.1f), 1e-5, 1e-5);
}

// ---------------------------------------------------------------------------------------
// nl_means: weights from the mean squared colour difference of 7x7 patches, over a 7x7
// search window, sigma = 0.12.

Image nl_means_reference(const Image& in, double sigma, int patch_radius, int search_radius) {
  const int patch = 2 * patch_radius + 1;
  Image out(in.width, in.height, 3);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      double sums[4] = {0, 0, 0, 0};
      for (int dy = -search_radius; dy <= search_radius; ++dy)
        for (int dx = -search_radius; dx <= search_radius; ++dx) {
          double dist = 0;
          for (int j = -patch_radius; j <= patch_radius; ++j)
            for (int i = -patch_radius; i <= patch_radius; ++i)
              for (int c = 0; c < 3; ++c) {
                double diff = in.clamped(x + i, y + j, c) - in.clamped(x + i + dx, y + j + dy, c);
                dist += diff * diff;
              }
          double w = std::exp(-dist / (sigma * sigma * patch * patch));
          for (int c = 0; c < 3; ++c) sums[c] += w * in.clamped(x + dx, y + dy, c);
          sums[3] += w;
        }
      for (int c = 0; c < 3; ++c) out(x, y, c) = float(std::clamp(sums[c] / sums[3], 0.0, 1.0));
    }
  return out;
}

TEST(HalidePipelines, NlMeansMatchesPatchWeightedMean) {
  Image in = colour_input("natural-high-64x48.png", 20);
  Image got = evaluate("nl_means", to_buffer(in));
  // Weights of f32 patch distances (49 * 3 terms) and a normalised sum: 1e-5.
  expect_images_near(got, nl_means_reference(in, 0.12, 3, 3), 1e-5);

  // A noisy flat image is smoothed towards its mean (denoising actually happens).
  Image noisy(40, 30, 3);
  std::mt19937 rng(21);
  std::normal_distribution<float> noise(0.f, 0.05f);
  for (float& v : noisy.data) v = 0.5f + noise(rng);
  Image smoothed = evaluate("nl_means", to_buffer(noisy));
  expect_images_near(smoothed, nl_means_reference(noisy, 0.12, 3, 3), 1e-5);
  auto deviation = [](const Image& img) {
    double s = 0;
    for (float v : img.data) s += (v - 0.5) * (v - 0.5);
    return std::sqrt(s / img.data.size());
  };
  EXPECT_LT(deviation(smoothed), 0.5 * deviation(noisy));
}

// ---------------------------------------------------------------------------------------
// max_filter: maximum over a disc; column i of the disc spans rows -h..h with h the number
// of rows 0..radius inside i^2 + j^2 < (radius + 0.25)^2 (the app's filter_height).

Image max_filter_reference(const Image& in, int radius) {
  std::vector<int> height(2 * radius + 1);
  const double rr = (radius + 0.25) * (radius + 0.25);
  for (int i = -radius; i <= radius; ++i)
    for (int j = 0; j <= radius; ++j) height[i + radius] += double(i * i + j * j) < rr;
  Image out(in.width, in.height, in.channels);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        float m = -INFINITY;
        for (int i = -radius; i <= radius; ++i) {
          int h = height[i + radius];
          for (int j = -h; j <= h; ++j) m = std::max(m, in.clamped(x + i, y + j, c));
        }
        out(x, y, c) = m;
      }
  return out;
}

TEST(HalidePipelines, MaxFilterMatchesDiscMaximum) {
  // A random image is a poor test of a large disc (nearly every output is the image's
  // maximum), so use a dark image with sparse bright dots of different values.
  Image in(64, 48, 3);
  std::mt19937 rng(22);
  for (float& v : in.data)
    v = (rng() % 50 == 0) ? float(rng() % 1000) / 1000.f : 0.01f * float(rng() % 10);
  Pipeline p = load_benchmark_pipeline("max_filter");
  // The app's radius (26) and smaller ones (exact: maxima of the same values).
  expect_images_near(from_buffer(evaluate_pipeline(p, {{"in", to_buffer(in)}})),
                     max_filter_reference(in, 26), 0);
  for (int radius : {1, 2, 3, 4, 5, 9}) {
    SCOPED_TRACE("radius " + std::to_string(radius));
    Buffer out = evaluate_pipeline(p, {{"in", to_buffer(in)}}, {{"radius", radius}});
    expect_images_near(from_buffer(out), max_filter_reference(in, radius), 0);
  }
  Image photo = colour_input("man-made-low-64x48.png", 23);
  Buffer out = evaluate_pipeline(p, {{"in", to_buffer(photo)}}, {{"radius", 4}});
  expect_images_near(from_buffer(out), max_filter_reference(photo, 4), 0);
}

// ---------------------------------------------------------------------------------------

TEST(HalidePipelines, AllCompile) {
  for (const char* name : {"blur3x3", "unsharp", "harris", "camera_pipe", "local_laplacian",
                           "interpolate", "bilateral_grid_halide", "nl_means", "max_filter"}) {
    SCOPED_TRACE(name);
    Pipeline p = load_benchmark_pipeline(name);
    EXPECT_EQ(p.name, name);
    ASSERT_EQ(p.inputs.size(), 1u);
    EXPECT_EQ(p.inputs[0].name, "in");
  }
}

}  // namespace
}  // namespace stipple::testing
