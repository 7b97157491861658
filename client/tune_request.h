// What a user asks of a local tuning run, as `stipple tune`'s options and the embedding
// library's Pipeline::tune (<stipple/tuning.h>) both take it, and the run's TuneOptions
// made of it: the defaults (a budget, or a time, or neither) and the rules (the hand
// schedule beside the program is the baseline; the bundled photos when none are given;
// what a resumed run is made of) in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/tune_options.h"
#include "storage/database.h"

namespace stipple::cli {

/// With neither a budget nor a time, a run stops at this many evaluations...
inline constexpr int64_t kDefaultBudget = 600;
/// ...or after this long, so that the README's first command takes the time it promises
/// on the slowest of our machines too (a Zen 3 VM measures about 1.6 candidates a second,
/// a Zen 5 VM 4 to 5: the budget is reached first there).
inline constexpr double kDefaultSearchSeconds = 150;

struct TuneRequest {
  std::string pipeline;
  /// The program is a file (its .sched beside it is the default baseline); false for a
  /// program given as text, whose `pipeline` is only what messages call it.
  bool pipeline_on_disk = true;
  std::vector<std::string> images, test_images;
  std::string strategy = search::kDefaultStrategy;
  int64_t budget = 0;  // 0: kDefaultBudget, unless time_s is given
  double time_s = 0;   // 0: none (kDefaultSearchSeconds when budget is 0 too)
  uint64_t seed = 1;
  bool exact = false;
  /// A .sched file, "default", or empty: the program's .sched beside it when there is one.
  std::string baseline;
  int runs = 5;
  int threads = 0;
  double deadline = 60;
  std::vector<double> thresholds;  // empty: TuneOptions' levels
  int population = 24;
  int generations = 200;
};

/// The run's options. The photos are chosen (choose_photos, errors naming them as
/// `images_option` and `test_images_option`); the values are taken as given (the command
/// line's parser and the library check their ranges, each in its own words).
search::TuneOptions tune_options(const TuneRequest& request,
                                 const std::string& images_option = "--images",
                                 const std::string& test_images_option = "--test-images");

/// A run to continue (`stipple tune --resume`, TuneOptions::resume): its stored options and
/// the program it tuned, as stored with the run (whatever its file holds now, or whether
/// it came from a file at all). `done`: the run is finished, and nothing else is set.
/// UserError when there is no such run, or when its process may still be running it.
struct RunToResume {
  bool done = false;
  search::TuneOptions options;
  std::string source;
};
RunToResume run_to_resume(storage::Database& db, int64_t run_id);

}  // namespace stipple::cli
