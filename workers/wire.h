// The line protocol between LocalEvaluator and its child, stipple-evaluator: one JSON
// object per line on the child's stdin and stdout.
//   parent -> child  {"setup": {...EvaluationSetup...}}            once, first
//   child -> parent  {"ready": true} | {"fatal": "reason"}
//   parent -> child  {"id": N, "split": "train", "schedule": "..."}
//                    (+ "object": base64, "symbol": S to time stored code; "keep_code":
//                    true for the code in the result, as "object" and "symbol")
//   child -> parent  {"id": N, "result": {...EvaluationResult...}}
//   child -> parent  {"phase":"waiting", "lock": PATH, "holders": "pid N (cmd), ..."}
//                    ... {"phase":"running"}   around a wait for the host's benchmark
//                    lock, before a job's answer or the ready line
// A result's images are arrays [median ms, error, psnr, fastest ms, output digest (only
// when the setup asks for digests)].
// Non-finite doubles (a PSNR of identical outputs) travel as the strings "inf", "-inf"
// and "nan", which JSON has no numbers for.
#pragma once

#include <nlohmann/json.hpp>

#include "workers/evaluator.h"

namespace stipple::workers::wire {

nlohmann::json number(double v);
double number(const nlohmann::json& j);

nlohmann::json to_json(const EvaluationSetup& s);
EvaluationSetup setup_from_json(const nlohmann::json& j);
nlohmann::json to_json(const EvaluationResult& r);
/// Throws std::runtime_error for a status word that evaluation_status.h does not know.
EvaluationResult result_from_json(const nlohmann::json& j);
/// A request's fields ("schedule", and "object", "symbol", "keep_code" when set), which
/// a job line carries beside its id and split.
nlohmann::json to_json(const CodeRequest& c);
CodeRequest code_request_from_json(const nlohmann::json& j);

}  // namespace stipple::workers::wire
