// Algorithm 3 of Schedule Synthesis through Reuse Analysis (§4.2, group tiling): for every
// loop permutation of the group output's tiled loop nest, Algorithms 1 and 2 choose the
// compute and store levels, and every legal tile size is costed (cost_model.h); the
// permutation and tile of least cost win. Legal tiles (§4.2):
// - the innermost intra-tile extent is a multiple of the cache line and of the vector
//   width (in elements of the output);
// - the outermost inter-tile loop has at least as many iterations as there are cores
//   (equation 14), when the machine has more than one;
// - a tile is at least as large as the overlap along its dimension (equation 15);
// - the buffers that are not folded fit in L2 (per core), the folded ones in the
//   last-level cache (for all cores).
// When no tile satisfies all of them the cache constraints are dropped first, then
// equation 14 (and the result says so).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/reuse/cost_model.h"
#include "search/reuse/fusion_analysis.h"
#include "search/reuse/loop_order.h"
#include "search/reuse/machine_model.h"
#include "search/reuse/region_model.h"

namespace stipple::search::reuse {

/// The vector lanes for elements of `elem_bytes` (32-bit lanes for narrower types, whose
/// arithmetic is 32-bit): vector_bytes / max(4, elem_bytes).
int vector_lanes(const MachineModel& m, int elem_bytes);

/// The innermost tile size's unit: the least common multiple of the elements per cache
/// line and the vector lanes.
int64_t tile_unit(const MachineModel& m, int elem_bytes);

/// The tile sizes tried for a dimension of extent `extent` in steps of `unit`: every
/// multiple up to 16 units, then 8 per doubling (16, 18, ..., 32, 36, ..., 64, 72, ...),
/// the extent rounded up, and the extent split evenly into 1..16 parts (rounded up to
/// the unit).
std::vector<int64_t> tile_size_candidates(int64_t extent, int64_t unit);

struct TileLimits {
  std::vector<double> min_size;  // per output dimension (equation 15)
  int64_t unit = 1;
  int cores = 1;
  bool parallel = false;
  int64_t l2_bytes = 0, llc_bytes = 0;
};

/// The limits for a group on a machine.
TileLimits tile_limits(const RegionModel& m, const std::vector<int>& stages,
                       const MachineModel& mm);

/// Every tile Algorithm 3 enumerates for this order (before the constraints).
std::vector<Tile> enumerate_tiles(const RegionModel& m, const LoopOrder& order,
                                  const TileLimits& lim);

/// "" when `tile` satisfies the constraints with this cost, else the first one it breaks.
/// `relax`: 0 all, 1 without the cache constraints, 2 without equation 14 too.
std::string tile_violation(const RegionModel& m, const LoopOrder& order, const Tile& tile,
                           const GroupCost& cost, const TileLimits& lim, int relax = 0);

/// The threads that share the last-level cache under this order and tile.
int threads_for(const RegionModel& m, const LoopOrder& order, const Tile& tile,
                const TileLimits& lim);

struct GroupTiling {
  bool found = false;
  LoopOrder order;
  Tile tile;
  FusionLevels levels;  // every stage of the group but the output
  GroupCost cost;
  double wset_bytes = 0;  // all buffers of all threads at once
  int orders_tried = 0;
  int64_t tiles_tried = 0;
  int relaxed = 0;  // 0: every constraint held; 1: caches ignored; 2: equation 14 too
};

/// The fusion levels Algorithms 1 and 2 give for `order`, made legal.
FusionLevels fusion_for_order(const RegionModel& m, const LoopOrder& order,
                              const std::vector<int>& stages);

/// Algorithm 3 for the group of `m`, whose other stages are `stages`.
GroupTiling tiling_analysis(const RegionModel& m, const std::vector<int>& stages,
                            const MachineModel& mm);

}  // namespace stipple::search::reuse
