// `stipple check FILE.stp [--schedule S.sched] [--target T]`: compiles a pipeline and prints its
// inputs, params and stages, and with a schedule checks it against the pipeline and prints it in
// the normal text form; or the first error, at file:line:col (exit 2).
#include <iostream>

#include "client/commands.h"
#include "client/load_pipeline.h"
#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/cuda_target.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple::cli {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void print_pipeline(const Pipeline& p, const std::string& path) {
  std::cout << "pipeline " << p.name << " (" << path << ")\n";
  for (const InputDecl& in : p.inputs) {
    std::cout << "  input  " << in.name << " : " << to_string(in.type) << "[" << join(in.dim_names)
              << "] " << boundary_kind_name(in.boundary);
    if (in.boundary == BoundaryKind::Constant) std::cout << "(" << in.boundary_value << ")";
    std::cout << "\n";
  }
  for (const ParamDecl& prm : p.params) {
    std::cout << "  param  " << prm.name << " : " << to_string(prm.type) << " = "
              << prm.default_value << "\n";
  }
  for (const Func& f : p.funcs) {
    std::cout << "  func   " << f.name << "(" << join(f.args) << ") : " << to_string(f.type);
    if (!f.updates.empty()) {
      std::cout << ", " << f.updates.size() << " update" << (f.updates.size() == 1 ? "" : "s");
    }
    if (f.name == p.output.func) {
      std::cout << "  <- output, metric " << (p.output.metric == ErrorMetric::Lab ? "lab" : "rmse");
    }
    std::cout << "\n";
  }
  std::cout << p.funcs.size() << " func" << (p.funcs.size() == 1 ? "" : "s") << ", output "
            << p.output.func << "\n";
}

}  // namespace

CommandRunner add_check_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Check a pipeline (and a schedule for it) and print its stages (exit 2 on bad input)");
  auto path = std::make_shared<std::string>();
  auto schedule = std::make_shared<std::string>();
  auto target = std::make_shared<std::string>("host");
  cmd->add_option("FILE", *path, "the .stp pipeline")->required();
  cmd->add_option("-s,--schedule", *schedule,
                  "a .sched file to check against the pipeline (printed in normal form)");
  cmd->add_option("--target", *target,
                  "what the schedule is for, as `compile --target`: a GPU target (cuda-sm_90, ...) "
                  "also needs every func that is not inlined to run in a GPU kernel")
      ->check(CLI::IsMember(compile_target_names()))
      ->capture_default_str();
  return [path, schedule, target]() {
    Pipeline p = load_pipeline_reporting(*path);
    print_pipeline(p, *path);
    const ScheduleTarget for_target =
        codegen::is_cuda_target(*target) ? ScheduleTarget::Gpu : ScheduleTarget::Cpu;
    if (!schedule->empty()) {
      Schedule s =
          load_schedule_file(*schedule, p, for_target, codegen::target_vector_bytes(*target));
      std::cout << "schedule " << *schedule << ": legal"
                << (for_target == ScheduleTarget::Gpu ? " for " + *target : std::string()) << "\n"
                << print_schedule(s, p);
    } else if (for_target == ScheduleTarget::Gpu) {
      check_schedule(Schedule{}, p, nullptr, for_target);
    }
    return kExitOk;
  };
}

}  // namespace stipple::cli
