#include "search/strategy_registry.h"

#include "compiler_core/ir/error.h"
#include "search/genetic.h"
#include "search/hill_climbing.h"
#include "search/portfolio.h"

namespace stipple::search {

const std::vector<StrategyInfo>& strategies() {
  // One line per strategy (kept so by hand: clang-format would pack them); the first is
  // the default (kDefaultStrategy).
  // clang-format off
  static const std::vector<StrategyInfo> table = {
      portfolio_strategy(),
      genetic_strategy(),
      hill_strategy(),
      reuse_strategy(),
  };
  // clang-format on
  return table;
}

const StrategyInfo* find_strategy(const std::string& name) {
  for (const StrategyInfo& s : strategies()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const StrategyInfo& strategy_info(const std::string& name) {
  const StrategyInfo* s = find_strategy(name);
  if (!s) throw UserError("unknown strategy '" + name + "'");
  return *s;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const StrategyInfo& s : strategies()) names.push_back(s.name);
  return names;
}

std::string strategy_help() {
  std::string text;
  for (const StrategyInfo& s : strategies()) {
    text += (text.empty() ? "" : ", ") + s.name + " (" + s.description + ")";
  }
  return text;
}

}  // namespace stipple::search
