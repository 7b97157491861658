// Centre crop and resize with stb_image_resize; planar Buffer <-> interleaved stb pixels.
#include "datasets/benchmark/resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/ir/error.h"

#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STB_IMAGE_RESIZE_STATIC
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_image_resize.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace stipple::dataset {
namespace {

void check_photo(const Buffer& photo) {
  if (!photo.defined() ||
      (photo.type() != ScalarType::UInt8 && photo.type() != ScalarType::UInt16) ||
      photo.dimensions() < 2 || photo.dimensions() > 3 || photo.extent_or_one(2) > 4 ||
      photo.extent(0) < 1 || photo.extent(1) < 1) {
    throw UserError("expected a u8 or u16 photo of (x, y) or (x, y, c) with c <= 4");
  }
}

// Interleaved 16-bit RGB of a photo (8-bit values v become v * 257, the exact rescale).
std::vector<uint16_t> interleaved_rgb16(const Buffer& photo) {
  const int64_t w = photo.extent(0), h = photo.extent(1);
  const int channels = static_cast<int>(photo.extent_or_one(2));
  const bool is_u8 = photo.type() == ScalarType::UInt8;
  std::vector<uint16_t> out(static_cast<size_t>(w * h * 3));
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        const int src_c = channels >= 3 ? c : 0;  // gray (and gray + alpha) to RGB
        int64_t i = x * photo.dim(0).stride + y * photo.dim(1).stride;
        if (photo.dimensions() == 3) i += src_c * photo.dim(2).stride;
        const uint16_t v = is_u8 ? static_cast<uint16_t>(photo.data_as<uint8_t>()[i] * 257)
                                 : photo.data_as<uint16_t>()[i];
        out[static_cast<size_t>((y * w + x) * 3 + c)] = v;
      }
    }
  }
  return out;
}

template <typename T>
Buffer planar_rgb(const std::vector<T>& interleaved, int w, int h, ScalarType type) {
  Buffer out(type, {w, h, 3});
  T* dst = out.data_as<T>();
  for (int c = 0; c < 3; ++c) {
    for (int64_t p = 0; p < int64_t{w} * h; ++p) {
      dst[c * out.dim(2).stride + p] = interleaved[static_cast<size_t>(p * 3 + c)];
    }
  }
  return out;
}

std::vector<uint16_t> crop_resize16(const Buffer& photo, int tw, int th) {
  check_photo(photo);
  if (tw < 1 || th < 1) throw UserError("target size must be positive");
  const int w = static_cast<int>(photo.extent(0)), h = static_cast<int>(photo.extent(1));
  const CropBox box = centre_crop_box(w, h, tw, th);
  const std::vector<uint16_t> src = interleaved_rgb16(photo);
  std::vector<uint16_t> dst(static_cast<size_t>(tw) * th * 3);
  const uint16_t* start = src.data() + (static_cast<size_t>(box.y) * w + box.x) * 3;
  if (box.width == tw && box.height == th) {
    // Already the target size: copy. A 1:1 "resize" would still apply the Mitchell
    // filter and soften the image, so measuring a benchmark image would not give back
    // the texture recorded for it.
    for (int y = 0; y < th; ++y) {
      std::copy_n(start + static_cast<size_t>(y) * w * 3, static_cast<size_t>(tw) * 3,
                  dst.data() + static_cast<size_t>(y) * tw * 3);
    }
    return dst;
  }
  const int ok =
      stbir_resize_uint16_generic(start, box.width, box.height, w * 3 * 2, dst.data(), tw, th,
                                  tw * 3 * 2, 3, STBIR_ALPHA_CHANNEL_NONE, 0, STBIR_EDGE_CLAMP,
                                  STBIR_FILTER_DEFAULT, STBIR_COLORSPACE_SRGB, nullptr);
  if (!ok) throw UserError("resizing failed (out of memory?)");
  return dst;
}

}  // namespace

CropBox centre_crop_box(int width, int height, int target_width, int target_height) {
  if (width < 1 || height < 1 || target_width < 1 || target_height < 1) {
    throw UserError("crop sizes must be positive");
  }
  CropBox box;
  // Compare width/height with target_width/target_height in integers to avoid rounding.
  if (int64_t{width} * target_height > int64_t{height} * target_width) {
    box.height = height;
    box.width =
        static_cast<int>(std::lround(static_cast<double>(height) * target_width / target_height));
  } else {
    box.width = width;
    box.height =
        static_cast<int>(std::lround(static_cast<double>(width) * target_height / target_width));
  }
  box.width = std::max(1, std::min(box.width, width));
  box.height = std::max(1, std::min(box.height, height));
  box.x = (width - box.width) / 2;
  box.y = (height - box.height) / 2;
  return box;
}

Buffer crop_resize_rgb16(const Buffer& photo, int target_width, int target_height) {
  return planar_rgb(crop_resize16(photo, target_width, target_height), target_width, target_height,
                    ScalarType::UInt16);
}

Buffer crop_resize_rgb8(const Buffer& photo, int target_width, int target_height) {
  // Filter at 16 bits and round once: avoids a second quantisation inside the resizer.
  std::vector<uint16_t> wide = crop_resize16(photo, target_width, target_height);
  std::vector<uint8_t> narrow(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) narrow[i] = static_cast<uint8_t>((wide[i] + 128) / 257);
  return planar_rgb(narrow, target_width, target_height, ScalarType::UInt8);
}

Buffer rgb8_to_gray8(const Buffer& rgb) {
  STIPPLE_INTERNAL_CHECK(
      rgb.type() == ScalarType::UInt8 && rgb.dimensions() == 3 && rgb.extent(2) == 3,
      "rgb8_to_gray8 needs an 8-bit RGB buffer");
  const int64_t w = rgb.extent(0), h = rgb.extent(1);
  Buffer gray(ScalarType::UInt8, {w, h});
  const uint8_t* src = rgb.data_as<uint8_t>();
  const int64_t plane = rgb.dim(2).stride;
  for (int64_t p = 0; p < w * h; ++p) {
    double luma = 0.299 * src[p] + 0.587 * src[p + plane] + 0.114 * src[p + 2 * plane];
    gray.data_as<uint8_t>()[p] = static_cast<uint8_t>(std::lround(luma));
  }
  return gray;
}

}  // namespace stipple::dataset
