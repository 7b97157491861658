// Common subexpression elimination for the bounds expressions lowering builds.
//
// Bounds inference expands a consumer's region into a producer's, sharing subtrees
// (Min/Max DAGs); codegen and the printer walk expressions as trees, so a DAG with
// sharing would grow exponentially there. cse() binds every shared i32 subexpression to
// a Let (Variables are i32), so the result is as large as the DAG.
#pragma once

#include "compiler_core/ir/ir.h"
#include "compiler_core/lowering/inline_functions.h"

namespace stipple::lowering {

/// `e` with shared i32 subexpressions bound by Lets to fresh `t$n` names. `e` must not
/// contain Let or Reduce nodes (bounds expressions never do).
Expr cse(const Expr& e, NameGen& names);

}  // namespace stipple::lowering
