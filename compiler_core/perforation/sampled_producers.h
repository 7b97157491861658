// Producers computed at the sampled points only (issue #28, "perforation without fixed
// costs"). A grid-perforated func computes its value at every s-th point, so it reads its
// producers at strided indices; a producer the schedule realises (per tile, say) would
// still be computed over the whole box those indices span, s times the points read per
// perforated dimension. The bilateral grid's slice (interp, computed per tile of the
// output) read by `out.perforate(grid(2, 2))` computed four times the points it was read
// at, and the perforated variant was slower than the exact one.
//
// Where every reader of a realised producer P computes strided points (the perforated
// func, by perforate(grid(...)) or loop_perforate(v, stride(s)), or a producer sampled
// before), and all their reads of P are at one residue r modulo one spacing s along a
// dimension, P is replaced by
//
//   func P$sampled(x, y, c) = <P at (x * s0 + r0, y * s1 + r1, c)>
//
// with P's schedule (P is gone: nothing reads it), and each read P(e0, e1, c) by
// P$sampled((e0 - r0) / s0, (e1 - r1) / s1, c), the quotients exact (congruence.h). The
// values are those of P at the same points, so the variant's output is unchanged, bit for
// bit. P$sampled computes strided points in turn, so its own realised producers are
// sampled the same way (artistic blur: raw_sum, then the kernel data qa, qb, qc that
// both raw_sum and the output read). A producer read at several residues (the taps of a
// stencil: `edge(x * 4 - i)`), or by a func computing every point, is left as it is.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/perforation/congruence.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::perforation {

/// A func of the rewritten pipeline that computes every spacing[d]-th point of what the
/// original computed along dimension d.
struct SampledFunc {
  std::string name;
  std::vector<int64_t> spacing;
};

/// Samples the realised producers of the `sampled` funcs in q (scheduled by t) as above;
/// funcs named in `keep` (approximated ones, whose reads other rules rewrote) are never
/// sampled.
void sample_producers(Pipeline& q, Schedule& t, const std::vector<SampledFunc>& sampled,
                      const std::set<std::string>& keep, CongruenceProver& prover);

}  // namespace stipple::perforation
