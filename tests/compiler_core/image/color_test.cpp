// Colour conversions against values worked out by hand from the IEC 61966-2-1 and CIE
// formulas, plus round trips over random colours.
#include "compiler_core/image/color.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace stipple {
namespace {

// The formulas, for reading the hand computations below:
//   linear = v / 12.92 for v <= 0.04045, else ((v + 0.055) / 1.055)^2.4
//   [X Y Z] = M [R G B], M = [0.4124564 0.3575761 0.1804375;
//                             0.2126729 0.7151522 0.0721750;
//                             0.0193339 0.1191920 0.9503041]
//   f(t) = cbrt(t) for t > 216/24389 (= 0.0088565), else (24389/27 t + 16) / 116
//   L = 116 f(Y/1) - 16, a = 500 (f(X/0.95047) - f(Y/1)), b = 200 (f(Y/1) - f(Z/1.08883))
constexpr double kTolerance = 1e-3;

void expect_lab(const Lab& got, double l, double a, double b) {
  EXPECT_NEAR(got.l, l, kTolerance);
  EXPECT_NEAR(got.a, a, kTolerance);
  EXPECT_NEAR(got.b, b, kTolerance);
}

TEST(Color, SrgbTransferFunction) {
  // 0.5 is on the power segment: ((0.5 + 0.055) / 1.055)^2.4 = 0.5260664^2.4 = 0.2140411
  EXPECT_NEAR(srgb_to_linear(0.5), 0.2140411, 1e-7);
  // 0.02 is on the linear segment: 0.02 / 12.92 = 0.0015480
  EXPECT_NEAR(srgb_to_linear(0.02), 0.0015480, 1e-7);
  EXPECT_DOUBLE_EQ(srgb_to_linear(0.0), 0.0);
  EXPECT_DOUBLE_EQ(srgb_to_linear(1.0), 1.0);
  EXPECT_NEAR(linear_to_srgb(0.2140411), 0.5, 1e-7);
  // The two segments meet (to the standard's 4 digits) at the threshold.
  EXPECT_NEAR(0.04045 / 12.92, std::pow((0.04045 + 0.055) / 1.055, 2.4), 1e-7);
}

TEST(Color, WhiteAndBlack) {
  // White: linear (1, 1, 1); XYZ = row sums = (0.95047, 1.0000001, 1.08883), which is the
  // reference white, so every ratio is 1, f = 1, L = 116 - 16 = 100, a = b = 0.
  expect_lab(srgb_to_lab({1, 1, 1}), 100.0, 0.0, 0.0);
  // Black: every ratio 0 is below epsilon, f = 16/116, L = 116 * 16/116 - 16 = 0, a = b = 0.
  expect_lab(srgb_to_lab({0, 0, 0}), 0.0, 0.0, 0.0);
}

TEST(Color, PrimariesMatchHandComputation) {
  // Red: linear (1, 0, 0), XYZ = first column (0.4124564, 0.2126729, 0.0193339).
  //   X/Xn = 0.4124564 / 0.95047 = 0.4339499, f = 0.7570883
  //   Y/Yn = 0.2126729,                      f = 0.5969034
  //   Z/Zn = 0.0193339 / 1.08883 = 0.0177566, f = 0.2608874 (above epsilon: cube root)
  //   L = 116 * 0.5969034 - 16 = 53.2408
  //   a = 500 * (0.7570883 - 0.5969034) = 80.0925
  //   b = 200 * (0.5969034 - 0.2608874) = 67.2032
  expect_lab(srgb_to_lab({1, 0, 0}), 53.2408, 80.0925, 67.2032);
  // Green: XYZ = (0.3575761, 0.7151522, 0.1191920)
  //   ratios 0.3762098, 0.7151522, 0.1094680 -> f = 0.7218994, 0.8942648, 0.4783682
  //   L = 116 * 0.8942648 - 16 = 87.7347
  //   a = 500 * (0.7218994 - 0.8942648) = -86.1827
  //   b = 200 * (0.8942648 - 0.4783682) = 83.1793
  expect_lab(srgb_to_lab({0, 1, 0}), 87.7347, -86.1827, 83.1793);
  // Blue: XYZ = (0.1804375, 0.0721750, 0.9503041)
  //   ratios 0.1898403, 0.0721750, 0.8727755 -> f = 0.5747286, 0.4163535, 0.9556544
  //   L = 116 * 0.4163535 - 16 = 32.2970
  //   a = 500 * (0.5747286 - 0.4163535) = 79.1875
  //   b = 200 * (0.4163535 - 0.9556544) = -107.8602
  expect_lab(srgb_to_lab({0, 0, 1}), 32.2970, 79.1875, -107.8602);
}

TEST(Color, GraysMatchHandComputation) {
  // Mid gray 0.5: linear 0.2140411 in every channel, Y = 0.2140411 * 1.0000001,
  //   f = cbrt(0.2140412) = 0.5981808, L = 116 * 0.5981808 - 16 = 53.3890; a = b = 0.
  expect_lab(srgb_to_lab({0.5, 0.5, 0.5}), 53.3890, 0.0, 0.0);
  // Dark gray 0.02 takes both linear segments: linear 0.02 / 12.92 = 0.0015480, below
  //   epsilon, so f = (kappa t + 16) / 116 and L = kappa * t = 903.2963 * 0.0015480 = 1.3983.
  expect_lab(srgb_to_lab({0.02, 0.02, 0.02}), 1.3983, 0.0, 0.0);
}

TEST(Color, DeltaE76IsEuclidean) {
  // Red to blue: sqrt((53.2408 - 32.2970)^2 + (80.0925 - 79.1875)^2 + (67.2032 + 107.8602)^2)
  //   = sqrt(20.9438^2 + 0.9049^2 + 175.0634^2) = 176.3140
  EXPECT_NEAR(delta_e76(srgb_to_lab({1, 0, 0}), srgb_to_lab({0, 0, 1})), 176.3140, kTolerance);
  EXPECT_DOUBLE_EQ(delta_e76({50, 3, 4}, {50, 0, 0}), 5.0);
  EXPECT_DOUBLE_EQ(delta_e76({1, 2, 3}, {1, 2, 3}), 0.0);
}

TEST(Color, LabRoundTripsOverRandomColours) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 2000; ++i) {
    Rgb c{unit(rng), unit(rng), unit(rng)};
    Rgb back = lab_to_srgb(srgb_to_lab(c));
    ASSERT_NEAR(back.r, c.r, 1e-9) << i;
    ASSERT_NEAR(back.g, c.g, 1e-9) << i;
    ASSERT_NEAR(back.b, c.b, 1e-9) << i;
  }
  // Near black, through the linear segments of both the sRGB curve and f.
  for (double v : {0.0, 0.001, 0.01, 0.04, 0.05}) {
    Rgb back = lab_to_srgb(srgb_to_lab({v, v / 2, v / 3}));
    EXPECT_NEAR(back.r, v, 1e-12);
    EXPECT_NEAR(back.g, v / 2, 1e-12);
    EXPECT_NEAR(back.b, v / 3, 1e-12);
  }
}

