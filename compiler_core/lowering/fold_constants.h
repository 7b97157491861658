// Constant folding of the loop nest's integer bookkeeping: the i32 Lets whose value is a
// constant are substituted where they are used, i32 arithmetic on two constants is folded
// (with the evaluator's rules: wrapping, floor division, Euclidean modulo, x / 0 == 0),
// and a serial or unrolled loop that runs exactly once becomes a Let of its variable.
//
// Bounds inference writes regions as chains of Lets over the caller's buffer (`out.min.2`)
// or the schedule's constants (`bound(c, 0, 3)`: `out.rmin.2 = 0`), so a loop over a
// func's channels reads `for c$1 in 0..(f.cmax.2 - f.cmin.2 + 1 + 3) / 4 - 1`, whose
// extent LLVM folds to 1 but which every pass before it sees as a loop. Code generation
// does not split a loop into its edge and interior copies when its body holds another
// serial loop (codegen_loop_partition.cpp), so a vector loop around such a channel loop
// ran every vector under its tail's mask. Folded here, the channel loop is a Let and the
// vector loop is partitioned. Halide's simplifier does this and much more; this pass does
// only what the lowering's own bookkeeping needs.
#pragma once

#include "compiler_core/ir/ir.h"

namespace stipple::lowering {

/// s with constant i32 Lets and LetStmts substituted into their uses (the bindings stay:
/// code generation looks some names up), i32 Add, Sub, Mul, Div, Mod, Min and Max of two
/// constants folded, and Serial or Unrolled loops of constant extent 1 replaced by a
/// LetStmt binding their variable to their min.
Stmt fold_constants(const Stmt& s);

}  // namespace stipple::lowering
