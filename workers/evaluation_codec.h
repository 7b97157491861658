// The cluster's messages of an evaluation (proto/coordinator.proto) and the Evaluator's
// structs (evaluator.h), both ways: one home for what the worker sends, the coordinator
// checks and passes on, and a cluster client reads back.
#pragma once

#include <string>

#include "proto/coordinator.pb.h"
#include "workers/evaluator.h"

namespace stipple::workers {

/// A result as a worker reports it (code_results are not filled: a code job's parts are
/// each converted alone).
proto::JobResult to_proto(const std::string& job_id, const EvaluationResult& r);
/// The result a message holds, its means taken (EvaluationResult::aggregate). The status
/// word must be known (checked before: the coordinator refuses a result that is not);
/// an unknown one reads as Error.
EvaluationResult from_proto(const proto::JobResult& m);

proto::CodeRequest to_proto(const CodeRequest& c);
CodeRequest from_proto(const proto::CodeRequest& m);

}  // namespace stipple::workers
