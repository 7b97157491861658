#include "search/tune_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "compiler_core/ir/error.h"

namespace stipple::search {

std::string TuneOptions::to_json() const {
  nlohmann::json j = {{"pipeline_file", pipeline_file},
                      {"train_images", train_images},
                      {"test_images", test_images},
                      {"strategy", strategy},
                      {"budget", budget},
                      {"time_budget_s", time_budget_s},
                      {"seed", seed},
                      {"exact_only", exact_only},
                      {"batch", batch},
                      {"runs", runs},
                      {"threads", threads},
                      {"deadline_s", deadline_s},
                      {"baseline_schedule", baseline_schedule},
                      {"population", population},
                      {"use_reuse_seed", use_reuse_seed},
                      {"warm_start", warm_start},
                      {"generations", generations},
                      {"thresholds", thresholds},
                      {"cluster", cluster}};
  return j.dump();
}

std::vector<double> with_exact_threshold(std::vector<double> levels) {
  std::sort(levels.begin(), levels.end());
  for (size_t i = 0; i < levels.size(); ++i) {
    if (!std::isfinite(levels[i]) || levels[i] <= 0) {
      throw UserError(
          "--thresholds: each level must be a number > 0 (exact, 0, is always "
          "included), not " +
          fmt::format("{}", levels[i]));
    }
    if (i > 0 && levels[i] == levels[i - 1]) {
      throw UserError(fmt::format("--thresholds: {} is given twice", levels[i]));
    }
  }
  levels.insert(levels.begin(), 0);
  return levels;
}

TuneOptions TuneOptions::from_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  TuneOptions o;
  o.pipeline_file = j.at("pipeline_file");
  o.train_images = j.at("train_images").get<std::vector<std::string>>();
  o.test_images = j.at("test_images").get<std::vector<std::string>>();
  o.strategy = j.at("strategy");
  o.budget = j.at("budget");
  o.time_budget_s = j.at("time_budget_s");
  o.seed = j.at("seed");
  o.exact_only = j.at("exact_only");
  o.batch = j.at("batch");
  o.runs = j.at("runs");
  o.threads = j.at("threads");
  o.deadline_s = j.at("deadline_s");
  o.baseline_schedule = j.at("baseline_schedule");
  o.population = j.at("population");
  o.use_reuse_seed = j.value("use_reuse_seed", false);
  o.warm_start = j.value("warm_start", std::vector<std::string>{});
  o.generations = j.at("generations");
  o.thresholds = j.at("thresholds").get<std::vector<double>>();
  o.cluster = j.value("cluster", false);
  return o;
}

}  // namespace stipple::search
