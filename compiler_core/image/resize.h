// Rendering a photo at another size (`stipple nightly add --size WxH`): each output pixel
// is the area-weighted mean of the input pixels its footprint covers (a box filter with
// fractional coverage), computed separably in double and rounded to the photo's type. A
// box filter, not a sharper kernel: it never rings, keeps the mean of every region, and
// downscaling (the common case: a registered size smaller than the photos) needs no more.
#pragma once

#include <cstdint>

#include "compiler_core/runtime/buffer.h"

namespace stipple {

/// `photo` (u8 or u16, dimensions (x, y) or (x, y, c)) rendered at width x height, each at
/// least 1. Throws UserError for another type or shape.
Buffer resize_photo(const Buffer& photo, int64_t width, int64_t height);

}  // namespace stipple
