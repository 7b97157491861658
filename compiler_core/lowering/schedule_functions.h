// Builds the loop nest of a scheduled pipeline: every realised func's stages as loop nests
// from stage_loop_nest (splits, tiles, reorders, parallel, vector and unrolled lane
// loops), each func's computation and its storage placed at its compute and store levels,
// and the region each func is computed over (symbolic bounds inference over its consumers,
// widened by its own updates exactly as the reference evaluator widens a func's box).
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
