#include "compiler_core/image/bayer.h"

#include "compiler_core/ir/error.h"

namespace stipple {

Buffer rgb8_to_bayer_rggb(const Buffer& rgb) {
  STIPPLE_INTERNAL_CHECK(
      rgb.type() == ScalarType::UInt8 && rgb.dimensions() == 3 && rgb.extent(2) == 3,
      "rgb8_to_bayer_rggb needs an 8-bit RGB buffer");
  const int64_t w = rgb.extent(0), h = rgb.extent(1);
  Buffer mosaic(ScalarType::UInt8, {w, h});
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      const int c = (x % 2 == 0 && y % 2 == 0) ? 0 : (x % 2 == 1 && y % 2 == 1) ? 2 : 1;
      const int64_t src[3] = {x, y, c};
      const int64_t dst[2] = {x, y};
      mosaic.set(dst, rgb.get(src));
    }
  }
  return mosaic;
}

}  // namespace stipple
