// The texturedness measure used to sort benchmark photos into low- and high-texture sets.
//
// Bae, Paris and Durand (2006) measure texturedness as the local average of the magnitude
// of a high-pass image; the image-perforation paper keeps the measure but replaces Bae et
// al.'s cross-bilateral filter with a plain Gaussian. With luminance L on the 8-bit scale:
//
//   H = L - G(s1) * L          (high-pass: detail finer than s1)
//   T = G(s2) * |H|            (texturedness map: local mean detail amplitude)
//
// The benchmark labels a photo by mean(T) at 820x614: low below 12, high above 15. Because
// G(s2) is normalised and borders are mirrored, mean(T) equals mean(|H|): s2 shapes the
// map (used for importance sampling) but not the mean. datasets/benchmark/README.md has
// the choice of sigmas and the distribution over the opencv-doc photos.
#pragma once

#include <vector>

#include "compiler_core/runtime/buffer.h"

namespace stipple::dataset {

/// A single-channel float image, row-major (x fastest).
struct GrayImage {
  int width = 0;
  int height = 0;
  std::vector<float> pixels;

  GrayImage() = default;
  GrayImage(int w, int h, float fill = 0.0f)
      : width(w), height(h), pixels(static_cast<size_t>(w) * h, fill) {}
  float& at(int x, int y) { return pixels[static_cast<size_t>(y) * width + x]; }
  float at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

/// Sigmas of the measure, in pixels of the 820x614 image.
struct TextureParams {
  double sigma_highpass = 8.0;  // s1
  double sigma_average = 8.0;   // s2
};

/// The paper's thresholds on mean texturedness (8-bit scale, measured at 820x614).
inline constexpr double kLowTextureBelow = 12.0;
inline constexpr double kHighTextureAbove = 15.0;

enum class TextureLevel { Low, Mid, High };
TextureLevel classify_texture(double mean_texturedness);
const char* to_string(TextureLevel level);

/// Rec. 601 luma (0.299 R + 0.587 G + 0.114 B) of the gamma-encoded values, on the 8-bit
/// scale [0, 255]. Takes a u8 or u16 photo of (x, y) or (x, y, c), c in 1..4; alpha is
/// ignored. Throws UserError for other buffers.
GrayImage luminance(const Buffer& photo);

/// Separable Gaussian blur with mirrored borders (edge pixel repeated), radius ceil(3 sigma).
/// sigma = 0 returns the image unchanged.
GrayImage gaussian_blur(const GrayImage& image, double sigma);

/// The texturedness map T of a luminance image.
GrayImage texturedness_map(const GrayImage& lum, const TextureParams& params = {});

/// mean(T) over the image.
double mean_texturedness(const GrayImage& lum, const TextureParams& params = {});

}  // namespace stipple::dataset
