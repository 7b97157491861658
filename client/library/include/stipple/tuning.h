// Stipple's embedding API, part 2 of 3: tuning a pipeline on this machine from a program,
// as `stipple tune` does. Installed as <stipple/tuning.h>; <stipple/stipple.h> includes it.
//
//   stipple::TuneOptions o;
//   o.images = {"photos/"};          // files or folders; none: the bundled photos
//   o.time_s = 60;
//   stipple::TuneResult r = pipeline.tune(o, [](const stipple::TuneProgress& p) {
//     std::printf("%lld/%lld evaluations\n", (long long)p.evaluations, (long long)p.budget);
//     return true;                   // false stops after the batch being measured
//   });                              // r.stopped: o.resume = r.run continues it
//   stipple::Function f = pipeline.compile(stipple::FrontVariant{r.database, r.run, 0});
//
// The run is the command line's: every measurement is committed to the SQLite database as
// it arrives, candidates run in a child process (stipple-evaluator, installed beside the
// `stipple` command) that a crashing or hanging candidate cannot take down, and `stipple
// front RUN --db FILE` shows the front afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stipple/buffer_view.h"

namespace stipple {

/// What `stipple tune`'s options set; the defaults are the command's.
struct TuneOptions {
  /// The SQLite file the run and its measurements are stored in (created if missing).
  std::string database = "stipple.db";
  /// Photos to tune on (files, or folders of .png and .jpg). None: the bundled photos
  /// (natural-820x614 to train, people-256x192 to test). Without test_images, every
  /// third is held out for the test.
  std::vector<std::string> images;
  std::vector<std::string> test_images;
  /// A strategy of `stipple tune --help` ("portfolio", "genetic", "hill" or "reuse");
  /// empty: the default (portfolio).
  std::string strategy;
  /// Evaluations on the training photos; 0: none when time_s is given, else 600 (or 150 s
  /// of search, whichever comes first).
  int64_t budget = 0;
  /// Seconds of search instead of a budget (0: none).
  double time_s = 0;
  uint64_t seed = 1;
  /// Exact schedules only (no perforation or lower precision).
  bool exact = false;
  /// The schedule speedups are measured against: a .sched file, or "default". Empty: the
  /// pipeline's .sched beside its .stp when there is one.
  std::string baseline;
  int runs = 5;            // timed runs per photo (the median is kept)
  int threads = 0;         // threads of parallel loops while measuring; 0: one per core
  double deadline_s = 60;  // seconds a candidate may take before it is killed
  /// The error levels of interest in the pipeline's metric; empty: 1, 2, 5 (exact always).
  std::vector<double> thresholds;
  /// Genetic search: population size and the most generations.
  int population = 24;
  int generations = 200;
  /// Measure candidates again even when the database has them.
  bool remeasure = false;
  /// The lock file shared with workers and other tunes of this host, so that one
  /// candidate at a time is timed; "none": no lock. Empty: the command line's default.
  std::string benchmark_lock;
  /// Continue this run of `database` (one stopped by a callback, interrupted, or killed)
  /// instead of starting one: the run's own photos and search options are used and the
  /// ones above ignored (but remeasure and benchmark_lock). The pipeline must be the one
  /// the run tuned. A run already done returns its front.
  int64_t resume = 0;
};

/// Reported after each batch of candidates.
struct TuneProgress {
  int64_t evaluations = 0;   // linked to the run so far (measured or found in the database)
  int64_t budget = 0;        // evaluations; 0: none (a run bounded by time only)
  double time_budget_s = 0;  // 0: none
  int64_t failures = 0;      // candidates that crashed, hung, or did not compile
  double elapsed_s = 0;
  double eta_s = -1;  // -1: unknown
  double baseline_ms = 0;
  std::string metric;  // "dE" (Lab) or "RMSE"
  /// The levels of interest above exact, and the best speedup over the baseline found so
  /// far at mean error <= each (0: none yet).
  std::vector<double> thresholds;
  std::vector<double> speedup_at;
  std::string phase;  // "baseline", "search", "test", "done"
};

/// One variant of a run's front, numbered as `stipple front` numbers them.
struct FrontPoint {
  int variant = 0;
  bool baseline = false;
  double train_ms = 0, train_error = 0;
  /// Re-measured on the test photos (NaN where there is no test measurement: a run not
  /// done has the test measurements the database already held for the same schedules).
  double test_ms = 0, test_error = 0;
  double speedup = 0;  // the baseline's train time over this one's
  /// The baseline, shown beside a front that dominates it (for the speedups): not a point
  /// of the front itself.
  bool beside_front = false;
  std::string schedule;  // its text ("" for the default schedule)
};

struct TuneResult {
  std::string database;
  int64_t run = 0;
  /// The progress callback stopped the run before it was done: `front` is the training
  /// front so far. The run is left interrupted, to be continued by TuneOptions::resume or
  /// `stipple tune --resume RUN --db DATABASE`.
  bool stopped = false;
  std::string metric;
  std::vector<FrontPoint> front;
};

}  // namespace stipple
