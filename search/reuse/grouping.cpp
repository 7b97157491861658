#include "search/reuse/grouping.h"

#include <algorithm>
#include <functional>
#include <map>

namespace stipple::search::reuse {

namespace {

bool untileable(const PipelineAnalysis& a, int i) {
  const Node& n = a.node(i);
  return n.has_updates || n.dims.empty() || a.position_independent(i);
}

// Algorithm 1's "no consumer reuses it" and Algorithm 2's trivial stages, for every stage
// that is not a root: the inlining decisions, which depend on no loop order.
std::vector<bool> inline_decisions(const PipelineAnalysis& a, const std::vector<bool>& root) {
  std::vector<bool> inl(a.nodes().size(), false);
  for (int i : a.topological()) {
    if (!a.node(i).is_input && !root[i]) inl[i] = a.reuse(i).empty();
  }
  const std::vector<int>& topo = a.topological();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    int s = *it;
    if (root[s] || a.node(s).is_input || inl[s] || !is_trivial(a, s)) continue;
    for (int p : a.node(s).producers) {
      if (inl[p] && !root[p] && !is_trivial(a, p)) inl[p] = false;
    }
    inl[s] = true;
  }
  return inl;
}

}  // namespace

bool forced_root(const PipelineAnalysis& a, int i, std::string* why) {
  const Node& n = a.node(i);
  if (n.is_input) return false;
  std::string w;
  if (i == a.output()) {
    w = "the output";
  } else if (n.has_updates) {
    w = "has update definitions (not inlinable; its reduction domain does not shrink with a "
        "tile), so it is computed at root";
  } else if (n.dims.empty()) {
    w = "has no dimensions: computed once at root";
  } else if (a.position_independent(i)) {
    bool used_by_position_dependent = false;
    for (int c : n.consumers) used_by_position_dependent |= !a.position_independent(c);
    if (!used_by_position_dependent) return false;
    w = "depends on no tiled output dimension (a table): computed once at root instead of "
        "once per tile";
  } else {
    return false;
  }
  if (why) *why = w;
  return true;
}

