// Ahead-of-time compilation: one generated module, optimised once at -O3 for the chosen
// target, then printed as LLVM IR and emitted (from copies, since the backend rewrites
// the IR it runs on) as an object file and assembly. The header is aot_header.cpp's.
#include "compiler_core/codegen/aot.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "compiler_core/codegen/target_machine.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/support/host_probe.h"

namespace stipple::codegen {

namespace {

struct KindName {
  EmitKind kind;
  std::string_view name, extension;
};
constexpr std::array<KindName, 7> kKinds = {{
    {EmitKind::Object, "obj", ".o"},
    {EmitKind::Assembly, "asm", ".s"},
    {EmitKind::LlvmIr, "llvm", ".ll"},
    {EmitKind::Header, "header", ".h"},
    {EmitKind::CppSource, "cpp", ".cpp"},
    {EmitKind::CudaSource, "cu", ".cu"},
    {EmitKind::Ptx, "ptx", ".ptx"},
}};

const KindName& kind_entry(EmitKind kind) {
  for (const KindName& k : kKinds) {
    if (k.kind == kind) return k;
  }
  throw_internal_error(__FILE__, __LINE__, "unknown EmitKind");
}

// C11 and C++20 keywords, plus the identifiers every C program has: the exported function
// must not collide with any of them.
constexpr std::string_view kReservedNames[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "atomic_cancel", "atomic_commit",
    "atomic_noexcept", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return", "co_yield", "compl",
    "concept", "const", "const_cast", "consteval", "constexpr", "constinit", "continue", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
    "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq",
    "private", "protected", "public", "reflexpr", "register", "reinterpret_cast", "requires",
    "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "synchronized", "template", "this", "thread_local", "throw", "true", "try",
    "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "main",
    // The runtime's functions and the header's types.
    "stipple_parallel_for", "stipple_malloc", "stipple_free", "stipple_median_f64",
    "stipple_libm_lanes", "stipple_set_num_threads", "stipple_buffer", "stipple_buffer_dim"};

bool is_reserved(std::string_view name) {
  return std::find(std::begin(kReservedNames), std::end(kReservedNames), name) !=
         std::end(kReservedNames);
}

bool is_c_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string print_module(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return os.str();
}

}  // namespace

std::string_view emit_kind_name(EmitKind kind) { return kind_entry(kind).name; }
std::string_view emit_kind_extension(EmitKind kind) { return kind_entry(kind).extension; }

EmitKind parse_emit_kind(std::string_view name) {
  for (const KindName& k : kKinds) {
    if (k.name == name) return k.kind;
  }
  throw UserError("unknown kind of output '" + std::string(name) +
                  "' (expected obj, asm, llvm, header or cpp)");
}

std::string c_function_name_from(std::string_view stem) {
  std::string name;
  for (char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty()) return "pipeline";
  if (std::isdigit(static_cast<unsigned char>(name[0]))) name = "p_" + name;
  // A leading underscore is reserved to the implementation at file scope.
  if (name[0] == '_') name = "p" + name;
  if (is_reserved(name)) name += "_pipeline";
  return name;
}

void check_c_function_name(const std::string& name) {
  if (!is_c_identifier(name)) {
    throw UserError("bad function name '" + name +
                    "': expected a C identifier (letters, digits and '_', not starting with "
                    "a digit)");
  }
  if (name[0] == '_') {
    throw UserError("bad function name '" + name +
                    "': names starting with '_' are reserved to the C implementation");
  }
  if (is_reserved(name)) {
    throw UserError("bad function name '" + name +
                    "': it is a C or C++ keyword or a name the stipple runtime uses");
  }
}

const std::vector<std::string>& aot_target_names() { return target_names(); }

std::string describe_target(const std::string& name) {
  const TargetSpec t = named_target(name);
  return t.triple + ", cpu " + t.cpu;
}

int target_vector_bytes(const std::string& name) {
  if (name == "host") return host_vector_bytes();
  if (name == "x86-64-v3") return 32;
  if (name == "x86-64-v4") return 64;
  return 16;
}

AotOutputs compile_ahead_of_time(const LoweredFunction& f, const std::vector<EmitKind>& kinds,
                                 const AotOptions& options) {
  check_c_function_name(options.symbol);
  for (EmitKind k : kinds) {
    // The source kinds are other back ends' (backend.h's emit_files dispatches every kind).
    STIPPLE_INTERNAL_CHECK(
        k != EmitKind::CppSource && k != EmitKind::CudaSource,
        "compile_ahead_of_time does not write " + std::string(emit_kind_name(k)) + " files");
  }
  AotOutputs out;
  const bool needs_code =
      std::any_of(kinds.begin(), kinds.end(), [](EmitKind k) { return k != EmitKind::Header; });
  if (needs_code) {
    const TargetSpec target = named_target(options.target);
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(target, TargetUse::AheadOfTime);
    std::unique_ptr<llvm::Module> m = generate_module(f, options.symbol, ctx, codegen_target(*tm));
    if (!options.pipeline_file.empty()) m->setSourceFileName(options.pipeline_file);
    prepare_module(*m, *tm);
    optimize_module(*m, *tm);
    for (EmitKind kind : kinds) {
      if (out.count(kind)) continue;
      switch (kind) {
        case EmitKind::LlvmIr: out[kind] = print_module(*m); break;
        case EmitKind::Object:
        case EmitKind::Assembly: {
          std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m);
          out[kind] = emit_machine_code(
              *copy, *tm,
              kind == EmitKind::Object ? llvm::CGFT_ObjectFile : llvm::CGFT_AssemblyFile);
          break;
        }
        case EmitKind::Header:
        case EmitKind::CppSource:
        case EmitKind::CudaSource:
        case EmitKind::Ptx: break;
      }
    }
  }
  if (std::find(kinds.begin(), kinds.end(), EmitKind::Header) != kinds.end()) {
    out[EmitKind::Header] = c_header(f, options);
  }
  return out;
}

}  // namespace stipple::codegen
