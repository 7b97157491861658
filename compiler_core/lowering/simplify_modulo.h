// Modulo simplification: `e % c` for a power-of-two constant c loses every term of e that
// is a multiple of c, looking through the Lets that bind e's variables.
//
// Splitting a loop writes its variable as `x = x.min + x.outer * 32 + x.inner`, so a
// parity test such as demosaic's `x % 2 == 0` is, as written, different in every
// iteration of the outer loop. It is not: 32 * x.outer is a multiple of 2, and
//
//   let x = x.min + x.outer * 32 + x.vector
//   ... (x + 1) % 2 ...        becomes        ... (x.min + x.vector + 1) % 2 ...
//
// which no longer depends on x.outer, so LLVM hoists it (and the selects that test it) out
// of the loop. Halide's simplifier does the same with its modulus-remainder analysis.
//
// Exact under the language's wrapping i32 arithmetic: c divides 2^32 (a power of two up to
// 2^30), so a term that is a multiple of c changes the wrapped sum by a multiple of c and
// leaves its Euclidean remainder unchanged.
#pragma once

#include "compiler_core/ir/ir.h"

namespace stipple::lowering {

/// Rewrites every i32 `e % c` (c a positive power-of-two constant) in s whose sum e, with
/// the variables bound by enclosing Lets and LetStmts expanded, has a term `t * k` or
/// `k * t` (k a multiple of c) or a constant that is a multiple of c: that term is dropped.
/// Other modulos are left as they are, and so is every variable that needs no expanding.
Stmt simplify_modulo(const Stmt& s);

}  // namespace stipple::lowering
