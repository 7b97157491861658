// `stipple compile FILE.stp [--schedule S.sched] --emit obj,header [-o OUT]
// [--function-name NAME] [--target T]`: compiles a pipeline ahead of time under a
// schedule into files a user links into their own program: an object file, assembly, the
// optimised LLVM IR, a C header that declares the function and documents its calling
// convention (compiler_core/codegen/aot.h), and the same function as portable C++17 source
// (compiler_core/codegen/cpp_source.h), each from the back end registered for it
// (compiler_core/codegen/backend.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "client/commands.h"
#include "client/load_pipeline.h"
#include "client/output_file.h"
#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/cuda_target.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::cli {

namespace {

namespace fs = std::filesystem;

struct CompileOptions {
  std::string pipeline;
  std::string schedule;
  std::vector<std::string> emit;
  std::string output;
  std::string function_name;
  std::string target = "host";
};

/// Where one kind goes. One kind and -o: exactly -o. Otherwise each kind gets its own
/// extension on a base name: -o without an extension of ours (".o", ".s", ".ll", ".h", ".cpp"), or
/// the pipeline file's stem in the current directory.
std::string output_path(const CompileOptions& opt, codegen::EmitKind kind, size_t kinds) {
  if (kinds == 1 && !opt.output.empty()) return opt.output;
  fs::path base = opt.output.empty() ? fs::path(opt.pipeline).stem() : fs::path(opt.output);
  for (codegen::EmitKind k :
       {codegen::EmitKind::Object, codegen::EmitKind::Assembly, codegen::EmitKind::LlvmIr,
        codegen::EmitKind::Header, codegen::EmitKind::CppSource}) {
    if (base.extension() == codegen::emit_kind_extension(k)) {
      base.replace_extension();
      break;
    }
  }
  return base.string() + std::string(codegen::emit_kind_extension(kind));
}

int run_compile(const CompileOptions& opt) {
  std::vector<codegen::EmitKind> kinds;
  for (const std::string& name : opt.emit) {
    codegen::EmitKind k = codegen::parse_emit_kind(name);
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  const bool to_stdout = is_standard_output(opt.output);
  if (to_stdout && kinds.size() != 1) {
    throw UserError("-o - (standard output) takes a single --emit kind, not " +
                    std::to_string(kinds.size()));
  }

  codegen::AotOptions aot;
  aot.symbol = opt.function_name.empty()
                   ? codegen::c_function_name_from(fs::path(opt.pipeline).stem().string())
                   : opt.function_name;
  codegen::check_c_function_name(aot.symbol);
  aot.target = opt.target;
  const std::string target = codegen::is_cuda_target(opt.target)
                                 ? "NVIDIA GPU, " + codegen::cuda_arch(opt.target)
                                 : codegen::describe_target(opt.target);

  Pipeline p = load_pipeline_reporting(opt.pipeline);
  const ScheduleTarget for_target =
      codegen::is_cuda_target(opt.target) ? ScheduleTarget::Gpu : ScheduleTarget::Cpu;
  Schedule s = opt.schedule.empty() ? Schedule{}
                                    : load_schedule_file(opt.schedule, p, for_target,
                                                         codegen::target_vector_bytes(opt.target));
  if (opt.schedule.empty()) check_schedule(s, p, nullptr, for_target);
  aot.pipeline_file = opt.pipeline;
  aot.schedule_file = opt.schedule;
  aot.output_name = p.output.func;
  for (const Expr& e : p.output.extents) aot.output_extents.push_back(to_string(e));

  spdlog::info("compiling {} under {} for {} ({})", p.name,
               opt.schedule.empty() ? std::string("the default schedule") : opt.schedule,
               opt.target, target);
  const codegen::AotOutputs outputs = codegen::emit_files(lower(p, s), kinds, aot);

  for (codegen::EmitKind k : kinds) {
    const std::string& contents = outputs.at(k);
    if (to_stdout) {
      write_output_file(opt.output, contents);
      continue;  // no "wrote" line in the middle of the output
    }
    const std::string path = output_path(opt, k, kinds.size());
    write_output_file(path, contents);
    std::cout << "wrote " << path << " (" << codegen::emit_kind_name(k) << ", function "
              << aot.symbol << ")\n";
  }
  return kExitOk;
}

}  // namespace

std::vector<std::string> compile_target_names() {
  std::vector<std::string> names = codegen::aot_target_names();
  for (const std::string& n : codegen::cuda_target_names()) names.push_back(n);
  return names;
}

CommandRunner add_compile_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile a pipeline ahead of time: an object file and C header to link, portable C++, "
      "or CUDA C++ for a GPU");
  auto opt = std::make_shared<CompileOptions>();
  cmd->add_option("FILE", opt->pipeline, "the .stp pipeline")->required();
  cmd->add_option("-s,--schedule", opt->schedule, "a .sched file; without it the default schedule");
  cmd->add_option("--emit", opt->emit,
                  "what to write: obj, asm, llvm (optimised LLVM IR), header (C declarations "
                  "and the calling convention), cpp (the function as portable C++17 source, "
                  "no runtime library needed), cu (GPU kernels and their host code as CUDA "
                  "C++, with a cuda-sm_NN --target; header then declares its two functions) or "
                  "ptx (the GPU kernels alone as PTX, made by nvcc); repeat it or give a list "
                  "(obj,header)")
      ->required()
      ->delimiter(',')
      ->check(CLI::IsMember(codegen::emit_kind_names()));
  cmd->add_option(
      "-o,--output", opt->output,
      "the file to write for one --emit kind ('-' for standard output); for several, "
      "the base name each kind's extension (.o .s .ll .h .cpp .cu .ptx) goes on; default: the "
      "pipeline file's stem");
  cmd->add_option("--function-name", opt->function_name,
                  "the exported C function; default: the pipeline file's stem as a C identifier");
  cmd->add_option("--target", opt->target,
                  "host (this CPU, all its extensions), x86-64 (portable), x86-64-v2, "
                  "x86-64-v3 (AVX2), x86-64-v4 (AVX-512), aarch64, or for --emit cu, ptx and "
                  "header an NVIDIA "
                  "GPU: cuda-sm_80, cuda-sm_86, cuda-sm_89 or cuda-sm_90")
      ->check(CLI::IsMember(compile_target_names()))
      ->capture_default_str();
  return [opt]() { return run_compile(*opt); };
}

}  // namespace stipple::cli
