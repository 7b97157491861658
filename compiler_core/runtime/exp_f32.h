// Stipple's f32 `exp`: the one definition the reference evaluator, scalar generated code
// and vector generated code all compute, bit for bit.
//
// Why not the C library's expf: glibc's is table-driven in double precision, and
// reproducing it in vector code takes two f64 halves and a gather per vector. That made
// exp most of the bilateral filter's time. This is SLEEF's xexpf (u10 variant): Cody-Waite
// reduction by ln 2 and a degree-6 polynomial, in f32 with fused multiply-adds only, which
// vectorises to a dozen instructions. Error: at most 1 ulp against the correctly rounded
// result for every finite input whose result is normal (checked on all 2^32 inputs by
// tests/compiler_core/codegen/vector_exp_exhaustive_test.cpp); NaN gives NaN, results
// beyond FLT_MAX are +inf, results below the smallest denormal +0.
#pragma once

namespace stipple {

/// exp(x) as Stipple defines it for f32 (above). The generated code's copy is
/// CodeGen::emit_expf; the two must stay the same operation for operation.
float exp_f32(float x);

}  // namespace stipple
