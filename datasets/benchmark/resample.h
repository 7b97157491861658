// Turning a source photo into a benchmark image: centre crop to the target's aspect ratio,
// then a high-quality resize (stb_image_resize: Mitchell when shrinking, Catmull-Rom when
// enlarging, filtering in linear light via the sRGB curve, clamped edges).
#pragma once

#include "compiler_core/runtime/buffer.h"

namespace stipple::dataset {

struct CropBox {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

/// The largest box centred in a width x height image whose aspect ratio is as close as
/// whole pixels allow to target_width : target_height.
CropBox centre_crop_box(int width, int height, int target_width, int target_height);

/// Crops `photo` (u8 or u16, (x, y) or (x, y, c) with c in 1..4) around the centre and
/// resizes it to an 8-bit RGB buffer of (target_width, target_height, 3). Gray photos are
/// expanded to RGB; alpha is dropped (sources are opaque photographs). Throws UserError.
Buffer crop_resize_rgb8(const Buffer& photo, int target_width, int target_height);

/// As crop_resize_rgb8 but filtered and stored at 16 bits, so the result has genuine
/// 16-bit precision rather than 8-bit values scaled up.
Buffer crop_resize_rgb16(const Buffer& photo, int target_width, int target_height);

/// The RGB image as one 8-bit channel: Rec. 601 luma rounded to nearest.
Buffer rgb8_to_gray8(const Buffer& rgb);

}  // namespace stipple::dataset
