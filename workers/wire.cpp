#include "workers/wire.h"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "compiler_core/support/base64.h"

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
          {"threads", s.threads},
          {"output_digests", s.output_digests},
          {"min_timed_ms", s.min_timed_ms}};
}

EvaluationSetup setup_from_json(const nlohmann::json& j) {
  EvaluationSetup s;
  s.pipeline_source = j.at("pipeline_source").get<std::string>();
  s.pipeline_file = j.at("pipeline_file").get<std::string>();
  for (const auto& [k, v] : j.at("params").items()) s.params[k] = v.get<double>();
  s.images = j.at("images").get<std::map<std::string, std::vector<std::string>>>();
  s.runs = j.at("runs").get<int>();
  s.threads = j.at("threads").get<int>();
  s.output_digests = j.value("output_digests", false);
  s.min_timed_ms = j.value("min_timed_ms", 0.0);
  return s;
}

nlohmann::json to_json(const EvaluationResult& r) {
  nlohmann::json images = nlohmann::json::array();
  for (const ImageMeasurement& m : r.images) {
    nlohmann::json image = {number(m.time_ms), number(m.error), number(m.psnr),
                            number(m.min_time_ms)};
    if (!m.output_digest.empty()) image.push_back(m.output_digest);
    images.push_back(std::move(image));
  }
  nlohmann::json j = {{"status", to_string(r.status)},
                      {"reason", r.reason},
                      {"compile_ms", number(r.compile_ms)},
                      {"images", images}};
  if (!r.object.empty()) {
    j["object"] = base64_encode(r.object);
    j["symbol"] = r.symbol;
  }
  return j;
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
    ImageMeasurement image;
    image.time_ms = number(m.at(0));
    image.error = number(m.at(1));
    image.psnr = number(m.at(2));
    image.min_time_ms = number(m.at(3));
    if (m.size() > 4) image.output_digest = m.at(4).get<std::string>();
    r.images.push_back(std::move(image));
  }
  if (j.contains("object")) {
    std::optional<std::string> object = base64_decode(j.at("object").get<std::string>());
    if (!object) throw std::runtime_error("a result whose code is not base64");
    r.object = std::move(*object);
    r.symbol = j.at("symbol").get<std::string>();
  }
  r.aggregate();
  return r;
}

nlohmann::json to_json(const CodeRequest& c) {
  nlohmann::json j = {{"schedule", c.schedule}};
  if (!c.object.empty()) {
    j["object"] = base64_encode(c.object);
    j["symbol"] = c.symbol;
  }
  if (c.keep_code) j["keep_code"] = true;
  return j;
}

CodeRequest code_request_from_json(const nlohmann::json& j) {
  CodeRequest c;
  c.schedule = j.at("schedule").get<std::string>();
  if (j.contains("object")) {
    std::optional<std::string> object = base64_decode(j.at("object").get<std::string>());
    if (!object) throw std::runtime_error("a request whose code is not base64");
    c.object = std::move(*object);
    c.symbol = j.at("symbol").get<std::string>();
  }
  c.keep_code = j.value("keep_code", false);
  return c;
}

}  // namespace stipple::workers::wire
