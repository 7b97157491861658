// The C++ source back end: the function as one portable C++17 file (cpp_source.h), for
// any target the user's own compiler serves.
#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/cpp_source.h"
#include "compiler_core/codegen/cuda_target.h"

namespace stipple::codegen {

namespace {

class CppSourceBackend : public Backend {
 public:
  std::string_view name() const override { return "cpp-source"; }

  const std::vector<EmitKind>& kinds() const override {
    static const std::vector<EmitKind> k = {EmitKind::CppSource};
    return k;
  }

  // Portable source: the target is whatever compiles it, any CPU; not a GPU.
  std::string unsupported_target(const std::string& target) const override {
    if (!is_cuda_target(target)) return "";
    return "'" + target + "' is a GPU target: --emit cu writes its code (cpp is C++ for a CPU)";
  }

  BackendResult compile(const LoweredFunction& f, const BackendRequest& request) const override {
    std::string why = unsupported(f, request);
    if (!why.empty()) return BackendResult::cannot_serve(why);
    check_c_function_name(request.options.symbol);
    Artefact a;
    if (!request.kinds.empty()) a.files[EmitKind::CppSource] = cpp_source(f, request.options);
    return {std::move(a), ""};
  }
};

}  // namespace

std::unique_ptr<Backend> new_cpp_source_backend() { return std::make_unique<CppSourceBackend>(); }

}  // namespace stipple::codegen
