// Running JIT-compiled code on Buffers: the caller's side of the calling convention
// (codegen_llvm.h) for a LoweredFunction that lower() made.
//
//   auto fn = jit->compile(f);
//   Buffer out = run_lowered(*fn, f, pipeline, inputs, params, extents);
//   run_lowered_into(*fn, f, pipeline, inputs, params, out);   // again, into the same buffer
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

/// The same into `out`, which the caller allocated with the output's element type, mins 0
/// and the extents to compute (InternalError otherwise); every element is written. What a
/// timing loop calls: allocating the output, zeroing it and faulting its pages in is no
/// part of the pipeline's time (for a 1920x1080 RGB f32 output, a 24 MiB memset and the
/// kernel's page clearing each run), and a user's program, like Halide's benchmarks,
/// computes into the buffer it has.
void run_lowered_into(const codegen::CompiledFunction& fn, const LoweredFunction& f,
                      const Pipeline& p, const std::map<std::string, Buffer>& inputs,
                      const std::map<std::string, double>& params, Buffer& out);

}  // namespace stipple
