#include "search/portfolio.h"

#include <algorithm>
#include <map>

namespace stipple::search {

std::vector<Candidate> FixedSchedules::propose(size_t max) {
  std::vector<Candidate> out;
  while (next_ < schedules_.size() && out.size() < max) {
    out.push_back({schedules_[next_++], std::nullopt, name_});
  }
  return out;
}

Portfolio::Portfolio(std::vector<std::unique_ptr<Strategy>> members)
    : members_(std::move(members)), finished_(members_.size(), false) {}

std::vector<Candidate> Portfolio::propose(size_t max) {
  std::vector<Candidate> out;
  // Members in turn, one candidate each per round, until the batch is full or every
  // member has finished. A member proposes only once per call, with the batch share it
  // gets, so that its batches stay whole (the genetic search and the climber propose
  // related candidates together).
  const size_t n = members_.size();
  size_t active = 0;
  for (size_t i = 0; i < n; ++i) active += finished_[i] ? 0 : 1;
  for (size_t visited = 0; visited < n && out.size() < max && active > 0; ++visited) {
    const size_t m = turn_;
    turn_ = (turn_ + 1) % n;
    if (finished_[m]) continue;
    const size_t share = std::max<size_t>(1, (max - out.size() + active - 1) / active);
    std::vector<Candidate> got = members_[m]->propose(std::min(share, max - out.size()));
    if (got.empty()) {
      finished_[m] = true;
      --active;
      continue;
    }
    for (Candidate& c : got) out.push_back(std::move(c));
  }
  return out;
}

void Portfolio::observe(const std::vector<Outcome>& outcomes) {
  std::map<std::string, std::vector<Outcome>> by_member;
  for (const Outcome& o : outcomes) by_member[o.candidate.strategy].push_back(o);
  for (auto& member : members_) {
    auto it = by_member.find(member->name());
    if (it != by_member.end()) member->observe(it->second);
  }
}

StrategyInfo portfolio_strategy() {
  return {"portfolio",
          "the reuse model's schedule, genetic search and hill climbing sharing the budget", true,
          [](const StrategyContext& c) {
            std::vector<std::unique_ptr<Strategy>> members;
            for (const char* member : {"reuse", "genetic", "hill"}) {
              members.push_back(strategy_info(member).make(c));
            }
            return std::make_unique<Portfolio>(std::move(members));
          }};
}

StrategyInfo reuse_strategy() {
  return {"reuse", "the reuse model's schedule alone, against the baseline", true,
          [](const StrategyContext& c) {
            return std::make_unique<FixedSchedules>("reuse",
                                                    std::vector<std::string>{c.reuse_schedule});
          }};
}

}  // namespace stipple::search
