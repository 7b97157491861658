#include "search/reuse/region_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stipple::search::reuse {

RegionModel::RegionModel(const PipelineAnalysis& a, int output, std::vector<bool> in_group,
                         std::vector<int64_t> extents)
    : a_(&a), output_(output), in_group_(std::move(in_group)), extents_(std::move(extents)) {
  in_group_[output_] = true;
  extents_.resize(a.node(output_).dims.size(), 1);
  drivers_ = compute_drivers(a, output_, in_group_);
  const std::vector<int>& topo = a.topological();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    int c = *it;
    if (!in_group_[c]) continue;
    order_.push_back(c);
    for (const ReadSite& s : a.node(c).reads) {
      auto key = std::make_pair(c, s.producer);
      if (!edges_.count(key)) {
        int id = int(edges_.size());
        edges_[key] = id;
      }
    }
  }
  limit_.resize(a.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& n = a.node(int(i));
    for (size_t d = 0; d < n.dims.size(); ++d) {
      limit_[i].push_back(n.is_input ? double(a.constants().estimated_extent(n.name, int(d)))
                                     : std::numeric_limits<double>::infinity());
    }
  }
  std::vector<Interval> seed;
  for (int64_t e : extents_) seed.push_back(Interval::range(0, double(e - 1)));
  whole_ = propagate(seed);
}

bool RegionModel::depends_on(int i, int x) const {
  for (int d : drivers_.of[i]) {
    if (d == x) return true;
  }
  return false;
}

RegionModel::Propagation RegionModel::propagate(const std::vector<Interval>& seed) const {
  const PipelineAnalysis& a = *a_;
  Propagation p;
  p.region.resize(a.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    p.region[i].assign(a.node(int(i)).dims.size(), Interval::nothing());
  }
  p.footprint.resize(edges_.size());
  p.region[output_] = seed;
  IntervalScope scope;
  for (int c : order_) {
    for (const ReadSite& s : a.node(c).reads) {
      const int pr = s.producer;
      std::vector<Interval>& fp = p.footprint[edges_.at({c, pr})];
      if (fp.empty()) fp.assign(a.node(pr).dims.size(), Interval::nothing());
      scope.clear();
      for (const auto& [name, dim] : s.loop_vars) scope.push_back({name, p.region[c][dim]});
      for (const ReductionVariable& rv : s.reductions) {
        scope.push_back({rv.name, reduction_range(rv, scope, a.constants())});
      }
      for (size_t d = 0; d < s.args.size() && d < fp.size(); ++d) {
        Interval v = interval_of(s.args[d], scope, a.constants());
        fp[d] = fp[d].union_with(v);
        p.region[pr][d] = p.region[pr][d].union_with(v);
      }
    }
  }
  return p;
}

const RegionModel::Propagation& RegionModel::table(int dim, int64_t extent) const {
  int64_t key = extent * 64 + dim;
  auto it = tables_.find(key);
  if (it != tables_.end()) return it->second;
  std::vector<Interval> seed(extents_.size(), Interval::point(0));
  seed[dim] = Interval::range(0, double(extent - 1));
  return tables_.emplace(key, propagate(seed)).first->second;
}

double RegionModel::clip(int node, int dim, const Interval& v) const {
  // An input's footprint is clipped to the input's size (its position is only a
  // representative one; an unclamped data-dependent read is unbounded).
  double e = std::min(v.extent(), limit_[node][dim]);
  if (!(e >= 1)) e = 1;  // empty (never read on this path) or NaN
  return e;
}

std::vector<double> RegionModel::region(int i, const std::vector<int64_t>& covered) const {
  std::vector<double> out;
  const std::vector<int>& drv = drivers_.of[i];
  for (size_t d = 0; d < drv.size(); ++d) {
    int x = drv[d];
    const Interval& v = x >= 0 ? table(x, covered[x]).region[i][d] : whole_.region[i][d];
    out.push_back(clip(i, int(d), v));
  }
  return out;
}

int RegionModel::edge(int consumer, int producer) const {
  auto it = edges_.find({consumer, producer});
  return it == edges_.end() ? -1 : it->second;
}

std::vector<double> RegionModel::footprint(int consumer, int producer,
                                           const std::vector<int64_t>& covered) const {
  return edge_footprint(edge(consumer, producer), producer, covered);
}

std::vector<double> RegionModel::edge_footprint(int e, int producer,
                                                const std::vector<int64_t>& covered) const {
  if (e < 0) return std::vector<double>(a_->node(producer).dims.size(), 1.0);
  std::vector<double> out;
  const std::vector<int>& drv = drivers_.of[producer];
  for (size_t d = 0; d < drv.size(); ++d) {
    int x = drv[d];
    const Propagation& p = x >= 0 ? table(x, covered[x]) : whole_;
    const std::vector<Interval>& fp = p.footprint[e];
    out.push_back(clip(producer, int(d), d < fp.size() ? fp[d] : Interval::point(0)));
  }
  return out;
}

double RegionModel::volume(const std::vector<double>& extents) {
  double v = 1;
  for (double e : extents) v *= e;
  return v;
}

}  // namespace stipple::search::reuse
