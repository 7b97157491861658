#include "workers/wire.h"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace stipple::workers::wire {

nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.is_string() ? j.get<std::string>() : "nan";
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json to_json(const EvaluationSetup& s) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : s.params) params[k] = v;
  return {{"pipeline_source", s.pipeline_source},
          {"pipeline_file", s.pipeline_file},
          {"params", params},
          {"images", s.images},
          {"runs", s.runs},
          {"threads", s.threads}};
}

EvaluationSetup setup_from_json(const nlohmann::json& j) {
  EvaluationSetup s;
  s.pipeline_source = j.at("pipeline_source").get<std::string>();
  s.pipeline_file = j.at("pipeline_file").get<std::string>();
  for (const auto& [k, v] : j.at("params").items()) s.params[k] = v.get<double>();
  s.images = j.at("images").get<std::map<std::string, std::vector<std::string>>>();
  s.runs = j.at("runs").get<int>();
  s.threads = j.at("threads").get<int>();
  return s;
}

nlohmann::json to_json(const EvaluationResult& r) {
  nlohmann::json images = nlohmann::json::array();
  for (const ImageMeasurement& m : r.images) {
    images.push_back({number(m.time_ms), number(m.error), number(m.psnr)});
  }
  return {{"status", to_string(r.status)},
          {"reason", r.reason},
          {"compile_ms", number(r.compile_ms)},
          {"images", images}};
}

EvaluationResult result_from_json(const nlohmann::json& j) {
  EvaluationResult r;
  const std::string status = j.at("status").get<std::string>();
  const std::optional<EvaluationStatus> parsed = parse_evaluation_status(status);
  if (!parsed) throw std::runtime_error("a result with an unknown status '" + status + "'");
  r.status = *parsed;
  r.reason = j.at("reason").get<std::string>();
  r.compile_ms = number(j.at("compile_ms"));
  for (const nlohmann::json& m : j.at("images")) {
    r.images.push_back({number(m.at(0)), number(m.at(1)), number(m.at(2))});
  }
  r.aggregate();
  return r;
}

}  // namespace stipple::workers::wire
