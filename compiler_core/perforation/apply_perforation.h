// Image perforation as a rewrite of the pipeline (Image Perforation §3): a pipeline
// and a schedule with approximation directives (compiler_core/schedule/approximation.h)
// become a pipeline without them, whose funcs compute only the chosen points and whose
// reads reconstruct the rest, and the schedule of that pipeline. Everything after this
// (the reference evaluator, the schedule checker, lowering, code generation) sees an
// ordinary pipeline, so perforation composes with every fusion, tiling, vectorising and
// parallel schedule, and the evaluator run on the rewritten pipeline is the reference
// for the perforated variant.
//
// For a func f (pure, no updates):
// - perforate(grid(s...)): f now computes its samples, stored downsampled:
//   f(x, y, c) = <f's definition at (x * s0, y * s1, c * s2)>. Every read of f in other
//   funcs becomes a reconstruction from the samples (grid_reconstruction.h), on demand;
//   with `precomputed`, a func f$dense computes that reconstruction densely, at f's
//   levels, and the reads read it.
// - perforate_reduction, and loop_perforate of a reduction variable: reduction_perforation.h.
// - loop_perforate(v, stride(s)): f computes every s-th point along v (as a grid, stored
//   downsampled); reads see 0 elsewhere. truncate(p, first | last): reads see 0 in the
//   skipped share of the output's extent along v, and f computes only the rest.
// - store_as(f16): f becomes an f16 func, its readers widen (storage_lowering.h); done
//   first, on funcs that are neither perforated nor channel-copied (their reductions may
//   be perforated: that rewrites the value inside the rounding).
// - channels(c): reads of channel ch >= c (the last dimension) copy the input
//   (channel_source) at the same point instead; f computes channels 0..c-1 only.
// - The output, when its points change: its definition moves to `<out>$samples` (which
//   takes the output's schedule: its loops, and every compute_at / store_at that named
//   them), and the output becomes the dense reconstruction, vectorised and parallel.
// A perforated func without a compute level is computed at root.
#pragma once

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/perforation/congruence.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::perforation {

struct PerforationOptions {
  /// Congruence simplification of on-demand grid reads (congruence.h).
  bool congruence = true;
  /// Realised producers of strided funcs computed at the points read (sampled_producers.h).
  bool sampled_producers = true;
};

struct PerforatedPipeline {
  Pipeline pipeline;
  Schedule schedule;  // without approximation directives
};

/// Applies every approximation directive of s (which check_schedule accepted for p). With
/// none, returns p and s as they are. `prover` (optional) keeps solver results across
/// calls; without one a fresh prover is used.
PerforatedPipeline apply_perforation(const Pipeline& p, const Schedule& s,
                                     const PerforationOptions& options = {},
                                     CongruenceProver* prover = nullptr);

/// The name of the func that computes the output's points when the output is
/// approximated: `<out>$samples`.
std::string output_samples_name(const std::string& output);

}  // namespace stipple::perforation
