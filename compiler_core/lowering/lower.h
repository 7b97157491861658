// The lowering driver: a checked Pipeline and a checked Schedule become a LoweredFunction
// that codegen (compiler_core/codegen) compiles, computing exactly what the reference
// evaluator computes.
//
//   LoweredFunction f = lower(pipeline, schedule);    // check_schedule(schedule) first
//   auto fn = jit->compile(f);
//   Buffer out = run_lowered(*fn, f, pipeline, inputs, params, extents);
//
// The generated function computes the output func over the box of the buffer passed for
// it (its mins and extents), as evaluate_pipeline_region does.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler_core/codegen/codegen_llvm.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// Lowers `p` under `s` (which check_schedule must have accepted). The passes, in order:
/// inlining and qualification of definitions, loop nests of every stage with compute and
/// store levels, bounds inference, sliding windows, storage folding. Throws UserError when bounds
/// cannot be inferred.
codegen::LoweredFunction lower(const Pipeline& p, const Schedule& s);

/// The lowered loop nest as indented text (for `stipple lower`).
std::string lowered_text(const Pipeline& p, const Schedule& s);

/// Runs compiled code: allocates the output over [0, extents) (mins 0), passes the
/// inputs (by name, as for evaluate_pipeline) and params (by name; defaults for the
/// others). Throws UserError for a missing input, std::bad_alloc when an allocation of
/// the generated code fails, and InternalError on another nonzero return.
Buffer run_lowered(const codegen::CompiledFunction& fn, const codegen::LoweredFunction& f,
                   const Pipeline& p, const std::map<std::string, Buffer>& inputs,
                   const std::map<std::string, double>& params,
                   const std::vector<int64_t>& extents);

}  // namespace stipple
