// `stipple status [RUN] --coordinator ADDR`: a run's progress on the tuning cluster, or
// without RUN the coordinator's runs, newest first.
#include <cstdio>
#include <iostream>

#include "client/cluster_cli.h"
#include "client/commands.h"
#include "client/progress_printer.h"

namespace stipple::cli {

namespace {

void print_runs(const std::vector<proto::RunSummary>& runs) {
  if (runs.empty()) {
    std::cout << "no runs\n";
    return;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %-20s %-10s %-10s %13s  %-20s  %s\n", "run", "pipeline",
                "strategy", "state", "evaluations", "started (UTC)", "target");
  std::cout << line;
  for (const proto::RunSummary& r : runs) {
    const std::string evals = std::to_string(r.evaluations()) + "/" + std::to_string(r.budget());
    std::snprintf(line, sizeof line, "%5lld  %-20s %-10s %-10s %13s  %-20s  %s\n",
                  static_cast<long long>(r.run_id()), r.pipeline().c_str(), r.strategy().c_str(),
                  r.state().c_str(), evals.c_str(), r.created_at().c_str(), r.target().c_str());
    std::cout << line;
  }
}

}  // namespace

CommandRunner add_status_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "status", "Show a cluster run's progress, or the coordinator's runs without RUN");
  struct Options {
    ConnectionArgs connection;
    int64_t run = 0;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("RUN", opt->run, "the run")->check(CLI::Range(int64_t(1), INT64_MAX));
  add_connection_options(cmd, opt->connection);
  return [opt]() {
    client::CoordinatorClient coordinator(client_options(opt->connection));
    return with_coordinator([&] {
      if (opt->run == 0) {
        print_runs(coordinator.runs());
        return kExitOk;
      }
      const proto::RunProgress p = coordinator.status(opt->run);
      std::cout << "run " << p.run_id() << ": " << p.state() << ", phase " << p.phase() << ", "
                << p.evaluations() << "/" << p.budget() << " evaluations";
      if (p.state() == "running" && p.phase() != "waiting") {
        std::cout << " (" << p.measured() << " measured, " << p.failures() << " failed, "
                  << format_duration(p.elapsed_seconds()) << " so far, ETA "
                  << format_duration(p.eta_seconds()) << ")";
      }
      if (!p.message().empty()) std::cout << ": " << p.message();
      std::cout << "\n";
      return kExitOk;
    });
  };
}

}  // namespace stipple::cli
