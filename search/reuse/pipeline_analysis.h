// The pipeline as the reuse model sees it (Schedule Synthesis through Reuse Analysis §4.1):
// a DAG of stages K_0..K_m (funcs, with the inputs as leaves), each stage's reads of its
// producers (L_i), and for each stage the list W_i of its consumers that reuse its
// values across iterations of one of their loops, with the dependence overlap per
// dimension: blur_y reading blur_x at y-1, y, y+1 reuses two rows of blur_x from one
// iteration of y to the next (overlap 2 along y).
//
// Also here: which output dimension drives each dimension of a stage (the output's x
// drives blur_x's x; deinterleaved's x through `2 * x`; a level index read from data
// drives nothing), whether a stage's region slides and folds in the lowering, and the
// arithmetic cost of each stage (the compute cost of the cost model and the "trivial"
// test of Algorithm 2).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "search/reuse/index_intervals.h"

namespace stipple::search::reuse {

/// One call P(args) in a definition of a consumer.
struct ReadSite {
  int producer = -1;
  int stage = 0;  // of the consumer: 0 the pure definition, k + 1 update k
  std::vector<Expr> args;
  /// The reduction variables in scope at the call (enclosing inline reductions, and for
  /// an update its domain), outermost first.
  std::vector<ReductionVariable> reductions;
  /// The consumer's loop variables of that stage: (variable name, consumer dimension).
  /// All pure variables for the pure definition; the bare ones of an update's left side.
  std::vector<std::pair<std::string, int>> loop_vars;
  /// Per argument: reads data (a load in the index), is followed by the lowering's
  /// sliding-window analysis, mentions params or input extents, and which of the
  /// consumer's loop dimensions it mentions.
  std::vector<bool> data_dependent, slidable, runtime_sized;
  std::vector<std::vector<int>> loop_dims;
};

/// A stage (func) or an input.
struct Node {
  std::string name;
  bool is_input = false;
  const Func* func = nullptr;
  std::vector<std::string> dims;
  int elem_bytes = 4;
  bool has_updates = false;
  bool reachable = false;  // the output needs it
  /// Cost per point of the pure definition (and the updates, per point of the func).
  OpCount own;
  std::vector<ReadSite> reads;
  std::vector<int> producers, consumers;  // distinct, sorted
};

/// One entry of W_i: consumer `consumer` reuses values of the stage across consecutive
/// iterations of its loop over dimension `var` (its footprints at var = v and v + 1
/// intersect). `full` when the footprint does not depend on `var` at all (every
/// iteration reads the same values: a broadcast, the paper's "full reuse").
struct Reuse {
  int consumer = -1;
  int var = -1;
  bool full = false;
  /// Per dimension of the stage: the extent of the intersection along it when that
  /// dimension's footprint moves with `var` (the overlap v of the paper), else -1.
  std::vector<double> amount;
  double max_amount() const;
};

class PipelineAnalysis {
 public:
  PipelineAnalysis(const Pipeline& p, const std::vector<int64_t>& output_extents);

  const Pipeline& pipeline() const { return *p_; }
  const IndexConstants& constants() const { return k_; }
  const std::vector<int64_t>& output_extents() const { return extents_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  int output() const { return output_; }
  /// The node called `name`, or -1.
  int find(const std::string& name) const;
  /// Reachable nodes, producers before consumers.
  const std::vector<int>& topological() const { return topo_; }

  /// W_i of node i: its reuse by each consumer along each of the consumer's loops.
  /// Data-dependent reads move no footprint (their ranges come from clamps).
  const std::vector<Reuse>& reuse(int i) const { return reuse_[i]; }

  /// The region of every reachable node when the output is computed over its full
  /// extents (what a compute_root of each would allocate): per node, per dimension.
  const std::vector<std::vector<Interval>>& root_regions() const { return root_; }
  double root_points(int i) const;

  /// A stage whose every dimension's footprint is the same wherever the output is (a
  /// kernel table, a LUT, a 0-dimensional constant): no dimension is driven by output
  /// dimension 0 or 1. Relative to the whole pipeline.
  bool position_independent(int i) const { return position_independent_[i]; }

 private:
  void collect_reads(int i);
  void compute_reuse();
  void compute_root_regions();

  const Pipeline* p_;
  IndexConstants k_;
  std::vector<int64_t> extents_;
  std::vector<Node> nodes_;
  std::map<std::string, int> index_;
  int output_ = -1;
  std::vector<int> topo_;
  std::vector<std::vector<Reuse>> reuse_;
  std::vector<std::vector<Interval>> root_;
  std::vector<bool> position_independent_;
};

/// Which output dimension drives each dimension of each node, for a group whose output
/// is `output` and whose funcs are those with in_group[i] (the output included): the
/// dimension's index is a function of that one output dimension (through affine
/// indices, `2 * x`, `x / 2`, clamps), or -1 when it is driven by none (read at
/// constants only, from data, or from several output dimensions). A dimension read only
/// at constants takes the consumer's variable of the same name, as Halide's shared Vars
/// do (`demosaiced(x, y, 0)` in `corrected(x, y, c)`: c).
struct Drivers {
  std::vector<std::vector<int>> of;       // [node][dim]
  std::vector<std::vector<bool>> slides;  // the lowering can slide along it
  std::vector<std::vector<bool>> folds;   // ... and prove a constant window to fold to
};
Drivers compute_drivers(const PipelineAnalysis& a, int output, const std::vector<bool>& in_group);

/// Whether stage i may be considered trivial by Algorithm 2: its arithmetic costs no more
/// than its loads (a copy, a cast, a product of two values), it has no updates and is
/// not the output.
bool is_trivial(const PipelineAnalysis& a, int i);

/// The ops per point of stage i when the stages with inlined[j] are substituted into it
/// (each call of an inlined stage costs that stage's expanded ops), counting one op per
/// load of a stored stage or input.
std::vector<double> expanded_ops(const PipelineAnalysis& a, const std::vector<bool>& inlined);

}  // namespace stipple::search::reuse
