// The portfolio (the default strategy of `stipple tune`): several strategies in one run,
// sharing one evaluation budget. Each batch is filled from the members in turn, so that
// every member gets about the same share of the budget while it has proposals; a member
// that has finished gives its share to the others. Outcomes go back to the member that
// proposed them.
//
// FixedSchedules proposes a given list of schedules once: the reuse model's schedule
// (computed without measuring, search/reuse/) enters a run through it.
#pragma once

#include <memory>

#include "search/strategy.h"
#include "search/strategy_registry.h"

namespace stipple::search {

class FixedSchedules : public Strategy {
 public:
  FixedSchedules(std::string name, std::vector<std::string> schedules)
      : name_(std::move(name)), schedules_(std::move(schedules)) {}
  std::string name() const override { return name_; }
  std::vector<Candidate> propose(size_t max) override;
  void observe(const std::vector<Outcome>&) override {}

 private:
  std::string name_;
  std::vector<std::string> schedules_;
  size_t next_ = 0;
};

class Portfolio : public Strategy {
 public:
  explicit Portfolio(std::vector<std::unique_ptr<Strategy>> members);
  std::string name() const override { return "portfolio"; }
  std::vector<Candidate> propose(size_t max) override;
  void observe(const std::vector<Outcome>& outcomes) override;

 private:
  std::vector<std::unique_ptr<Strategy>> members_;
  std::vector<bool> finished_;
  size_t turn_ = 0;
};

/// "portfolio": the reuse model's schedule, then the registry's genetic search and hill
/// climbing, sharing the budget.
StrategyInfo portfolio_strategy();
/// "reuse": the reuse model's schedule alone, measured against the baseline.
StrategyInfo reuse_strategy();

}  // namespace stipple::search
