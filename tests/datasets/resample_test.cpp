// Centre crop boxes, resize dimensions and types, and the gray / Bayer conversions.
#include "datasets/benchmark/resample.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler_core/image/bayer.h"
#include "compiler_core/ir/error.h"
#include "datasets/benchmark/benchmark.h"

namespace stipple::dataset {
namespace {

void expect_box(CropBox b, int x, int y, int w, int h) {
  EXPECT_EQ(b.x, x);
  EXPECT_EQ(b.y, y);
  EXPECT_EQ(b.width, w);
  EXPECT_EQ(b.height, h);
}

TEST(CentreCrop, Boxes) {
  expect_box(centre_crop_box(640, 480, 256, 192), 0, 0, 640, 480);      // already 4:3
  expect_box(centre_crop_box(512, 512, 256, 192), 0, 64, 512, 384);     // square: cut rows
  expect_box(centre_crop_box(400, 533, 256, 192), 0, 116, 400, 300);    // portrait
  expect_box(centre_crop_box(1282, 1110, 256, 192), 0, 74, 1282, 962);  // 961.5 rounds up
  // 820x614 is not exactly 4:3; crops follow the target's own aspect ratio.
  expect_box(centre_crop_box(868, 600, 820, 614), 33, 0, 801, 600);
  expect_box(centre_crop_box(1, 1, 820, 614), 0, 0, 1, 1);
  EXPECT_THROW(centre_crop_box(0, 10, 4, 3), UserError);
}

TEST(CentreCrop, AspectIsAlwaysClose) {
  for (int w = 1; w < 300; w += 7) {
    for (int h = 1; h < 300; h += 5) {
      const CropBox b = centre_crop_box(w, h, 4, 3);
      ASSERT_LE(b.x + b.width, w);
      ASSERT_LE(b.y + b.height, h);
      ASSERT_TRUE(b.width == w || b.height == h);
      // Within half a pixel of 4:3 on the cropped side.
      if (b.width < w) {
        ASSERT_LE(std::abs(b.width - h * 4.0 / 3), 0.5 + 1e-9);
      }
      if (b.height < h) {
        ASSERT_LE(std::abs(b.height - w * 3.0 / 4), 0.5 + 1e-9);
      }
      ASSERT_LE(std::abs(2 * b.x + b.width - w), 1);  // centred
    }
  }
}

Buffer constant_photo(ScalarType type, std::vector<int64_t> extents, double value) {
  Buffer b(type, extents);
  for (int64_t i = 0; i < b.element_count(); ++i) b.set_flat(i, value);
  return b;
}

TEST(Resize, DimensionsTypesAndConstantColour) {
  for (auto [w, h] : {std::pair{820, 614}, std::pair{256, 192}, std::pair{64, 48}}) {
    Buffer rgb = constant_photo(ScalarType::UInt8, {333, 211, 3}, 0);
    for (int64_t i = 0; i < 333 * 211; ++i) {
      rgb.set_flat(i, 200);
      rgb.set_flat(i + 333 * 211, 90);
      rgb.set_flat(i + 2 * 333 * 211, 17);
    }
    const Buffer out = render_benchmark_image(rgb, w, h);
    ASSERT_EQ(out.type(), ScalarType::UInt8);
    ASSERT_EQ(out.dimensions(), 3);
    EXPECT_EQ(out.extent(0), w);
    EXPECT_EQ(out.extent(1), h);
    EXPECT_EQ(out.extent(2), 3);
    for (int64_t y = 0; y < h; y += 13) {
      for (int64_t x = 0; x < w; x += 11) {
        const int64_t r[] = {x, y, 0}, g[] = {x, y, 1}, b[] = {x, y, 2};
        ASSERT_NEAR(out.get(r), 200, 1);
        ASSERT_NEAR(out.get(g), 90, 1);
        ASSERT_NEAR(out.get(b), 17, 1);
      }
    }
  }
}

TEST(Resize, GrayIsExpandedToRgbAndSixteenBitsKeepPrecision) {
  Buffer gray = constant_photo(ScalarType::UInt8, {50, 40}, 100);
  const Buffer out = crop_resize_rgb8(gray, 64, 48);
  ASSERT_EQ(out.extent(2), 3);
  for (int64_t i = 0; i < out.element_count(); ++i) ASSERT_NEAR(out.get_flat(i), 100, 1);

  const Buffer wide = crop_resize_rgb16(gray, 64, 48);
  ASSERT_EQ(wide.type(), ScalarType::UInt16);
  ASSERT_EQ(wide.extent(2), 3);
  for (int64_t i = 0; i < wide.element_count(); ++i) ASSERT_NEAR(wide.get_flat(i), 100 * 257, 2);

  // A 16-bit ramp shrunk 2:1 yields values that are not multiples of 257.
  Buffer ramp(ScalarType::UInt16, {256, 192});
  for (int64_t i = 0; i < ramp.element_count(); ++i) ramp.set_flat(i, (i % 256) * 250);
  const Buffer half = crop_resize_rgb16(ramp, 128, 96);
  int not_multiple = 0;
  for (int64_t i = 0; i < half.element_count(); ++i)
    not_multiple += static_cast<int64_t>(half.get_flat(i)) % 257 != 0;
  EXPECT_GT(not_multiple, half.element_count() / 2);

  EXPECT_THROW(crop_resize_rgb8(Buffer(ScalarType::Float32, {4, 4}), 4, 3), UserError);
}

TEST(Resize, ShrinkingAveragesFineDetail) {
  // A 1-px checkerboard shrunk 4:1 must come out near mid-gray (in linear light:
  // sRGB 188 is linear 0.5), not alias into stripes.
  Buffer board(ScalarType::UInt8, {1024, 768});
  for (int64_t y = 0; y < 768; ++y)
    for (int64_t x = 0; x < 1024; ++x) board.set_flat(y * 1024 + x, ((x + y) % 2) * 255);
  const Buffer out = crop_resize_rgb8(board, 256, 192);
  for (int64_t i = 0; i < out.element_count(); i += 97) ASSERT_NEAR(out.get_flat(i), 188, 3);
}

TEST(Resize, SameSizeCropIsCopiedExactly) {
  // A 256x256 photo cropped to 256x192 needs no resampling: rows 32..223, untouched.
  Buffer photo(ScalarType::UInt8, {256, 256, 3});
  for (int64_t i = 0; i < photo.element_count(); ++i) photo.set_flat(i, (i * 37) % 251);
  const Buffer out = crop_resize_rgb8(photo, 256, 192);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < 192; ++y)
      for (int64_t x = 0; x < 256; ++x) {
        const int64_t at[] = {x, y, c}, src[] = {x, y + 32, c};
        ASSERT_EQ(out.get(at), photo.get(src));
      }
}

TEST(Conversions, GrayAndBayer) {
  Buffer rgb(ScalarType::UInt8, {4, 4, 3});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t at[] = {x, y, c};
        rgb.set(at, 10 * c + x + 4 * y);  // R = x+4y, G = 10+x+4y, B = 20+x+4y
      }
  const Buffer bayer = rgb8_to_bayer_rggb(rgb);
  ASSERT_EQ(bayer.dimensions(), 2);
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) {
      const int64_t at[] = {x, y};
      const int c = (x % 2 == 0 && y % 2 == 0) ? 0 : (x % 2 && y % 2) ? 2 : 1;
      EXPECT_EQ(bayer.get(at), 10 * c + x + 4 * y) << x << "," << y;
    }
  const Buffer gray = rgb8_to_gray8(rgb);
  const int64_t at[] = {1, 2};
  EXPECT_EQ(gray.get(at), std::lround(0.299 * 9 + 0.587 * 19 + 0.114 * 29));
}

}  // namespace
}  // namespace stipple::dataset
