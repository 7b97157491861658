// Adaptive sampling (Image Perforation §3.1): a coarse grid every k points, then
// k̂ x k̂ fine grids (k̂ = k rounded up to odd) around the coarse points whose values differ
// most from their 8 neighbours', until f·n points are computed.
//
// - The func's values at the coarse points (`coarse`, computed first) give each coarse
//   point its refinement priority: the sum over channels and the 8 neighbours of the
//   absolute differences.
// - The cutoff priority comes from a histogram (65536 bins between 0 and the largest
//   priority) walked from the top, O(n): the R highest-priority coarse points are refined,
//   R = (f·n - coarse points) / (k̂² - 1).
// - For even k the fine grids of neighbours share points, so the first R overshoots the
//   points it adds; a second round corrects R by the measured points per refined cell.
//   Together they place f·n points within about 1% (tested).
//
// It also gives the varying Gaussian's sigma per point: 0.01 where a fine grid is, and
// sigma0 * k elsewhere (§3.2). Everything is .stp (stage_templates.h).
#pragma once

#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/perforation/importance_sampling.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::perforation {

/// Adds the funcs of adaptive sampling to `host` (`<prefix>$...`): `coarse` holds the
/// func at (k x, k y[, c]) (dims 2 or 3, of `type`), over the domain [0, extents[0]) x
/// [0, extents[1]) with extents[2] channels when dims is 3. SampleMask::density is the
/// varying Gaussian's sigma.
SampleMask add_adaptive_sampling(Pipeline& host, Schedule& host_schedule, const std::string& prefix,
                                 const std::string& coarse, Type type, size_t dims, int64_t k,
                                 double fraction, double sigma0, const std::vector<Expr>& extents);

}  // namespace stipple::perforation
