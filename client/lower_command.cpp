// `stipple lower FILE.stp [--schedule S.sched] [--llvm] [--dump-passes]`: prints the loop
// nest a pipeline lowers to under a schedule (or the LLVM IR generated for it, or the IR
// after every lowering pass), for debugging schedules.
#include <iostream>

#include "client/commands.h"
#include "client/load_pipeline.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::cli {

namespace {

struct LowerOptions {
  std::string pipeline;
  std::string schedule;
  bool llvm = false;
  bool optimized = false;
  bool dump_passes = false;
};

int run_lower(const LowerOptions& opt) {
  Pipeline p = load_pipeline_reporting(opt.pipeline);
  Schedule s = opt.schedule.empty() ? Schedule{} : load_schedule_file(opt.schedule, p);
  if (opt.dump_passes) {
    // The last pass's loop nest is the lowered one: nothing else to print without --llvm.
    LoweredFunction f = lower(p, s, print_passes(std::cout));
    if (opt.llvm) std::cout << codegen::JitCompiler::create()->llvm_ir(f, opt.optimized);
    return kExitOk;
  }
  if (!opt.llvm) {
    std::cout << lowered_text(p, s);
    return kExitOk;
  }
  LoweredFunction f = lower(p, s);
  std::cout << codegen::JitCompiler::create()->llvm_ir(f, opt.optimized);
  return kExitOk;
}

}  // namespace

CommandRunner add_lower_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("lower", "Print the loop nest of a pipeline under a schedule");
  auto opt = std::make_shared<LowerOptions>();
  cmd->add_option("FILE", opt->pipeline, "the .stp pipeline")->required();
  cmd->add_option("-s,--schedule", opt->schedule, "a .sched file; without it the default schedule");
  cmd->add_flag("--llvm", opt->llvm, "print the generated LLVM IR instead of the loop nest");
  cmd->add_flag("--optimized", opt->optimized, "with --llvm: after the optimisation pass pipeline");
  cmd->add_flag("--dump-passes", opt->dump_passes,
                "print the IR after every lowering pass, each under a header `== <pass> ==` "
                "(STIPPLE_DUMP_PASSES=1 prints the same to stderr from any command)");
  return [opt]() { return run_lower(*opt); };
}

}  // namespace stipple::cli
