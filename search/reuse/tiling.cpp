#include "search/reuse/tiling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace stipple::search::reuse {

int vector_lanes(const MachineModel& m, int elem_bytes) {
  int lanes = m.vector_bytes / std::max(4, elem_bytes);
  int p = 2;
  while (p * 2 <= lanes && p < 64) p *= 2;
  return std::max(2, std::min(p, lanes));
}

int64_t tile_unit(const MachineModel& m, int elem_bytes) {
  int64_t per_line = std::max<int64_t>(1, m.cache_line / std::max(1, elem_bytes));
  return std::lcm(per_line, int64_t(vector_lanes(m, elem_bytes)));
}

std::vector<int64_t> tile_size_candidates(int64_t extent, int64_t unit) {
  extent = std::max<int64_t>(1, extent);
  unit = std::max<int64_t>(1, unit);
  const int64_t top = (extent + unit - 1) / unit;  // in units
  std::set<int64_t> k;
  int64_t step = 1;
  for (int64_t i = 1; i <= top; i += step) {
    k.insert(i);
    // Every size up to 16 units, then about 8 sizes per doubling.
    if (i >= 16) step = i / 8;
  }
  k.insert(top);
  for (int64_t parts = 1; parts <= 16; ++parts) {
    int64_t size = (extent + parts - 1) / parts;
    k.insert((size + unit - 1) / unit);
  }
  std::vector<int64_t> out;
  for (int64_t v : k) {
    if (v >= 1 && v <= top) out.push_back(v * unit);
  }
  return out;
}

TileLimits tile_limits(const RegionModel& m, const std::vector<int>& stages,
                       const MachineModel& mm) {
  const PipelineAnalysis& a = m.analysis();
  TileLimits lim;
  lim.min_size.assign(m.extents().size(), 1);
  lim.unit = tile_unit(mm, a.node(m.output()).elem_bytes);
  lim.cores = std::max(1, mm.cores);
  lim.parallel = mm.cores > 1;
  lim.l2_bytes = mm.l2_bytes;
  lim.llc_bytes = mm.llc_bytes;
  for (int s : stages) {
    for (const Reuse& r : a.reuse(s)) {
      if (r.full || !m.in_group(r.consumer)) continue;
      int x = r.consumer == m.output() ? r.var : m.drivers().of[r.consumer][r.var];
      double amount = r.max_amount();
      if (x >= 0 && std::isfinite(amount)) lim.min_size[x] = std::max(lim.min_size[x], amount);
    }
  }
  return lim;
}

std::vector<Tile> enumerate_tiles(const RegionModel& m, const LoopOrder& order,
                                  const TileLimits& lim) {
  std::vector<int> tiled = order.tiled_dims();
  std::vector<Tile> out;
  if (tiled.empty()) {
    out.push_back(Tile{std::vector<int64_t>(m.extents().size(), 0)});
    return out;
  }
  std::vector<int64_t> first = tile_size_candidates(m.extents()[tiled[0]], lim.unit);
  std::vector<int64_t> second{0};
  if (tiled.size() > 1) second = tile_size_candidates(m.extents()[tiled[1]], 1);
  for (int64_t t0 : first) {
    for (int64_t t1 : second) {
      Tile t{std::vector<int64_t>(m.extents().size(), 0)};
      t.size[tiled[0]] = t0;
      if (tiled.size() > 1) t.size[tiled[1]] = t1;
      out.push_back(t);
    }
  }
  return out;
}

int threads_for(const RegionModel& m, const LoopOrder& order, const Tile& tile,
                const TileLimits& lim) {
  if (!lim.parallel || order.size() == 0) return 1;
  int64_t trip = order.trip(order.size() - 1, m.extents(), tile);
  return int(std::max<int64_t>(1, std::min<int64_t>(lim.cores, trip)));
}

std::string tile_violation(const RegionModel& m, const LoopOrder& order, const Tile& tile,
                           const GroupCost& cost, const TileLimits& lim, int relax) {
  for (int x : order.tiled_dims()) {
    double need = std::min<double>(lim.min_size[x], double(m.extents()[x]));
    if (double(std::min(tile.size[x], m.extents()[x])) < need) {
      return "smaller than the overlap along " + m.analysis().node(m.output()).dims[x] +
             " (equation 15)";
    }
  }
  if (relax < 2 && lim.parallel && order.size() > 0 &&
      order.trip(order.size() - 1, m.extents(), tile) < lim.cores) {
    return "fewer outer tiles than cores (equation 14)";
  }
  if (relax < 1) {
    if (cost.unfolded_bytes > double(lim.l2_bytes)) return "unfolded buffers exceed L2";
    if (cost.folded_bytes * threads_for(m, order, tile, lim) > double(lim.llc_bytes)) {
      return "folded buffers exceed the last-level cache";
    }
  }
  return "";
}

FusionLevels fusion_for_order(const RegionModel& m, const LoopOrder& order,
                              const std::vector<int>& stages) {
  FusionLevels levels = stage_fusion(m, order, stages);
  inline_trivial_stages(m, levels);
  legalise_levels(m, order, levels);
  return levels;
}

GroupTiling tiling_analysis(const RegionModel& m, const std::vector<int>& stages,
                            const MachineModel& mm) {
  const PipelineAnalysis& a = m.analysis();
  TileLimits lim = tile_limits(m, stages, mm);
  GroupTiling best[3];
  double best_cost[3] = {std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::infinity()};
  int orders = 0;
  int64_t tiles = 0;
  for (const LoopOrder& order : candidate_orders(a.node(m.output()).dims)) {
    ++orders;
    FusionLevels levels = fusion_for_order(m, order, stages);
    std::vector<bool> inlined(a.nodes().size(), false);
    for (const auto& [s, l] : levels) inlined[s] = l.inlined;
    std::vector<double> ops = expanded_ops(a, inlined);
    CostContext c;
    c.model = &m;
    c.order = &order;
    c.parallel = lim.parallel;
    c.levels = &levels;
    c.ops = &ops;
    c.cache_line = mm.cache_line;
    for (const Tile& tile : enumerate_tiles(m, order, lim)) {
      ++tiles;
      c.tile = tile;
      GroupCost cost = group_cost(c);
      for (int relax = 0; relax < 3; ++relax) {
        if (cost.total >= best_cost[relax]) continue;
        if (!tile_violation(m, order, tile, cost, lim, relax).empty()) continue;
        best_cost[relax] = cost.total;
        GroupTiling& g = best[relax];
        g.found = true;
        g.order = order;
        g.tile = tile;
        g.levels = levels;
        g.cost = cost;
        g.relaxed = relax;
        g.wset_bytes = (cost.folded_bytes + cost.unfolded_bytes) * threads_for(m, order, tile, lim);
      }
    }
  }
  GroupTiling result;
  for (int relax = 0; relax < 3; ++relax) {
    if (best[relax].found) {
      result = best[relax];
      break;
    }
  }
  result.orders_tried = orders;
  result.tiles_tried = tiles;
  return result;
}

}  // namespace stipple::search::reuse
