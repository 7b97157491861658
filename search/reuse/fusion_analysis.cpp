#include "search/reuse/fusion_analysis.h"

#include <algorithm>
#include <functional>

namespace stipple::search::reuse {

int dependency_loop(const LoopOrder& order, int x) {
  for (int i = 0; i < order.size(); ++i) {
    const OutputLoop& l = order.loops[i];
    if (l.dim == x && l.part != OutputLoop::Part::Outer) return i;
  }
  return -1;
}

int next_level(const RegionModel& m, const LoopOrder& order, int stage, int i) {
  int last = order.size() - 1;
  int j = i + 1;
  while (j < last && !m.depends_on(stage, order.loops[j].dim)) ++j;
  return std::min(j, last);
}

namespace {

std::string loop_name(const LoopOrder& order, int i) {
  return i >= 0 && i < order.size() ? order.loops[i].name : "?";
}

}  // namespace

FusionLevels stage_fusion(const RegionModel& m, const LoopOrder& order,
                          const std::vector<int>& stages) {
  const PipelineAnalysis& a = m.analysis();
  FusionLevels out;
  for (int s : stages) {
    FusionLevel l;
    const std::vector<Reuse>& w = a.reuse(s);
    if (w.empty()) {
      l.inlined = true;
      l.rule = "Algorithm 1: no consumer reuses its values (W empty), inlined";
      out[s] = l;
      continue;
    }
    int best = -1;
    bool full = true;
    std::string why;
    for (const Reuse& r : w) {
      int x = r.consumer == m.output() ? r.var : m.drivers().of[r.consumer][r.var];
      int pos = x >= 0 ? dependency_loop(order, x) : -1;
      if (pos < 0) continue;
      std::string what =
          a.node(r.consumer).name + " along " + a.node(r.consumer).dims[r.var] +
          (r.full ? " (full reuse)" : " (overlap " + std::to_string(int64_t(r.max_amount())) + ")");
      if (pos > best) {
        best = pos;
        full = r.full;
        why = what;
      } else if (pos == best) {
        full = full && r.full;
        why += ", " + what;
      }
    }
    if (best < 0) {
      l.compute = l.store = 0;
      l.rule =
          "Algorithm 1: reused only along loops outside D_m, innermost loop " + loop_name(order, 0);
      out[s] = l;
      continue;
    }
    l.store = next_level(m, order, s, best);
    l.compute = best;
    l.rule = "Algorithm 1: reused by " + why + " -> c = " + loop_name(order, best);
    if (best == 0 || full) {
      l.compute = l.store;
      l.rule += best == 0 ? ", the innermost loop, so computed one loop out"
                          : ", full reuse, so computed one loop out";
    } else {
      l.rule += ", stored one loop out (sliding window)";
    }
    out[s] = l;
  }
  return out;
}

void inline_trivial_stages(const RegionModel& m, FusionLevels& levels) {
  const PipelineAnalysis& a = m.analysis();
  // Consumers first: a.topological() lists producers first.
  std::vector<int> order;
  for (auto it = a.topological().rbegin(); it != a.topological().rend(); ++it) {
    if (levels.count(*it)) order.push_back(*it);
  }
  for (int s : order) {
    FusionLevel& l = levels[s];
    if (l.inlined || !is_trivial(a, s)) continue;
    for (int p : a.node(s).producers) {
      auto it = levels.find(p);
      if (it == levels.end() || !it->second.inlined || is_trivial(a, p)) continue;
      it->second = l;
      it->second.rule =
          "Algorithm 2: takes the place of trivial " + a.node(s).name + " (" + l.rule + ")";
    }
    l = FusionLevel{};
    l.inlined = true;
    l.rule = "Algorithm 2: trivial (no more arithmetic than loads), inlined";
  }
}

void legalise_levels(const RegionModel& m, const LoopOrder& order, FusionLevels& levels) {
  const PipelineAnalysis& a = m.analysis();
  const int last = order.size() - 1;
  // The innermost compute level that encloses every use of stage s: uses inside inlined
  // stages count where those are used; the group's output uses it anywhere.
  std::map<int, int> need_memo;
  std::function<int(int)> need = [&](int s) -> int {
    auto memo = need_memo.find(s);
    if (memo != need_memo.end()) return memo->second;
    int req = 0;
    for (int c : a.node(s).consumers) {
      if (c == m.output() || !m.in_group(c)) continue;
      auto it = levels.find(c);
      if (it == levels.end()) continue;
      if (it->second.inlined) {
        req = std::max(req, need(c));
      } else {
        req = std::max(req, it->second.compute);
      }
    }
    return need_memo[s] = req;
  };
  for (auto it = a.topological().rbegin(); it != a.topological().rend(); ++it) {
    auto lv = levels.find(*it);
    if (lv == levels.end() || lv->second.inlined) continue;
    FusionLevel& l = lv->second;
    int req = need(*it);
    std::string note;
    if (l.compute < req) {
      note += "; computed at " + loop_name(order, req) + " instead of " +
              loop_name(order, l.compute) + " (a consumer is computed there)";
      l.compute = req;
    }
    if (l.compute > last) l.compute = last;
    if (l.store < l.compute) l.store = l.compute;
    if (l.store > last) {
      note += "; stored at the outermost loop " + loop_name(order, last) +
              " (storage outside the parallel loop would be shared)";
      l.store = last;
    }
    l.rule += note;
    need_memo.clear();
  }
}

std::map<std::string, FusionChoice> fusion_levels(const Pipeline& p,
                                                  const std::vector<int64_t>& output_extents,
                                                  const LoopOrder& order, bool inline_trivial) {
  PipelineAnalysis a(p, output_extents);
  std::vector<bool> in_group(a.nodes().size(), false);
  std::vector<int> stages;
  std::map<std::string, FusionChoice> out;
  for (int i : a.topological()) {
    const Node& n = a.node(i);
    if (n.is_input || i == a.output()) continue;
    if (n.has_updates || a.position_independent(i)) {
      out[n.name] = {"root", "root", n.has_updates ? "has updates" : "position independent"};
      continue;
    }
    in_group[i] = true;
    stages.push_back(i);
  }
  RegionModel m(a, a.output(), in_group, a.output_extents());
  FusionLevels levels = stage_fusion(m, order, stages);
  if (inline_trivial) inline_trivial_stages(m, levels);
  for (const auto& [i, l] : levels) {
    FusionChoice c;
    c.rule = l.rule;
    if (l.inlined) {
      c.compute = "inline";
    } else {
      c.compute = loop_name(order, l.compute);
      c.store = loop_name(order, l.store);
    }
    out[a.node(i).name] = c;
  }
  return out;
}

}  // namespace stipple::search::reuse
