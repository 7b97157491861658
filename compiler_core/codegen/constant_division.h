// Float division by an odd integer constant without a divide: Markstein's correction of the
// product by the reciprocal, for the CUDA back end.
//
// Stipple's float division is IEEE's (the evaluator's, on every back end), which a GPU computes
// with a correctly rounded division routine: a reciprocal on the special-function unit (an
// eighth of the FMA rate on Ampere and Hopper), Newton steps, and a check with a branch to a slow
// path at every division. When the divisor is a constant d, the same quotient comes from y =
// RN(1/d) and three roundings (P. Markstein, "Computation of elementary functions on the IBM RISC
// System/6000 processor", IBM J. Res. Dev. 34(1), 1990; J.-M. Muller et al., Handbook of
// Floating-Point Arithmetic, division with an FMA):
//
//     q = RN(x * y);  q if it is zero, infinite or NaN;  else RN(q + RN(x - q * d) * y)
//
// (the last two steps one fma each). It is IEEE's x / d for every float x when d is an odd
// integer with 3 <= |d| < 2^20 (d > 0 below; -d negates every step). Let G be the spacing of
// floats where x / d lies (2^-149 among the subnormals); q lies within a binade of x / d, so
// G/2 <= ulp(q) <= 2G:
//  - |x/d - q| <= |x/d| 2^-24 + ulp(q)/2 <= 2G, since y = (1/d)(1 + e) with |e| <= 2^-24;
//  - r = x - q d is exact: x and q d are multiples of ulp(q) (d is an integer; ulp(x) >=
//    ulp(q), both 2^-149 among the subnormals, else ulp(x) >= 2G >= ulp(q) as x >= 3 x/d),
//    and |r| <= 2G d <= 4d ulp(q) < 2^24 ulp(q);
//  - q + r y = x/d + (x/d - q) e is off x / d by at most 2^-23 G;
//  - a rounding boundary M near x / d (an odd multiple of G/2, or of G/4 just below a power
//    of two; the others are more than G away) is at least G / (4d) from x / d: x is a multiple of G
//    and M d an odd multiple of G/4 at the finest (d odd), so |x - M d| >= G/4; as 2^-23 G < G /
//    (4d), the fma rounds x / d's way;
//  - q == 0 only when |x y| <= 2^-150, and then |x / d| <= 2^-150 too: x / d is within
//    about 2^-174 of 2^-150 only if |x - 2^-150 d| < 2^-150, impossible for an odd multiple of
//    2^-150; q is never infinite (|y| < 1/2).
// An even divisor breaks the fourth step: x / 10 can be a midpoint of the subnormals (x =
// 15 * 2^-149), which the correction rounds the wrong way. constant_division_exhaustive_test.cpp
// checks all 2^32 dividends of x / 3 and the subnormal ones of other odd divisors. blur3x3 (18
// divisions by 3 a thread) took 0.302 ms with IEEE division and 0.269 ms this way at
// 6400x4800 on an H200 (bench/README.md, issue #31).
#pragma once

#include <optional>

namespace stipple::codegen {

/// The quotient as the CUDA dialect prints it (div_by_constant), with reciprocal y = RN(1/d).
float markstein_quotient(float x, float d, float y);

/// RN(1 / d) when d is an odd integer with 3 <= |d| < 2^20 (markstein_quotient is then IEEE's
/// x / d for every x); nullopt for any other divisor, which the CUDA dialect divides by.
std::optional<float> markstein_reciprocal(float d);

}  // namespace stipple::codegen
