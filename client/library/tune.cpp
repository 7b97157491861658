// Pipeline::tune (engine.h): a local tuning run, as `stipple tune` makes one
// (client/tune_command.cpp), driven by a program. The same session, evaluator child,
// database and defaults; what differs is where the evaluator is found (beside the
// library, not beside the program's executable), how the run stops (the caller's
// progress callback, not Ctrl-C) and what is returned (the front as values, not a table).
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>

#include "client/library/engine.h"
#include "client/library/loaded_pipeline.h"
#include "client/library/translated_errors.h"
#include "client/open_database.h"
#include "client/tune_request.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/files.h"
#include "search/strategy_registry.h"
#include "search/tuning_session.h"
#include "workers/benchmark_lock.h"
#include "workers/local_evaluator.h"

namespace stipple::embedding {

namespace {

namespace fs = std::filesystem;

/// stipple-evaluator, the child candidates run in. LocalEvaluator's default looks beside
/// the process's executable, which here is the program's: the library looks beside
/// itself instead. $STIPPLE_EVALUATOR when set; else, for the library in the build tree
/// it was built in, the build's; for an installed one, bin/ beside its lib/ (never the
/// build tree's, which may be gone or of another version).
std::string evaluator_binary() {
  if (const char* env = std::getenv("STIPPLE_EVALUATOR"); env && *env) {
    if (!fs::is_regular_file(env)) {
      throw UserError(std::string("STIPPLE_EVALUATOR=") + env + ": no such file");
    }
    return env;
  }
  Dl_info info{};
  std::error_code ec;
  fs::path library;
  if (dladdr(reinterpret_cast<void*>(&evaluator_binary), &info) && info.dli_fname) {
    library = fs::canonical(info.dli_fname, ec);
  }
  if (library.empty() || ec) {
    throw UserError(
        "cannot tell where libstipple.so is, to find stipple-evaluator beside it: set "
        "STIPPLE_EVALUATOR");
  }
  const fs::path build_dir = fs::weakly_canonical(STIPPLE_BUILD_LIBRARY_DIR, ec);
  const fs::path evaluator =
      library.parent_path() == build_dir
          ? fs::path(STIPPLE_BUILD_EVALUATOR)
          : library.parent_path() / STIPPLE_LIBDIR_TO_BINDIR / "stipple-evaluator";
  if (!fs::is_regular_file(evaluator)) {
    throw UserError("cannot find stipple-evaluator, which tuning runs candidates in, at " +
                    evaluator.lexically_normal().string() + " (beside " + library.string() +
                    "): install Stipple with `cmake --install`, or set STIPPLE_EVALUATOR");
  }
  return evaluator.lexically_normal().string();
}

/// The caller's options as the session's: checked here as the command line's parser
/// checks its own, then made into the run's as `stipple tune` makes them.
search::TuneOptions session_options(const LoadedPipeline& p, const TuneOptions& o) {
  cli::TuneRequest r;
  r.pipeline = p.file;
  r.pipeline_on_disk = p.on_disk;
  r.images = o.images;
  r.test_images = o.test_images;
  r.strategy = o.strategy.empty() ? search::kDefaultStrategy : o.strategy;
  const std::vector<std::string> names = search::strategy_names();
  if (std::find(names.begin(), names.end(), r.strategy) == names.end()) {
    throw UserError("strategy '" + r.strategy + "' is not one of " + search::strategy_help());
  }
  if (o.budget < 0) throw UserError("budget " + std::to_string(o.budget) + " is negative");
  if (!(o.time_s >= 0) || !std::isfinite(o.time_s)) {
    throw UserError("time_s must be a number of seconds >= 0 (0: none)");
  }
  if (o.budget > 0 && o.time_s > 0) {
    throw UserError("give a budget or time_s, not both (a run stops at one of them)");
  }
  if (o.runs < 1 || o.runs > 1000) throw UserError("runs must be in 1..1000");
  if (o.threads < 0 || o.threads > 1024) {
    throw UserError("threads must be in 0..1024 (0: one per core)");
  }
  if (!(o.deadline_s >= 1 && o.deadline_s <= 86400)) {
    throw UserError("deadline_s must be in 1..86400 seconds");
  }
  r.budget = o.budget;
  r.time_s = o.time_s;
  r.seed = o.seed;
  r.exact = o.exact;
  r.baseline = o.baseline;
  r.runs = o.runs;
  r.threads = o.threads;
  r.deadline = o.deadline_s;
  r.thresholds = o.thresholds;
  if (o.population < 2 || o.population > 100000) throw UserError("population must be in 2..100000");
  if (o.generations < 1 || o.generations > 100000) {
    throw UserError("generations must be in 1..100000");
  }
  r.population = o.population;
  r.generations = o.generations;
  search::TuneOptions to = cli::tune_options(r, "images", "test_images");
  to.remeasure = o.remeasure;
  // A bad baseline must not leave a run behind that no one can continue.
  if (!to.baseline_schedule.empty()) {
    compile_schedule(read_text_file(to.baseline_schedule, "schedule"), to.baseline_schedule, p.ir);
  }
  return to;
}

TuneProgress public_progress(const search::TuneProgress& s) {
  TuneProgress p;
  p.evaluations = s.evaluations;
  p.budget = s.budget >= search::kNoBudget ? 0 : s.budget;  // a run bounded by time only
  p.time_budget_s = s.time_budget_s;
  p.failures = s.failures;
  p.elapsed_s = s.elapsed_s;
  p.eta_s = s.eta_s;
  p.baseline_ms = s.baseline_ms;
  p.metric = s.metric;
  p.thresholds = s.thresholds;
  p.speedup_at = s.speedup_at;
  p.phase = s.phase;
  return p;
}

/// The run's front as `stipple front` numbers and measures it.
std::vector<FrontPoint> front_points(storage::Database& db, int64_t run) {
  const std::vector<search::FrontEntry> entries = search::load_front(db, run);
  const double baseline_ms = search::baseline_time_ms(entries);
  std::vector<FrontPoint> front;
  for (const search::FrontEntry& e : entries) {
    FrontPoint f;
    f.variant = static_cast<int>(front.size());
    f.baseline = e.baseline;
    f.train_ms = e.train.time_ms;
    f.train_error = e.train.error;
    f.test_ms = e.test ? e.test->time_ms : NAN;
    f.test_error = e.test ? e.test->error : NAN;
    f.speedup = baseline_ms > 0 && f.train_ms > 0 ? baseline_ms / f.train_ms : NAN;
    f.beside_front = e.beside_front;
    f.schedule = e.train.key.schedule;
    front.push_back(std::move(f));
  }
  return front;
}

TuneResult result_of(storage::Database& db, const std::string& database, int64_t run,
                     bool stopped) {
  TuneResult r;
  r.database = database;
  r.run = run;
  r.stopped = stopped;
  const std::optional<storage::RunRecord> record = db.find_run(run);
  r.metric = search::error_metric_name(db, record->pipeline_id);
  r.front = front_points(db, run);
  return r;
}

TuneResult run_tuning(const LoadedPipeline& p, const TuneOptions& options,
                      const TuneCallback& progress, std::exception_ptr& callback_error) {
  // Everything the caller gave is checked before the database is opened (or created).
  search::TuneOptions to;
  std::unique_ptr<storage::Database> db;
  if (options.resume > 0) {
    db = cli::open_database(options.database, cli::DatabaseUse::Read);
    cli::RunToResume resumed = cli::run_to_resume(*db, options.resume);
    // Before the evaluator starts (seconds of reference outputs); attach checks it again.
    search::check_run_pipeline(*db, options.resume, p.ir, p.file);
    if (resumed.done) return result_of(*db, options.database, options.resume, false);
    to = std::move(resumed.options);  // the run's own, as `stipple tune --resume` takes them
    to.remeasure = options.remeasure;
  } else {
    to = session_options(p, options);
  }
  workers::LocalEvaluatorOptions eo;
  eo.server_binary = evaluator_binary();
  eo.deadline_seconds = to.deadline_s;
  eo.benchmark_lock = options.benchmark_lock.empty()     ? workers::kDefaultBenchmarkLock
                      : options.benchmark_lock == "none" ? ""
                                                         : options.benchmark_lock;
  if (!eo.benchmark_lock.empty()) {
    workers::require_benchmark_lock(eo.benchmark_lock, "benchmark_lock");
  }
  if (!db) db = cli::open_database(options.database, cli::DatabaseUse::Write);

  workers::EvaluationSetup setup;
  setup.pipeline_source = p.source;
  setup.pipeline_file = p.file;
  setup.images = {{"train", to.train_images}, {"test", to.test_images}};
  setup.runs = to.runs;
  setup.threads = to.threads;
  workers::LocalEvaluator evaluator(setup, eo);

  std::atomic<bool> stop{false};  // declared before the session that points at it
  search::TuningSession session(*db, evaluator, p.ir, p.source, to);
  session.set_stop_flag(&stop);
  if (options.resume > 0) {
    session.attach(options.resume);
  } else {
    session.create_run();
  }
  // However the run ends early (the callback, an error), no process is left owning it:
  // it is interrupted at once, for `stipple tune --resume` or TuneOptions::resume.
  struct Release {
    storage::Database& db;
    int64_t run;
    ~Release() {
      try {
        db.release_run(run);  // a no-op for a done or failed run
      } catch (...) {
      }
    }
  } release{*db, session.run_id()};
  session.run([&](const search::TuneProgress& s) {
    if (!progress || stop) return;
    try {
      if (!progress(public_progress(s))) stop = true;
    } catch (abi::__forced_unwind&) {
      throw;  // a thread being cancelled or exiting (pthread_exit) must unwind
    } catch (...) {
      callback_error = std::current_exception();
      stop = true;
    }
  });
  // A stop asked for after the last measurement ("done") stops nothing.
  const bool done = db->find_run(session.run_id())->state == "done";
  return result_of(*db, options.database, session.run_id(), !done);
}

}  // namespace

TuneResult tune(const std::shared_ptr<const LoadedPipeline>& p, const TuneOptions& options,
                const TuneCallback& progress) {
  // An exception of the caller's callback reaches the caller as it was thrown, after the
  // run has stopped, even when the library failed afterwards (its failure came of the
  // stop); the library's own are translated.
  std::exception_ptr callback_error;
  std::optional<TuneResult> result;
  try {
    result = translated([&] { return run_tuning(*p, options, progress, callback_error); });
  } catch (abi::__forced_unwind&) {
    throw;
  } catch (...) {
    if (callback_error) std::rethrow_exception(callback_error);
    throw;
  }
  if (callback_error) std::rethrow_exception(callback_error);
  return std::move(*result);
}

}  // namespace stipple::embedding
