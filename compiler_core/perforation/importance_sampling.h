// Importance sampling (Image Perforation §3.1 and Appendix A): the points of a
// perforated func are placed where the pipeline's input image is textured.
//
// 1. Luminance of the first image input (the mean of its first three channels, or its
//    only channel; integer images scaled to [0, 1]).
// 2. Importance map: the texturedness of Bae et al. 2006 with a Gaussian (sigma 2) in
//    place of the bilateral filter, the local mean of |lum - blur(lum)|, or a func of the
//    pipeline (importance(f, map = m); negative values count as 0), plus a floor of 1e-3
//    so that flat regions get some samples.
// 3. Remap (Appendix A): the scale s with sum(min(s * map, 1)) = f·n, found from a
//    histogram of m = 1000 bins with cumulative counts and weighted sums, in O(n + m).
// 4. Dithering of the remapped map into a 0/1 mask: Floyd-Steinberg error diffusion in
//    raster order. (Ostromoukhov's variable-coefficient error diffusion, which the paper
//    prefers, is not implemented: its coefficient table is not in this repository.)
//
// All of it is .stp (stage_templates.h), so the evaluator computes the same mask as the
// compiled code.
#pragma once

#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::perforation {

struct SampleMask {
  std::string mask;     // u8 (x, y): 1 where the func is computed
  std::string density;  // f32 (x, y): the remapped map (importance) or the local density
};

/// Adds the funcs of importance sampling with fraction f over the domain [0, extents[0])
/// x [0, extents[1]) to `host` (names `<prefix>$...`), scheduled in `host_schedule`. The
/// map is the func `map` of the host (x, y) when given, else the texturedness of the
/// pipeline's input of 2 or 3 dimensions (the schedule checker checks there is one).
SampleMask add_importance_sampling(Pipeline& host, Schedule& host_schedule,
                                   const std::string& prefix, double fraction,
                                   const std::vector<Expr>& extents, const std::string& map = "");

}  // namespace stipple::perforation
