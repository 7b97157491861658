// Perforation of the reductions inside a func's definition: the taps of a convolution,
// the window of a bilateral filter (Image Perforation §7.2), and the loop perforation
// baseline's inner loops.
//
//   sum(i in -8..8 : k(i) * in(x - i))  with perforate_reduction(i, grid(2))
//   -> sum(i in 0..(8 - -8) / 2 : k(-8 + i * 2) * in(x - (-8 + i * 2))) * (f32(17) / f32(9))
//
// perforate_reduction keeps every s-th iteration from the minimum (grid(s)), or about p
// of them at the midpoints of p·n equal parts (fraction(p)), and rescales float sums by
// iterations / kept so that they estimate the whole sum (a ratio of two perforated sums,
// as a bilateral filter's, is unchanged by it). Integer sums and the other reductions are
// not rescaled. loop_perforate of a reduction variable keeps every s-th iteration
// (stride(s)) or drops the first or last share of them (truncate), without rescaling:
// Sidiroglou-Douskos et al.'s transformation as it is.
#pragma once

#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/approximation.h"

namespace stipple::perforation {

/// `value` with every Reduce over a perforated variable rewritten.
Expr perforate_reductions(const Expr& value, const std::vector<ReductionPerforation>& reductions,
                          const std::vector<LoopPerforation>& loops);

/// Update definition `u` of func `func` with the variables of its domain in `reductions`
/// perforated as above (the splat of a bilateral grid: `grid(...) += ... for x in in, y
/// in in` with perforate_reduction(x, grid(2)) on update(0) adds every other pixel of a
/// row). An update that adds to or subtracts from the func's own value at the same point,
/// a term that does not read the func (`+=`, `-=` of a float type: f(a) + t, f(a) - t, or
/// fma(p, q, f(a)) where the term is a product) has the term rescaled by iterations / kept
/// (t * scale, fma(p, q * scale, f(a))); any other update is not rescaled. An empty domain
/// stays empty. The checker refuses a variable that is an argument of the left side.
UpdateDef perforate_update(const UpdateDef& u, const std::string& func,
                           const std::vector<ReductionPerforation>& reductions);

}  // namespace stipple::perforation
