// Interval arithmetic over the index expressions of a pipeline, for the reuse model's
// analysis: which part of a producer a consumer reads, given the ranges of the
// consumer's variables (reuse-analysis-schedule-synthesis.txt §3: the footprints whose
// sizes are equations 1-13).
//
// Params take their default values and input extents an estimate (the model schedules
// for output extents, not for given images), so every constant is a point. A load from a
// func or an input is only known to lie in its element type's range: an index computed
// from data is unbounded unless the program clamps it. Intervals contain every value
// the index can take (for these constants); they are not always tight.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/pipeline.h"

namespace stipple::search::reuse {

/// A closed interval of integers or reals; empty when lo > hi; infinite ends allowed.
struct Interval {
  double lo = 0, hi = -1;

  static Interval point(double v) { return {v, v}; }
  static Interval range(double lo, double hi) { return {lo, hi}; }
  static Interval everything() {
    return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
  static Interval none() { return {1, 0}; }

  bool empty() const { return lo > hi; }
  bool bounded() const;
  /// The number of integers in [lo, hi] (0 when empty, infinite when unbounded).
  double extent() const { return empty() ? 0 : hi - lo + 1; }
  Interval hull(const Interval& o) const;
  Interval intersect(const Interval& o) const;
  bool operator==(const Interval& o) const = default;
};

/// The constants of one analysis: the pipeline (params at their defaults) and the
/// estimated extents of its inputs.
struct IndexConstants {
  const Pipeline* pipeline = nullptr;
  std::map<std::string, std::vector<int64_t>> input_extents;

  int64_t input_extent(const std::string& input, int dim) const;
};

/// Input extents for a pipeline computed over `output_extents`: an output extent that is
/// written as an input's extent (`size(in.width, in.height, 3)`, or the checker's
/// default) gives that input's extent; other input dimensions take the output's extent
/// in the same dimension, or 4 beyond the output's dimensions.
IndexConstants make_index_constants(const Pipeline& p, const std::vector<int64_t>& output_extents);

/// Variables in scope, innermost last.
using IntervalScope = std::vector<std::pair<std::string, Interval>>;

/// The interval of values `e` takes with its variables in `scope` (unknown names are
/// unbounded).
Interval interval_of(const Expr& e, IntervalScope& scope, const IndexConstants& k);

/// Whether `e` reads a func or an input (a data-dependent index).
bool reads_data(const Expr& e);
/// Whether `e` mentions a param or an input extent (a window whose size is not a
/// compile-time constant, which the lowering cannot fold).
bool mentions_runtime_constants(const Expr& e);
/// Whether the lowering's sliding-window analysis follows `e` as a function of the loop
/// variable (compiler_core/lowering/README.md): sums, products and quotients by
/// constants, min and max; not %, select, abs, a non-constant divisor or a load.
bool is_slidable_index(const Expr& e);
/// The pure variables (VarKind::Pure) `e` mentions.
std::vector<std::string> pure_variables(const Expr& e);

/// Arithmetic cost of evaluating `e` once, in units of an add, with calls counted apart:
/// add, sub, mul, min, max, comparisons, select, casts: 1; div and mod: 4; sqrt: 4;
/// exp, log, pow, sin, cos: 20; a reduction multiplies its body by its domain's size.
struct OpCount {
  double ops = 0;    // arithmetic
  double loads = 0;  // calls to funcs and inputs
  /// Calls by func or input name, each weighted by the sizes of the reductions around it.
  std::map<std::string, double> calls;
};
OpCount count_ops(const Expr& e, IntervalScope& scope, const IndexConstants& k);

}  // namespace stipple::search::reuse
