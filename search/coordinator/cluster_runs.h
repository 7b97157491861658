// ClusterRuns: the coordinator's tuning runs (issue #6). Each run is a search::TuningSession on a
// thread of its own, measuring through a RemoteEvaluator on the worker pool; SQLite holds
// everything, as for `stipple tune`, so a coordinator killed at any point restarts with
// resume_unfinished() and every run goes on from its last committed batch.
//
// - submit() takes a pipeline's source and photos from a client, checks them against the
//   limits, stores them under the data folder by content hash (so the run's options name
//   files that are still there after a restart), and starts the run.
// - A malformed pipeline or schedule is INVALID_ARGUMENT with its file:line:col message;
//   a request over a limit is INVALID_ARGUMENT naming the limit; nothing is stored for
//   either.
// - cancel() stops a run at once (its queued jobs are dropped; what it committed stays)
//   and marks it cancelled. drain() stops every run without marking it: they stay
//   "running" in the database and resume when the coordinator starts again.
//
// The database: each run's session has its own connection (SQLite serialises the writers
// with BEGIN IMMEDIATE and a busy timeout); the client calls share one more, under a mutex.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "proto/coordinator.pb.h"
#include "search/coordinator/cluster_evaluations.h"
#include "search/coordinator/coordinator_service.h"
#include "search/coordinator/worker_pool.h"
#include "search/tuning_session.h"
#include "storage/database.h"

namespace stipple::coordinator {

struct ClusterRunsOptions {
  std::string db_path;
  /// Where submitted pipelines, baselines and photos are kept, by content hash.
  std::string data_dir;
  /// Named datasets a submit may ask for instead of sending photos: DATASETS/NAME/train/
  /// and DATASETS/NAME/test/ hold the photos (.png, .jpg); empty: none.
  std::string datasets_dir;
  // Limits on what one submit may ask for.
  int64_t max_pipeline_bytes = 1 << 20;
  int max_images = 64;
  int64_t max_image_pixels = int64_t(40) << 20;  // per photo, e.g. 8000x5000
  int64_t max_budget = 100000;
  int max_runs_per_photo = 100;  // timed runs
};

class ClusterRuns final : public ClientCalls {
 public:
  ClusterRuns(coordinator::WorkerPool& pool, CoordinatorService& service,
              ClusterRunsOptions options);
  /// Drains (if not yet) and joins every run's thread.
  ~ClusterRuns() override;

  /// Starts every run of the database that is a cluster run and still "running". Returns
  /// how many; a run whose files are gone is marked failed with the reason.
  int resume_unfinished();
  /// Stops taking submits and stops every run (they stay "running", to resume), then
  /// waits for their threads. Call before the pool shuts down, or with it.
  void drain();
  /// Runs with a live session now.
  int active_runs();

  grpc::Status submit(const proto::SubmitRunRequest& request,
                      proto::SubmitRunResponse* response) override;
  /// The photos of a named dataset (ClusterRunsOptions::datasets_dir), as a request's
  /// images and image_contents. Throws the refusal submit answers with.
  proto::SubmitRunRequest dataset_photos(const std::string& name) const;
  grpc::Status watch(int64_t run_id, const grpc::ServerContextBase& context,
                     const WriteProgress& write) override;
  grpc::Status list(proto::ListRunsResponse* response) override;
  grpc::Status front(int64_t run_id, proto::GetFrontResponse* response) override;
  grpc::Status cancel(int64_t run_id, proto::CancelRunResponse* response) override;
  /// Measurements for a client's own database: cluster_evaluations.h.
  grpc::Status evaluate(const proto::EvaluateRequest& request,
                        const grpc::ServerContextBase& context,
                        proto::EvaluateResponse* response) override;

 private:
  struct ActiveRun;

  coordinator::WorkerPool& pool_;
  CoordinatorService& service_;
  ClusterRunsOptions options_;
  std::atomic<bool> draining_{false};
  ClusterEvaluations evaluations_;

  std::mutex mu_;  // guards runs_ and every run's progress
  std::condition_variable changed_;
  std::map<int64_t, std::shared_ptr<ActiveRun>> runs_;

  std::mutex query_mu_;  // guards query_db_
  std::unique_ptr<storage::Database> query_db_;

  /// Builds the run's session and starts its thread; `resume_run` 0 makes a new run.
  /// Returns the run id. Throws UserError for bad input.
  int64_t start(const search::TuneOptions& options, const std::string& target, int64_t resume_run);
  void run_session(std::shared_ptr<ActiveRun> run);
  /// Sets the run's state and why it ended in the database, trying again with backoff
  /// while the database cannot be written, until it can or the coordinator drains.
  void mark_ended(ActiveRun& run, const std::string& state, const std::string& message);
  /// The progress of a run with no live session, from the database.
  std::optional<proto::RunProgress> stored_progress(int64_t run_id);
  std::string choose_target(const std::string& requested);
};

}  // namespace stipple::coordinator
