// On-demand reconstruction from grid samples (Image Perforation §3.3): a read
// f(e0, ..., ek) of a func perforated by grid(s0, ..., sk), whose samples are stored
// downsampled (samples(q) = f(q * s), §3.3.2), becomes an expression over the samples:
//
//   nearest: samples(floor((e_d + floor(s_d / 2)) / s_d)) per dimension, the nearest sample
//            (ties towards the larger index);
//   linear:  the multilinear blend over the p dimensions with s_d > 1 of the 2^p samples
//            around e, weights w_d = (e_d mod s_d) / s_d: lerp(a, b, w) = (1 - w) * a + w * b.
//
// With a CongruenceProver, an e_d proved congruent to a constant r (congruence.h) gets
// constant weights: r = 0 is a plain read along d, otherwise (1 - r/s, r/s); and the
// sample index is the exact quotient (x * 4 + 2 reads samples x and x + 1). Without one
// the weights are computed at run time; both give the same values (a zero weight adds
// 0 * b, which is 0 for a finite b).
//
// Integer funcs blend in f32 and round back (round(v), saturated by the cast).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/perforation/congruence.h"
#include "compiler_core/schedule/approximation.h"

namespace stipple::perforation {

struct GridSamples {
  std::string func;  // the func holding the samples
  Type type;
  std::vector<int64_t> spacing;                                    // one per dimension
  ReconstructionKind reconstruction = ReconstructionKind::Linear;  // Nearest or Linear
};

/// The value of the perforated func at `args` (dense coordinates), read from the samples.
/// `prover` null: no congruence simplification.
Expr reconstruct_from_grid(const GridSamples& g, const std::vector<Expr>& args,
                           CongruenceProver* prover);

/// The dense reconstruction as funcs over `args`, the last named `name` (of g's type):
/// linear reconstruction is separable, one func per interpolated dimension, the first
/// dimension's first (`<name>$lerp_<var>`, in the blend's value type), each dense in the
/// dimensions done and still at sample indices in the others. The values are those of
/// reconstruct_from_grid at the pure variables, bit for bit: the same lerps in the same
/// order, each computed once per row of samples instead of once per point.
std::vector<Func> dense_reconstruction(const GridSamples& g, const std::vector<std::string>& args,
                                       const std::string& name);

}  // namespace stipple::perforation
