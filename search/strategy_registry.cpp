#include "search/strategy_registry.h"

#include "compiler_core/ir/error.h"

namespace stipple::search {

// Each strategy's StrategyInfo, defined in its own file (strategies.def).
#define STIPPLE_STRATEGY(name, file) StrategyInfo name##_strategy();
#include "search/strategies.def"
#undef STIPPLE_STRATEGY

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> table = {
#define STIPPLE_STRATEGY(name, file) name##_strategy(),
#include "search/strategies.def"
#undef STIPPLE_STRATEGY
  };
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
