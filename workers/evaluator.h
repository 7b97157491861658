// The Evaluator: what measures candidate schedules for a search (the design, "Evaluation
// protocol"). The search never knows where a candidate runs: LocalEvaluator
// (local_evaluator.h) runs them in a child process on this host; the cluster's remote
// evaluator sends them to workers.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/evaluation_status.h"

namespace stipple::workers {

/// What every evaluation of a tuning run shares: the pipeline, its params, the photos and
/// the measuring protocol.
struct EvaluationSetup {
  std::string pipeline_source;  // the .stp text
  std::string pipeline_file;    // for messages
  std::map<std::string, double> params;
  /// Photo paths by split ("train", "test"). Every input of the pipeline reads the photo;
  /// a 2-D input of a colour photo reads its RGGB Bayer mosaic.
  std::map<std::string, std::vector<std::string>> images;
  int runs = 5;  // timed runs per image after one warm-up; the median is the time
  /// More timed runs, past `runs`, until they add up to this many ms (at most
  /// kMaxTimedRuns): a sample of a fast schedule is then a median over enough time for
  /// one preemption not to decide it. The nightly run's rounds use it; 0: `runs` only.
  double min_timed_ms = 0;
  int threads = 0;  // for parallel loops; 0: one per core
  /// Also give each output's digest (ImageMeasurement::output_digest): the nightly run
  /// compares them between nights to see a compiler change what a schedule computes.
  bool output_digests = false;
};

inline constexpr int kMaxTimedRuns = 1000;

struct ImageMeasurement {
  double time_ms = 0;  // the median of the timed runs
  /// The fastest timed run: noise only ever adds time, so on a shared machine it moves
  /// least from one process to the next (a median moved 7% where it moved 2%, for
  /// blur3x3 on a 2-vCPU VM); the nightly run compares nights by it, as LNT does.
  double min_time_ms = 0;
  double error = 0;  // the pipeline's metric against the reference output
  double psnr = 0;
  /// With EvaluationSetup::output_digests: SHA-256 (hex) of the output's type, extents and
  /// bytes; else empty.
  std::string output_digest;
};

struct EvaluationResult {
  EvaluationStatus status = EvaluationStatus::Ok;
  std::string reason;  // for failures: what happened, in words
  double compile_ms = 0;
  std::vector<ImageMeasurement> images;  // in the split's image order
  double time_ms = 0;                    // the mean over images of the per-image median
  double min_time_ms = 0;                // the mean over images of the per-image fastest
  double error = 0;                      // the mean over images
  double psnr = 0;                       // the mean over images
  /// With CodeRequest::keep_code: the code that was timed (CompiledFunction::object and
  /// symbol), to time again in another process of the same target.
  std::string object, symbol;
  /// Not measured for this request: the cluster gave it another run's measurement of the
  /// same evaluation (the same setup, target, split, schedule and give-up time).
  bool shared = false;
  bool ok() const { return status == EvaluationStatus::Ok; }
  /// Fills time_ms, error and psnr from `images`.
  void aggregate();
};

/// A measurement of code rather than of a schedule alone: code kept from an earlier
/// compile (EvaluationResult::object), timed beside today's (the nightly run's baseline),
/// or today's compile, kept.
struct CodeRequest {
  /// The schedule: what is compiled, or for stored code what says how it is called (the
  /// buffers and params lowering gives it).
  std::string schedule;
  std::string object, symbol;  // stored code to time instead of compiling; empty: compile
  bool keep_code = false;      // return the code timed in the result
  /// Requests of one group are measured in one process, one after the other in the order
  /// given: what is compared with each other must be (between two processes a time moves
  /// by more than the changes looked for). LocalEvaluator measures every request in one
  /// process (but for those after a request that crashed or hung: its child is replaced);
  /// the cluster's evaluator sends one job per group.
  int group = 0;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Measures each schedule (text) on the photos of `split`, one result per schedule in
  /// order. A failing candidate gives a failed result, never an exception; exceptions mean
  /// the evaluator itself cannot go on. A candidate whose warm-up run on a photo takes
  /// longer than `give_up_ms` (0: no limit) is timed by that one run alone: it is far off
  /// the front, and its K runs would cost the search K times as much for nothing.
  virtual std::vector<EvaluationResult> evaluate(const std::vector<std::string>& schedules,
                                                 const std::string& split, double give_up_ms) = 0;
  /// Measures each request on the photos of `split` as evaluate() measures schedules.
  /// Stored code must have been made for this evaluator's target; code that cannot be
  /// loaded is a failed result. Evaluators that cannot run stored code throw
  /// std::logic_error (a tuning run's RemoteEvaluator).
  virtual std::vector<EvaluationResult> evaluate_code(const std::vector<CodeRequest>& requests,
                                                      const std::string& split) {
    throw std::logic_error("this evaluator cannot run stored code");
  }
  /// The host name results are recorded with, and the target key fronts are kept per.
  virtual std::string host() const = 0;
  virtual std::string target() const = 0;
};

}  // namespace stipple::workers
