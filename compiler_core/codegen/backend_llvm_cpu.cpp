// The LLVM CPU back end: object files, assembly, LLVM IR and the C header ahead of time
// (aot.h) for the targets of target_machine.h, and the JIT (jit.h) for code called in
// this process.
#include <algorithm>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/cuda_target.h"
#include "compiler_core/codegen/target_machine.h"

namespace stipple::codegen {

namespace {

class LlvmCpuBackend : public Backend {
 public:
  std::string_view name() const override { return "llvm-cpu"; }

  const std::vector<EmitKind>& kinds() const override {
    static const std::vector<EmitKind> k = {EmitKind::Object, EmitKind::Assembly, EmitKind::LlvmIr,
                                            EmitKind::Header};
    return k;
  }

  std::string unsupported_target(const std::string& target) const override {
    if (is_cuda_target(target)) {
      return "'" + target +
             "' is a GPU target: --emit cu writes its code (the CUDA file declares its own "
             "functions); obj, asm, llvm and header are for CPU targets";
    }
    const std::vector<std::string>& names = target_names();
    if (std::find(names.begin(), names.end(), target) != names.end()) return "";
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return "the llvm-cpu back end has no target '" + target + "' (it has " + known + ")";
  }

  bool makes_callables() const override { return true; }

  BackendResult compile(const LoweredFunction& f, const BackendRequest& request) const override {
    std::string why = unsupported(f, request);
    // The JIT compiles for the machine it runs on only.
    if (why.empty() && request.callable && request.options.target != "host") {
      why = "the llvm-cpu back end calls code in this process for the host target only, not '" +
            request.options.target + "'";
    }
    if (!why.empty()) return BackendResult::cannot_serve(why);
    Artefact a;
    if (!request.kinds.empty()) a.files = compile_ahead_of_time(f, request.kinds, request.options);
    if (request.callable) a.callable = jit().compile(f);
    return {std::move(a), ""};
  }

 private:
  // One JIT per process, made on first use; compiles are thread-safe (jit.h).
  std::shared_ptr<CompiledFunction> load_callable(const std::string& object,
                                                  const std::string& symbol) const override {
    return jit().load(object, symbol);
  }

  static JitCompiler& jit() {
    static const std::unique_ptr<JitCompiler> compiler = JitCompiler::create();
    return *compiler;
  }
};

}  // namespace

std::unique_ptr<Backend> new_llvm_cpu_backend() { return std::make_unique<LlvmCpuBackend>(); }

}  // namespace stipple::codegen
