// The JIT: compiles a LoweredFunction for the host CPU (its name and ISA features, so
// AVX2 / AVX-512 or NEON are used where present) with ORC LLJIT, through the optimisation pipeline
// of target_machine.cpp.
//
//   auto jit = JitCompiler::create();             // once per process (or per worker)
//   auto fn = jit->compile(lowered);              // any thread; compiles run concurrently
//   int32_t rc = fn->entry()(descriptors, params);
//   // destroying `fn` removes its code from the JIT
//
// Each compile gets its own LLVMContext and TargetMachine, so two threads may compile at
// once; the code lives in the shared JITDylib under a unique symbol until the
// CompiledFunction (and with it its ResourceTracker) is destroyed.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "compiler_core/codegen/codegen_llvm.h"

namespace stipple::codegen {

struct TargetSpec;  // target_machine.h

/// Where the compile time went, in milliseconds.
struct CompileStats {
  double generate_ms = 0;  // Stipple IR -> LLVM IR (and verification)
  double optimize_ms = 0;  // the optimisation pass pipeline
  double codegen_ms = 0;   // LLVM IR -> object code
  double link_ms = 0;      // adding the object to the JIT and resolving the symbol
  double total_ms = 0;
};

class JitCompiler;

/// The host CPU as the JIT compiles for it: LLVM's name and its ISA features
/// ("znver4", "+avx2,+fma,-avx512f,..."), without making a JIT. Worker capabilities and
/// the measurements' target key come from here, so they never disagree with the code.
struct HostCpu {
  std::string cpu;
  std::string features;
};
HostCpu jit_host_cpu();

/// The LLVM that generates code ("14.0.6"), with STIPPLE_LLVM_OPTIONS when set: what the
/// nightly history records, since both change what a schedule compiles to.
std::string code_generator_version();

/// Compiled code, kept alive until this is destroyed.
class CompiledFunction {
 public:
  ~CompiledFunction();
  CompiledFunction(const CompiledFunction&) = delete;
  CompiledFunction& operator=(const CompiledFunction&) = delete;

  EntryPoint entry() const { return entry_; }
  int32_t operator()(const BufferDescriptor* buffers, const double* params) const {
    return entry_(buffers, params);
  }
  const CompileStats& stats() const { return stats_; }
  const std::string& symbol() const { return symbol_; }
  /// The object file the code was linked from, and so can be again, in another process
  /// (JitCompiler::load): the nightly run keeps a night's code to time it beside the next
  /// night's.
  const std::string& object() const { return object_; }

 private:
  friend class JitCompiler;
  struct Tracker;
  CompiledFunction() = default;
  EntryPoint entry_ = nullptr;
  CompileStats stats_;
  std::string symbol_;
  std::string object_;
  std::unique_ptr<Tracker> tracker_;
};

class JitCompiler {
 public:
  /// A JIT for the host. Throws InternalError when LLVM cannot target the host.
  static std::unique_ptr<JitCompiler> create();
  /// A JIT for `target`, which the host must be able to run (named_target("x86-64"), the
  /// portable baseline, on any x86-64 host): how tests run the code paths that the host's
  /// own extensions replace (codegen_f16.cpp's integer conversions where it has F16C).
  static std::unique_ptr<JitCompiler> create(const TargetSpec& target);
  ~JitCompiler();
  JitCompiler(const JitCompiler&) = delete;
  JitCompiler& operator=(const JitCompiler&) = delete;

  /// Generates, optimises and links `f`. Throws InternalError on IR the generator cannot
  /// handle or an LLVM failure. Thread-safe.
  std::unique_ptr<CompiledFunction> compile(const LoweredFunction& f);

  /// Links an object file that compile() made (CompiledFunction::object; in this process
  /// or another of the same host target) and returns its entry point `symbol`. Each gets
  /// a JITDylib of its own (removed with it), since its symbol was unique only where it was
  /// compiled; the runtime resolves as for compiled code. UserError when the object cannot be
  /// linked. The caller vouches that the code was made for this host's target and this Stipple's
  /// calling convention. Thread-safe.
  std::unique_ptr<CompiledFunction> load(const std::string& object, const std::string& symbol);

  /// The LLVM IR of `f`, optimised or not (for debugging and tests).
  std::string llvm_ir(const LoweredFunction& f, bool optimized);

  const std::string& host_cpu() const;
  /// The host's features as LLVM spells them ("+avx2,+fma,-avx512f,...").
  const std::string& host_features() const;

 private:
  struct Impl;
  explicit JitCompiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stipple::codegen
