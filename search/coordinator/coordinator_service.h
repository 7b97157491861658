// CoordinatorService: the gRPC Coordinator service (proto/coordinator.proto) over the
// coordinator's WorkerPool (the design, "Cluster principles"). This slice serves the
// worker calls: register, lease jobs (a long poll), report results, heartbeat, and fetch
// a run's setup and photos; ListWorkers from the pool. The other client calls (submit,
// watch, list, front, cancel, evaluate) go to the coordinator's runs (search/cluster_runs.h), set
// with set_client_calls(); without them they answer UNIMPLEMENTED.
//
// - A call without the right token fails with UNAUTHENTICATED before anything is read or
//   written: the server's credentials (rpc::server_credentials) refuse it on its headers,
//   before its message is received, and every handler checks again (rpc::check_token).
// - Input is validated before the pool sees it: a malformed result (unknown status, an
//   image count other than the split's photo count, a NaN or negative time) fails the
//   whole call with INVALID_ARGUMENT and changes nothing.
// - Setups (a pipeline with its params and photos) are registered by the coordinator
//   itself, add_setup(), and runs are bound to them, bind_run(), before their jobs are
//   submitted. Photos are hashed once, and read from their files when a worker asks.
//
// Thread-safe: gRPC calls its handlers on several threads, and the blocking calls run on
// threads of their own; one mutex guards the setups.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler_core/ir/pipeline.h"
#include "proto/coordinator.grpc.pb.h"
#include "search/coordinator/worker_pool.h"
#include "workers/evaluator.h"

namespace stipple::coordinator {

/// The largest message the coordinator receives or sends by default: room for a few
/// large photos in a submit, far below what would let one client exhaust memory.
inline constexpr int kDefaultMaxMessageBytes = 64 << 20;

/// The limits every coordinator server is built with (issue #6: maximum message sizes
/// set). A larger request fails with RESOURCE_EXHAUSTED and the server stays up.
void configure_server(grpc::ServerBuilder& builder,
                      int max_message_bytes = kDefaultMaxMessageBytes);

struct CoordinatorServiceOptions {
  std::string token;  // empty: no token (loopback only, rpc_security.h)
  /// The pool's options, to tell workers how often to heartbeat and how long leases last.
  coordinator::WorkerPoolOptions pool;
  /// The longest a LeaseJobs call blocks, whatever the worker asks: well below the
  /// heartbeat timeout (and capped at a third of it), so a long poll never outlives the
  /// worker's standing or its call deadline.
  std::chrono::milliseconds max_lease_wait{std::chrono::seconds(10)};
  int max_jobs_per_lease = 64;
};

/// The client calls that need the coordinator's database and tuning sessions. The service
/// has checked the token before calling any of them.
class ClientCalls {
 public:
  virtual ~ClientCalls() = default;
  virtual grpc::Status submit(const proto::SubmitRunRequest& request,
                              proto::SubmitRunResponse* response) = 0;
  /// Streams the run's progress through `write` until it ends, the client goes away
  /// (`context` cancelled, or `write` false) or the server drains.
  using WriteProgress = std::function<bool(const proto::RunProgress&)>;
  virtual grpc::Status watch(int64_t run_id, const grpc::ServerContextBase& context,
                             const WriteProgress& write) = 0;
  virtual grpc::Status list(proto::ListRunsResponse* response) = 0;
  virtual grpc::Status front(int64_t run_id, proto::GetFrontResponse* response) = 0;
  virtual grpc::Status cancel(int64_t run_id, proto::CancelRunResponse* response) = 0;
  /// Measures the request's jobs on workers of its target (cluster_evaluations.h): blocks
  /// until each has its result, the client goes away (`context` cancelled) or the server
  /// drains.
  virtual grpc::Status evaluate(const proto::EvaluateRequest& request,
                                const grpc::ServerContextBase& context,
                                proto::EvaluateResponse* response) = 0;
};

// Every call is served raw (the request's bytes parsed here, after the token is checked):
// a body that is not the call's request gets INVALID_ARGUMENT saying so, where gRPC's own
// parsing would answer INTERNAL without a reason. The calls that block run on a thread of
// their own, never on gRPC's callback threads: LeaseJobs (a long poll), WatchRun (a
// stream), CancelRun (it waits for the run's session to stop) and Evaluate (it waits for
// the workers).
using CoordinatorServiceBase = proto::Coordinator::WithRawCallbackMethod_Evaluate<
    proto::Coordinator::WithRawCallbackMethod_SubmitRun<
        proto::Coordinator::WithRawCallbackMethod_ListRuns<
            proto::Coordinator::WithRawCallbackMethod_GetFront<
                proto::Coordinator::WithRawCallbackMethod_ListWorkers<
                    proto::Coordinator::WithRawCallbackMethod_RegisterWorker<
                        proto::Coordinator::WithRawCallbackMethod_ReportResults<
                            proto::Coordinator::WithRawCallbackMethod_Heartbeat<
                                proto::Coordinator::WithRawCallbackMethod_GetSetup<
                                    proto::Coordinator::WithRawCallbackMethod_GetImage<
                                        proto::Coordinator::WithRawCallbackMethod_LeaseJobs<
                                            proto::Coordinator::WithRawCallbackMethod_WatchRun<
                                                proto::Coordinator::WithRawCallbackMethod_CancelRun<
                                                    proto::Coordinator::Service>>>>>>>>>>>>>;

class CoordinatorService final : public CoordinatorServiceBase {
 public:
  CoordinatorService(coordinator::WorkerPool& pool, CoordinatorServiceOptions options);
  /// Waits for the threads of blocking calls still finishing (the server has been shut
  /// down first, so no new one starts).
  ~CoordinatorService() override;

