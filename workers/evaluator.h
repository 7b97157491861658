// The Evaluator: what measures candidate schedules for a search (the design, "Evaluation
// protocol"). The search never knows where a candidate runs: LocalEvaluator
// (local_evaluator.h) runs them in a child process on this host; the cluster's remote
// evaluator sends them to workers.
#pragma once

#include <map>
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
  int runs = 5;     // timed runs per image after one warm-up; the median is the time
  int threads = 0;  // for parallel loops; 0: one per core
};

struct ImageMeasurement {
  double time_ms = 0;
  double error = 0;  // the pipeline's metric against the reference output
  double psnr = 0;
};

struct EvaluationResult {
  EvaluationStatus status = EvaluationStatus::Ok;
  std::string reason;  // for failures: what happened, in words
  double compile_ms = 0;
  std::vector<ImageMeasurement> images;  // in the split's image order
  double time_ms = 0;                    // the mean over images of the per-image median
  double error = 0;                      // the mean over images
  double psnr = 0;                       // the mean over images
  /// Not measured for this request: the cluster gave it another run's measurement of the
  /// same evaluation (the same setup, target, split, schedule and give-up time).
  bool shared = false;
  bool ok() const { return status == EvaluationStatus::Ok; }
  /// Fills time_ms, error and psnr from `images`.
  void aggregate();
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
  /// The host name results are recorded with, and the target key fronts are kept per.
  virtual std::string host() const = 0;
  virtual std::string target() const = 0;
};

}  // namespace stipple::workers