Grouping form_groups(const PipelineAnalysis& a, const std::set<int>& extra_roots) {
  const size_t n = a.nodes().size();
  Grouping g;
  g.root.assign(n, false);
  std::vector<std::string> why(n);
  for (int i : a.topological()) {
    std::string w;
    if (forced_root(a, i, &w)) {
      g.root[i] = true;
      why[i] = w;
    } else if (extra_roots.count(i) && !a.node(i).is_input) {
      g.root[i] = true;
      why[i] = "a segment output (Algorithms 4 and 5)";
    }
  }
  const std::vector<int>& topo = a.topological();
  std::vector<std::set<int>> owners(n);
  for (int round = 0; round < int(n) + 1; ++round) {
    g.inlined = inline_decisions(a, g.root);
    for (auto& o : owners) o.clear();
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      int i = *it;
      if (a.node(i).is_input) continue;
      for (int c : a.node(i).consumers) {
        if (g.root[c]) {
          owners[i].insert(c);
        } else {
          owners[i].insert(owners[c].begin(), owners[c].end());
        }
      }
    }
    bool changed = false;
    for (int i : topo) {
      if (a.node(i).is_input || g.root[i] || g.inlined[i]) continue;
      if (owners[i].size() > 1) {
        g.root[i] = true;
        why[i] = "used inside more than one group, so computed at root";
        changed = true;
      } else if (owners[i].size() == 1 && untileable(a, *owners[i].begin())) {
        g.root[i] = true;
        why[i] = "stored, and used by the untiled root " + a.node(*owners[i].begin()).name;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (int r : topo) {
    if (!g.root[r]) continue;
    Group grp;
    grp.output = r;
    grp.tiled = !untileable(a, r);
    grp.why = why[r];
    for (int i : topo) {
      if (g.root[i] || a.node(i).is_input) continue;
      if (owners[i].count(r) && (g.inlined[i] || owners[i].size() == 1)) grp.stages.push_back(i);
    }
    g.groups.push_back(grp);
  }
  return g;
}

std::vector<int64_t> group_extents(const PipelineAnalysis& a, const Group& g) {
  if (g.output == a.output()) return a.output_extents();
  std::vector<int64_t> extents;
  for (const Interval& r : a.root_regions()[g.output]) {
    extents.push_back(int64_t(std::max(1.0, r.extent())));
  }
  return extents;
}

RegionModel group_region_model(const PipelineAnalysis& a, const Group& g) {
  std::vector<bool> in_group(a.nodes().size(), false);
  for (int s : g.stages) in_group[s] = true;
  return RegionModel(a, g.output, in_group, group_extents(a, g));
}

GroupedSchedule schedule_groups(const PipelineAnalysis& a, const Grouping& g,
                                const MachineModel& mm) {
  GroupedSchedule out;
  out.grouping = g;
  for (const Group& grp : g.groups) {
    GroupTiling t;
    if (grp.tiled) {
      RegionModel m = group_region_model(a, grp);
      t = tiling_analysis(m, grp.stages, mm);
      out.cost += t.cost.total;
      if (t.wset_bytes > double(mm.llc_bytes)) out.fits = false;
    }
    // An untiled root is computed once, with no recomputation: it adds nothing that
    // differs between groupings.
    out.tilings.push_back(t);
  }
  return out;
}

GroupedSchedule group_stages(const PipelineAnalysis& a, const MachineModel& mm) {
  std::map<std::set<int>, GroupedSchedule> memo;
  auto evaluate = [&](const std::set<int>& extra) -> const GroupedSchedule& {
    auto it = memo.find(extra);
    if (it != memo.end()) return it->second;
    return memo.emplace(extra, schedule_groups(a, form_groups(a, extra), mm)).first->second;
  };
  const GroupedSchedule& whole = evaluate({});
  if (whole.fits) {
    GroupedSchedule r = whole;
    r.configurations = 1;
    r.notes = "the fused pipeline's working set fits the last-level cache: no split";
    return r;
  }
  // Algorithm 4: stages reused by more than one consumer head their own segments.
  std::set<int> extra;
  for (int i : a.topological()) {
    if (a.node(i).is_input || whole.grouping.root[i] || whole.grouping.inlined[i]) continue;
    std::set<int> consumers;
    for (const Reuse& r : a.reuse(i)) consumers.insert(r.consumer);
    if (consumers.size() > 1) extra.insert(i);
  }
  const int kMaxConfigurations = 64;
  std::vector<std::set<int>> complete{{}, extra};
  // Algorithm 5: split a group that does not fit, its first n stored stages becoming a
  // segment for n = 1, 2, ... while that segment fits; the remainder recursively.
  std::function<void(const std::set<int>&, int)> split = [&](const std::set<int>& base, int root) {
    const GroupedSchedule& conf = evaluate(base);
    const Grouping& g = conf.grouping;
    for (size_t gi = 0; gi < g.groups.size(); ++gi) {
      if (g.groups[gi].output != root) continue;
      if (!conf.tilings[gi].found || conf.tilings[gi].wset_bytes <= double(mm.llc_bytes)) return;
      std::vector<int> stored;
      for (int s : g.groups[gi].stages) {
        if (!g.inlined[s]) stored.push_back(s);
      }
      for (int s : stored) {
        if (int(memo.size()) >= kMaxConfigurations) return;
        std::set<int> next = base;
        next.insert(s);
        const GroupedSchedule& c = evaluate(next);
        bool prefix_fits = true;
        for (size_t k = 0; k < c.grouping.groups.size(); ++k) {
          if (c.grouping.groups[k].output == s && c.tilings[k].found &&
              c.tilings[k].wset_bytes > double(mm.llc_bytes)) {
            prefix_fits = false;
          }
        }
        if (!prefix_fits) break;
        complete.push_back(next);
        split(next, root);
      }
      return;
    }
  };
  {
    const GroupedSchedule& c4 = evaluate(extra);
    for (const Group& grp : c4.grouping.groups) {
      if (grp.tiled && grp.output != a.output()) split(extra, grp.output);
    }
  }
  // The cheapest configuration whose groups all fit; the cheapest of all if none does.
  const GroupedSchedule* best = nullptr;
  std::set<int> best_extra;
  for (int pass = 0; pass < 2 && !best; ++pass) {
    for (const std::set<int>& e : complete) {
      const GroupedSchedule& c = evaluate(e);
      if (pass == 0 && !c.fits) continue;
      if (!best || c.cost < best->cost) {
        best = &c;
        best_extra = e;
      }
    }
  }
  GroupedSchedule r = *best;
  r.configurations = int(memo.size());
  double wset = 0;
  for (const GroupTiling& t : whole.tilings) wset = std::max(wset, t.wset_bytes);
  r.notes = "the fused pipeline's working set (" + std::to_string(int64_t(wset) >> 10) +
            " KiB) exceeds the last-level cache: Algorithms 4 and 5 tried " +
            std::to_string(memo.size()) + " groupings, " +
            (r.fits ? "chose the cheapest whose segments fit" : "none fits; chose the cheapest");
  return r;
}

}  // namespace stipple::search::reuse
