// Running JIT-compiled code on Buffers: the caller's side of the calling convention
// (codegen_llvm.h) for a LoweredFunction that lower() made.
//
//   auto fn = jit->compile(f);
//   Buffer out = run_lowered(*fn, f, pipeline, inputs, params, extents);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/lowered_function.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"

namespace stipple {

/// Runs compiled code: allocates the output over [0, extents) (mins 0), passes the
/// inputs (by name, as for evaluate_pipeline) and params (by name; defaults for the
/// others). Throws UserError for a missing input, std::bad_alloc when an allocation of
/// the generated code fails, and InternalError on another nonzero return.
Buffer run_lowered(const codegen::CompiledFunction& fn, const LoweredFunction& f, const Pipeline& p,
                   const std::map<std::string, Buffer>& inputs,
                   const std::map<std::string, double>& params,
                   const std::vector<int64_t>& extents);

}  // namespace stipple
