// What the JIT (jit.cpp) and ahead-of-time compilation (aot.cpp) share, so that an object
// file gets exactly the code the JIT would run: the description of a target (triple, CPU,
// features), TargetMachines for it, the per-function target attributes, the optimisation pass
// pipeline and machine code emission.
//
//   TargetSpec t = host_target();                         // or named_target("x86-64-v3")
//   auto tm = create_target_machine(t, TargetUse::AheadOfTime);
//   auto m = generate_module(f, symbol, ctx, codegen_target(*tm));
//   prepare_module(*m, *tm);                              // data layout, triple, attributes
//   optimize_module(*m, *tm);                             // SROA, GVN, LICM, ...
//   std::string obj = emit_machine_code(*m, *tm, llvm::CGFT_ObjectFile);
//
// Internal to compiler_core/codegen: the header pulls in LLVM's.
#pragma once

#include <llvm/Support/CodeGen.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_core/codegen/codegen_llvm.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace stipple::codegen {

/// A code generation target as LLVM names it.
struct TargetSpec {
  std::string name;      // "host", "x86-64", ... (what --target takes)
  std::string triple;    // "x86_64-pc-linux-gnu"
  std::string cpu;       // "znver4", "x86-64-v3", "generic"
  std::string features;  // "+avx2,+fma,-avx512f,..." (may be empty: the CPU's own)
};

/// Registers every LLVM target (the AOT compiler cross-compiles); idempotent, thread-safe.
void initialize_llvm_targets();

/// The machine this process runs on: sys::getProcessTriple, getHostCPUName and every
/// feature getHostCPUFeatures reports, so code may use each ISA extension it has.
TargetSpec host_target();

/// The names named_target accepts, "host" first.
const std::vector<std::string>& target_names();

/// "host", or a generic CPU for the host's OS: "x86-64" (the portable baseline: SSE2),
/// "x86-64-v2" (SSE4.2, POPCNT), "x86-64-v3" (AVX2, FMA, BMI2), "x86-64-v4" (AVX-512),
/// "aarch64" (ARMv8-A with NEON). Throws UserError for any other name.
TargetSpec named_target(std::string_view name);

/// What a TargetMachine is for: the JIT's (exactly what JITTargetMachineBuilder makes:
/// default relocation model, JIT code model) or an object file to link into someone
/// else's program (position-independent, so it links into PIE executables and shared
/// libraries).
enum class TargetUse { Jit, AheadOfTime };

/// A TargetMachine at CodeGenOpt::Default (Aggressive measured slower to compile for no
/// gain). Throws InternalError when LLVM has no such target.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const TargetSpec& target, TargetUse use);

/// What code generation may use of `tm`'s target beyond generic IR (CodeGenTarget).
CodeGenTarget codegen_target(const llvm::TargetMachine& tm);

/// Makes a generated module ready for `tm`: its data layout and triple, and on every
/// defined function the target CPU and features (so the optimisation pipeline and the backend
/// use them) and nounwind (generated code never throws).
void prepare_module(llvm::Module& m, const llvm::TargetMachine& tm);

/// A short function pass pipeline (target_machine.cpp says which passes and why), tuned
/// for `tm`.
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

/// Runs the backend: an object file or assembly text. Mutates `m` (codegen preparation
/// rewrites the IR), so emit from a copy to emit twice.
std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType kind);

}  // namespace stipple::codegen
