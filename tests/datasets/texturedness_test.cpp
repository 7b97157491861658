// Texturedness on synthetic images with known answers, and the Gaussian blur against a
// direct 2-D convolution written here.
#include "datasets/benchmark/texturedness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "compiler_core/ir/error.h"

namespace stipple::dataset {
namespace {

constexpr int kW = 820, kH = 614;

GrayImage make(int w, int h, auto fn) {
  GrayImage img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = static_cast<float>(fn(x, y));
  return img;
}

TEST(Texturedness, ConstantImageIsZero) {
  const GrayImage flat(kW, kH, 137.0f);
  EXPECT_NEAR(mean_texturedness(flat), 0.0, 1e-4);
  const GrayImage map = texturedness_map(flat);
  for (float v : map.pixels) ASSERT_NEAR(v, 0.0f, 1e-3f);
}

TEST(Texturedness, CheckerboardIsHighTexture) {
  // 8-px black/white squares: detail far finer than s1 = 8, amplitude 127.5.
  const GrayImage board = make(kW, kH, [](int x, int y) { return ((x / 8 + y / 8) % 2) * 255.0; });
  const double t = mean_texturedness(board);
  EXPECT_GT(t, kHighTextureAbove);
  EXPECT_GT(t, 80.0);  // |H| is close to 127.5 except near the squares' edges
  EXPECT_EQ(classify_texture(t), TextureLevel::High);
}

TEST(Texturedness, SmoothGradientIsLowTexture) {
  // A Gaussian reproduces a linear ramp exactly away from the borders, so only the mirrored
  // borders add a little.
  const GrayImage ramp = make(kW, kH, [](int x, int y) { return 255.0 * (x + y) / (kW + kH); });
  const double t = mean_texturedness(ramp);
  EXPECT_LT(t, 1.0);
  EXPECT_EQ(classify_texture(t), TextureLevel::Low);
  const GrayImage map = texturedness_map(ramp, {8.0, 0.0});
  EXPECT_NEAR(map.at(kW / 2, kH / 2), 0.0f, 1e-3f);  // interior: exactly reproduced
}

// cos(2 pi (x + 1/2) / 8) mirrors onto itself at both borders when the width is a multiple
// of 4, so the finite image behaves like the infinite signal: H = (1 - a) L, where a is the
// discrete Gaussian's response at that frequency, and mean |H| = A (1 - a) mean |cos|.
TEST(Texturedness, CosineHasClosedFormMean) {
  const int w = 816, h = 40;
  const double period = 8.0;
  const double sigma = 8.0;
  const int radius = static_cast<int>(std::ceil(3 * sigma));
  double sum = 0, response = 0;
  for (int k = -radius; k <= radius; ++k) sum += std::exp(-0.5 * k * k / (sigma * sigma));
  for (int k = -radius; k <= radius; ++k)
    response += std::exp(-0.5 * k * k / (sigma * sigma)) / sum *
                std::cos(2 * std::numbers::pi * k / period);
  double mean_abs_cos = 0;
  for (int x = 0; x < 8; ++x)
    mean_abs_cos += std::abs(std::cos(2 * std::numbers::pi * (x + 0.5) / period)) / 8;

  for (double amplitude : {10.0, 20.0, 30.0}) {
    const GrayImage wave = make(w, h, [&](int x, int) {
      return 128.0 + amplitude * std::cos(2 * std::numbers::pi * (x + 0.5) / period);
    });
    const double expected = amplitude * std::abs(1 - response) * mean_abs_cos;
    EXPECT_NEAR(mean_texturedness(wave, {sigma, 8.0}), expected, 2e-3) << amplitude;
  }
  // Amplitude 20 lands between the thresholds (about 13.07): neither low nor high.
  EXPECT_EQ(classify_texture(20.0 * mean_abs_cos), TextureLevel::Mid);
}

TEST(Texturedness, MeanDoesNotDependOnTheAveragingSigma) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0, 255);
  GrayImage noise(97, 61);
  for (float& v : noise.pixels) v = u(rng);
  const double base = mean_texturedness(noise, {4.0, 0.0});
  for (double s2 : {1.0, 3.0, 8.0, 40.0}) {
    EXPECT_NEAR(mean_texturedness(noise, {4.0, s2}), base, 1e-3 * base) << s2;
  }
}

TEST(Texturedness, BlurMatchesDirectConvolution) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0, 255);
  GrayImage img(23, 17);  // small enough that the kernel folds over the borders twice
  for (float& v : img.pixels) v = u(rng);
  for (double sigma : {0.7, 2.5, 9.0}) {
    const GrayImage got = gaussian_blur(img, sigma);
    const int r = static_cast<int>(std::ceil(3 * sigma));
    auto reflect = [](int i, int n) {  // edge-repeating mirror, applied until inside
      while (i < 0 || i >= n) i = i < 0 ? -1 - i : 2 * n - 1 - i;
      return i;
    };
    double norm = 0;
    for (int k = -r; k <= r; ++k) norm += std::exp(-0.5 * k * k / (sigma * sigma));
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) {
        double acc = 0;
        for (int j = -r; j <= r; ++j)
          for (int i = -r; i <= r; ++i)
            acc += std::exp(-0.5 * (i * i + j * j) / (sigma * sigma)) / (norm * norm) *
                   img.at(reflect(x + i, img.width), reflect(y + j, img.height));
        ASSERT_NEAR(got.at(x, y), acc, 2e-3) << sigma << " at " << x << "," << y;
      }
    }
  }
}

TEST(Texturedness, LuminanceUsesRec601OnThe8BitScale) {
  Buffer rgb(ScalarType::UInt8, {2, 1, 3});
  const int64_t p0r[] = {0, 0, 0}, p0g[] = {0, 0, 1}, p0b[] = {0, 0, 2}, p1r[] = {1, 0, 0};
  rgb.set(p0r, 10);
  rgb.set(p0g, 20);
  rgb.set(p0b, 30);
  rgb.set(p1r, 255);
  const GrayImage lum = luminance(rgb);
  EXPECT_NEAR(lum.at(0, 0), 0.299 * 10 + 0.587 * 20 + 0.114 * 30, 1e-4);
  EXPECT_NEAR(lum.at(1, 0), 0.299 * 255, 1e-4);

  Buffer gray16(ScalarType::UInt16, {1, 1});
  gray16.set_flat(0, 65535);
  EXPECT_NEAR(luminance(gray16).at(0, 0), 255.0, 1e-4);

  EXPECT_THROW(luminance(Buffer(ScalarType::Float32, {2, 2})), UserError);
  EXPECT_THROW(luminance(Buffer(ScalarType::UInt8, {2, 2, 5})), UserError);
}

TEST(Texturedness, Thresholds) {
  EXPECT_EQ(classify_texture(11.999), TextureLevel::Low);
  EXPECT_EQ(classify_texture(12.0), TextureLevel::Mid);
  EXPECT_EQ(classify_texture(15.0), TextureLevel::Mid);
  EXPECT_EQ(classify_texture(15.001), TextureLevel::High);
}

}  // namespace
}  // namespace stipple::dataset
