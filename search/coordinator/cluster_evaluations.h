// ClusterEvaluations: measurements on the cluster for a client that keeps its own
// database (the Evaluate call, proto/coordinator.proto): `stipple nightly run
// --coordinator` times its nights on the workers of each target it ships to (issue #29).
//
// Not a run: the coordinator stores nothing of it but the photos (DATA/images, by hash, so
// that later calls may leave their bytes out). Each call registers its setup, queues one
// job per entry (a schedule, or a code job: a variant beside its baseline's code, measured
// in one process), kept for the asked host when one is named (a night is timed on one
// machine: timings of different hosts never meet in one comparison), and answers when
// every job has its result. The jobs are forgotten when the call ends, answered or not: a
// client that goes away (its deadline, a crash) cancels them, and a worker measuring one
// is told to stop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler_core/ir/pipeline.h"
#include "proto/coordinator.pb.h"
#include "search/coordinator/coordinator_service.h"
#include "search/coordinator/worker_pool.h"

namespace stipple::coordinator {

struct ClusterEvaluationsOptions {
  std::string data_dir;  // photos kept under DATA/images
  int max_images = 64;
  int64_t max_image_pixels = int64_t(40) << 20;
  int max_runs_per_photo = 100;
  int max_jobs = 1000;              // measurements per call (a code job's requests each)
  double max_min_timed_ms = 60000;  // EvaluateRequest.min_timed_ms at most
  /// A call whose target (and host) has had no live worker for this long is answered
  /// UNAVAILABLE: jobs kept for a host have no other taker.
  std::chrono::milliseconds orphan_after{std::chrono::seconds(30)};
};

class ClusterEvaluations {
 public:
  ClusterEvaluations(WorkerPool& pool, CoordinatorService& service,
                     ClusterEvaluationsOptions options);

  /// Checks the request (its pipeline, schedules, photos and limits: INVALID_ARGUMENT;
  /// photos the coordinator lacks, or no live worker of the target and host:
  /// FAILED_PRECONDITION), then measures it. Returns CANCELLED when the client went away
  /// and UNAVAILABLE when `draining` was set first.
  grpc::Status evaluate(const proto::EvaluateRequest& request,
                        const grpc::ServerContextBase& context, const std::atomic<bool>& draining,
                        proto::EvaluateResponse* response);

 private:
  struct KnownSetup {
    std::string id;                            // CoordinatorService::add_setup's
    std::shared_ptr<const Pipeline> pipeline;  // the schedules are checked against it
  };
  /// The request's setup: registered with the service (its photos kept or found by hash,
  /// refusals as evaluate()'s) the first time its content is seen, then remembered, so
  /// that a night's rounds do not read, hash and decode its photos and compile its
  /// pipeline once each.
  KnownSetup known_setup(const proto::EvaluateRequest& request);

  WorkerPool& pool_;
  CoordinatorService& service_;
  ClusterEvaluationsOptions options_;
  std::string call_prefix_;  // "evaluate-NONCE-": job ids differ between processes
  std::atomic<int64_t> next_call_{1};
  std::mutex mu_;
  std::map<std::string, KnownSetup> known_;  // by a hash of the setup's content
};

}  // namespace stipple::coordinator
