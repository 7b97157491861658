// Hill climbing as VizGen §6: start from up to 16 good initial guesses, then, from
// the best variant so far, propose one change at a time:
//   - add a random transformation (a perforation on a stage that has none, or a fusion
//     change)                                            25%
//   - mutate one transformation's parameters             20%
//   - delete one transformation (back to exact / root)   10%
//   - add one stage's choice from an initial guess       40%
//   - cross the variant with an initial guess             5%
// and keep a proposal when it is faster within the error threshold. One climb runs per
// error threshold (exact, then e.g. Delta E <= 1, 2, 5), so the climber yields one point
// of the front per threshold, not only the fastest exact variant. A climb stops after
// `max_variants` proposals, or after `patience` proposals without improvement.
#pragma once

#include <limits>
#include <map>
#include <random>

#include "search/strategy.h"
#include "search/strategy_registry.h"

namespace stipple::search {

struct HillClimbingOptions {
  std::vector<double> thresholds = {0, 1, 2, 5};
  int initial_guesses = 16;
  int max_variants = 1000;  // per threshold
  int patience = 200;       // per threshold: proposals without improvement before it stops
  int batch = 4;            // variants of the current best proposed together
  uint64_t seed = 1;
  std::vector<Schedule> seeds;  // among the initial guesses (the reuse model's schedule)
};

class HillClimbing : public Strategy {
 public:
  HillClimbing(const SearchSpace& space, HillClimbingOptions options);
  std::string name() const override { return "hill"; }
  std::vector<Candidate> propose(size_t max) override;
  void observe(const std::vector<Outcome>& outcomes) override;

  /// The best variant of each threshold's climb so far (empty text: none yet).
  struct Best {
    Genome genome;
    std::string text;
    Objectives objectives{std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::infinity()};
  };
  const std::vector<Best>& best() const { return best_; }

 private:
  struct Climb {
    int proposed = 0;
    int since_improvement = 0;
    bool finished = false;
  };
  const SearchSpace& space_;
  HillClimbingOptions options_;
  std::mt19937_64 rng_;
  std::vector<Genome> guesses_;  // the initial guesses
  bool guesses_proposed_ = false;
  std::vector<Best> best_;  // per threshold
  std::vector<Climb> climbs_;
  size_t next_climb_ = 0;  // round robin over the thresholds
  std::map<std::string, Objectives> measured_;
  std::map<std::string, Genome> genomes_;  // of proposed texts

  Genome variant(const Genome& from);
  void consider(const std::string& text, const Objectives& o);
};

/// "hill": one climb per threshold of the run's options, seeded with seed + 1 (a random
/// stream apart from the genetic search's in a portfolio).
StrategyInfo hill_strategy();

}  // namespace stipple::search
