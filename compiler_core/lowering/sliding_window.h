// Sliding window: a func stored outside the loop it is computed in reuses the values that
// earlier iterations of that loop computed, instead of recomputing its whole region.
//
//   blur_x.compute_at(blur_y, y).store_root()      (blur_y reads blur_x rows y-1..y+1)
//
// Before, each iteration of blur_y.s0.y computes rows y-1..y+1 of blur_x; after, the first
// iteration computes the three rows and each later one only row y+1:
//
//   let blur_x.slide.min.1 = select(blur_y.s0.y == <loop min>, blur_x.cmin.1,
//                                   max(blur_x.cmin.1, blur_x.cmax.1$prev + 1))
//
// (`blur_x.cmax.1$prev` is the region's max at the previous iteration), and blur_x's loops
// run over blur_x.slide.min.1..blur_x.cmax.1. See Schedule Synthesis through Reuse Analysis §3
// and Halide's SlidingWindow pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple::lowering {

/// One func made to slide along dimension `dim` over the serial loop `loop` (its compute
/// level), its region moving towards larger indices (`increasing`) or smaller ones.
/// `window` is a proven bound on the extent of the region any one iteration needs in that
/// dimension, or 0 when none could be proven; storage_folding folds the buffer to it.
struct SlidingWindow {
  std::string func;
  int dim = 0;
  std::string loop;
  bool increasing = true;
  int64_t window = 0;
};

struct SlidingResult {
  Stmt stmt;
  std::vector<SlidingWindow> slid;
};

/// Slides every pure (update-free) non-output func of `p` whose allocation encloses the
/// serial loop it is computed in, when its region in one dimension moves monotonically
/// with that loop's variable and is the same in every other dimension (or does not move
/// at all: then only the loop's first iteration computes it). Other funcs, and funcs whose
/// monotonicity cannot be proven, keep recomputing their whole region (exact either way).
/// Producers computed in the same loop and stored there compute only what the slid
/// computation reads. `s` is schedule_functions' statement (its naming conventions).
SlidingResult sliding_window(const Stmt& s, const Pipeline& p);

}  // namespace stipple::lowering
