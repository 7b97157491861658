// Interval arithmetic over IR expressions with concrete ends, for the reference evaluator's
// bounds inference (interp/bounds_inference.h) and the reuse model's index analysis
// (search/reuse/index_intervals.h).
//
// An interval contains every value the evaluator can compute for the expression (the
// scalar semantics of ir/scalar_ops.h: wrapping integers, floor division, Euclidean modulo,
// saturating float-to-integer casts, NaN to 0), given the intervals of its variables and
// the values of its constants; it is sound, not always tight. Loads from funcs and inputs
// are only known to lie in their element type's range, so an index computed from data is
// unbounded unless the program clamps it. The per-node rules are interval_rules.h's,
// written once over an end algebra; the lowering's symbolic bounds
// (compiler_core/lowering/bounds_inference.h) instantiate the same rules with Expr ends
// (compiler_core/lowering/README.md, "Bounds").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir.h"

namespace stipple::bounds {

/// A closed interval of real numbers, possibly infinite at either end; `may_be_nan` for
/// float expressions that can produce NaN (which a cast to an integer turns into 0).
/// Empty (min > max) for an expression that is never evaluated, such as an index under a
/// reduction over an empty domain.
struct Interval {
  double min = 0, max = 0;
  bool may_be_nan = false;

  static Interval point(double v) { return {v, v, false}; }
  static Interval range(double lo, double hi) { return {lo, hi, false}; }
  static Interval everything();
  /// No value at all: the identity of union_with.
  static Interval nothing();
  static Interval of_type(Type t);
  bool is_empty() const { return min > max; }
  bool is_bounded() const;
  /// The number of integers in [min, max] of an integer interval: 0 when empty, infinite
  /// when unbounded.
  double extent() const;
  Interval union_with(const Interval& o) const;
  Interval intersect_with(const Interval& o) const;
  bool operator==(const Interval& o) const = default;
};

/// Variables in scope, innermost last (so shadowing works by searching from the back).
using IntervalScope = std::vector<std::pair<std::string, Interval>>;

/// What an expression's leaves mean to the caller: the evaluator knows the params and
/// the inputs, the reuse model assumes defaults and estimates.
class IntervalConstants {
 public:
  virtual ~IntervalConstants() = default;
  virtual Interval param(const std::string& name, Type t) const = 0;
  virtual Interval input_extent(const std::string& input, int dim) const = 0;
  /// A variable that is not in the scope.
  virtual Interval free_variable(const std::string& name) const = 0;
};

/// The interval of values `e` can take with its variables in `scope`.
Interval interval_of(const Expr& e, IntervalScope& scope, const IntervalConstants& k);

// Rule helpers, public so that the symbolic end algebra (compiler_core/lowering/
// bounds_inference.cpp) takes them from here too.

/// Float ends move outward by a relative 2^-20 plus an absolute 2^-100 (for ends at 0):
/// more than single-precision rounding of the real computation can move a value.
inline constexpr double kFloatWidenRelative = 0x1p-20;
inline constexpr double kFloatWidenAbsolute = 0x1p-100;
/// A float end moved outward (towards +inf when `up`); infinite ends stay.
double widen_float_end(double v, bool up);

/// Whether every value of the integer or bool type `from` is a value of the integer type
/// `to`: then a cast from one to the other keeps any interval (otherwise it may wrap).
bool int_cast_keeps_values(Type from, Type to);

/// What a reduction of `op` over an empty domain evaluates to, for a body of `body_type`.
double empty_reduction_value(ReduceOp op, Type body_type);

/// The values a reduction variable takes: from the least value of its min to the
/// greatest of its max (empty when the domain is always empty).
Interval reduction_range(const ReductionVariable& rv, IntervalScope& scope,
                         const IntervalConstants& k);

}  // namespace stipple::bounds
