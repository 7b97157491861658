// The options of a tuning run: what `stipple tune` and `stipple submit` set, what the
// session and the strategies read, and what is stored with the run (as JSON) so that
// `--resume` and the coordinator's restart replay the same search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stipple::search {

/// `--thresholds 0.5,1,2` as TuneOptions::thresholds: 0 first, then the given levels
/// ascending. UserError for a level that is not a finite number > 0, or a repeated one.
std::vector<double> with_exact_threshold(std::vector<double> levels);

/// TuneOptions::budget of a run bounded by time only: more evaluations than any run makes,
/// with room to add to it without overflow.
inline constexpr int64_t kNoBudget = INT64_MAX / 2;

/// The strategy a run uses when none is named.
inline constexpr const char* kDefaultStrategy = "portfolio";

struct TuneOptions {
  std::string pipeline_file;
  std::vector<std::string> train_images, test_images;
  /// A name in the strategy registry (strategy_registry.h).
  std::string strategy = kDefaultStrategy;
  int64_t budget = 600;      // evaluations on the training photos
  double time_budget_s = 0;  // 0: none
  uint64_t seed = 1;
  bool remeasure = false;
  bool exact_only = false;        // no perforation
  int batch = 4;                  // candidates proposed and committed together
  int runs = 5;                   // timed runs per photo
  int threads = 0;                // 0: one per core
  double deadline_s = 60;         // per candidate
  std::string baseline_schedule;  // a .sched file; empty: the default schedule
  int population = 24;            // genetic
  /// genetic and hill alone: seed them with the reuse model's schedule too (the portfolio
  /// always does).
  bool use_reuse_seed = false;
  /// Schedules (texts) a run starts from: measured (or found in the store) right after
  /// the baseline, and seeds of the strategies, as the reuse model's schedule is. The
  /// nightly re-tune starts from the shipped variant and the stored front.
  std::vector<std::string> warm_start;
  int generations = 200;  // genetic
  /// The error levels of interest, in the pipeline's metric (mean Lab dE, or RMSE in the
  /// output's units): hill climbing climbs once per level and the progress line shows the
  /// best speedup within each. 0 (exact) is always the first (with_exact_threshold).
  std::vector<double> thresholds = {0, 1, 2, 5};
  /// A run of the cluster's coordinator (measured by its workers): the coordinator resumes
  /// these after a restart, and leaves runs of `stipple tune` alone.
  bool cluster = false;

  /// The options as JSON (stored with the run, read back by --resume).
  std::string to_json() const;
  static TuneOptions from_json(const std::string& text);
};

}  // namespace stipple::search
