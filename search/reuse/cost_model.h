// The cost model of Schedule Synthesis through Reuse Analysis §3 and §4.2, Algorithm 3:
//
//   C_total = sum over stages K_i of  w * Cl(K_i) + Cp(K_i) - C_root(K_i)
//
// - Cp, the compute cost: the points a stage computes under its (compute, store) levels
//   times its arithmetic per point (inlined stages expanded into their users). Computed
//   at loop c and stored at c, a stage computes its region for one iteration of c, once
//   per iteration (equation 3, T_x (T_y + 2) B_x/T_x B_y/T_y for blur_x at (xo, xo)).
//   Stored outside c, the lowering slides the window: each point of the region one run of
//   c covers is computed once per run (the same total for (yi, xo), as §3 says).
// - C_root, the cost at root: each point of the stage's whole region once (equation 4).
// - Cl, the load cost: for every stored stage or input the stage reads, the rows of its
//   footprint per computation, a row costing 1 when it spans a cache line (the hardware
//   prefetcher streams it: equation 6, (T_y + 2) B_x/T_x B_y/T_y) and one per element when
//   it does not (equation 13, 3 (T_y + 2) T_x B_x/T_x B_y/T_y).
// - Buffers: a stage's allocation is its region at the store level; a sliding window
//   whose size the lowering can prove is folded to one iteration's extent along the
//   sliding dimension (equations 8-12: T_x (T_y + 2) at (xo, xo), 3 T_x at (yi, xo)). The
//   lowering rounds a folded extent up to a power of two; the model keeps the paper's
//   sizes.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/reuse/fusion_analysis.h"
#include "search/reuse/loop_order.h"
#include "search/reuse/machine_model.h"
#include "search/reuse/region_model.h"

namespace stipple::search::reuse {

/// The relative cost of a load (one row stream, or one element that is not streamed)
/// against one arithmetic operation: the paper's w.
inline constexpr double kLoadWeight = 8.0;

/// Whether the outermost loop of the order is parallel (the schedule parallelises it
/// when the machine has more than one core). A sliding window needs a serial loop.
struct CostContext {
  const RegionModel* model = nullptr;
  const LoopOrder* order = nullptr;
  Tile tile;
  bool parallel = false;
  const FusionLevels* levels = nullptr;      // every stage of the group but the output
  const std::vector<double>* ops = nullptr;  // expanded ops per point, per node
  int cache_line = 64;
  double load_weight = kLoadWeight;

  /// Regions and footprints already found for this order and tile (filled on demand,
  /// dropped when either changes).
  struct Memo {
    const LoopOrder* order = nullptr;
    Tile tile;
    std::vector<std::vector<int64_t>> covered;  // [level]
    std::vector<std::vector<double>> regions;   // [level * nodes + node]
    std::vector<char> have;
    std::unordered_map<int64_t, std::vector<double>> footprints;  // edge * 64 + level
  };
  mutable Memo memo;
};

/// Whether stage s computed at `compute` and stored at `store` slides: stored outside a
/// serial compute loop, with a region that moves along that loop's dimension in a way the
/// lowering follows, or does not move at all (then it is computed on the first iteration).
bool slides(const CostContext& c, int s, int compute, int store);
/// Whether the sliding dimension of s is folded to its window.
bool folded(const CostContext& c, int s, int compute, int store);

/// The points of stage s computed over the whole output (the group's output: its extents).
double compute_points(const CostContext& c, int s);
/// The points of stage s at root (C_root / ops).
double root_points(const CostContext& c, int s);
/// Elements of the buffer of stage s computed at `compute` and stored at `store`.
double buffer_elements(const CostContext& c, int s, int compute, int store);
/// Elements of `producer` (an input, say) that `consumer`, computed at `compute` and
/// stored at `store`, needs at once: the footprint at the store level, folded like the
/// consumer's own buffer (equations 7, 10 and 11 for the input of blur_x).
double footprint_elements(const CostContext& c, int consumer, int producer, int compute, int store);
/// Cl of stage s (rows streamed and elements loaded without streaming).
double load_cost(const CostContext& c, int s);

struct StageCost {
  double points = 0, compute = 0, loads = 0, root = 0;
  double buffer_bytes = 0;
  bool slides = false, folded = false;
};

struct GroupCost {
  double total = 0;                             // sum of w Cl + Cp - C_root
  double folded_bytes = 0, unfolded_bytes = 0;  // per tile (one thread's buffers)
  std::map<int, StageCost> stages;              // the output and every stored stage
};

/// The cost of the group under c's order, tile and levels.
GroupCost group_cost(const CostContext& c);

}  // namespace stipple::search::reuse
