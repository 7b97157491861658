// Bayer mosaics: what a camera's sensor records, the input of the demosaicking pipelines
// (demosaic, camera_pipe). The benchmark's fixtures, the measuring process and the
// benchmarks all make their raw inputs from RGB photos with this one function.
#pragma once

#include "compiler_core/runtime/buffer.h"

namespace stipple {

/// An RGGB Bayer mosaic of an 8-bit RGB image: R at (even x, even y), B at (odd x, odd y),
/// G elsewhere. Result is (x, y) u8.
Buffer rgb8_to_bayer_rggb(const Buffer& rgb);

}  // namespace stipple
