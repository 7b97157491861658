#include "compiler_core/image/resize.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "compiler_core/ir/error.h"

namespace stipple {
namespace {

// For each of `out` output samples along an axis of `in` input samples: the input indices
// its footprint [k * in / out, (k + 1) * in / out) overlaps, with the overlap as weight
// (they sum to the footprint's width, divided out here).
std::vector<std::vector<std::pair<int64_t, double>>> box_weights(int64_t in, int64_t out) {
  std::vector<std::vector<std::pair<int64_t, double>>> w(static_cast<size_t>(out));
  const double scale = double(in) / double(out);
  for (int64_t k = 0; k < out; ++k) {
    const double lo = double(k) * scale, hi = double(k + 1) * scale;
    for (int64_t i = int64_t(std::floor(lo)); i < std::min<int64_t>(in, int64_t(std::ceil(hi)));
         ++i) {
      const double overlap = std::min(hi, double(i + 1)) - std::max(lo, double(i));
      if (overlap > 0) w[size_t(k)].push_back({i, overlap / scale});
    }
  }
  return w;
}

}  // namespace

Buffer resize_photo(const Buffer& photo, int64_t width, int64_t height) {
  if ((photo.type() != ScalarType::UInt8 && photo.type() != ScalarType::UInt16) ||
      (photo.dimensions() != 2 && photo.dimensions() != 3)) {
    throw UserError("resize: a photo is u8 or u16 of (x, y) or (x, y, c)");
  }
  if (width < 1 || height < 1) throw UserError("resize: the size must be at least 1x1");
  const int64_t w = photo.extent(0), h = photo.extent(1), channels = photo.extent_or_one(2);
  const auto wx = box_weights(w, width), wy = box_weights(h, height);
  const double most = photo.type() == ScalarType::UInt8 ? 255 : 65535;
  std::vector<int64_t> extents = {width, height};
  if (photo.dimensions() == 3) extents.push_back(channels);
  Buffer out(photo.type(), extents);
  // Rows first: `rows` is the photo at the new width (h rows), then columns.
  std::vector<double> rows(size_t(h * width * channels));
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (const auto& [i, weight] : wx[size_t(x)]) {
          const int64_t at[3] = {i, y, c};
          sum += weight * photo.get(std::span<const int64_t>(at, size_t(photo.dimensions())));
        }
        rows[size_t((y * width + x) * channels + c)] = sum;
      }
    }
  }
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (const auto& [j, weight] : wy[size_t(y)]) {
          sum += weight * rows[size_t((j * width + x) * channels + c)];
        }
        const int64_t at[3] = {x, y, c};
        out.set(std::span<const int64_t>(at, size_t(photo.dimensions())),
                std::clamp(std::round(sum), 0.0, most));
      }
    }
  }
  return out;
}

}  // namespace stipple
