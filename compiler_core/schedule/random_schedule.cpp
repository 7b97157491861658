// Random legal schedules. Funcs are scheduled consumers first (the output, then funcs
// whose users are all scheduled), so that when a func's levels are drawn, the loops of
// every func that uses it are final. Each draw is checked with the checker's own rules
// (check_schedule for levels, apply_stage_directive for directives) and dropped when
// rejected, so legality never depends on the generator duplicating those rules.
#include "compiler_core/schedule/random_schedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_loops.h"

namespace stipple {

// Reverse post-order of a depth-first walk from the output; then the rest.
std::vector<const Func*> consumers_first(const Pipeline& p) {
  std::map<std::string, std::set<std::string>> callees;
  for (const Func& f : p.funcs) {
    std::set<std::string> calls = called_funcs(f);
    calls.erase(f.name);
    callees[f.name] = calls;
  }
  std::vector<const Func*> post;
  std::set<std::string> seen;
  // Iterative, so that long chains of funcs cannot overflow the stack.
  auto walk = [&](const Func* root) {
    std::vector<std::pair<const Func*, bool>> todo{{root, false}};
    while (!todo.empty()) {
      auto [cur, expanded] = todo.back();
      todo.pop_back();
      if (expanded) {
        post.push_back(cur);
        continue;
      }
      if (!seen.insert(cur->name).second) continue;
      todo.push_back({cur, true});
      for (const std::string& c : callees[cur->name]) {
        const Func* g = p.find_func(c);
        if (g && !seen.count(c)) todo.push_back({g, false});
      }
    }
  };
  if (const Func* out = p.find_func(p.output.func)) walk(out);
  std::vector<const Func*> reached = post;
  std::reverse(reached.begin(), reached.end());
  post.clear();
  for (const Func& f : p.funcs) walk(&f);  // the rest, which the output does not use
  std::reverse(post.begin(), post.end());
  reached.insert(reached.end(), post.begin(), post.end());
  return reached;
}

namespace {

class Generator {
 public:
  Generator(const Pipeline& p, std::mt19937_64& rng, const RandomScheduleOptions& o)
      : p_(p), rng_(rng), o_(o), source_("", "<random schedule>"), s_(o.base) {}

  Schedule run() {
    std::vector<const Func*> order = consumers_first(p_);
    for (const Func* f : order) {
      schedule_levels(*f);
      if (effective_compute_level(s_, p_, *f).kind != LevelKind::Inline) {
        for (int st = 0; st < stage_count(*f); ++st) schedule_stage(*f, st);
      }
      done_.push_back(f);
    }
    for (auto it = s_.funcs.begin(); it != s_.funcs.end();) {
      const FuncSchedule& fs = it->second;
      it = (!fs.compute && !fs.store && fs.stages.empty()) ? s_.funcs.erase(it) : std::next(it);
    }
    check_schedule(s_, p_);  // a rejection here is a generator bug: let it propagate
    return s_;
  }

 private:
  bool chance(double prob) { return std::uniform_real_distribution<double>(0, 1)(rng_) < prob; }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  bool legal() {
    try {
      check_schedule(s_, p_);
      return true;
    } catch (const UserError&) {
      return false;
    }
  }

  // Every named loop of every stage of the funcs scheduled so far that has loops.
  std::vector<LoopLevel> loop_levels() {
    std::vector<LoopLevel> out;
    for (const Func* g : done_) {
      if (effective_compute_level(s_, p_, *g).kind == LevelKind::Inline) continue;
      for (int st = 0; st < stage_count(*g); ++st) {
        StageLoopNest n = stage_loop_nest(s_, p_, *g, st, source_);
        for (const Loop& l : n.loops) {
          if (l.name.find('.') == std::string::npos)
            out.push_back(LoopLevel::at(g->name, st, l.name));
        }
      }
    }
    return out;
  }

  // Tries the candidates in random order; keeps the first legal one, else leaves it unset.
  void try_levels(std::optional<LoopLevel>& slot, std::vector<LoopLevel> candidates) {
    std::shuffle(candidates.begin(), candidates.end(), rng_);
    for (const LoopLevel& l : candidates) {
      slot = l;
      if (legal()) return;
    }
    slot.reset();
  }

  void schedule_levels(const Func& f) {
    FuncSchedule& fs = s_.funcs[f.name];
    if (f.name == p_.output.func) {
      if (chance(0.2)) fs.compute = LoopLevel::root();
      if (chance(0.1)) fs.store = LoopLevel::root();
      return;
    }
    if (!chance(o_.level_probability)) return;
    std::vector<LoopLevel> candidates = loop_levels();
    candidates.push_back(LoopLevel::root());
    if (f.updates.empty()) candidates.push_back(LoopLevel::inlined());
    try_levels(fs.compute, candidates);
    if (!fs.compute || fs.compute->kind == LevelKind::Inline || !chance(o_.store_probability))
      return;
    std::vector<LoopLevel> stores = loop_levels();
    stores.push_back(LoopLevel::root());
    try_levels(fs.store, stores);
  }

  std::string fresh(const StageLoopNest& n, const std::string& base) {
    while (true) {
      std::string name = base + std::to_string(counter_++);
      if (std::find(n.ever.begin(), n.ever.end(), name) == n.ever.end()) return name;
    }
  }

