// Running JIT-compiled code on Buffers (run_lowered.h).
#include "compiler_core/codegen/run_lowered.h"

#include <new>

#include "compiler_core/codegen/codegen_llvm.h"
#include "compiler_core/ir/error.h"

namespace stipple {

Buffer run_lowered(const codegen::CompiledFunction& fn, const LoweredFunction& f, const Pipeline& p,
                   const std::map<std::string, Buffer>& inputs,
                   const std::map<std::string, double>& params,
                   const std::vector<int64_t>& extents) {
  const Func* out = p.find_func(p.output.func);
  STIPPLE_INTERNAL_CHECK(out, "the pipeline has no output func");
  Buffer result(out->type.code, extents);
  run_lowered_into(fn, f, p, inputs, params, result);
  return result;
}

void run_lowered_into(const codegen::CompiledFunction& fn, const LoweredFunction& f,
                      const Pipeline& p, const std::map<std::string, Buffer>& inputs,
                      const std::map<std::string, double>& params, Buffer& result) {
  const Func* out = p.find_func(p.output.func);
  STIPPLE_INTERNAL_CHECK(out && result.type() == out->type.code,
                         "the output buffer is not of the output func's type");
  std::vector<int64_t> extents;
  for (int d = 0; d < result.dimensions(); ++d) {
    STIPPLE_INTERNAL_CHECK(result.min(d) == 0, "the output buffer's mins must be 0");
    extents.push_back(result.extent(d));
  }
  std::vector<codegen::BufferDescriptor> descriptors;
  for (const InputDecl& in : f.inputs) {
    auto it = inputs.find(in.name);
    if (it == inputs.end()) throw UserError("missing input '" + in.name + "'");
    descriptors.push_back(codegen::describe(it->second));
  }
  // The schedule's bound(v, min, extent) of the output: the loop nest computes exactly
  // that range, so the output must be it.
  for (const ExternalBuffer& eb : f.buffers) {
    for (const ExternalBuffer::FixedDim& fd : eb.fixed) {
      const size_t d = static_cast<size_t>(fd.dim);
      if (d < extents.size() && fd.min == 0 && fd.extent == extents[d]) continue;
      throw UserError("the schedule bounds '" + eb.name + "' to " + std::to_string(fd.min) + ".." +
                      std::to_string(fd.min + fd.extent - 1) + " in '" + out->args[d] +
                      "' (bound), but the output is 0.." +
                      std::to_string(d < extents.size() ? extents[d] - 1 : -1) +
                      " there; change the bound or the input");
    }
  }
  descriptors.push_back(codegen::describe(result));
  std::vector<double> values;
  for (const ParamDecl& pd : f.params) {
    auto it = params.find(pd.name);
    values.push_back(it == params.end() ? pd.default_value : it->second);
  }
  int32_t rc = fn(descriptors.data(), values.data());
  // An allocation of the generated code failed: the same failure as a new that fails, so
  // that callers (the evaluator records "out_of_memory") handle both alike.
  if (rc == codegen::kErrorOutOfMemory) throw std::bad_alloc();
  STIPPLE_INTERNAL_CHECK(rc == 0, "generated code returned " + std::to_string(rc));
}

}  // namespace stipple
