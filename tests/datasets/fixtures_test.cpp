// Every committed fixture exists with the size, channels and depth its table lists, is
// described in the README, and is consistent with its siblings (gray and Bayer fixtures
// are derived from the RGB one).
#include "datasets/benchmark/fixtures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "compiler_core/image/bayer.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/support/files.h"
#include "datasets/benchmark/resample.h"

namespace stipple::dataset {
namespace {

const std::string kDir = std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/";

// read_image returns gray photos as (x, y, 1); the conversions make (x, y). Compare pixels.
::testing::AssertionResult same_pixels(const Buffer& a, const Buffer& b) {
  if (a.type() != b.type() || a.extent(0) != b.extent(0) || a.extent(1) != b.extent(1) ||
      a.extent_or_one(2) != b.extent_or_one(2)) {
    return ::testing::AssertionFailure() << "different type or shape";
  }
  for (int64_t i = 0; i < a.element_count(); ++i) {
    if (a.get_flat(i) != b.get_flat(i)) {
      return ::testing::AssertionFailure() << "differ at element " << i;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Fixtures, ExistWithTheListedShape) {
  const std::string readme = read_text_file(kDir + "README.md");
  for (const FixtureSpec& spec : fixture_specs()) {
    SCOPED_TRACE(spec.file);
    const std::string path = kDir + spec.file;
    ASSERT_TRUE(std::filesystem::is_regular_file(path));
    const Buffer img = read_image(path);
    EXPECT_EQ(img.extent(0), spec.width);
    EXPECT_EQ(img.extent(1), spec.height);
    EXPECT_EQ(img.extent_or_one(2), spec.channels);
    EXPECT_EQ(img.type(), spec.bits == 16 ? ScalarType::UInt16 : ScalarType::UInt8);
    EXPECT_NE(readme.find(spec.file), std::string::npos) << "not described in README.md";
    EXPECT_LT(std::filesystem::file_size(path), 1'200'000u);
  }
}

TEST(Fixtures, DerivedFixturesMatchTheirRgbSource) {
  const Buffer rgb = read_image(kDir + "natural-high-64x48.png");
  EXPECT_TRUE(same_pixels(read_image(kDir + "bayer-rggb-64x48.png"), rgb8_to_bayer_rggb(rgb)));
  EXPECT_TRUE(same_pixels(read_image(kDir + "gray-64x48.png"), rgb8_to_gray8(rgb)));

  // The 16-bit fixture is the same picture at higher precision.
  const Buffer wide = read_image(kDir + "rgb16-64x48.png");
  for (int64_t i = 0; i < rgb.element_count(); ++i) {
    ASSERT_NEAR(wide.get_flat(i) / 257.0, rgb.get_flat(i), 0.5 + 1e-9) << i;
  }
  // The JPEG decodes close to the PNG it was made from (quality 90, chroma subsampled).
  const Buffer jpeg = read_image(kDir + "natural-high-64x48.jpg");
  double err = 0;
  for (int64_t i = 0; i < rgb.element_count(); ++i)
    err += std::abs(jpeg.get_flat(i) - rgb.get_flat(i));
  EXPECT_LT(err / static_cast<double>(rgb.element_count()), 12.0);
}

}  // namespace
}  // namespace stipple::dataset
