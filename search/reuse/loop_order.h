// D_m of Schedule Synthesis through Reuse Analysis §4.1: the tiled loop nest of a group's
// output stage, innermost first, e.g. (xi, yi, xo, yo) for `out.tile(x, y, xo, yo, xi,
// yi, Tx, Ty)`. Dimensions 0 and 1 of the output are tiled (dimension 0 alone for a
// 1-dimensional output); the others (the colour channel) are loops of their own, inside
// the tile or between the inter-tile loops. Compute and store levels are positions in
// this list; a tile gives every loop its trip count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/reuse/pipeline_analysis.h"

namespace stipple::search::reuse {

struct OutputLoop {
  enum class Part { Inner, Outer, Whole };
  std::string name;  // as the schedule names it: xi, xo, c
  int dim = 0;       // the output dimension it iterates
  Part part = Part::Whole;
};

/// Tile sizes per output dimension (0 for dimensions that are not tiled).
struct Tile {
  std::vector<int64_t> size;
  bool operator==(const Tile& o) const = default;
};

struct LoopOrder {
  std::vector<OutputLoop> loops;  // innermost first

  int size() const { return int(loops.size()); }
  /// The position of the loop called `name`, or -1.
  int find(const std::string& name) const;
  /// "xi, yi, xo, yo".
  std::string describe() const;
  /// The number of loops of one tile (the intra-tile loops and any untiled loops inside
  /// the tile): the level of the output's own tile.
  int tile_level() const;
  /// The tiled dimensions (1 or 2 of them), in order.
  std::vector<int> tiled_dims() const;

  /// Iterations of loop i for extents B and a tile; all of them for `Whole`.
  int64_t trip(int i, const std::vector<int64_t>& extents, const Tile& tile) const;
  /// How many times the body of level `level` runs: the product of the trips of the loops
  /// at `level` and outside it (1 for level == size(), the root).
  double iterations(int level, const std::vector<int64_t>& extents, const Tile& tile) const;
  /// The extent of the output that one iteration of level `level` covers in each output
  /// dimension: the loops inside `level` run fully, the others are points.
  std::vector<int64_t> covered(int level, const std::vector<int64_t>& extents,
                               const Tile& tile) const;
};

/// The loop names for tiling output dimension d of a func with these dimension names:
/// d + "o" and d + "i", or with a digit appended when those are taken.
std::pair<std::string, std::string> tile_loop_names(const std::vector<std::string>& dims, int d);

/// The tiled loop nest as `tile` leaves it: (x_i, y_i, x_o, y_o, c, ...).
LoopOrder default_order(const std::vector<std::string>& dims);

/// The permutations Algorithm 3 tries: dimension 0's intra-tile loop always innermost (it
/// is the vectorised, unit-stride loop), the untiled dimensions together either between
/// the two intra-tile loops, just inside the tile, or between the inter-tile loops, and
/// either inter-tile loop outermost. The untiled loops are never outermost (the
/// outermost loop is the parallel one, and a channel loop of 3 would not balance).
std::vector<LoopOrder> candidate_orders(const std::vector<std::string>& dims);

}  // namespace stipple::search::reuse
