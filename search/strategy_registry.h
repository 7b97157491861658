// The search strategies by name: the one list that `stipple tune`, `stipple submit` (their
// --strategy check and --help text), the coordinator's submit validation and the tuning
// session read. A strategy is a file pair that defines its class and a function returning
// its StrategyInfo, plus one line in strategies.def, which both this registry and the
// build read.
//
// An explicit table, not self-registering statics: an object file of a static library
// that only holds a registrar is dropped by the linker when nothing references it, and
// the strategy would silently vanish from the binary.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler_core/schedule/schedule.h"
#include "search/strategy.h"

namespace stipple::search {

class SearchSpace;
struct TuneOptions;

/// What a strategy is built from: what the tuning session knows when the search starts.
struct StrategyContext {
  const SearchSpace& space;
  const TuneOptions& options;
  /// Schedules to start from: the baseline (when it is a hand schedule), then the reuse
  /// model's schedule (when it was computed).
  std::vector<Schedule> seeds;
  /// The reuse model's schedule as text; empty unless the strategy uses the reuse model
  /// or options.use_reuse_seed is set.
  std::string reuse_schedule;
};

struct StrategyInfo {
  std::string name;         // as given to --strategy and stored with the run
  std::string description;  // a few words, for --help
  /// The session computes the reuse model's schedule before building it.
  bool uses_reuse_model = false;
  std::function<std::unique_ptr<Strategy>(const StrategyContext&)> make;
};

/// Every strategy, in the order --help lists them.
const std::vector<StrategyInfo>& strategies();
/// The strategy called `name`, or nullptr.
const StrategyInfo* find_strategy(const std::string& name);
/// The strategy called `name`; a UserError ("unknown strategy 'x'") when there is none.
const StrategyInfo& strategy_info(const std::string& name);
std::vector<std::string> strategy_names();
/// "portfolio (the reuse model's ...), genetic (...), ...": for --help.
std::string strategy_help();

}  // namespace stipple::search
