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
  std::vector<codegen::BufferDescriptor> descriptors;
  for (const InputDecl& in : f.inputs) {
    auto it = inputs.find(in.name);
    if (it == inputs.end()) throw UserError("missing input '" + in.name + "'");
    descriptors.push_back(codegen::describe(it->second));
  }
  const Func* out = p.find_func(p.output.func);
  Buffer result(out->type.code, extents);
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
  return result;
}

}  // namespace stipple