  Directive random_directive(const StageLoopNest& n) {
    std::vector<std::string> named, splittable;
    for (const Loop& l : n.loops) {
      if (l.name.find('.') != std::string::npos) continue;
      named.push_back(l.name);
      if (!extreme_loops_.count(l.name)) splittable.push_back(l.name);
    }
    Directive d;
    if (named.empty()) return d;
    auto pick = [&] { return named[uniform(0, static_cast<int>(named.size()) - 1)]; };
    // The loops of an extreme split are not split again (nor tiled, unrolled, vectorised
    // or reordered): a split of a shift_inwards inner loop iterates over the whole factor,
    // guarded, not over the extent it is clamped to, and 2^24 iterations per point would
    // make the property tests take hours.
    auto pick_splittable = [&] {
      return splittable[uniform(0, static_cast<int>(splittable.size()) - 1)];
    };
    auto name = [](const std::string& s) { return ScheduleArg::make_name(s); };
    auto integer = [](int64_t v) { return ScheduleArg::make_int(v); };
    static const char* kTails[] = {"auto", "round_up", "guard_with_if", "shift_inwards"};
    // Extreme factors (RandomScheduleOptions::extreme_factor_probability), drawn only when
    // asked so that the default draws stay the same.
    const bool extreme = o_.extreme_factor_probability > 0 && chance(o_.extreme_factor_probability);
    auto factor = [&] {
      if (!extreme) return integer(uniform(1, o_.max_factor));
      static const int64_t kExtremes[] = {kMaxSplitFactor, kMaxSplitFactor - 1, (1 << 20) + 1};
      return integer(kExtremes[uniform(0, 2)]);
    };
    switch (uniform(0, 5)) {
      case 0: {
        if (splittable.empty()) return d;
        std::string v = pick_splittable();
        d.name = "split";
        d.args = {name(v), name(chance(0.25) ? v : fresh(n, v + "o")), name(fresh(n, v + "i")),
                  factor()};
        if (extreme) {
          d.args.push_back(name("shift_inwards"));
        } else if (chance(0.2)) {
          d.args.push_back(name(kTails[uniform(0, 3)]));
        }
        break;
      }
      case 1: {
        if (splittable.size() < 2) return d;
        std::shuffle(splittable.begin(), splittable.end(), rng_);
        const std::string &x = splittable[0], &y = splittable[1];
        d.name = "tile";
        d.args = {name(x),
                  name(y),
                  name(fresh(n, x + "o")),
                  name(fresh(n, y + "o")),
                  name(fresh(n, x + "i")),
                  name(fresh(n, y + "i")),
                  factor(),
                  factor()};
        if (extreme) {
          d.args.push_back(name("shift_inwards"));
        } else if (chance(0.1)) {
          d.args.push_back(name(kTails[uniform(0, 3)]));
        }
        break;
      }
      case 2: {
        // Not extreme loops either: an inner loop moved outside its outer one can no longer
        // be clamped to the extent, and runs the whole factor.
        if (splittable.size() < 2) return d;
        std::shuffle(splittable.begin(), splittable.end(), rng_);
        d.name = "reorder";
        int k = uniform(2, std::min<int>(4, static_cast<int>(splittable.size())));
        for (int i = 0; i < k; ++i) d.args.push_back(name(splittable[i]));
        break;
      }
      case 3:
        if (n.loops[0].name.find('.') != std::string::npos) return d;
        if (extreme_loops_.count(n.loops[0].name)) return d;
        d.name = "vectorize";
        d.args = {name(n.loops[0].name), integer(int64_t{1} << uniform(1, 4))};
        break;
      case 4:
        d.name = "parallel";
        d.args = {name(pick())};
        break;
      default:
        if (splittable.empty()) return d;
        d.name = "unroll";
        d.args = {name(pick_splittable()), integer(uniform(2, 4))};
        break;
    }
    if (extreme) {
      // Every loop the split or tile makes (its outer and inner names).
      const size_t names = d.name == "tile" ? 6 : 3;
      for (size_t i = d.name == "tile" ? 2 : 1; i < names && i < d.args.size(); ++i) {
        extreme_loops_.insert(d.args[i].name);
      }
    }
    return d;
  }

  void schedule_stage(const Func& f, int stage) {
    StageLoopNest n = default_loop_nest(f, stage);
    extreme_loops_.clear();
    int count = uniform(0, o_.max_directives_per_stage);
    bool is_output = f.name == p_.output.func;
    for (int i = 0; i < count; ++i) {
      Directive d = random_directive(n);
      if (d.name.empty()) continue;
      StageLoopNest trial = n;
      try {
        apply_stage_directive(trial, f, stage, is_output, d, source_);
      } catch (const UserError&) {
        continue;
      }
      n = std::move(trial);
      s_.funcs[f.name].stages[stage].directives.push_back(std::move(d));
    }
  }

  const Pipeline& p_;
  std::mt19937_64& rng_;
  RandomScheduleOptions o_;
  SourceText source_;
  Schedule s_;
  std::vector<const Func*> done_;
  int counter_ = 0;
  std::set<std::string> extreme_loops_;  // of the stage being scheduled
};

}  // namespace

Schedule random_schedule(const Pipeline& p, std::mt19937_64& rng,
                         const RandomScheduleOptions& options) {
  return Generator(p, rng, options).run();
}

}  // namespace stipple
