// sRGB, CIE XYZ, CIE L*a*b* and BT.601 YUV conversions (see color.h).
#include "compiler_core/image/color.h"

#include <array>
#include <cmath>

namespace stipple {

namespace {

using Matrix3 = std::array<std::array<double, 3>, 3>;

// Linear sRGB -> XYZ. IEC 61966-2-1 prints this matrix to 4 decimals, but those rows sum
// to (0.9505, 1.0000, 1.0890), which is not the D65 white below, and white would land at
// a* = 0.005, b* = -0.010. These 7-decimal values are the same matrix derived from the
// sRGB primaries with the white (0.95047, 1, 1.08883), so white maps to L*a*b* (100, 0, 0).
constexpr Matrix3 kRgbToXyz = {{
    {0.4124564, 0.3575761, 0.1804375},
    {0.2126729, 0.7151522, 0.0721750},
    {0.0193339, 0.1191920, 0.9503041},
}};

// The exact inverse (by cofactors) rather than a rounded published one, so that
// XYZ -> RGB -> XYZ round trips to machine precision.
constexpr Matrix3 invert(const Matrix3& m) {
  Matrix3 c{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      // The cyclic index order folds the cofactor's sign into the 2x2 determinant.
      c[j][i] = m[i1][j1] * m[i2][j2] - m[i1][j2] * m[i2][j1];  // transposed: the adjugate
    }
  }
  double det = m[0][0] * c[0][0] + m[0][1] * c[1][0] + m[0][2] * c[2][0];
  for (auto& row : c) {
    for (double& v : row) v /= det;
  }
  return c;
}

constexpr Matrix3 kXyzToRgb = invert(kRgbToXyz);

constexpr std::array<double, 3> multiply(const Matrix3& m, std::array<double, 3> v) {
  return {m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
          m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
          m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2]};
}

// The CIE's exact constants (CIE 15:2004), not the older rounded 0.008856 and 903.3, which
// make the two branches of f meet with a small jump.
constexpr double kEpsilon = 216.0 / 24389.0;
constexpr double kKappa = 24389.0 / 27.0;

double lab_f(double t) { return t > kEpsilon ? std::cbrt(t) : (kKappa * t + 16.0) / 116.0; }

double lab_f_inverse(double f) {
  double cube = f * f * f;
  return cube > kEpsilon ? cube : (116.0 * f - 16.0) / kKappa;
}

// BT.601 luma weights.
constexpr double kKr = 0.299;
constexpr double kKb = 0.114;
constexpr double kKg = 1.0 - kKr - kKb;

}  // namespace

double srgb_to_linear(double v) {
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

double linear_to_srgb(double v) {
  return v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

Xyz linear_rgb_to_xyz(const Rgb& linear) {
  auto [x, y, z] = multiply(kRgbToXyz, {linear.r, linear.g, linear.b});
  return {x, y, z};
}

Rgb xyz_to_linear_rgb(const Xyz& xyz) {
  auto [r, g, b] = multiply(kXyzToRgb, {xyz.x, xyz.y, xyz.z});
  return {r, g, b};
}

Lab xyz_to_lab(const Xyz& xyz) {
  double fx = lab_f(xyz.x / kD65White.x);
  double fy = lab_f(xyz.y / kD65White.y);
  double fz = lab_f(xyz.z / kD65White.z);
  return {116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)};
}

Xyz lab_to_xyz(const Lab& lab) {
  double fy = (lab.l + 16.0) / 116.0;
  double fx = fy + lab.a / 500.0;
  double fz = fy - lab.b / 200.0;
  // For Y the CIE tests L* against kappa * epsilon (= 8) rather than f^3 against epsilon;
  // both select the same branch, but this way is exact at the seam.
  double yr = lab.l > kKappa * kEpsilon ? fy * fy * fy : lab.l / kKappa;
  return {lab_f_inverse(fx) * kD65White.x, yr * kD65White.y, lab_f_inverse(fz) * kD65White.z};
}

Lab srgb_to_lab(const Rgb& srgb) {
  return xyz_to_lab(
      linear_rgb_to_xyz({srgb_to_linear(srgb.r), srgb_to_linear(srgb.g), srgb_to_linear(srgb.b)}));
}

Rgb lab_to_srgb(const Lab& lab) {
  Rgb linear = xyz_to_linear_rgb(lab_to_xyz(lab));
  return {linear_to_srgb(linear.r), linear_to_srgb(linear.g), linear_to_srgb(linear.b)};
}

double delta_e76(const Lab& p, const Lab& q) {
  double dl = p.l - q.l, da = p.a - q.a, db = p.b - q.b;
  return std::sqrt(dl * dl + da * da + db * db);
}

Yuv rgb_to_yuv(const Rgb& rgb) {
  double y = kKr * rgb.r + kKg * rgb.g + kKb * rgb.b;
  // Chroma is the colour difference scaled so that each spans [-0.5, 0.5].
  return {y, (rgb.b - y) / (2.0 * (1.0 - kKb)), (rgb.r - y) / (2.0 * (1.0 - kKr))};
}

Rgb yuv_to_rgb(const Yuv& yuv) {
  double r = yuv.y + 2.0 * (1.0 - kKr) * yuv.v;
  double b = yuv.y + 2.0 * (1.0 - kKb) * yuv.u;
  // Solving the luma equation for G keeps the inverse exact for any weights.
  double g = (yuv.y - kKr * r - kKb * b) / kKg;
  return {r, g, b};
}

}  // namespace stipple
