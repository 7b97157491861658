// How far a variant's output is from the reference output: the numbers the autotuner
// holds against a pipeline's error budget.
//
// Both buffers must have the same type and extents (mins are ignored: outputs start at
// 0). A NaN or infinity anywhere in either buffer never averages away: it sets has_nan
// and every metric becomes its worst value (+infinity, PSNR -infinity), so that both
// `error <= budget` and `error > budget` treat the variant as failing.
#pragma once

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"

namespace stipple {

struct ErrorReport {
  double delta_e = 0;    // mean CIE76 Delta E; NaN (not applicable) unless (x, y, c>=3)
  double rmse = 0;       // root mean square error on the output's own scale
  double psnr = 0;       // dB against the type's peak; +infinity for identical outputs
  double max_abs = 0;    // largest absolute difference of one element
  bool has_nan = false;  // a NaN or infinity in the variant or the reference
};

/// Mean CIE76 Delta E over the pixels of two (x, y, c) outputs with c >= 3, reading the
/// first three channels as sRGB: u8 / 255, u16 and i32 / 65535, floats as they are; all
/// clamped to [0, 1]. Throws UserError when the shapes differ or there are fewer than
/// three channels.
double mean_delta_e(const Buffer& variant, const Buffer& reference);

/// Root mean square error over all elements, on the output's own scale (0..255 for u8).
double rmse(const Buffer& variant, const Buffer& reference);

/// Peak signal-to-noise ratio in dB. The peak is 1 for f32 and f64, 255 for u8 and 65535
/// for u16 and i32. +infinity for identical outputs.
double psnr(const Buffer& variant, const Buffer& reference);

/// The largest absolute difference between two corresponding elements.
double max_abs_error(const Buffer& variant, const Buffer& reference);

/// All of the above at once; delta_e is NaN when the output has no three colour channels.
/// Throws UserError when the shapes or types differ.
ErrorReport compare_outputs(const Buffer& variant, const Buffer& reference);

/// The value of the report that `metric` names: delta_e for Lab, rmse for Rmse. Throws
/// UserError for Lab when the output has no three colour channels.
double metric_value(const ErrorReport& report, ErrorMetric metric);

}  // namespace stipple
