// The interface every search strategy implements (genetic, hill climbing, the reuse model,
// the portfolio of the three): propose a batch of schedules, take their measurements. A
// strategy never measures anything itself and never knows where a candidate runs
// (the design: the same Evaluator serves `stipple tune` and the cluster).
//
// Strategies are deterministic given their seed and the outcomes they are shown, so that
// a tuning run that is resumed replays to the same proposals, and the evaluations stored
// before an interruption answer them without being measured again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/genome.h"
#include "search/pareto.h"

namespace stipple::search {

struct Candidate {
  std::string schedule;          // the schedule's text (checked)
  std::optional<Genome> genome;  // when the strategy works on genomes
  std::string strategy;          // the strategy that proposed it (the portfolio routes by it)
};

struct Outcome {
  Candidate candidate;
  bool ok = false;        // measured without failure
  Objectives objectives;  // on the training images; infinite when !ok
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  /// Up to `max` new candidates. Empty when the strategy has finished (it has nothing
  /// left to propose, or is waiting for no outcome).
  virtual std::vector<Candidate> propose(size_t max) = 0;
  /// The outcomes of candidates this strategy proposed (each exactly once).
  virtual void observe(const std::vector<Outcome>& outcomes) = 0;
};

}  // namespace stipple::search
