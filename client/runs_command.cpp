// `stipple runs [--db PATH] [--delete RUN]`: the tuning runs in a database, newest first
// (a run whose process is gone shows as interrupted), or remove one.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "client/commands.h"
#include "client/open_database.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/support/process_identity.h"
#include "search/tune_options.h"
#include "storage/database.h"

namespace stipple::cli {

CommandRunner add_runs_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("runs", "List the tuning runs of a database");
  auto db_path = std::make_shared<std::string>("stipple.db");
  auto remove = std::make_shared<int64_t>(0);
  cmd->add_option("--db", *db_path, "the SQLite database")->capture_default_str();
  cmd->add_option("--delete", *remove,
                  "remove run RUN with its front (its measurements stay cached in the database); "
                  "a run still running elsewhere is refused")
      ->check(CLI::PositiveNumber);
  return [db_path, remove]() {
    auto db = open_database(*db_path, DatabaseUse::Read);
    if (*remove > 0) {
      std::optional<storage::RunRecord> run = db->find_run(*remove);
      if (!run) throw UserError("no run " + std::to_string(*remove) + " in " + *db_path);
      if (storage::run_may_be_live(*run)) {
        throw UserError("run " + std::to_string(*remove) + " is still running (process " +
                        identity_pid(run->owner) + " on " + identity_host(run->owner) +
                        "); stop it first");
      }
      db->delete_run(*remove);
      std::cout << "deleted run " << *remove << " (" << run->pipeline_name << ", " << run->strategy
                << "); its " << run->evaluations
                << " evaluations stay cached for other runs of the same pipeline\n";
      return kExitOk;
    }
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
      // A run with --time alone has no evaluation budget to show.
      if (r.budget_evaluations < search::kNoBudget)
        evals += "/" + std::to_string(r.budget_evaluations);
      std::snprintf(line, sizeof line, "%5lld  %-20s %-10s %-10s %13s  %-20s  %s\n",
                    static_cast<long long>(r.id), r.pipeline_name.c_str(), r.strategy.c_str(),
                    storage::run_state_label(r).c_str(), evals.c_str(), r.created_at.c_str(),
                    r.target.c_str());
      std::cout << line;
    }
    return kExitOk;
  };
}

}  // namespace stipple::cli
