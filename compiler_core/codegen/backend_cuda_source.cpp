// The CUDA back end: the function as one CUDA C++ file (cuda_source.h) of GPU kernels and
// the host code that launches them, for the cuda-sm_NN targets (cuda_target.h); the C
// header declaring its two entry points; and its kernels alone as PTX (nvcc.h).
//
// Why CUDA C++ rather than LLVM's NVPTX back end: the C++ printer already computes what
// the evaluator computes rule for rule (cpp_source.h), so the kernels inherit its tested
// semantics; and LLVM 14 stops at sm_86 and PTX 7.5, while CUDA 11.8's nvcc and NVRTC
// know sm_90.
#include <algorithm>

#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/cpp_source.h"
#include "compiler_core/codegen/cuda_target.h"
#include "compiler_core/codegen/nvcc.h"

namespace stipple::codegen {

namespace {

class CudaSourceBackend : public Backend {
 public:
  std::string_view name() const override { return "cuda-source"; }

  const std::vector<EmitKind>& kinds() const override {
    static const std::vector<EmitKind> k = {EmitKind::Header, EmitKind::CudaSource, EmitKind::Ptx};
    return k;
  }

  std::string unsupported_target(const std::string& target) const override {
    if (is_cuda_target(target)) return "";
    std::string known;
    for (const std::string& n : cuda_target_names()) known += (known.empty() ? "" : ", ") + n;
    return "the cuda-source back end writes GPU code for " + known + ", not '" + target +
           "' (give --target cuda-sm_90, say)";
  }

  BackendResult compile(const LoweredFunction& f, const BackendRequest& request) const override {
    std::string why = unsupported(f, request);
    if (!why.empty()) return BackendResult::cannot_serve(why);
    check_c_function_name(request.options.symbol);
    Artefact a;
    const auto asked = [&](EmitKind k) {
      return std::find(request.kinds.begin(), request.kinds.end(), k) != request.kinds.end();
    };
    if (asked(EmitKind::Header)) a.files[EmitKind::Header] = c_header(f, request.options);
    if (asked(EmitKind::CudaSource) || asked(EmitKind::Ptx)) {
      const std::string cu = cuda_source(f, request.options);
      if (asked(EmitKind::Ptx)) {
        a.files[EmitKind::Ptx] = ptx_from_cuda_source(cu, cuda_arch(request.options.target));
      }
      if (asked(EmitKind::CudaSource)) a.files[EmitKind::CudaSource] = cu;
    }
    return {std::move(a), ""};
  }
};

}  // namespace

std::unique_ptr<Backend> new_cuda_source_backend() { return std::make_unique<CudaSourceBackend>(); }

}  // namespace stipple::codegen
