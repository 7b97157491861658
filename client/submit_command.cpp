// `stipple submit FILE.stp --coordinator ADDR [--wait]`: sends a pipeline and its photos
// to the tuning cluster's coordinator, which runs the search with its workers measuring.
// Takes the search options of `stipple tune`, with the same defaults (the bundled photos,
// the .sched beside FILE as the baseline), so the same submit and the same tune run the
// same search. With --wait it shows the run's progress as `tune` does and prints its front.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "client/cluster_cli.h"
#include "client/commands.h"
#include "client/load_pipeline.h"
#include "client/photo_args.h"
#include "client/progress_printer.h"
#include "compiler_core/ir/error.h"
#include "search/strategy_registry.h"

namespace stipple::cli {

namespace {

struct SubmitOptions {
  ConnectionArgs connection;
  std::string pipeline;
  std::vector<std::string> images, test_images;
  std::string dataset;
  std::string baseline;
  client::SubmitSpec spec;
  bool wait = false;
  double reconnect_s = 60;
};

int run_submit(const SubmitOptions& opt) {
  client::SubmitSpec spec = opt.spec;
  spec.pipeline_file = opt.pipeline;
  if (opt.dataset.empty()) {
    const PhotoSets photos = choose_photos(opt.images, opt.test_images);
    spec.train_images = photos.train;
    spec.test_images = photos.test;
  } else {
    spec.dataset = opt.dataset;
  }
  if (opt.baseline.empty()) {
    std::filesystem::path hand = std::filesystem::path(opt.pipeline).replace_extension(".sched");
    if (std::filesystem::exists(hand)) spec.baseline_file = hand.string();
  } else if (opt.baseline != "default") {
    spec.baseline_file = opt.baseline;
  }
  std::vector<CompileWarning> warnings;
  const proto::SubmitRunRequest request = client::make_submit_request(spec, &warnings);
  report_warnings(warnings, std::cerr);
  client::ClientOptions co = client_options(opt.connection);
  return with_coordinator([&] {
    client::CoordinatorClient coordinator(co);
    const int64_t run = coordinator.submit(request);
    std::cout << "run " << run << " submitted to " << co.address << std::endl;
    if (!opt.wait) return kExitOk;
    proto::RunProgress last;
    {
      ProgressPrinter printer;
      // A coordinator that restarts resumes the run: wait for it rather than give up.
      std::string said;
      last = coordinator.watch_through_restarts(
          run, [&](const proto::RunProgress& p) { printer(to_tune_progress(p)); },
          std::chrono::milliseconds(int64_t(opt.reconnect_s * 1000)),
          [&](const std::string& why) {
            if (why != said) std::cerr << why << "; reconnecting\n";
            said = why;
          });
    }
    if (last.state() != "done") {
      std::cout << "run " << run << " is " << last.state()
                << (last.message().empty() ? "" : ": " + last.message()) << "\n";
      return kExitFailure;
    }
    print_front(std::cout, to_front_listing(coordinator.front(run)), FrontFormat::Table);
    return kExitOk;
  });
}

}  // namespace

CommandRunner add_submit_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "submit", "Send a pipeline to the tuning cluster's coordinator to tune on its workers");
  auto opt = std::make_shared<SubmitOptions>();
  cmd->add_option("FILE", opt->pipeline, "the .stp pipeline")->required();
  add_connection_options(cmd, opt->connection);
  CLI::Option* images =
      cmd->add_option("--images", opt->images,
                      "photos to tune on (files or folders). Every third is held out for the test "
                      "unless --test-images is given. Default: the bundled photos");
  CLI::Option* test_images =
      cmd->add_option("--test-images", opt->test_images, "photos the front is re-measured on");
  cmd->add_option("--dataset", opt->dataset,
                  "tune on a dataset the coordinator keeps (its --datasets folder), by name, "
                  "instead of sending photos")
      ->excludes(images)
      ->excludes(test_images);
  cmd->add_option("--strategy", opt->spec.strategy, search::strategy_help())
      ->check(CLI::IsMember(search::strategy_names()))
      ->capture_default_str();
  cmd->add_option("--budget", opt->spec.budget, "evaluations on the training photos")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40))
      ->capture_default_str();
  cmd->add_option("--seed", opt->spec.seed, "random seed of the strategies")->capture_default_str();
  cmd->add_flag("--exact", opt->spec.exact, "search exact schedules only (no perforation)");
  cmd->add_option("--baseline", opt->baseline,
                  "the schedule speedups are against: a .sched file, or 'default'. Default: "
                  "FILE's .sched beside it when there is one");
  cmd->add_option("--runs", opt->spec.runs, "timed runs per photo (the median is kept)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--thresholds", opt->spec.thresholds,
                  "the error levels of interest in the pipeline's metric, comma-separated "
                  "(as for tune); default: 1,2,5")
      ->delimiter(',');
  cmd->add_option("--population", opt->spec.population, "genetic search: population size")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  cmd->add_option("--target", opt->spec.target,
                  "the workers' target key to measure on (see `stipple workers`); default: "
                  "the target of the registered workers");
  cmd->add_flag("--wait", opt->wait, "show the run's progress until it ends, then its front");
  cmd->add_option("--reconnect-for", opt->reconnect_s,
                  "with --wait: how long to keep reconnecting to a coordinator that went away "
                  "(it resumes the run when it starts again), in seconds")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  return [opt]() { return run_submit(*opt); };
}

}  // namespace stipple::cli
