// CoordinatorClient: a small C++ library for the tuning cluster's clients (issue #6): the
// `stipple submit/status/front/cancel/workers` commands use it, and users can link it
// (target stipple_coordinator_client) to drive a coordinator from their own programs:
//
//   stipple::client::ClientOptions o;  o.address = "tuner.lab:50051";
//   o.security.token = stipple::rpc::load_token("");   // STIPPLE_TOKEN
//   stipple::client::CoordinatorClient c(o);
//   stipple::client::SubmitSpec spec;  spec.pipeline_file = "blur.stp";
//   spec.train_images = {"a.png", "b.png"};  spec.budget = 200;
//   int64_t run = c.submit(stipple::client::make_submit_request(spec));
//   c.watch(run, [](const stipple::proto::RunProgress& p) { ... });
//   for (auto& point : c.front(run).points()) ...
//
// Every call has a deadline (a watch has none: it lasts the run). A call that fails throws
// RpcError with the gRPC status, whose message is the coordinator's reason.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/coordinator.grpc.pb.h"
#include "proto/rpc_security.h"

namespace stipple {
struct CompileWarning;  // compiler_core/language/frontend.h
}  // namespace stipple

namespace stipple::client {

struct ClientOptions {
  std::string address = "127.0.0.1:50051";
  rpc::SecurityOptions security;  // token and TLS files
  int max_message_bytes = 64 << 20;
  double call_timeout_s = 60;
};

class RpcError : public std::runtime_error {
 public:
  RpcError(const std::string& call, const grpc::Status& status);
  grpc::StatusCode code() const { return code_; }
  /// Whether the status means the request was refused as bad input (invalid argument,
  /// not found, unauthenticated, failed precondition...), not that something failed.
  bool bad_input() const;

 private:
  grpc::StatusCode code_;
};

/// What to tune: the files of a run as `stipple tune` takes them.
struct SubmitSpec {
  std::string pipeline_file;
  std::vector<std::string> train_images, test_images;
  std::string dataset;        // instead of photos: a dataset the coordinator keeps, by name
  std::string baseline_file;  // a .sched; empty: the default schedule
  std::string strategy = "portfolio";
  int64_t budget = 600;
  uint64_t seed = 1;
  bool exact = false;
  int runs = 5;
  int population = 24;
  std::vector<double> thresholds;  // --thresholds; empty: the default levels
  std::string target;              // empty: the registered workers' target
};

/// Reads the files of `spec` into a request: the pipeline's source (compiled here too, so
/// a bad one fails before anything is sent, with its file:line:col) and IR, the photos'
/// bytes and hashes, the baseline's text. UserError for a file that cannot be read or a
/// pipeline or schedule that does not compile. The pipeline's warnings (a func the output
/// never uses, ...) are appended to `warnings` when it is given.
proto::SubmitRunRequest make_submit_request(const SubmitSpec& spec,
                                            std::vector<CompileWarning>* warnings = nullptr);

class CoordinatorClient {
 public:
  explicit CoordinatorClient(ClientOptions options);

  int64_t submit(const proto::SubmitRunRequest& request);
  /// Calls `on_progress` for every update until the run ends; returns the last one.
  proto::RunProgress watch(int64_t run_id,
                           const std::function<void(const proto::RunProgress&)>& on_progress = {});
  /// As watch(), through restarts of the coordinator: a stream that breaks UNAVAILABLE
  /// (the coordinator killed or draining), or that ends while the run is still running (a
  /// restarted coordinator that has not resumed it yet), is opened again with backoff, as
  /// long as the coordinator has been silent for less than `patience`. `on_retry` hears
  /// each wait's reason. Past the patience it throws the last RpcError, or returns the
  /// last update (still running).
  proto::RunProgress watch_through_restarts(
      int64_t run_id, const std::function<void(const proto::RunProgress&)>& on_progress,
      std::chrono::milliseconds patience,
      const std::function<void(const std::string& why)>& on_retry = {});
  /// The run's progress now (the first update of a watch).
  proto::RunProgress status(int64_t run_id);
  std::vector<proto::RunSummary> runs();
  proto::GetFrontResponse front(int64_t run_id);
  /// Returns the run's state after the cancel ("cancelled", or "done" for a run that had
  /// finished).
  std::string cancel(int64_t run_id);
  std::vector<proto::WorkerStatus> workers();
  /// The workers and the coordinator's job counts (queued, leased, re-dispatched...).
  proto::ListWorkersResponse pool_status();
  /// Measures the request's jobs on the cluster and returns their results; the call may
  /// take up to `timeout_s` (the workers measure meanwhile). cluster_evaluator.h wraps it
  /// as an Evaluator.
  proto::EvaluateResponse evaluate(const proto::EvaluateRequest& request, double timeout_s);

 private:
  ClientOptions options_;
  std::unique_ptr<proto::Coordinator::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context(bool deadline = true) const;
};

}  // namespace stipple::client
