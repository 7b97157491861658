#include "search/reuse/cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace stipple::search::reuse {

namespace {

const FusionLevel* level_of(const CostContext& c, int s) {
  auto it = c.levels->find(s);
  return it == c.levels->end() ? nullptr : &it->second;
}

CostContext::Memo& memo(const CostContext& c) {
  CostContext::Memo& m = c.memo;
  if (m.order != c.order || !(m.tile == c.tile)) {
    m.order = c.order;
    m.tile = c.tile;
    m.covered.assign(c.order->size() + 1, {});
    m.regions.assign(size_t(c.order->size() + 1) * c.model->analysis().nodes().size(), {});
    m.have.assign(m.regions.size(), 0);
    m.footprints.clear();
  }
  return m;
}

const std::vector<int64_t>& covered(const CostContext& c, int level) {
  CostContext::Memo& m = memo(c);
  std::vector<int64_t>& v = m.covered[level];
  if (v.empty()) v = c.order->covered(level, c.model->extents(), c.tile);
  return v;
}

// Stage s's region when one iteration of `level` runs (memoised).
const std::vector<double>& region_at(const CostContext& c, int s, int level) {
  CostContext::Memo& m = memo(c);
  size_t i = size_t(level) * c.model->analysis().nodes().size() + size_t(s);
  if (!m.have[i]) {
    m.regions[i] = c.model->region(s, covered(c, level));
    m.have[i] = 1;
  }
  return m.regions[i];
}

// What `consumer` reads of `producer` in one iteration of `level` (memoised).
const std::vector<double>& footprint_at(const CostContext& c, int consumer, int producer,
                                        int level) {
  CostContext::Memo& m = memo(c);
  int e = c.model->edge(consumer, producer);
  int64_t key = int64_t(e + 1) * 64 + level;
  auto it = m.footprints.find(key);
  if (it == m.footprints.end()) {
    it = m.footprints.emplace(key, c.model->edge_footprint(e, producer, covered(c, level))).first;
  }
  return it->second;
}

double iterations(const CostContext& c, int level) {
  return c.order->iterations(level, c.model->extents(), c.tile);
}

// The region of s that one iteration of `compute` computes when s is stored there and a
// consumer computed at the same loop slides: only what the consumer's new points need,
// the step of the window plus the consumer's overlap (the lowering's "a producer
// computed at L and stored there computes only what f's slid loops read").
std::vector<double> effective_region(const CostContext& c, int s, int compute, int store) {
  const RegionModel& m = *c.model;
  std::vector<double> r = region_at(c, s, compute);
  if (store != compute) return r;
  const int x = c.order->loops[compute].dim;
  const PipelineAnalysis& a = m.analysis();
  for (int consumer : a.node(s).consumers) {
    const FusionLevel* cl = level_of(c, consumer);
    if (!cl || cl->inlined || cl->compute != compute ||
        !slides(c, consumer, cl->compute, cl->store))
      continue;
    const std::vector<double>& hull = region_at(c, s, compute + 1);
    double trip = double(c.order->trip(compute, m.extents(), c.tile));
    for (size_t d = 0; d < r.size(); ++d) {
      if (m.drivers().of[s][d] != x) continue;
      double step = (hull[d] - r[d]) / std::max(1.0, trip - 1);
      double overlap = 0;
      for (const Reuse& e : a.reuse(s)) {
        if (e.consumer == consumer && m.drivers().of[consumer][e.var] == x) {
          overlap = std::max(overlap, e.amount[d]);
        }
      }
      r[d] = std::max(1.0, std::min(r[d], step + overlap));
    }
    break;
  }
  return r;
}

}  // namespace

bool slides(const CostContext& c, int s, int compute, int store) {
  if (store <= compute) return false;
  const RegionModel& m = *c.model;
  if (m.analysis().node(s).has_updates) return false;
  if (c.parallel && compute == c.order->size() - 1) return false;
  const int x = c.order->loops[compute].dim;
  const std::vector<int>& drv = m.drivers().of[s];
  for (size_t d = 0; d < drv.size(); ++d) {
    if (drv[d] == x && !m.drivers().slides[s][d]) return false;
  }
  return true;
}

bool folded(const CostContext& c, int s, int compute, int store) {
  if (!slides(c, s, compute, store)) return false;
  const RegionModel& m = *c.model;
  const int x = c.order->loops[compute].dim;
  bool any = false;
  const std::vector<int>& drv = m.drivers().of[s];
  for (size_t d = 0; d < drv.size(); ++d) {
    if (drv[d] != x) continue;
    if (!m.drivers().folds[s][d]) return false;
    any = true;
  }
  return any;
}

