#include "search/genetic.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "search/tune_options.h"

namespace stipple::search {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

GeneticSearch::GeneticSearch(const SearchSpace& space, GeneticOptions options)
    : space_(space), options_(std::move(options)), rng_(options_.seed) {
  options_.population = std::max(options_.population, 2);
}

void GeneticSearch::add_offspring(Genome g) {
  Decoded d = space_.decode(g);
  Individual ind{std::move(d.genome), std::move(d.text), {kInf, kInf}};
  const size_t index = offspring_.size();
  auto known = measured_.find(ind.text);
  offspring_.push_back(ind);
  if (known != measured_.end()) {
    // Measured in an earlier generation: no budget is spent on it again.
    offspring_[index].objectives = known->second;
    return;
  }
  auto& waiters = waiting_[offspring_[index].text];
  if (waiters.empty()) to_propose_.push_back(index);
  waiters.push_back(index);
}

void GeneticSearch::next_generation() {
  ++generation_;
  offspring_.clear();
  if (generation_ == 0) {
    for (const Schedule& s : options_.seeds) add_offspring(space_.encode(s));
    add_offspring(space_.exact_genome());
    // Random genomes; a few more draws than slots, since some decode to schedules
    // already drawn.
    for (int tries = 0;
         int(offspring_.size()) < options_.population && tries < 20 * options_.population;
         ++tries) {
      Genome g = space_.random_genome(rng_);
      Decoded d = space_.decode(g);
      bool duplicate = false;
      for (const Individual& o : offspring_) duplicate = duplicate || o.text == d.text;
      if (!duplicate) add_offspring(d.genome);
    }
    return;
  }
  std::vector<Objectives> obj;
  for (const Individual& i : population_) obj.push_back(i.objectives);
  std::vector<int> rank = nondominated_ranks(obj);
  std::vector<double> crowd = crowding_distances(obj, rank);
  while (int(offspring_.size()) < options_.population) {
    Genome a = tournament(rank, crowd).genome;
    Genome b = tournament(rank, crowd).genome;
    if (std::uniform_real_distribution<>(0, 1)(rng_) < options_.crossover_probability) {
      std::tie(a, b) = space_.crossover(a, b, rng_);
    }
    for (Genome* g : {&a, &b}) {
      space_.mutate(*g, rng_);
      if (std::uniform_real_distribution<>(0, 1)(rng_) < options_.extra_mutation_probability) {
        space_.mutate(*g, rng_);
      }
      if (int(offspring_.size()) < options_.population) add_offspring(*g);
    }
  }
}

const GeneticSearch::Individual& GeneticSearch::tournament(const std::vector<int>& rank,
                                                           const std::vector<double>& crowd) {
  std::uniform_int_distribution<size_t> d(0, population_.size() - 1);
  const size_t a = d(rng_), b = d(rng_);
  if (rank[a] != rank[b]) return population_[rank[a] < rank[b] ? a : b];
  return population_[crowd[a] >= crowd[b] ? a : b];
}

void GeneticSearch::select_survivors() {
  std::vector<Individual> all = population_;
  for (const Individual& o : offspring_) {
    bool duplicate = false;
    for (const Individual& a : all) duplicate = duplicate || a.text == o.text;
    if (!duplicate) all.push_back(o);
  }
  std::vector<Objectives> obj;
  for (const Individual& i : all) obj.push_back(i.objectives);
  std::vector<int> rank = nondominated_ranks(obj);
  std::vector<double> crowd = crowding_distances(obj, rank);
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (rank[a] != rank[b]) return rank[a] < rank[b];
    return crowd[a] > crowd[b];
  });
  population_.clear();
  for (size_t k = 0; k < order.size() && int(population_.size()) < options_.population; ++k) {
    population_.push_back(all[order[k]]);
  }
}

std::vector<Candidate> GeneticSearch::propose(size_t max) {
  // A generation is measured completely before the next one is bred.
  while (to_propose_.empty() && awaited_ == 0) {
    if (generation_ >= 0) select_survivors();
    if (generation_ + 1 >= options_.generations) return {};
    next_generation();
  }
  std::vector<Candidate> out;
  while (!to_propose_.empty() && out.size() < max) {
    const Individual& ind = offspring_[to_propose_.front()];
    to_propose_.erase(to_propose_.begin());
    out.push_back({ind.text, ind.genome, name()});
    ++awaited_;
  }
  return out;
}

void GeneticSearch::observe(const std::vector<Outcome>& outcomes) {
  for (const Outcome& o : outcomes) {
    const Objectives value = o.ok ? o.objectives : Objectives{kInf, kInf};
    measured_[o.candidate.schedule] = value;
    auto it = waiting_.find(o.candidate.schedule);
    if (it != waiting_.end()) {
      for (size_t i : it->second) offspring_[i].objectives = value;
      waiting_.erase(it);
    }
    if (awaited_ > 0) --awaited_;
  }
}

StrategyInfo genetic_strategy() {
  return {"genetic", "NSGA-II genetic search over fusion and perforation genes", false,
          [](const StrategyContext& c) {
            GeneticOptions g;
            g.population = c.options.population;
            g.generations = c.options.generations;
            g.seed = c.options.seed;
            g.seeds = c.seeds;
            return std::make_unique<GeneticSearch>(c.space, g);
          }};
}

}  // namespace stipple::search
