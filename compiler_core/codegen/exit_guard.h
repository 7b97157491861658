// Guards that end a loop: the tail guard of a split, once false, stays false.
//
// A split's tail is guarded (`if (y <= y_max) ...` around the stage, schedule_functions.cpp),
// and the guard sits inside the innermost loop. Printed as an `if`, it keeps one iteration's
// loads and arithmetic from being reused by the next: the next iteration is not dominated
// by the guarded block, so nvcc recomputes every shared value (blur3x3's rows of blur_x,
// inlined into blur_y, loaded and divided again for each row of a thread's column). When
// the guard's truth can only go from true to false as the loop variable grows, it is the
// loop's exit: `if (!guard) break;` runs the same iterations, and each one dominates the
// next.
#pragma once

#include "compiler_core/ir/ir.h"

namespace stipple::codegen {

/// The IfThenElse (no else) that is the whole of `loop`'s body after its LetStmts, when its
/// condition, once false at some value of the loop variable, is false at every greater
/// one; else nullptr. The condition is a conjunction of terms that either do not depend
/// on the loop variable or compare a non-decreasing integer expression (sums, products by
/// non-negative constants, mins and maxes of the loop variable and of values that do not
/// depend on it) against a value that does not. Integer coordinates are assumed not to
/// wrap, as the lowering's bounds (at most 2^30 in magnitude) ensure.
const IfThenElse* exit_guard_of(const For* loop);

}  // namespace stipple::codegen
