// Hoisting of reductions that do not depend on an enclosing reduction's variables.
//
// Inlining puts a func's definition where it is called. When a reduction reads an
// inlined reduction at arguments that do not involve its own variables (the artistic
// blur's kernel divides each of its 81 taps by raw_sum(x, y), itself 81 exps), the inner
// reduction would run once per iteration of the outer one. This pass binds such an inner
// expression with a Let just outside the outer reduction, so it runs once per point, as
// it would if the func were computed at root, but only at the points that need it.
//
// The expressions are pure, so the value and the result are the same bit for bit; only
// the number of evaluations changes (an outer reduction with no iterations now evaluates
// the inner one once).
#pragma once

#include "compiler_core/ir/ir.h"
#include "compiler_core/lowering/inline_functions.h"

namespace stipple::lowering {

/// `e` with every maximal subexpression that contains a Reduce and uses none of the
/// variables bound inside an enclosing Reduce (its own or a Let's) bound by a Let, named
/// `hoisted$n`, around that Reduce. Names in `e` must be unique (inline_and_qualify).
Expr hoist_invariant_reductions(const Expr& e, NameGen& names);

/// The lowering pass: every expression of `s` (in practice the stores' values, where
/// inlining put the reductions) as above, with `hoisted$n` names fresh in `s`. It runs
/// on the whole statement after schedule_functions; bounds inference there sees the same
/// calls at the same argument intervals either way, as a hoisted expression uses none of
/// the variables of the reduction it leaves.
Stmt hoist_invariant_reductions(const Stmt& s);

}  // namespace stipple::lowering
