// The back-end interface: every way of turning a LoweredFunction into code sits behind
// Backend, registered once (backend.cpp) and looked up by name or by the kind of file it
// writes. `stipple compile --emit` asks the registry which back end writes each kind.
//
//   const Backend& b = backend_for(EmitKind::CppSource, "host");     // or
//   *find_backend("cpp-source") BackendRequest req;  req.kinds = {EmitKind::CppSource};
//   req.options.symbol = "blur"; BackendResult r = b.compile(lowered, req); if (!r.ok()) throw
//   UserError(r.unsupported);             // a target or kind it cannot serve
//   write(r.artefact->files.at(EmitKind::CppSource));
//
// BACKENDS.md says how to add one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/lowered_function.h"

namespace stipple::codegen {

/// What a back end is asked for.
struct BackendRequest {
  /// The files to write (empty when only `callable` is wanted).
  std::vector<EmitKind> kinds;
  /// Code to call in this process as well (a back end that runs code here: the JIT).
  bool callable = false;
  /// The exported symbol, the target's name (aot_target_names() for the LLVM CPU back
  /// end) and what the header's comments say.
  AotOptions options;
};

/// What a back end made: each requested kind's file contents (text, or an object's
/// bytes) and, when asked for, compiled code to call.
struct Artefact {
  AotOutputs files;
  std::shared_ptr<CompiledFunction> callable;
};

/// An artefact, or why the back end cannot serve the request (a target, a kind or a
/// callable it does not provide): a value for the caller to report, not an exception.
/// A bad function name or IR the back end cannot handle still throws, as the generators do.
struct BackendResult {
  std::optional<Artefact> artefact;
  std::string unsupported;  // set when `artefact` is not

  bool ok() const { return artefact.has_value(); }
  static BackendResult cannot_serve(std::string reason) {
    return {std::nullopt, std::move(reason)};
  }
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// The name it is registered and looked up by ("llvm-cpu", "cpp-source").
  virtual std::string_view name() const = 0;
  /// The kinds of file it writes; no two registered back ends write the same kind.
  virtual const std::vector<EmitKind>& kinds() const = 0;
  /// Empty when it can generate code for the target named `target`, else why not.
  virtual std::string unsupported_target(const std::string& target) const = 0;
  /// Whether it can return code to call in this process.
  virtual bool makes_callables() const { return false; }

  /// Generates what `request` asks for, or says why it cannot (unsupported(f, request) first).
  virtual BackendResult compile(const LoweredFunction& f, const BackendRequest& request) const = 0;
  /// For a back end that makes callables: code it made before (CompiledFunction::object
  /// and symbol), linked to call again; nullptr when it cannot load code.
  virtual std::shared_ptr<CompiledFunction> load_callable(const std::string& object,
                                                          const std::string& symbol) const {
    return nullptr;
  }

 protected:
  /// Empty when this back end writes every requested kind, serves the target and makes a
  /// callable if one is asked for; otherwise the first reason it cannot.
  std::string unsupported(const LoweredFunction& f, const BackendRequest& request) const;
};

/// The registered back ends, in registration order.
const std::vector<const Backend*>& backends();
/// The back end registered as `name`; nullptr when there is none.
const Backend* find_backend(std::string_view name);
/// The back end that writes `kind` for `target` (several write headers: the CPU's and the
/// GPU's); when none serves the target, the first that writes the kind, which then says
/// why it cannot. UserError when none writes the kind.
const Backend& backend_for(EmitKind kind, const std::string& target = "host");
/// The spellings (emit_kind_name) of every kind some back end writes, in EmitKind order:
/// what `--emit` accepts.
std::vector<std::string> emit_kind_names();

/// Every kind in `kinds`, each from the back end registered for it, each back end asked
/// once: what `stipple compile --emit` and `stipple export --format` write. UserError with
/// the back end's reason when one cannot serve the request (a target it has no code for).
AotOutputs emit_files(const LoweredFunction& f, const std::vector<EmitKind>& kinds,
                      const AotOptions& options);

/// Code for `f` to call in this process: what every caller that runs generated code here
/// (the measuring process, `stipple run`, the benches) asks for, from the first registered
/// back end that makes callables for the host target. The callable keeps its code alive;
/// the compile statistics are on it (CompiledFunction::stats). Throws InternalError when
/// no back end can serve it, as the JIT does on IR it cannot handle.
std::shared_ptr<CompiledFunction> compile_for_host(const LoweredFunction& f);
/// Code compile_for_host made (its object() and symbol(), kept), to call in this process.
/// UserError when no back end can load it.
std::shared_ptr<CompiledFunction> load_for_host(const std::string& object,
                                                const std::string& symbol);

/// The implementations, each private to its file; backend.cpp registers them.
std::unique_ptr<Backend> new_llvm_cpu_backend();     // backend_llvm_cpu.cpp
std::unique_ptr<Backend> new_cpp_source_backend();   // backend_cpp_source.cpp
std::unique_ptr<Backend> new_cuda_source_backend();  // backend_cuda_source.cpp

}  // namespace stipple::codegen
