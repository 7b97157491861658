// The genetic search of Image Perforation §5 (and §7's settings): a population of
// genomes (genome.h) evolved for a number of generations, with NSGA-II's selection (Deb
// et al. 2002) on time and error: binary tournaments on (non-domination rank, crowding
// distance), two-point crossover over the stage genes, mutation of one gene's method or
// parameters, and elitist survival of the best of parents and children.
//
// Why NSGA-II and not the paper's Sitthi-Amorn rule: both rank by Pareto dominance, but
// the paper's rule breaks ties by a random draw, and crowding spreads the survivors along
// the front, which is what a front of time versus error is for.
#pragma once

#include <map>
#include <random>

#include "search/strategy.h"
#include "search/strategy_registry.h"

namespace stipple::search {

struct GeneticOptions {
  int population = 100;   // the paper: 100
  int generations = 200;  // the paper: 200; the budget usually stops the run first
  double crossover_probability = 0.9;
  double extra_mutation_probability = 0.3;  // a second mutation after the first
  uint64_t seed = 1;
  /// Schedules the first population starts from (the reuse model's, a hand schedule).
  std::vector<Schedule> seeds;
};

class GeneticSearch : public Strategy {
 public:
  GeneticSearch(const SearchSpace& space, GeneticOptions options);
  std::string name() const override { return "genetic"; }
  std::vector<Candidate> propose(size_t max) override;
  void observe(const std::vector<Outcome>& outcomes) override;

  int generation() const { return generation_; }

 private:
  struct Individual {
    Genome genome;
    std::string text;
    Objectives objectives;
  };
  const SearchSpace& space_;
  GeneticOptions options_;
  std::mt19937_64 rng_;
  int generation_ = -1;                                 // -1: the first population is not drawn yet
  std::vector<Individual> population_;                  // survivors
  std::vector<Individual> offspring_;                   // the generation being measured
  std::vector<size_t> to_propose_;                      // indices into offspring_
  size_t awaited_ = 0;                                  // proposed, not yet observed
  std::map<std::string, Objectives> measured_;          // by schedule text
  std::map<std::string, std::vector<size_t>> waiting_;  // text -> offspring awaiting it

  void next_generation();
  void add_offspring(Genome g);
  void select_survivors();
  const Individual& tournament(const std::vector<int>& rank, const std::vector<double>& crowd);
};

/// "genetic": population, generations and seed from the run's options.
StrategyInfo genetic_strategy();

}  // namespace stipple::search
