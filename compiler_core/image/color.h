// Colour-space conversions for error metrics and channel subsampling: sRGB <-> linear
// RGB <-> CIE XYZ (D65) <-> CIE L*a*b*, and RGB <-> YUV (BT.601, full range).
//
// All values are doubles. sRGB and linear RGB are in [0, 1]; XYZ is scaled so that the
// reference white has Y = 1; L* is in [0, 100]. Nothing here clamps: callers clamp
// out-of-gamut values where they need to.
#pragma once

namespace stipple {

struct Rgb {
  double r = 0, g = 0, b = 0;
};
struct Xyz {
  double x = 0, y = 0, z = 0;
};
struct Lab {
  double l = 0, a = 0, b = 0;
};
/// BT.601 full range: y in [0, 1], u and v centred on 0 in [-0.5, 0.5] (add 0.5, or 128
/// for 8-bit storage, as JFIF does, when storing them unsigned).
struct Yuv {
  double y = 0, u = 0, v = 0;
};

/// The D65 reference white of the L*a*b* conversion (CIE 1931 2-degree observer).
inline constexpr Xyz kD65White{0.95047, 1.0, 1.08883};

/// IEC 61966-2-1 transfer function: gamma-encoded sRGB component to linear light.
double srgb_to_linear(double v);
/// The inverse of srgb_to_linear.
double linear_to_srgb(double v);

/// Linear sRGB to CIE XYZ and back (sRGB primaries, D65 white).
Xyz linear_rgb_to_xyz(const Rgb& linear);
Rgb xyz_to_linear_rgb(const Xyz& xyz);

/// CIE XYZ to CIE L*a*b* relative to kD65White, with the CIE's exact epsilon and kappa
/// (216/24389 and 24389/27), and back.
Lab xyz_to_lab(const Xyz& xyz);
Xyz lab_to_xyz(const Lab& lab);

/// Gamma-encoded sRGB straight to L*a*b* and back.
Lab srgb_to_lab(const Rgb& srgb);
Rgb lab_to_srgb(const Lab& lab);

/// CIE76 colour difference: the Euclidean distance in L*a*b*.
double delta_e76(const Lab& p, const Lab& q);

/// BT.601 full-range (JFIF) luma and chroma, on gamma-encoded RGB in [0, 1].
Yuv rgb_to_yuv(const Rgb& rgb);
Rgb yuv_to_rgb(const Yuv& yuv);

}  // namespace stipple
