// Storage folding: the buffer of a slid func keeps only the window the sliding loop needs
// along the sliding dimension, as a circular buffer.
//
//   blur_x.compute_at(blur_y, y).store_root()    (each y needs rows y-1..y+1 of blur_x)
//
// After sliding_window, each iteration of blur_y.s0.y computes one new row of blur_x and
// reads the last three; rows older than that are never read again. The allocation keeps
// min(its extent, 4) rows (the window rounded up to a power of two) and every store and
// load of blur_x indexes row y as blur_x.min.1 + (y - blur_x.min.1) % 4 (Euclidean `%`):
//
//   allocate blur_x[..., min(<hull rows>, 4), ...]
//     blur_x(x, blur_x.min.1 + (blur_x.s0.y - blur_x.min.1) % 4, c) = ...
//
// See Schedule Synthesis through Reuse Analysis §3 and Halide's StorageFolding pass.
#pragma once

#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/lowering/sliding_window.h"

namespace stipple::lowering {

/// Folds the buffer of every func in `slid` with a proven window (SlidingWindow::window >
/// 0) along its sliding dimension, when every store into and load from the buffer is
/// inside the sliding loop. Sound because the region slides monotonically (so a value
/// older than the window is never read again), each iteration's region fits in the window,
/// and each iteration computes only values past the previous iteration's region (so it
/// never overwrites a value it or a later iteration still reads).
Stmt storage_folding(const Stmt& s, const std::vector<SlidingWindow>& slid);

}  // namespace stipple::lowering