  // ---- the coordinator's side ----

  /// Registers a run's setup: compiles the pipeline, reads and hashes every photo, and
  /// returns its id, a hash of the content (the same setup gives the same id, in any
  /// process). Throws UserError for a bad pipeline or a photo that does not load.
  std::string add_setup(const workers::EvaluationSetup& setup);
  /// The pool's run `run_id` measures on setup `setup_id`: its jobs are sent with that
  /// setup and their schedules parsed against its pipeline. UserError for an unknown setup.
  void bind_run(const std::string& run_id, const std::string& setup_id);
  /// Forgets the run's binding and the jobs it leased (after WorkerPool::release_run).
  void unbind_run(const std::string& run_id);
  /// Where the client calls go (not owned; it must outlive the server). Set before the
  /// server starts.
  void set_client_calls(ClientCalls* calls) { client_calls_ = calls; }

  // ---- worker calls ----

  using Raw = grpc::ServerUnaryReactor*;
  using RawContext = grpc::CallbackServerContext;
  Raw RegisterWorker(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw LeaseJobs(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw ReportResults(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw Heartbeat(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw GetSetup(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw GetImage(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;

  // ---- client calls: the token checked, then ListWorkers here and the rest to
  // ClientCalls ----

  Raw SubmitRun(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchRun(RawContext* c,
                                                       const grpc::ByteBuffer* in) override;
  Raw ListRuns(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw GetFront(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw CancelRun(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw ListWorkers(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;
  Raw Evaluate(RawContext* c, const grpc::ByteBuffer* in, grpc::ByteBuffer* out) override;

 private:
  // The calls, their request parsed and the token checked (serve_raw in the .cpp).
  grpc::Status register_worker(const proto::RegisterWorkerRequest& request,
                               proto::RegisterWorkerResponse* response);
  grpc::Status report_results(const proto::ReportResultsRequest& request,
                              proto::ReportResultsResponse* response);
  grpc::Status get_setup(const proto::GetSetupRequest& request, proto::EvaluationSetup* response);
  grpc::Status get_image(const proto::GetImageRequest& request, proto::GetImageResponse* response);
  grpc::Status list_workers(proto::ListWorkersResponse* response);
  grpc::Status lease_jobs(const grpc::ServerContextBase& context,
                          const proto::LeaseJobsRequest& request,
                          proto::LeaseJobsResponse* response);
  /// A heartbeat, held up to its hold_seconds (at most the heartbeat interval) while the
  /// call stays open; a call the transport cancels meanwhile is the worker gone. Answered
  /// at once with the worker's jobs whose runs were cancelled, so that it stops them.
  grpc::Status held_heartbeat(const grpc::ServerContextBase& context,
                              const proto::HeartbeatRequest& request,
                              proto::HeartbeatResponse* response);
  /// Runs `work` on a thread of its own, counted so that the destructor waits for it.
  void start_thread(std::function<void()> work);

  struct Setup {
    proto::EvaluationSetup message;            // what GetSetup answers
    std::shared_ptr<const Pipeline> pipeline;  // schedules are parsed against it
    std::map<std::string, int> photos;         // by split: how many
  };
  /// What the service learnt of a job when it leased it: enough to validate its result.
  struct LeasedJob {
    std::string run_id;
    int photos = 0;  // in the job's split
    int parts = -1;  // a code job's requests; -1: a schedule's job
  };

  coordinator::WorkerPool& pool_;
  CoordinatorServiceOptions options_;
  ClientCalls* client_calls_ = nullptr;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Setup>> setups_;  // by setup id
  // Photo files by the sha256 of their bytes: read when a worker asks (workers cache
  // them), so that the coordinator's memory does not grow with every photo submitted.
  std::map<std::string, std::string> images_;
  std::map<std::string, std::string> runs_;  // setup id by pool run id
  std::map<std::string, LeasedJob> jobs_;    // by job id
  std::mutex threads_mu_;
  std::condition_variable threads_done_;
  int threads_running_ = 0;
};

}  // namespace stipple::coordinator
