#include "search/reuse/schedule_builder.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_loops.h"
#include "search/reuse/cost_model.h"
#include "search/reuse/region_model.h"

namespace stipple::search::reuse {

namespace {

ScheduleArg nm(const std::string& s) { return ScheduleArg::make_name(s); }
ScheduleArg in(int64_t v) { return ScheduleArg::make_int(v); }

void add(FuncSchedule& fs, int stage, Directive d) {
  fs.stages[stage].directives.push_back(std::move(d));
}

std::string kib(double bytes) {
  std::ostringstream os;
  os.precision(3);
  os << bytes / 1024.0 << " KiB";
  return os.str();
}

std::string extents_text(const std::vector<double>& e) {
  std::string s;
  for (double v : e) s += (s.empty() ? "" : " x ") + std::to_string(int64_t(v));
  return s.empty() ? "1" : s;
}

// Vectorise dimension 0 of a stage and parallelise its outermost dimension, at root.
void schedule_root(const PipelineAnalysis& a, int i, const MachineModel& mm, FuncSchedule& fs,
                   std::string& text) {
  const Node& n = a.node(i);
  const std::vector<Interval>& r = a.root_regions()[i];
  int lanes = vector_lanes(mm, n.elem_bytes);
  if (!n.dims.empty() && r[0].extent() >= lanes) {
    add(fs, 0, Directive::make("vectorize", {nm(n.dims[0]), in(lanes)}));
    text += ", vectorize(" + n.dims[0] + ", " + std::to_string(lanes) + ")";
  }
  double volume = a.root_points(i);
  if (mm.cores > 1 && n.dims.size() >= 2 && volume >= 16384 && r.back().extent() >= mm.cores) {
    add(fs, 0, Directive::make("parallel", {nm(n.dims.back())}));
    text += ", parallel(" + n.dims.back() + ")";
  }
  // Updates: the outermost loop in parallel when no dependence runs along it.
  for (int st = 1; st < stage_count(*n.func); ++st) {
    StageLoopNest nest = default_loop_nest(*n.func, st);
    if (mm.cores < 2 || nest.loops.empty()) continue;
    const Loop& outer = nest.loops.back();
    if (outer.dependent || outer.reduction) continue;
    add(fs, st, Directive::make("parallel", {nm(outer.name)}));
    text += ", update(" + std::to_string(st - 1) + ").parallel(" + outer.name + ")";
  }
}

}  // namespace

BuiltSchedule build_schedule(const PipelineAnalysis& a, const GroupedSchedule& g,
                             const MachineModel& mm) {
  BuiltSchedule out;
  Schedule& s = out.schedule;
  s.file_name = "<reuse model>";
  const Grouping& gr = g.grouping;
  for (size_t gi = 0; gi < gr.groups.size(); ++gi) {
    const Group& grp = gr.groups[gi];
    const Node& on = a.node(grp.output);
    const bool is_output = grp.output == a.output();
    FuncSchedule& fs = s.funcs[on.name];
    if (!is_output) fs.compute = LoopLevel::root();
    const GroupTiling& t = g.tilings[gi];
    if (!grp.tiled || !t.found) {
      std::string text = on.name + ": root (" + grp.why + ")";
      schedule_root(a, grp.output, mm, fs, text);
      for (int st : grp.stages) {
        if (!gr.inlined[st]) continue;
        text += "; " + a.node(st).name + " inlined";
      }
      out.lines.push_back(text);
      continue;
    }
    // The group output's loops: tile, order, vector lanes, parallel loop.
    const LoopOrder& order = t.order;
    std::vector<int> tiled = order.tiled_dims();
    std::ostringstream head;
    head << on.name << ": " << (is_output ? "the output" : "root (" + grp.why + ")") << ", loops ("
         << order.describe() << "), tile ";
    if (tiled.size() == 2) {
      auto [xo, xi] = tile_loop_names(on.dims, tiled[0]);
      auto [yo, yi] = tile_loop_names(on.dims, tiled[1]);
      add(fs, 0,
          Directive::make(
              "tile", {nm(on.dims[tiled[0]]), nm(on.dims[tiled[1]]), nm(xo), nm(yo), nm(xi), nm(yi),
                       in(t.tile.size[tiled[0]]), in(t.tile.size[tiled[1]])}));
      head << t.tile.size[tiled[0]] << " x " << t.tile.size[tiled[1]];
    } else if (tiled.size() == 1) {
      auto [xo, xi] = tile_loop_names(on.dims, tiled[0]);
      add(fs, 0,
          Directive::make("split",
                          {nm(on.dims[tiled[0]]), nm(xo), nm(xi), in(t.tile.size[tiled[0]])}));
      head << t.tile.size[tiled[0]];
    }
    LoopOrder plain = default_order(on.dims);
    if (plain.describe() != order.describe()) {
      std::vector<ScheduleArg> names;
      for (const OutputLoop& l : order.loops) names.push_back(nm(l.name));
      add(fs, 0, Directive::make("reorder", names));
    }
    int lanes = vector_lanes(mm, on.elem_bytes);
    add(fs, 0, Directive::make("vectorize", {nm(order.loops[0].name), in(lanes)}));
    if (mm.cores > 1) add(fs, 0, Directive::make("parallel", {nm(order.loops.back().name)}));
    head << ", vectorize(" << order.loops[0].name << ", " << lanes << ")"
         << (mm.cores > 1 ? ", parallel(" + order.loops.back().name + ")" : "")
         << "; Algorithm 3 cost " << t.cost.total << " (w = " << kLoadWeight << "), "
         << t.orders_tried << " orders x " << t.tiles_tried / std::max(1, t.orders_tried)
         << " tiles; buffers per tile: folded " << kib(t.cost.folded_bytes) << ", unfolded "
         << kib(t.cost.unfolded_bytes);
    if (t.relaxed == 1) head << "; no tile fit the caches, so that constraint was dropped";
    if (t.relaxed == 2) {
      head << "; no tile fit the caches and had enough outer tiles for the cores, so those "
              "constraints were dropped";
    }
    out.lines.push_back(head.str());

    // The stages computed inside the group.
    RegionModel m = group_region_model(a, grp);
    const std::vector<int64_t>& extents = m.extents();
    std::vector<bool> inlined(a.nodes().size(), false);
    for (const auto& [st, l] : t.levels) inlined[st] = l.inlined;
    std::vector<double> ops = expanded_ops(a, inlined);
    CostContext c;
    c.model = &m;
    c.order = &order;
    c.tile = t.tile;
    c.parallel = mm.cores > 1;
    c.levels = &t.levels;
    c.ops = &ops;
    c.cache_line = mm.cache_line;
    for (int st : grp.stages) {
      auto it = t.levels.find(st);
      if (it == t.levels.end()) continue;
      const FusionLevel& l = it->second;
      const Node& n = a.node(st);
      std::string line = "  " + n.name + ": ";
      if (l.inlined) {
        out.lines.push_back(line + "inlined -- " + l.rule);
        continue;
      }
      FuncSchedule& ms = s.funcs[n.name];
      const std::string& cl = order.loops[l.compute].name;
      const std::string& sl = order.loops[l.store].name;
      ms.compute = LoopLevel::at(on.name, 0, cl);
      if (l.store != l.compute) ms.store = LoopLevel::at(on.name, 0, sl);
      line += "compute_at(" + on.name + ", " + cl + ")";
      if (l.store != l.compute) line += ".store_at(" + on.name + ", " + sl + ")";
      std::vector<double> per_iteration = m.region(st, order.covered(l.compute, extents, t.tile));
      int mlanes = vector_lanes(mm, n.elem_bytes);
      if (!n.dims.empty() && per_iteration[0] >= mlanes) {
        add(ms, 0, Directive::make("vectorize", {nm(n.dims[0]), in(mlanes)}));
        line += ".vectorize(" + n.dims[0] + ", " + std::to_string(mlanes) + ")";
      }
      bool slid = slides(c, st, l.compute, l.store);
      bool fold = folded(c, st, l.compute, l.store);
      line += " -- region per iteration " + extents_text(per_iteration) + ", buffer " +
              kib(buffer_elements(c, st, l.compute, l.store) * n.elem_bytes) +
              (fold   ? " (sliding window, folded)"
               : slid ? " (sliding window)"
                      : "") +
              " -- " + l.rule;
      out.lines.push_back(line);
    }
  }
  return out;
}

int legalise_schedule(const Pipeline& p, Schedule& s, std::vector<std::string>& notes,
                      bool* fell_back_to_default) {
  auto check = [&](std::string* why) {
    try {
      check_schedule(s, p);
      return true;
    } catch (const UserError& e) {
      if (why) *why = e.what();
      return false;
    }
  };
  std::string why;
  if (check(&why)) return 0;
  int moved = 0;
  // Innermost first: the funcs computed at loops, in the pipeline's order reversed
  // (consumers are usually defined after their producers).
  for (auto it = p.funcs.rbegin(); it != p.funcs.rend(); ++it) {
    auto fs = s.funcs.find(it->name);
    if (fs == s.funcs.end() || !fs->second.compute || fs->second.compute->kind != LevelKind::At) {
      continue;
    }
    fs->second.compute = LoopLevel::root();
    fs->second.store.reset();
    ++moved;
    notes.push_back("degraded: " + it->name +
                    " computed at root because the checker said: " + why.substr(0, why.find('\n')));
    if (check(&why)) return moved;
  }
  // The last resort: the default schedule, which the checker always accepts.
  notes.push_back("degraded: the default schedule, because the checker said: " +
                  why.substr(0, why.find('\n')));
  s.funcs.clear();
  if (fell_back_to_default) *fell_back_to_default = true;
  return moved;
}

}  // namespace stipple::search::reuse
