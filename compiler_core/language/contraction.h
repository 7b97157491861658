// Floating-point contraction, a rule of the language: a float `a * b + c` is one fused
// multiply-add, the product never rounded on its own (LANGUAGE.md, "Contraction").
//
// It is a rule on the program as written, applied once after checking, and not a back
// end's choice, because every schedule must compute the evaluator's bits: C compilers and
// Halide contract where the target has FMA instructions and the optimiser finds the
// pattern (`-ffp-contract`, LLVM's `contract` flag), so their results depend on the target
// and on what was inlined. Here the evaluator, the LLVM and C++ back ends and the GPU all
// compute the same fma(a, b, c), on any target (one without FMA calls the C library's).
// What it buys is what contraction buys Halide's apps: a multiply-add, or a dot product's
// step, in one instruction instead of two.
#pragma once

#include "compiler_core/ir/pipeline.h"

namespace stipple {

/// `p` with every f32 and f64 product that is an operand of an addition or subtraction
/// fused into it, wherever it is (values, update sites, reduction bounds, output extents),
/// and every sum of a product made a FusedSum:
///   a * b + c, c + a * b  ->  fma(a, b, c)
///   a * b - c             ->  fma(a, b, -c)
///   c - a * b             ->  fma(-a, b, c)
///   sum(d : a * b)        ->  fused_sum(d : a * b)   (acc = fma(a, b, acc) per point)
/// Where both operands are products the left one is fused (p0 + p1 is fma(p0, p1)), the
/// choice LLVM's contraction makes, so Halide's code computes the same bits where its
/// LLVM contracts the same expression (it does not where a product has two uses).
/// Negation is exact (a literal's sign, or a product by -1). A product bound by a let or
/// computed by another func is a value like any other: `let p = a * b in p + c` rounds it.
Pipeline contract_products(Pipeline p);

}  // namespace stipple
