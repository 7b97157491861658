// One night of nightly regression tuning for one registration on one target (issue #29):
// re-tune, re-measure, re-check, decide, and keep the history.
//
//  1. The re-tune (with a budget): a tuning run warm-started from the shipped variant and
//     the stored front, seeded with the night's id so that each night explores new ground;
//     what the database measured before answers from the store (tuning_session.h), so no
//     schedule is measured twice. Its front is the one the next night starts from.
//  2. The measurement: the shipped variant and every point of the front, each beside the
//     baseline night's code of it, in rounds. A night keeps the object code it timed
//     (workers/evaluator.h CodeRequest); the next night on the host loads it and times it
//     interleaved with its own compile of the variant, in the same process: what changed
//     between two nights' code is measured in one run on one machine state, not across
//     hours of a shared machine's moods (between two processes blur3x3's time moved by up
//     to 8% on a 2-vCPU VM with nothing changed). Each round times every variant and its
//     baseline once, the order flipped every round. A sample is one round's time: the
//     fastest of at least `runs` timed runs and `min_timed_ms` of them per photo (noise
//     only adds time), averaged over the photos. Code is compiled or loaded once per
//     night (workers/measurement.h).
//  3. The baseline: the last earlier night of the same registration, target, host and
//     setup (pipeline, photos, size) that passed or whose regression a person accepted
//     (`stipple nightly accept`), so that a regression is reported every night until it
//     is fixed or accepted. A night that left a variant unknown is "unsure": no
//     regression, and no baseline either (it may hold a change smaller than its noise let
//     it see, which the next night would then miss). Earlier runs on the same machine, as
//     LNT's baselines; timings of different hosts are never compared. Stored code that no
//     longer runs here (another calling convention) fails or computes another output than
//     its night's: it is then not timed, and the variant is compared with the baseline
//     night's numbers instead.
//  4. The decision per variant: a correctness regression when an exact variant's output
//     differs from the reference or from the baseline night's (the compiler changed what
//     a schedule computes), whatever the timings; "less accurate" when an approximate
//     variant's error grew; else slower, same, faster or unknown from change_test.h, and
//     while unknown, more rounds of the unknown variants up to `max_samples`. A variant
//     found slower or faster is timed again in as many rounds as it took (more while
//     those alone are unknown, up to the cap), and is slower or faster only when those
//     rounds alone say so too: noise on a shared machine comes in bursts longer than a
//     round (a neighbour's build), which one test of rounds taken back to back can read as
//     a change (Pinpoint too asks for more repeats before it calls a difference).
//  5. Improvements: a front point that dominates the shipped variant, from tonight's
//     samples of both (significantly faster by the same test, no larger error).
//
// The evaluator says where: in a child process on this host (LocalEvaluator), or on one
// host of the cluster's workers of the target (client/cluster_evaluator.h), where each
// variant and its baseline code are one job, measured in one process (CodeRequest::group).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "search/nightly/change_test.h"
#include "search/reuse/machine_model.h"
#include "search/tune_options.h"
#include "storage/database.h"
#include "workers/evaluator.h"

namespace stipple::search::nightly {

struct NightOptions {
  int samples = 10;      // rounds first
  int max_samples = 30;  // rounds at most, while a variant's answer is unknown
  /// Re-tune evaluations beyond the warm start; 0: re-measure only.
  int64_t budget = 0;
  /// The re-tune's options (photos, runs, threads, deadline, ...); warm_start, seed and
  /// budget are set by the night.
  TuneOptions tune;
  ChangeTestOptions change;
  /// An approximate variant whose error grew by more than this (relative) is less accurate.
  double max_error_growth = 0.01;
  std::string stipple_version, llvm_version;  // recorded with the night
  /// The host the night is recorded for; empty: the evaluator's host name. A pod's name
  /// changes every night: on Kubernetes this is the node's.
  std::string host;
  /// Store the night (and its re-tune's front as the next night's). False: measure and
  /// decide only (`--no-record`, what a report's "measure again" runs), so that a night
  /// run to look again never becomes the next night's baseline.
  bool record = true;
  /// The machine the night measures on, for the re-tune's searches (TuningSession::
  /// set_machine); unset: this host, where a local evaluator measures.
  std::optional<MachineModel> machine;
};

/// A variant of the night with what it is compared with.
struct VariantOutcome {
  storage::NightVariantRecord now;
  /// The same variant on the baseline night: for "shipped" the variant shipped then, for a
  /// front point the one of the same schedule.
  std::optional<storage::NightVariantRecord> before;
  /// The baseline night's code of this variant (before->object) timed tonight beside it,
  /// round by round: what `change` compares with. False when there is none, or it cannot
  /// be run here any more (then `change` compares with before->samples, the numbers the
  /// baseline night measured): `baseline_problem` says why.
  bool timed_beside = false;
  std::string baseline_problem;
  std::optional<ChangeTest> change;  // tonight against before, when both measured
  /// A variant that tested slower or faster is timed again: this is the reference against
  /// those rounds alone. Slower (faster) only when both say so.
  std::optional<ChangeTest> confirmation;
  std::string why;  // for a verdict that is not the test's alone, in words
  /// For a front point that dominates the shipped variant: tonight's test of shipped
  /// (before) against it (after).
  std::optional<ChangeTest> improvement;
  /// Regressions: slower, wrong output, less accurate, or failing where it measured before.
  bool regressed() const;
};

struct NightOutcome {
  storage::NightRecord night;
  std::optional<storage::NightRecord> baseline;
  std::vector<VariantOutcome> variants;  // "shipped" first, then the front by time
  int rounds = 0;                        // rounds of the night, confirmations included
  double seconds = 0;                    // wall clock, re-tune included
  double alpha = 0.01;                   // the tests' level (ChangeTestOptions::alpha)
  bool regressed() const;
};

using NightProgress = std::function<void(const std::string&)>;

/// What a registration's nights measure on, as NightRecord::setup: a digest of its
/// pipeline, photos and size (`nightly add --replace` may change them).
std::string night_setup(const storage::NightlyRecord& registration);

/// The registration's photos, each checked against the SHA-256 it was registered with
/// (UserError for one gone or changed).
std::vector<storage::ImageRecord> registration_photos(storage::Database& db,
                                                      const storage::NightlyRecord& registration);

/// Runs one night of `registration` on the evaluator's host and target (pipeline: the
/// registration's, compiled; source: its text) and stores it. The evaluator's setup must
/// ask for output digests (EvaluationSetup::output_digests). A night that cannot measure
/// (the evaluator fails as a whole) is stored as failed and the exception propagates.
NightOutcome run_night(storage::Database& db, const storage::NightlyRecord& registration,
                       const Pipeline& pipeline, const std::string& source,
                       workers::Evaluator& evaluator, const NightOptions& options,
                       const NightProgress& progress = {});

}  // namespace stipple::search::nightly
