// RemoteEvaluator: the Evaluator of a tuning run on the cluster (the design, "Data flow":
// the same interface serves the in-process worker and the remote pool). Each candidate
// becomes a job of the coordinator's WorkerPool; workers of the run's target lease and
// measure it, and evaluate() returns when every job of the batch has its result.
//
// Job ids are stable: the run, the split and a hash of the setup and the schedule text.
// A schedule a run asks for again is answered from the pool at once instead of being
// measured again. (A worker's result of a job leased before a coordinator restart is not
// taken: the new pool never leased it to that worker, so the job is measured again. What
// the run had committed before the restart answers from SQLite and is never re-submitted.)
//
// Each job also has a content key, job_key(), free of the run: runs of the same setup and
// target asking for the same schedule (with the same give-up time) share one measurement
// (WorkerPool), and the results that came from another run's job are marked `shared`.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "search/coordinator/worker_pool.h"
#include "workers/evaluator.h"

namespace stipple::coordinator {

/// Thrown by RemoteEvaluator::evaluate() when the run is stopped (the stop flag is set,
/// the run is cancelled or the pool shuts down) before the batch is measured. It is not a
/// candidate's failure: nothing of the batch may be stored. search::TuningSession lets it pass
/// without committing the batch, so the run stays "running" and resumes later.
class EvaluationStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RemoteEvaluator : public workers::Evaluator {
 public:
  /// `setup_id`: CoordinatorService::add_setup()'s id of the run's photos and pipeline
  /// (the coordinator binds the run to it, bind_run, before evaluating); `target`: the
  /// host_target_key() of the workers that may measure the run.
  RemoteEvaluator(coordinator::WorkerPool& pool, std::string setup_id, int64_t run_id,
                  std::string target);

  /// For a new run: search::TuningSession::create_run() makes the id after the session, and so
  /// this evaluator, exists.
  void set_run_id(int64_t run_id) { run_id_ = run_id; }
  int64_t run_id() const { return run_id_; }
  /// The pool's name of the run (its jobs' run_id).
  std::string pool_run_id() const { return std::to_string(run_id_); }
  /// The flag the session stops on (search::TuningSession::set_stop_flag); evaluate() then throws
  /// EvaluationStopped instead of waiting for the rest of the batch.
  void set_stop_flag(const std::atomic<bool>* flag) { stop_ = flag; }

  /// Submits one job per distinct schedule, waits for all, returns the results in order.
  /// Throws EvaluationStopped when the run is stopped first.
  std::vector<workers::EvaluationResult> evaluate(const std::vector<std::string>& schedules,
                                                  const std::string& split,
                                                  double give_up_ms) override;
  /// The host that measured the last batch, "cluster" when several did (or before any).
  std::string host() const override { return host_; }
  std::string target() const override { return target_; }

  /// What determines a job's result, whichever run asks: the setup (its id hashes the
  /// pipeline source and IR, params, photos by SHA-256 and split, runs and threads), the
  /// target, the split, the schedule text and the give-up time.
  static std::string job_key(const std::string& setup_id, const std::string& target,
                             const std::string& split, const std::string& schedule,
                             double give_up_ms);
  /// "RUN/SPLIT/HASH": the stable id of a candidate's job.
  static std::string job_id(int64_t run_id, const std::string& setup_id, const std::string& split,
                            const std::string& schedule);

 private:
  coordinator::WorkerPool& pool_;
  std::string setup_id_;
  int64_t run_id_;
  std::string target_;
  std::string host_ = "cluster";
  const std::atomic<bool>* stop_ = nullptr;
};

}  // namespace stipple::coordinator