TEST(Color, XyzInverseIsExact) {
  Rgb back = xyz_to_linear_rgb(kD65White);
  EXPECT_NEAR(back.r, 1.0, 1e-6);  // the white's Y is 1.0000001, not exactly 1
  EXPECT_NEAR(back.g, 1.0, 1e-6);
  EXPECT_NEAR(back.b, 1.0, 1e-6);
  Xyz red = linear_rgb_to_xyz({1, 0, 0});
  Rgb r = xyz_to_linear_rgb(red);
  EXPECT_NEAR(r.r, 1.0, 1e-14);
  EXPECT_NEAR(r.g, 0.0, 1e-14);
  EXPECT_NEAR(r.b, 0.0, 1e-14);
}

TEST(Color, YuvBt601FullRange) {
  // Y = 0.299 R + 0.587 G + 0.114 B; U = (B - Y) / 1.772; V = (R - Y) / 1.402.
  Yuv white = rgb_to_yuv({1, 1, 1});
  EXPECT_NEAR(white.y, 1.0, 1e-15);
  EXPECT_NEAR(white.u, 0.0, 1e-15);
  EXPECT_NEAR(white.v, 0.0, 1e-15);
  // Red: Y = 0.299, U = -0.299 / 1.772 = -0.168736, V = 0.701 / 1.402 = 0.5.
  Yuv red = rgb_to_yuv({1, 0, 0});
  EXPECT_NEAR(red.y, 0.299, 1e-12);
  EXPECT_NEAR(red.u, -0.168736, 1e-6);
  EXPECT_NEAR(red.v, 0.5, 1e-12);
  // Blue: Y = 0.114, U = 0.886 / 1.772 = 0.5, V = -0.114 / 1.402 = -0.081312.
  Yuv blue = rgb_to_yuv({0, 0, 1});
  EXPECT_NEAR(blue.y, 0.114, 1e-12);
  EXPECT_NEAR(blue.u, 0.5, 1e-12);
  EXPECT_NEAR(blue.v, -0.081312, 1e-6);
  // The JFIF inverse coefficients: G = Y - 0.344136 U - 0.714136 V.
  Rgb g = yuv_to_rgb({0.5, 0.1, 0.1});
  EXPECT_NEAR(g.g, 0.5 - 0.0344136 - 0.0714136, 1e-6);

  std::mt19937 rng(99);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 1000; ++i) {
    Rgb c{unit(rng), unit(rng), unit(rng)};
    Rgb back = yuv_to_rgb(rgb_to_yuv(c));
    ASSERT_NEAR(back.r, c.r, 1e-12);
    ASSERT_NEAR(back.g, c.g, 1e-12);
    ASSERT_NEAR(back.b, c.b, 1e-12);
  }
}

}  // namespace
}  // namespace stipple
