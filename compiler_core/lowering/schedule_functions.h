// Builds the loop nest of a scheduled pipeline: every realised func's stages as loop nests
// from stage_loop_nest (splits, tiles, reorders, parallel, vector and unrolled lane
// loops), each func's computation and its storage placed at its compute and store levels,
// and the region each func is computed over (symbolic bounds inference over its consumers,
// widened by its own updates exactly as the reference evaluator widens a func's box).
//
// Three steps stay inside this pass rather than in lower.cpp's list, because none of
// them has a whole statement to work on:
// - inlining (inline_and_qualify) comes before any statement exists: the stages are built
//   from the inlined, uniquely named definitions, and a producer's region is inferred
//   from the calls that inlining exposes in its consumers;
// - bounds inference reads the table of every loop's range and every level's path, which
//   only exists while the loop nests are being built, and its results are the region Lets
//   that the statement is made of;
// - CSE binds the shared subtrees of those regions (DAGs) as they are placed. A statement
//   without it would be exponentially large to anything that walks it as a tree, the
//   printer of the pass dump and every later pass included.
#pragma once

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::lowering {

/// The statement computing the pipeline's output into the external buffer named after the
/// output func, over [out.min.D, out.min.D + out.extent.D). Throws UserError when a
/// func's bounds cannot be inferred.
Stmt schedule_functions(const Pipeline& p, const Schedule& s);

}  // namespace stipple::lowering
