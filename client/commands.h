// The subcommands of `stipple`. Each registers its options on the CLI11 app and returns
// the function that runs it; a run returns the process exit code:
//   0 ok, 1 failure (our fault or the system's), 2 bad input (program, image, option).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace stipple::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

using CommandRunner = std::function<int()>;

/// What `compile --target` and `check --target` accept: the CPU targets, then the GPU ones
/// (compile_command.cpp).
std::vector<std::string> compile_target_names();

CommandRunner add_check_command(CLI::App& app);
CommandRunner add_run_command(CLI::App& app);
CommandRunner add_lower_command(CLI::App& app);
CommandRunner add_compile_command(CLI::App& app);
CommandRunner add_tune_command(CLI::App& app);
CommandRunner add_runs_command(CLI::App& app);
CommandRunner add_front_command(CLI::App& app);
CommandRunner add_export_command(CLI::App& app);
CommandRunner add_worker_command(CLI::App& app);
CommandRunner add_coordinator_command(CLI::App& app);
CommandRunner add_submit_command(CLI::App& app);
CommandRunner add_status_command(CLI::App& app);
CommandRunner add_cancel_command(CLI::App& app);
CommandRunner add_workers_command(CLI::App& app);
CommandRunner add_nightly_command(CLI::App& app);

}  // namespace stipple::cli
