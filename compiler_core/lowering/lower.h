// The lowering driver: a checked Pipeline and a checked Schedule become a LoweredFunction
// that codegen (compiler_core/codegen) compiles, computing exactly what the reference
// evaluator computes.
//
//   LoweredFunction f = lower(pipeline, schedule);    // check_schedule(schedule) first
//   auto fn = jit->compile(f);                        // codegen/jit.h
//   Buffer out = run_lowered(*fn, f, pipeline, inputs, params, extents);  // codegen/run_lowered.h
//
// The generated function computes the output func over the box of the buffer passed for
// it (its mins and extents), as evaluate_pipeline_region does.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "compiler_core/ir/lowered_function.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// Called after each pass of lower() with the pass's name and what it produced, printed
/// (the pipeline after apply_perforation, the loop nest after the others).
using PassObserver = std::function<void(const std::string& pass, const std::string& ir)>;

/// Lowers `p` under `s` (which check_schedule must have accepted). The passes are listed in
/// lower.cpp, in order; `after_pass`, when given, sees the IR after each of them. Without
/// it, the environment variable STIPPLE_DUMP_PASSES=1 prints the same to stderr. Throws
/// UserError when bounds cannot be inferred.
LoweredFunction lower(const Pipeline& p, const Schedule& s, const PassObserver& after_pass = {});

/// Prints each pass's name as a header line `== <pass> ==` and then its IR, to `os`.
PassObserver print_passes(std::ostream& os);

/// The lowered loop nest as indented text (for `stipple lower`).
std::string lowered_text(const Pipeline& p, const Schedule& s);

}  // namespace stipple
