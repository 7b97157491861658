// Random legal schedules over a pipeline, for property tests (parse(print(s)) == s,
// proto round trips, lowering equals the reference evaluator) and as the search's
// starting population. Every schedule returned passes check_schedule: each choice is
// tried against the same rules and dropped when they reject it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

struct RandomScheduleOptions {
  int max_directives_per_stage = 4;
  /// Split and tile factors are drawn from 1..max_factor (vector widths from 2..16, unroll
  /// factors from 2..4).
  int max_factor = 64;
  /// Probability that a split or tile draws its factors from the extremes instead: the
  /// largest the checker allows (kMaxSplitFactor, 2^24), one less, and 2^20 + 1, far
  /// past any test image. Such a directive gets the shift_inwards tail, whose inner loop
  /// is clamped to the extent: guard_with_if would run all 2^24 iterations, each with its
  /// test, and a producer computed inside would be realised over all of them. 0 leaves the
  /// draws (and every seed's schedules) as they were.
  double extreme_factor_probability = 0;
  /// Probability that a func gets an explicit compute level, and that a func with a
  /// compute_at level also gets a different store level.
  double level_probability = 0.7;
  double store_probability = 0.5;
  /// A schedule to build on, kept as it is: approximation directives (approximation.h),
  /// so that the levels and loops drawn are legal with them in place. It must pass
  /// check_schedule on its own.
  Schedule base;
};

/// The funcs of p with every func that uses them before them (the output first); funcs
/// the output does not reach come last. The order random schedules and the search's
/// decoder schedule funcs in, so that a func's consumers' loops are final when its levels
/// are chosen.
std::vector<const Func*> consumers_first(const Pipeline& p);

/// A random schedule that check_schedule accepts for p.
Schedule random_schedule(const Pipeline& p, std::mt19937_64& rng,
                         const RandomScheduleOptions& options = {});

}  // namespace stipple