double compute_points(const CostContext& c, int s) {
  const RegionModel& m = *c.model;
  if (s == m.output()) return RegionModel::volume(m.whole_region(s));
  const FusionLevel* l = level_of(c, s);
  if (!l || l->inlined) return 0;
  if (slides(c, s, l->compute, l->store)) {
    return iterations(c, l->compute + 1) * RegionModel::volume(region_at(c, s, l->compute + 1));
  }
  return iterations(c, l->compute) *
         RegionModel::volume(effective_region(c, s, l->compute, l->store));
}

double root_points(const CostContext& c, int s) {
  return RegionModel::volume(c.model->whole_region(s));
}

double buffer_elements(const CostContext& c, int s, int compute, int store) {
  const RegionModel& m = *c.model;
  std::vector<double> r = region_at(c, s, store);
  if (folded(c, s, compute, store)) {
    const int x = c.order->loops[compute].dim;
    const std::vector<double>& window = region_at(c, s, compute);
    for (size_t d = 0; d < r.size(); ++d) {
      if (m.drivers().of[s][d] == x) r[d] = window[d];
    }
  }
  return RegionModel::volume(r);
}

double footprint_elements(const CostContext& c, int consumer, int producer, int compute,
                          int store) {
  const RegionModel& m = *c.model;
  std::vector<double> f = footprint_at(c, consumer, producer, store);
  if (folded(c, consumer, compute, store)) {
    const int x = c.order->loops[compute].dim;
    const std::vector<double>& window = footprint_at(c, consumer, producer, compute);
    for (size_t d = 0; d < f.size(); ++d) {
      if (m.drivers().of[producer][d] == x) f[d] = window[d];
    }
  }
  return RegionModel::volume(f);
}

double load_cost(const CostContext& c, int s) {
  const RegionModel& m = *c.model;
  const PipelineAnalysis& a = m.analysis();
  int level;
  double scale = 1;
  if (s == m.output()) {
    level = c.order->tile_level();
  } else {
    const FusionLevel* l = level_of(c, s);
    if (!l || l->inlined) return 0;
    if (slides(c, s, l->compute, l->store)) {
      level = l->compute + 1;
    } else {
      level = l->compute;
      double full = RegionModel::volume(region_at(c, s, level));
      double eff = RegionModel::volume(effective_region(c, s, l->compute, l->store));
      if (full > 0) scale = eff / full;
    }
  }
  const double iters = iterations(c, level);
  // s and the inlined stages it evaluates read the stored stages and inputs.
  std::vector<int> sources{s};
  std::set<int> seen{s};
  for (size_t i = 0; i < sources.size(); ++i) {
    for (int p : a.node(sources[i]).producers) {
      const FusionLevel* pl = level_of(c, p);
      if (pl && pl->inlined && m.in_group(p) && seen.insert(p).second) sources.push_back(p);
    }
  }
  double loads = 0;
  for (int q : sources) {
    for (int p : a.node(q).producers) {
      const FusionLevel* pl = level_of(c, p);
      if (pl && pl->inlined && m.in_group(p)) continue;
      const std::vector<double>& f = footprint_at(c, q, p, level);
      double row = f.empty() ? 1 : f[0];
      double rows = RegionModel::volume(f) / row;
      double row_cost = row * a.node(p).elem_bytes >= c.cache_line ? 1 : row;
      loads += iters * rows * row_cost * scale;
    }
  }
  return loads;
}

GroupCost group_cost(const CostContext& c) {
  const RegionModel& m = *c.model;
  const PipelineAnalysis& a = m.analysis();
  GroupCost g;
  auto own = [&](int s) { return a.node(s).own.ops + a.node(s).own.loads; };
  auto add = [&](int s) {
    StageCost sc;
    sc.points = compute_points(c, s);
    sc.compute = sc.points * (*c.ops)[s];
    sc.loads = load_cost(c, s);
    sc.root = root_points(c, s) * own(s);
    g.total += c.load_weight * sc.loads + sc.compute - sc.root;
    if (s != m.output()) {
      const FusionLevel& l = c.levels->at(s);
      sc.slides = slides(c, s, l.compute, l.store);
      sc.folded = folded(c, s, l.compute, l.store);
      sc.buffer_bytes = buffer_elements(c, s, l.compute, l.store) * a.node(s).elem_bytes;
      (sc.folded ? g.folded_bytes : g.unfolded_bytes) += sc.buffer_bytes;
    }
    g.stages[s] = sc;
  };
  add(m.output());
  for (const auto& [s, l] : *c.levels) {
    if (l.inlined) {
      g.total -= root_points(c, s) * own(s);
    } else {
      add(s);
    }
  }
  return g;
}

}  // namespace stipple::search::reuse
