// `stipple front RUN [--db PATH | --coordinator ADDR] [--format table|csv|json] [--plot
// front.svg]`: a run's Pareto front of time versus error, measured on the training photos
// and re-measured on the test photos, with the baseline it is compared with marked; from a
// local database, or from the tuning cluster's coordinator.
#include <filesystem>
#include <iostream>

#include "client/cluster_cli.h"
#include "client/commands.h"
#include "client/front_table.h"
#include "client/open_database.h"
#include "compiler_core/ir/error.h"

namespace stipple::cli {

CommandRunner add_front_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("front", "Print a tuning run's front of time versus error");
  struct Options {
    int64_t run = 0;
    std::string db = "stipple.db", format = "table", plot;
    ConnectionArgs connection;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("RUN", opt->run, "the run (see `stipple runs`)")->required();
  cmd->add_option("--db", opt->db, "the SQLite database")->capture_default_str();
  cmd->add_option("--format", opt->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--plot", opt->plot, "also write the front as an SVG plot to this file");
  add_connection_options(cmd, opt->connection);
  cmd->get_option("--coordinator")->excludes(cmd->get_option("--db"));
  cmd->get_option("--coordinator")
      ->description("ask the tuning cluster's coordinator at HOST:PORT instead of --db");
  return [opt, cmd]() {
    FrontListing front;
    if (cmd->count("--coordinator") > 0) {
      client::CoordinatorClient coordinator(client_options(opt->connection));
      with_coordinator([&] {
        front = to_front_listing(coordinator.front(opt->run));
        return kExitOk;
      });
    } else {
      auto db = open_database(opt->db, DatabaseUse::Read);
      front = load_front_listing(*db, opt->run);
    }
    const FrontFormat f = opt->format == "csv"    ? FrontFormat::Csv
                          : opt->format == "json" ? FrontFormat::Json
                                                  : FrontFormat::Table;
    print_front(std::cout, front, f);
    if (!opt->plot.empty()) {
      write_front_svg(opt->plot, front);
      std::cerr << "wrote " << opt->plot << "\n";
    }
    return kExitOk;
  };
}

}  // namespace stipple::cli
