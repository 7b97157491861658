// The back-end registry: the one list of back ends (backend.h).
#include "compiler_core/codegen/backend.h"

#include <algorithm>

#include "compiler_core/ir/error.h"

namespace stipple::codegen {

std::string Backend::unsupported(const LoweredFunction& f, const BackendRequest& request) const {
  // Files promise the AOT calling convention's dense rows (AOT.md); code specialised to
  // interleaved buffers is for the process that chose them (the embedding library).
  if (!request.kinds.empty() && !f.inner_strides.empty()) {
    return "the " + std::string(name()) + " back end writes files for buffers with dense rows " +
           "(dimension 0 stride 1) only, not for '" + f.inner_strides.begin()->first +
           "' interleaved";
  }
  for (EmitKind k : request.kinds) {
    if (std::find(kinds().begin(), kinds().end(), k) == kinds().end()) {
      return "the " + std::string(name()) + " back end does not write " +
             std::string(emit_kind_name(k)) + " files";
    }
  }
  if (request.callable && !makes_callables()) {
    return "the " + std::string(name()) + " back end makes no code to call in this process";
  }
  return unsupported_target(request.options.target);
}

const std::vector<const Backend*>& backends() {
  // Registration: one line per back end. Owned here for the life of the process.
  static const std::vector<std::unique_ptr<Backend>> owned = [] {
    std::vector<std::unique_ptr<Backend>> v;
    v.push_back(new_llvm_cpu_backend());
    v.push_back(new_cpp_source_backend());
    v.push_back(new_cuda_source_backend());
    return v;
  }();
  static const std::vector<const Backend*> list = [] {
    std::vector<const Backend*> v;
    for (const std::unique_ptr<Backend>& b : owned) v.push_back(b.get());
    return v;
  }();
  return list;
}

const Backend* find_backend(std::string_view name) {
  for (const Backend* b : backends()) {
    if (b->name() == name) return b;
  }
  return nullptr;
}

const Backend& backend_for(EmitKind kind, const std::string& target) {
  const Backend* first = nullptr;
  for (const Backend* b : backends()) {
    if (std::find(b->kinds().begin(), b->kinds().end(), kind) == b->kinds().end()) continue;
    if (b->unsupported_target(target).empty()) return *b;
    if (first == nullptr) first = b;
  }
  if (first != nullptr) return *first;
  throw UserError("no back end writes " + std::string(emit_kind_name(kind)) + " files");
}

std::vector<std::string> emit_kind_names() {
  std::vector<EmitKind> all;
  for (const Backend* b : backends()) all.insert(all.end(), b->kinds().begin(), b->kinds().end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());  // headers: CPU and GPU
  std::vector<std::string> names;
  for (EmitKind k : all) names.emplace_back(emit_kind_name(k));
  return names;
}

AotOutputs emit_files(const LoweredFunction& f, const std::vector<EmitKind>& kinds,
                      const AotOptions& options) {
  std::vector<const Backend*> asked;
  for (EmitKind k : kinds) {
    const Backend* b = &backend_for(k, options.target);
    if (std::find(asked.begin(), asked.end(), b) == asked.end()) asked.push_back(b);
  }
  AotOutputs outputs;
  for (const Backend* b : asked) {
    BackendRequest request;
    for (EmitKind k : kinds) {
      if (&backend_for(k, options.target) == b) request.kinds.push_back(k);
    }
    request.options = options;
    BackendResult r = b->compile(f, request);
    if (!r.ok()) throw UserError(r.unsupported);
    outputs.merge(r.artefact->files);
  }
  return outputs;
}

std::shared_ptr<CompiledFunction> load_for_host(const std::string& object,
                                                const std::string& symbol) {
  for (const Backend* b : backends()) {
    if (!b->makes_callables()) continue;
    if (std::shared_ptr<CompiledFunction> f = b->load_callable(object, symbol)) return f;
  }
  throw UserError("no back end can load stored code");
}

std::shared_ptr<CompiledFunction> compile_for_host(const LoweredFunction& f) {
  BackendRequest request;
  request.callable = true;
  request.options.target = "host";
  std::string reasons;
  for (const Backend* b : backends()) {
    if (!b->makes_callables()) continue;
    BackendResult r = b->compile(f, request);
    if (r.ok()) return r.artefact->callable;
    reasons += (reasons.empty() ? "" : "; ") + r.unsupported;
  }
  STIPPLE_INTERNAL_CHECK(false, "no back end makes code to call in this process" +
                                    (reasons.empty() ? std::string() : ": " + reasons));
  return nullptr;
}

}  // namespace stipple::codegen
