// Texturedness (Bae et al. 2006 with a Gaussian in place of the cross-bilateral filter).
#include "datasets/benchmark/texturedness.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "compiler_core/ir/error.h"

namespace stipple::dataset {
namespace {

// Mirrors an out-of-range coordinate back into [0, n) with the edge pixel repeated
// (..., 1, 0 | 0, 1, ..., n-1 | n-1, n-2, ...), folding as often as needed so that kernels
// wider than the image stay defined. With a symmetric kernel this keeps the image sum.
int mirror(int i, int n) {
  const int period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

std::vector<float> gaussian_kernel(double sigma) {
  const int radius = static_cast<int>(std::ceil(3.0 * sigma));
  std::vector<float> kernel(2 * radius + 1);
  double sum = 0.0;
  for (int k = -radius; k <= radius; ++k) {
    double w = std::exp(-0.5 * k * k / (sigma * sigma));
    kernel[k + radius] = static_cast<float>(w);
    sum += w;
  }
  for (float& w : kernel) w = static_cast<float>(w / sum);
  return kernel;
}

}  // namespace

TextureLevel classify_texture(double mean_texturedness) {
  if (mean_texturedness < kLowTextureBelow) return TextureLevel::Low;
  if (mean_texturedness > kHighTextureAbove) return TextureLevel::High;
  return TextureLevel::Mid;
}

const char* to_string(TextureLevel level) {
  switch (level) {
    case TextureLevel::Low: return "low";
    case TextureLevel::Mid: return "mid";
    case TextureLevel::High: return "high";
  }
  return "?";
}

GrayImage luminance(const Buffer& photo) {
  const bool is_u8 = photo.type() == ScalarType::UInt8;
  if (!photo.defined() || (!is_u8 && photo.type() != ScalarType::UInt16) ||
      photo.dimensions() < 2 || photo.dimensions() > 3 || photo.extent_or_one(2) > 4) {
    throw UserError("texturedness needs a u8 or u16 photo of (x, y) or (x, y, c) with c <= 4");
  }
  const int w = static_cast<int>(photo.extent(0));
  const int h = static_cast<int>(photo.extent(1));
  const int channels = static_cast<int>(photo.extent_or_one(2));
  const double scale = is_u8 ? 1.0 : 255.0 / 65535.0;
  const bool color = channels >= 3;
  GrayImage out(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      auto value = [&](int c) {
        int64_t i = x * photo.dim(0).stride + y * photo.dim(1).stride;
        if (photo.dimensions() == 3) i += c * photo.dim(2).stride;
        return is_u8 ? double(photo.data_as<uint8_t>()[i]) : double(photo.data_as<uint16_t>()[i]);
      };
      double luma = color ? 0.299 * value(0) + 0.587 * value(1) + 0.114 * value(2) : value(0);
      out.at(x, y) = static_cast<float>(luma * scale);
    }
  }
  return out;
}

GrayImage gaussian_blur(const GrayImage& image, double sigma) {
  if (sigma <= 0.0) return image;
  const std::vector<float> kernel = gaussian_kernel(sigma);
  const int radius = static_cast<int>(kernel.size() / 2);
  const int w = image.width, h = image.height;
  // Accumulate in double: means over half a million pixels are compared against
  // thresholds, and float sums would make them depend on the summation order.
  GrayImage rows(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      double acc = 0.0;
      for (int k = -radius; k <= radius; ++k)
        acc += kernel[k + radius] * image.at(mirror(x + k, w), y);
      rows.at(x, y) = static_cast<float>(acc);
    }
  }
  GrayImage out(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      double acc = 0.0;
      for (int k = -radius; k <= radius; ++k)
        acc += kernel[k + radius] * rows.at(x, mirror(y + k, h));
      out.at(x, y) = static_cast<float>(acc);
    }
  }
  return out;
}

GrayImage texturedness_map(const GrayImage& lum, const TextureParams& params) {
  GrayImage detail = gaussian_blur(lum, params.sigma_highpass);
  for (size_t i = 0; i < detail.pixels.size(); ++i) {
    detail.pixels[i] = std::abs(lum.pixels[i] - detail.pixels[i]);
  }
  return gaussian_blur(detail, params.sigma_average);
}

double mean_texturedness(const GrayImage& lum, const TextureParams& params) {
  if (lum.pixels.empty()) throw UserError("texturedness of an empty image");
  const GrayImage t = texturedness_map(lum, params);
  double sum = 0.0;
  for (float v : t.pixels) sum += v;
  return sum / static_cast<double>(t.pixels.size());
}

}  // namespace stipple::dataset
