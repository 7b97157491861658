// ClusterEvaluator: an Evaluator whose measurements are made on the tuning cluster for a
// client that keeps its own database (`stipple nightly run --coordinator`, issue #29).
// Each batch is one Evaluate call: one job per schedule, or per group of code requests
// (workers/evaluator.h CodeRequest::group: a variant beside its baseline's code, measured
// in one process on one machine), only on workers of the target, and only on `host` when
// one is named, so that a night's timings all come from one machine. The photos' bytes go
// with the first call only; later calls name them by hash (and send them again should a
// coordinator have lost them).
#pragma once

#include <string>
#include <vector>

#include "client/coordinator_client.h"
#include "workers/evaluator.h"

namespace stipple::client {

struct ClusterEvaluatorOptions {
  std::string target;  // the workers' target key
  std::string host;    // empty: any worker of the target (then host() is "cluster")
  /// The most one request (a schedule, or one code request of a job) may take: a batch's
  /// call waits a minute more than this for each.
  double job_seconds = 60;
};

class ClusterEvaluator : public workers::Evaluator {
 public:
  /// Reads the setup's photos (UserError for one that cannot be read).
  ClusterEvaluator(CoordinatorClient& client, const workers::EvaluationSetup& setup,
                   ClusterEvaluatorOptions options);

  std::vector<workers::EvaluationResult> evaluate(const std::vector<std::string>& schedules,
                                                  const std::string& split,
                                                  double give_up_ms) override;
  std::vector<workers::EvaluationResult> evaluate_code(
      const std::vector<workers::CodeRequest>& requests, const std::string& split) override;
  std::string host() const override { return options_.host.empty() ? "cluster" : options_.host; }
  std::string target() const override { return options_.target; }

 private:
  /// The call, with the photos' bytes the first time or when the coordinator lacks them.
  /// Throws RpcError; a result measured on another host than asked is a runtime_error.
  proto::EvaluateResponse call(proto::EvaluateRequest request);

  CoordinatorClient& client_;
  ClusterEvaluatorOptions options_;
  proto::EvaluateRequest setup_;     // the setup's fields and the photos' refs
  std::vector<std::string> photos_;  // their bytes, parallel to setup_.images
  bool photos_sent_ = false;
};

}  // namespace stipple::client
