// `stipple`: the command line of the Stipple autotuner. Parses options with CLI11, runs one
// subcommand, and maps failures to exit codes: 2 for bad input (a bad program, image or
// option, with a message saying what and where), 1 for anything else.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <map>

#include "client/commands.h"
#include "compiler_core/ir/error.h"

int main(int argc, char** argv) {
  using namespace stipple::cli;
  CLI::App app{"stipple: autotuning of image pipelines written in the .stp language"};
  app.require_subcommand(1);
  // The app's own options (--log-level) are taken after the subcommand too: subcommands
  // made from here on pass options they do not know up to it.
  app.fallthrough();
  app.set_version_flag("--version", std::string("stipple ") + STIPPLE_VERSION);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();

  std::map<CLI::App*, CommandRunner> commands;
  auto add = [&](CommandRunner runner) {
    commands[app.get_subcommands({}).back()] = std::move(runner);
  };
  add(add_check_command(app));
  add(add_run_command(app));
  add(add_lower_command(app));
  add(add_compile_command(app));
  add(add_tune_command(app));
  add(add_runs_command(app));
  add(add_front_command(app));
  add(add_export_command(app));
  add(add_worker_command(app));
  add(add_coordinator_command(app));
  add(add_submit_command(app));
  add(add_status_command(app));
  add(add_cancel_command(app));
  add(add_workers_command(app));
  add(add_nightly_command(app));

  // One value per occurrence of every option, repeated to give several (`-i a=x.png -i
  // b=y.png`, `--images a.png --images b.png`; comma lists where an option says so), so
  // that an option never takes the positional FILE after it as one more value
  // (`run -i in=a.png FILE` was "FILE is required"). Nested commands too (`nightly add`).
  std::function<void(CLI::App*)> one_value_each = [&](CLI::App* command) {
    for (CLI::App* sub : command->get_subcommands({})) {
      for (CLI::Option* option : sub->get_options()) {
        if (!option->get_positional() && option->get_items_expected_max() > 1) {
          option->allow_extra_args(false);
        }
      }
      one_value_each(sub);
    }
  };
  one_value_each(&app);

  // An unknown command is named, with the list of commands (CLI11 says only "A
  // subcommand is required"); so is a missing or unknown one of a command that has its own
  // (`stipple nightly`, `stipple nightly frob`).
  auto names_of = [](CLI::App* command) {
    std::string names;
    for (CLI::App* sub : command->get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    return names;
  };
  CLI::App* command = &app;
  std::string path = "stipple";
  bool help = false;
  for (int i = 1; i < argc && !command->get_subcommands({}).empty(); ++i) {
    const std::string arg = argv[i];
    if (arg == "--log-level") {
      ++i;
      continue;
    }
    if (arg == "-h" || arg == "--help" || arg == "--version") {
      help = true;
      break;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    CLI::App* found = nullptr;
    for (CLI::App* sub : command->get_subcommands({})) {
      if (sub->get_name() == arg) found = sub;
    }
    if (found == nullptr) {
      std::cerr << path << ": unknown command '" << arg << "'; the commands are "
                << names_of(command) << " (" << path << " --help says what each does)\n";
      return kExitBadInput;
    }
    command = found;
    path += " " + arg;
  }
  if (!help && command != &app && !command->get_subcommands({}).empty()) {
    std::cerr << path << ": give a command: " << names_of(command) << " (" << path
              << " --help says what each does)\n";
    return kExitBadInput;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  auto logger = spdlog::stderr_color_mt("stipple");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(spdlog::level::from_str(log_level));

  for (auto& [sub, runner] : commands) {
    if (!sub->parsed()) continue;
    try {
      return runner();
    } catch (const stipple::UserError& e) {
      std::cerr << e.what() << "\n";
      return kExitBadInput;
    } catch (const std::bad_alloc&) {
      std::cerr << "stipple: out of memory\n";
      return kExitFailure;
    } catch (const std::exception& e) {
      std::cerr << "stipple: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  return kExitFailure;
}
