// resize_photo (compiler_core/image/resize.h) against a box filter written out here another
// way: each output pixel as the mean over a supersampling grid of its footprint (exact:
// every input pixel edge falls on the grid), on random photos and
// sizes up and down; and what a box filter keeps: a constant photo stays constant, halving
// averages 2x2 blocks, the size, channels and type are the ones asked.
#include "compiler_core/image/resize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler_core/ir/error.h"

namespace stipple {
namespace {

Buffer random_photo(std::mt19937& rng, ScalarType type, int64_t w, int64_t h, int64_t c) {
  Buffer b(type, {w, h, c});
  std::uniform_int_distribution<int> value(0, type == ScalarType::UInt8 ? 255 : 65535);
  for (int64_t i = 0; i < b.element_count(); ++i) b.set_flat(i, value(rng));
  return b;
}

// The mean over a grid of nx x ny cells per output pixel, sampled at their centres: with
// nx a multiple of the input's width (ny of its height) every cell lies inside one input
// pixel, so the grid weighs the input pixels by the area of the footprint they cover.
double supersampled(const Buffer& in, int64_t x, int64_t y, int64_t c, int64_t w, int64_t h) {
  const int64_t nx = 2 * in.extent(0), ny = 2 * in.extent(1);
  double sum = 0;
  for (int64_t j = 0; j < ny; ++j) {
    for (int64_t i = 0; i < nx; ++i) {
      const double fx = (double(x) + (i + 0.5) / double(nx)) * double(in.extent(0)) / double(w);
      const double fy = (double(y) + (j + 0.5) / double(ny)) * double(in.extent(1)) / double(h);
      const int64_t at[3] = {int64_t(fx), int64_t(fy), c};
      sum += in.get(at);
    }
  }
  return sum / double(nx * ny);
}

TEST(ResizePhoto, EqualsASupersampledBoxFilterOnRandomPhotos) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> size(1, 7);
  for (int trial = 0; trial < 40; ++trial) {
    const ScalarType type = trial % 2 ? ScalarType::UInt16 : ScalarType::UInt8;
    const Buffer in = random_photo(rng, type, size(rng), size(rng), 1 + trial % 3);
    const int64_t w = size(rng), h = size(rng);
    const Buffer out = resize_photo(in, w, h);
    ASSERT_EQ(out.type(), type);
    ASSERT_EQ(out.extent(0), w);
    ASSERT_EQ(out.extent(1), h);
    ASSERT_EQ(out.extent(2), in.extent(2));
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        for (int64_t c = 0; c < in.extent(2); ++c) {
          const int64_t at[3] = {x, y, c};
          EXPECT_NEAR(out.get(at), supersampled(in, x, y, c, w, h), 0.5 + 1e-6)
              << "trial " << trial << " at " << x << "," << y << "," << c;
        }
      }
    }
  }
}

TEST(ResizePhoto, HalvingAveragesTwoByTwoBlocksAndConstantsStay) {
  Buffer b(ScalarType::UInt8, {4, 2});
  const int v[8] = {0, 10, 100, 110, 20, 30, 120, 130};
  for (int i = 0; i < 8; ++i) b.set_flat(i, v[i]);
  Buffer out = resize_photo(b, 2, 1);
  ASSERT_EQ(out.dimensions(), 2);
  EXPECT_EQ(out.get_flat(0), 15);   // (0 + 10 + 20 + 30) / 4
  EXPECT_EQ(out.get_flat(1), 115);  // (100 + 110 + 120 + 130) / 4
  Buffer gray(ScalarType::UInt16, {5, 3, 1});
  for (int64_t i = 0; i < gray.element_count(); ++i) gray.set_flat(i, 40000);
  Buffer big = resize_photo(gray, 13, 7);
  for (int64_t i = 0; i < big.element_count(); ++i) EXPECT_EQ(big.get_flat(i), 40000);
}

TEST(ResizePhoto, RefusesWhatIsNoPhoto) {
  EXPECT_THROW(resize_photo(Buffer(ScalarType::Float32, {4, 4, 3}), 2, 2), UserError);
  EXPECT_THROW(resize_photo(Buffer(ScalarType::UInt8, {4}), 2, 2), UserError);
  EXPECT_THROW(resize_photo(Buffer(ScalarType::UInt8, {4, 4}), 0, 2), UserError);
}

}  // namespace
}  // namespace stipple
