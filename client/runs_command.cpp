// `stipple runs [--db PATH]`: the tuning runs in a database, newest first.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "client/commands.h"
#include "compiler_core/ir/error.h"
#include "storage/database.h"

namespace stipple::cli {

CommandRunner add_runs_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("runs", "List the tuning runs of a database");
  auto db_path = std::make_shared<std::string>("stipple.db");
  cmd->add_option("--db", *db_path, "the SQLite database")->capture_default_str();
  return [db_path]() {
    if (!std::filesystem::exists(*db_path)) throw UserError("no database " + *db_path);
    auto db = storage::Database::open(*db_path);
    std::vector<storage::RunRecord> runs = db->list_runs();
    if (runs.empty()) {
      std::cout << "no runs in " << *db_path << "\n";
      return kExitOk;
    }
    char line[512];
    std::snprintf(line, sizeof line, "%5s  %-20s %-10s %-10s %13s  %-20s  %s\n", "run", "pipeline",
                  "strategy", "state", "evaluations", "started (UTC)", "target");
    std::cout << line;
    for (const storage::RunRecord& r : runs) {
      std::string evals = std::to_string(r.evaluations);
      if (r.budget_seconds <= 0) evals += "/" + std::to_string(r.budget_evaluations);
      std::snprintf(line, sizeof line, "%5lld  %-20s %-10s %-10s %13s  %-20s  %s\n",
                    static_cast<long long>(r.id), r.pipeline_name.c_str(), r.strategy.c_str(),
                    r.state.c_str(), evals.c_str(), r.created_at.c_str(), r.target.c_str());
      std::cout << line;
    }
    return kExitOk;
  };
}

}  // namespace stipple::cli
