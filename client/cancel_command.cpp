// `stipple cancel RUN --coordinator ADDR`: stops a cluster run now. What it had measured
// stays in the coordinator's database; its queued candidates are dropped.
#include <iostream>

#include "client/cluster_cli.h"
#include "client/commands.h"

namespace stipple::cli {

CommandRunner add_cancel_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel a run on the tuning cluster");
  struct Options {
    ConnectionArgs connection;
    int64_t run = 0;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("RUN", opt->run, "the run")->required()->check(CLI::Range(int64_t(1), INT64_MAX));
  add_connection_options(cmd, opt->connection);
  return [opt]() {
    client::CoordinatorClient coordinator(client_options(opt->connection));
    return with_coordinator([&] {
      const std::string state = coordinator.cancel(opt->run);
      std::cout << "run " << opt->run << " is " << state << "\n";
      return kExitOk;
    });
  };
}

}  // namespace stipple::cli
