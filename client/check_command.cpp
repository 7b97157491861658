// `stipple check FILE.stp`: compiles a pipeline and prints its inputs, params and stages,
// or the first error (exit 2).
#include <iostream>

#include "client/commands.h"
#include "compiler_core/language/frontend.h"

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
      "check", "Check a pipeline and print its stages (exit 2 on a bad program)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("FILE", *path, "the .stp pipeline")->required();
  return [path]() {
    Pipeline p = load_pipeline_file(*path);
    print_pipeline(p, *path);
    return kExitOk;
  };
}

}  // namespace stipple::cli
