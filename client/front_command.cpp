// `stipple front RUN [--db PATH] [--format table|csv|json] [--plot front.svg]`: a run's
// Pareto front of time versus error, measured on the training photos and re-measured on
// the test photos, with the baseline it is compared with marked.
#include <filesystem>
#include <iostream>

#include "client/commands.h"
#include "client/front_table.h"
#include "compiler_core/ir/error.h"

namespace stipple::cli {

CommandRunner add_front_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("front", "Print a tuning run's front of time versus error");
  struct Options {
    int64_t run = 0;
    std::string db = "stipple.db", format = "table", plot;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("RUN", opt->run, "the run (see `stipple runs`)")->required();
  cmd->add_option("--db", opt->db, "the SQLite database")->capture_default_str();
  cmd->add_option("--format", opt->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--plot", opt->plot, "also write the front as an SVG plot to this file");
  return [opt]() {
    if (!std::filesystem::exists(opt->db)) throw UserError("no database " + opt->db);
    auto db = storage::Database::open(opt->db);
    const FrontFormat f = opt->format == "csv"    ? FrontFormat::Csv
                          : opt->format == "json" ? FrontFormat::Json
                                                  : FrontFormat::Table;
    print_front(std::cout, *db, opt->run, f);
    if (!opt->plot.empty()) {
      write_front_svg(opt->plot, *db, opt->run);
      std::cerr << "wrote " << opt->plot << "\n";
    }
    return kExitOk;
  };
}

}  // namespace stipple::cli
