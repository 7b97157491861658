// Ahead-of-time compilation: a LoweredFunction as files a user links into their own
// program (what `stipple compile` writes). The code is the JIT's (target_machine.h: same
// generator, same optimisation pipeline), for the host CPU or a named generic target, exported as
// a plain C function with the calling convention of codegen_llvm.h:
//
//   int32_t NAME(const stipple_buffer* buffers, const double* params);
//
//   AotOptions opt;  opt.symbol = "two_pass_blur";  opt.target = "x86-64-v3";
//   AotOutputs out = compile_ahead_of_time(lowered, {EmitKind::Object, EmitKind::Header}, opt);
//   write(out.at(EmitKind::Object)) ...
//
// The object calls the runtime (stipple_parallel_for, stipple_malloc, stipple_free,
// stipple_median_f64: libstipple_runtime.a) and libm; the header says so.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_core/codegen/codegen_llvm.h"

namespace stipple::codegen {

enum class EmitKind {
  Object,      // a relocatable ELF (or the target's) object file
  Assembly,    // the same code as assembly text
  LlvmIr,      // the optimised LLVM IR the object is made from
  Header,      // a C header declaring the function, the descriptor struct and the conventions
  CppSource,   // the same function as one portable C++17 source file (cpp_source.h)
  CudaSource,  // GPU kernels and their host code as one CUDA C++ file (cuda_source in cpp_source.h)
  Ptx,         // the GPU kernels alone as PTX text (nvcc.h)
};

/// "obj", "asm", "llvm", "header", "cpp": the spellings of `--emit`.
std::string_view emit_kind_name(EmitKind kind);
/// The file name extension of a kind, with its dot: ".o", ".s", ".ll", ".h", ".cpp".
std::string_view emit_kind_extension(EmitKind kind);
/// Parses a spelling of emit_kind_name; UserError for anything else.
EmitKind parse_emit_kind(std::string_view name);

struct AotOptions {
  /// The exported C function; check_c_function_name must accept it.
  std::string symbol;
  /// A name target_names() lists ("host", "x86-64", ...).
  std::string target = "host";
  /// For the header's comments only: where the pipeline and the schedule came from, the
  /// output func, and its extents as the pipeline declares them (one per dimension, as
  /// text).
  std::string pipeline_file;
  std::string schedule_file;  // empty: the default schedule
  std::string output_name;
  std::vector<std::string> output_extents;
};

/// The names AotOptions::target takes, "host" first (target_machine.h describes them).
const std::vector<std::string>& aot_target_names();
/// The triple and CPU a target name stands for ("x86_64-pc-linux-gnu, cpu znver4"), for
/// messages. UserError for an unknown name.
std::string describe_target(const std::string& name);
/// The native vector register, in bytes, of a target name (what `vectorize(x,
/// vectors(k))` counts: compiler_core/schedule/natural_vectors.h): the host's
/// (host_vector_bytes); 16 for x86-64 and x86-64-v2 (SSE) and aarch64 (NEON), 32 for
/// x86-64-v3 (AVX2), 64 for x86-64-v4 (AVX-512); 16 for any other (a GPU's).
int target_vector_bytes(const std::string& name);

/// Each requested kind's file contents (text, or the object's bytes).
using AotOutputs = std::map<EmitKind, std::string>;

/// Generates, optimises and emits every kind in `kinds` (the module is optimised once):
/// the llvm-cpu back end's kinds, object, assembly, LLVM IR and header (the C++ and CUDA
/// source are other back ends': backend.h's emit_files dispatches every kind).
/// Throws UserError for an unknown target or a bad symbol, InternalError on an LLVM
/// failure.
AotOutputs compile_ahead_of_time(const LoweredFunction& f, const std::vector<EmitKind>& kinds,
                                 const AotOptions& options);

/// The C header for `f` exported as options.symbol (see compile_ahead_of_time).
std::string c_header(const LoweredFunction& f, const AotOptions& options);

/// The part every header shares, guarded by STIPPLE_AOT_COMMON: the descriptor struct,
/// the type and return codes, the layout checks and stipple_set_num_threads (C, to be
/// included inside `extern "C"` in C++). The C++ source (cpp_source.h) starts with it too.
std::string c_header_common_block();

/// A C identifier made from a file stem: other characters become '_', a leading digit
/// gets a "p_" prefix, and a C or C++ keyword or a name the runtime or header uses gets a
/// "_pipeline" suffix ("3x3-blur" -> "p_3x3_blur", "int" -> "int_pipeline").
std::string c_function_name_from(std::string_view stem);

/// Throws UserError unless `name` is usable as the exported function: a C identifier,
/// not a C or C++ keyword, not reserved (a leading underscore), and not a name the
/// runtime or the header defines.
void check_c_function_name(const std::string& name);

}  // namespace stipple::codegen
