// Shared helpers for the benchmark-pipeline tests: load a pipeline from datasets/pipelines,
// make inputs (random or from the committed fixtures), run the reference evaluator, and
// compare its output with an independent implementation written in the test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"

namespace stipple::testing {

inline std::string source_path(const std::string& relative) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + relative;
}

inline Pipeline load_benchmark_pipeline(const std::string& name) {
  return load_pipeline_file(source_path("datasets/pipelines/" + name + ".stp"));
}

/// A plain dense float image, x fastest, then y, then c; the tests' own representation
/// so that the reference implementations do not depend on Buffer.
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<float> data;
  Image() = default;
  Image(int w, int h, int c) : width(w), height(h), channels(c), data(size_t(w) * h * c, 0.f) {}
  float& operator()(int x, int y, int c = 0) { return data[(size_t(c) * height + y) * width + x]; }
  float operator()(int x, int y, int c = 0) const {
    return data[(size_t(c) * height + y) * width + x];
  }
  /// Clamp-to-edge read, the language's default boundary condition.
  float clamped(int x, int y, int c = 0) const {
    x = std::min(std::max(x, 0), width - 1);
    y = std::min(std::max(y, 0), height - 1);
    return (*this)(x, y, c);
  }
};

/// Uniform random values in [0, 1).
inline Image random_image(int w, int h, int c, uint32_t seed) {
  Image img(w, h, c);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.f, 1.f);
  for (float& v : img.data) v = dist(rng);
  return img;
}

/// A committed fixture photo (datasets/fixtures/NAME) scaled to [0, 1] floats.
inline Image load_fixture(const std::string& name) {
  Buffer photo = read_image(source_path("datasets/fixtures/" + name));
  Image img(int(photo.extent(0)), int(photo.extent(1)), int(photo.extent_or_one(2)));
  double scale = photo.type() == ScalarType::UInt16 ? 65535.0 : 255.0;
  for (int c = 0; c < img.channels; ++c)
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) {
        int64_t coords[3] = {x, y, c};
        img(x, y, c) =
            float(photo.get(std::span<const int64_t>(coords, photo.dimensions())) / scale);
      }
  return img;
}

/// The Image as a Buffer of the given float or integer type, 2-D when channels == 0 is
/// requested via `two_d`, else (x, y, c). Integer types take round(v * scale).
inline Buffer to_buffer(const Image& img, ScalarType type = ScalarType::Float32, bool two_d = false,
                        double scale = 1.0) {
  std::vector<int64_t> extents = {img.width, img.height};
  if (!two_d) extents.push_back(img.channels);
  Buffer b(type, extents);
  for (int c = 0; c < (two_d ? 1 : img.channels); ++c)
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) {
        int64_t coords[3] = {x, y, c};
        double v = img(x, y, c) * scale;
        if (type != ScalarType::Float32 && type != ScalarType::Float64) v = std::nearbyint(v);
        b.set(std::span<const int64_t>(coords, b.dimensions()), v);
      }
  return b;
}

inline Image from_buffer(const Buffer& b) {
  Image img(int(b.extent(0)), int(b.extent(1)), int(b.extent_or_one(2)));
  for (int c = 0; c < img.channels; ++c)
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) {
        int64_t coords[3] = {b.min(0) + x, b.min(1) + y, b.dimensions() > 2 ? b.min(2) + c : 0};
        img(x, y, c) = float(b.get(std::span<const int64_t>(coords, b.dimensions())));
      }
  return img;
}

/// Expects every value within `abs_tol + rel_tol * |expected|`; reports the first few misses.
inline void expect_images_near(const Image& actual, const Image& expected, double abs_tol,
                               double rel_tol = 0) {
  ASSERT_EQ(actual.width, expected.width);
  ASSERT_EQ(actual.height, expected.height);
  ASSERT_EQ(actual.channels, expected.channels);
  int misses = 0;
  double worst = 0;
  for (int c = 0; c < expected.channels; ++c)
    for (int y = 0; y < expected.height; ++y)
      for (int x = 0; x < expected.width; ++x) {
        double a = actual(x, y, c), e = expected(x, y, c);
        double err = std::abs(a - e);
        worst = std::max(worst, err);
        if (!(err <= abs_tol + rel_tol * std::abs(e))) {
          if (++misses <= 5)
            ADD_FAILURE() << "at (" << x << ", " << y << ", " << c << "): got " << a
                          << ", expected " << e;
        }
      }
  EXPECT_EQ(misses, 0) << "values differ; worst absolute error " << worst;
}

}  // namespace stipple::testing
