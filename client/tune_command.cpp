// `stipple tune FILE.stp [--images PATH]... [--strategy NAME (search/strategy_registry.h)]
// [--budget N | --time S] [--db PATH] [--seed N]`: searches schedules and approximations of
// a pipeline on this machine (search/tuning_session.h), stores every measurement in SQLite
// and prints the Pareto front of time versus error. `--resume RUN` continues a run that
// was interrupted (Ctrl-C, kill -9, a reboot): the evaluations it committed are not
// measured again.
//
// On a terminal, progress is one line rewritten in place; otherwise a plain log line
// every few seconds. The first Ctrl-C stops after the batch being measured (the run can
// be resumed); a second one exits at once (committed results are safe either way).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "client/commands.h"
#include "client/front_table.h"
#include "client/load_pipeline.h"
#include "client/open_database.h"
#include "client/progress_printer.h"
#include "client/tune_request.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/files.h"
#include "compiler_core/support/process_identity.h"
#include "search/strategy_registry.h"
#include "search/tuning_session.h"
#include "storage/database.h"
#include "workers/benchmark_lock.h"
#include "workers/local_evaluator.h"

namespace stipple::cli {

namespace {

struct TuneCliOptions {
  TuneRequest request;  // FILE and the search's options
  std::string db = "stipple.db";
  int64_t resume = 0;
  bool remeasure = false;
  std::string benchmark_lock = workers::kDefaultBenchmarkLock;
};

std::atomic<bool> g_stop{false};

void on_interrupt(int) {
  g_stop = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

int run_tune(TuneCliOptions opt) {
  std::unique_ptr<storage::Database> db =
      open_database(opt.db, opt.resume > 0 ? DatabaseUse::Read : DatabaseUse::Write);
  search::TuneOptions to;
  std::string source;
  if (opt.resume > 0) {
    RunToResume resumed = run_to_resume(*db, opt.resume);
    if (resumed.done) {
      std::cout << "run " << opt.resume << " is already done; `stipple front " << opt.resume
                << db_option(opt.db) << "` shows its front\n";
      return kExitOk;
    }
    to = std::move(resumed.options);
    source = std::move(resumed.source);
  } else {
    to = tune_options(opt.request);
    source = read_text_file(to.pipeline_file, "pipeline");
  }
  to.remeasure = opt.remeasure;

  Pipeline p = compile_pipeline_reporting(source, to.pipeline_file);
  // Everything a run is made of is checked before the run is created: a bad baseline
  // must not leave a run behind that no one can continue.
  if (!to.baseline_schedule.empty()) load_schedule_file(to.baseline_schedule, p);

  workers::EvaluationSetup setup;
  setup.pipeline_source = source;
  setup.pipeline_file = to.pipeline_file;
  setup.images = {{"train", to.train_images}, {"test", to.test_images}};
  setup.runs = to.runs;
  setup.threads = to.threads;
  workers::LocalEvaluatorOptions eo;
  eo.deadline_seconds = to.deadline_s;
  // The lock workers on this host take: a tune beside a worker does not time its
  // candidates while the worker's compile or timed run disturbs the clock, or the other
  // way round.
  eo.benchmark_lock = opt.benchmark_lock == "none" ? "" : opt.benchmark_lock;
  if (!eo.benchmark_lock.empty())
    workers::require_benchmark_lock(eo.benchmark_lock, "--benchmark-lock");
  spdlog::info("loading {} training and {} test photos and their reference outputs",
               to.train_images.size(), to.test_images.size());
  workers::LocalEvaluator evaluator(setup, eo);

  search::TuningSession session(*db, evaluator, p, source, to);
  session.set_stop_flag(&g_stop);
  if (opt.resume > 0) {
    session.attach(opt.resume);
    spdlog::info("resuming run {} of {} ({} strategy, budget {})", opt.resume, p.name, to.strategy,
                 to.budget);
  } else {
    session.create_run();
    std::string budget;
    if (to.budget < search::kNoBudget) budget = std::to_string(to.budget) + " evaluations";
    if (to.time_budget_s > 0) {
      budget += (budget.empty() ? "" : " or ") + format_duration(to.time_budget_s) +
                (budget.empty() ? "" : " of search, whichever comes first");
    }
    spdlog::info("run {}: tuning {} with the {} strategy, budget {}; results in {}",
                 session.run_id(), p.name, to.strategy, budget, opt.db);
  }
  std::signal(SIGINT, on_interrupt);
  {
    ProgressPrinter printer;
    bool reported = false;
    session.run([&](const search::TuneProgress& pr) {
      if (!reported && session.reuse_model_ms() > 0) {
        reported = true;
        spdlog::info("the reuse model scheduled {} in {:.1f} ms", p.name, session.reuse_model_ms());
      }
      printer(pr);
    });
  }
  std::signal(SIGINT, SIG_DFL);
  if (g_stop) {
    std::cout << "interrupted: run " << session.run_id() << " keeps every finished evaluation; "
              << "continue it with `stipple tune --resume " << session.run_id() << db_option(opt.db)
              << "`\n";
    return kExitFailure;
  }
  print_front(std::cout, *db, session.run_id(), FrontFormat::Table);
  return kExitOk;
}

}  // namespace

CommandRunner add_tune_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Search schedules and approximations of a pipeline; store every measurement and "
      "print the Pareto front of time versus error");
  auto opt = std::make_shared<TuneCliOptions>();
  cmd->add_option("FILE", opt->request.pipeline, "the .stp pipeline");
  cmd->add_option("--images", opt->request.images,
                  "photos to tune on (files or folders; repeatable). Every third is held out "
                  "for the test unless --test-images is given. Default: the bundled "
                  "datasets/fixtures photos (natural-820x614 to train, people-256x192 to test)");
  cmd->add_option("--test-images", opt->request.test_images,
                  "photos the front is re-measured on (files or folders)");
  cmd->add_option("--strategy", opt->request.strategy, search::strategy_help())
      ->check(CLI::IsMember(search::strategy_names()))
      ->capture_default_str();
  auto* budget = cmd->add_option("--budget", opt->request.budget,
                                 "evaluations on the training photos (default " +
                                     std::to_string(kDefaultBudget) + ", or " +
                                     std::to_string(int(kDefaultSearchSeconds)) +
                                     " s of search, whichever comes first)")
                     ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  cmd->add_option("--time", opt->request.time_s, "stop after this many seconds instead of a budget")
      ->check(CLI::Range(1.0, 1e7))
      ->excludes(budget);
  cmd->add_option("--db", opt->db, "the SQLite database")->capture_default_str();
  cmd->add_option("--seed", opt->request.seed, "random seed of the strategies")
      ->capture_default_str();
  cmd->add_option("--resume", opt->resume,
                  "continue run RUN of --db (FILE and the search options are the run's)")
      ->check(CLI::Range(int64_t(1), INT64_MAX));
  cmd->add_flag("--remeasure", opt->remeasure,
                "measure candidates again even when the database has them");
  cmd->add_flag("--exact", opt->request.exact, "search exact schedules only (no perforation)");
  cmd->add_option("--baseline", opt->request.baseline,
                  "the schedule speedups are against: a .sched file, or 'default'. Default: "
                  "FILE's .sched beside it when there is one");
  cmd->add_option("--runs", opt->request.runs, "timed runs per photo (the median is kept)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--threads", opt->request.threads,
                  "threads for parallel loops (default: one per core)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--deadline", opt->request.deadline,
                  "seconds a candidate may take (compile and runs) before it is killed")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--benchmark-lock", opt->benchmark_lock,
                  "lock file shared with the workers and other tunes of this host, so that "
                  "one candidate at a time is timed ('none': no lock)")
      ->capture_default_str();
  cmd->add_option("--thresholds", opt->request.thresholds,
                  "the error levels of interest, in the pipeline's metric (mean Lab dE, or "
                  "RMSE in the output's units), comma-separated: hill climbing climbs once per "
                  "level, and progress shows the best speedup within each. Default: 1,2,5 "
                  "(exact is always included)")
      ->delimiter(',');
  cmd->add_option("--population", opt->request.population,
                  "genetic: population size (the paper: 100; smaller suits small budgets)")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--generations", opt->request.generations,
                  "genetic: generations at most (the paper: 200; the budget usually ends the "
                  "run first)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  return [opt]() {
    if (opt->resume == 0 && opt->request.pipeline.empty()) {
      throw UserError("tune: give a pipeline FILE, or --resume RUN");
    }
    if (opt->resume > 0 && !opt->request.pipeline.empty()) {
      throw UserError("tune: --resume takes the pipeline from the run; leave FILE out");
    }
    return run_tune(*opt);
  };
}

}  // namespace stipple::cli
