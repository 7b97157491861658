#include "search/hill_climbing.h"

#include <algorithm>
#include <limits>

#include "search/tune_options.h"

namespace stipple::search {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_transformed(const StageGene& s) { return s.perforation.kind != PerforationKind::None; }

}  // namespace

HillClimbing::HillClimbing(const SearchSpace& space, HillClimbingOptions options)
    : space_(space), options_(std::move(options)), rng_(options_.seed) {
  if (options_.thresholds.empty()) options_.thresholds = {0};
  best_.resize(options_.thresholds.size());
  climbs_.resize(options_.thresholds.size());
  // Good initial guesses: the seeds, the exact genome, and the exact genome with one
  // stage perforated (each stage in turn), then random genomes to fill up.
  for (const Schedule& s : options_.seeds) guesses_.push_back(space_.encode(s));
  Genome exact = space_.exact_genome();
  guesses_.push_back(exact);
  for (size_t i = 0; i < exact.stages.size() && int(guesses_.size()) < options_.initial_guesses;
       ++i) {
    Genome g = exact;
    space_.randomize_perforation(g.stages[i], rng_);
    if (is_transformed(g.stages[i])) guesses_.push_back(g);
  }
  while (int(guesses_.size()) < options_.initial_guesses) {
    guesses_.push_back(space_.random_genome(rng_));
  }
  guesses_.resize(std::min<size_t>(guesses_.size(), size_t(std::max(1, options_.initial_guesses))));
}

Genome HillClimbing::variant(const Genome& from) {
  Genome g = from;
  if (g.stages.empty()) return g;
  std::uniform_int_distribution<size_t> stage(0, g.stages.size() - 1);
  const double r = std::uniform_real_distribution<>(0, 1)(rng_);
  std::vector<size_t> transformed;
  for (size_t i = 0; i < g.stages.size(); ++i) {
    if (is_transformed(g.stages[i])) transformed.push_back(i);
  }
  auto any_transformed = [&] {
    return transformed[std::uniform_int_distribution<size_t>(0, transformed.size() - 1)(rng_)];
  };
  if (r < 0.25) {  // add a random transformation
    StageGene& s = g.stages[stage(rng_)];
    if (space_.options().allow_perforation && !is_transformed(s) &&
        std::uniform_real_distribution<>(0, 1)(rng_) < 0.6) {
      space_.randomize_perforation(s, rng_);
    } else {
      space_.randomize_fusion(s, rng_);
    }
  } else if (r < 0.45) {  // mutate one
    space_.mutate(g, rng_);
  } else if (r < 0.55) {  // delete one
    if (!transformed.empty()) {
      g.stages[any_transformed()].perforation = PerforationGene{};
    } else {
      StageGene& s = g.stages[stage(rng_)];
      s.fusion.compute = ComputeChoice::Root;
    }
  } else if (r < 0.95) {  // add one from the initial guesses
    const Genome& guess =
        guesses_[std::uniform_int_distribution<size_t>(0, guesses_.size() - 1)(rng_)];
    const size_t i = stage(rng_);
    if (i < guess.stages.size()) g.stages[i] = guess.stages[i];
  } else {  // cross with an initial guess
    const Genome& guess =
        guesses_[std::uniform_int_distribution<size_t>(0, guesses_.size() - 1)(rng_)];
    g = space_.crossover(g, guess, rng_).first;
  }
  return g;
}

std::vector<Candidate> HillClimbing::propose(size_t max) {
  std::vector<Candidate> out;
  auto add = [&](const Decoded& d) {
    if (measured_.count(d.text) || genomes_.count(d.text)) return false;
    genomes_[d.text] = d.genome;
    out.push_back({d.text, d.genome, name()});
    return true;
  };
  if (!guesses_proposed_) {
    guesses_proposed_ = true;
    for (const Genome& g : guesses_) {
      if (out.size() >= max) break;
      add(space_.decode(g));
    }
    if (!out.empty()) return out;
  }
  // One batch per call, from the climb whose turn it is (skipping finished ones).
  for (size_t tries = 0; tries < climbs_.size() && out.empty(); ++tries) {
    const size_t c = next_climb_;
    next_climb_ = (next_climb_ + 1) % climbs_.size();
    Climb& climb = climbs_[c];
    if (climb.finished) continue;
    // A climb without a variant within its threshold yet starts from the most accurate
    // one (the exact genome when nothing is measured).
    Genome from = best_[c].text.empty() ? space_.exact_genome() : best_[c].genome;
    const size_t want = std::min<size_t>(max, size_t(std::max(1, options_.batch)));
    for (int attempt = 0; out.size() < want && attempt < 50; ++attempt) {
      if (add(space_.decode(variant(from)))) {
        ++climb.proposed;
        ++climb.since_improvement;
      }
    }
    if (climb.proposed >= options_.max_variants || climb.since_improvement >= options_.patience) {
      climb.finished = true;
    }
  }
  return out;
}

void HillClimbing::consider(const std::string& text, const Objectives& o) {
  for (size_t c = 0; c < best_.size(); ++c) {
    if (!(o.error <= options_.thresholds[c])) continue;
    if (o.time < best_[c].objectives.time) {
      best_[c].objectives = o;
      best_[c].text = text;
      best_[c].genome = genomes_.count(text) ? genomes_[text] : Genome{};
      climbs_[c].since_improvement = 0;
    }
  }
}

void HillClimbing::observe(const std::vector<Outcome>& outcomes) {
  for (const Outcome& o : outcomes) {
    const Objectives value = o.ok ? o.objectives : Objectives{kInf, kInf};
    measured_[o.candidate.schedule] = value;
    if (o.ok) consider(o.candidate.schedule, value);
  }
}

StrategyInfo hill_strategy() {
  return {"hill", "hill climbing, one climb per error threshold", false,
          [](const StrategyContext& c) {
            HillClimbingOptions h;
            h.thresholds = c.options.thresholds;
            h.seed = c.options.seed + 1;
            h.seeds = c.seeds;
            return std::make_unique<HillClimbing>(c.space, h);
          }};
}

}  // namespace stipple::search
