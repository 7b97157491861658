// Bounds inference over concrete values: interval arithmetic on IR expressions and the
// box each func must be realised over.
//
// Every constant (params, input extents) is a point; a consumer's pure variables range
// over the consumer's box and reduction variables over their evaluated ranges. Loads from
// funcs and inputs are only known to lie in their element type's range, so an index that
// depends on an f32 or i32 value is unbounded unless the program clamps it. Intervals are
// sound (they contain every value the evaluator can compute), not necessarily tight.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/interp/evaluation_setup.h"

namespace stipple::interp {

/// A closed interval of real numbers, possibly infinite at either end; `may_be_nan` for
/// float expressions that can produce NaN (which a cast to an integer turns into 0).
struct Interval {
  double min = 0, max = 0;
  bool may_be_nan = false;

  static Interval point(double v) { return {v, v, false}; }
  static Interval everything();
  static Interval of_type(Type t);
  bool is_bounded() const;
  Interval union_with(const Interval& o) const;
};

/// Variables in scope, innermost last (so shadowing works by searching from the back).
using IntervalScope = std::vector<std::pair<std::string, Interval>>;

/// The interval of values `e` can take with its variables in `scope`.
Interval interval_of(const Expr& e, IntervalScope& scope, const ConstantEnv& env);

/// Coordinates and sizes beyond these make a box "unbounded" for the user's purposes.
inline constexpr int64_t kMaxBoxCoordinate = int64_t{1} << 30;
inline constexpr int64_t kMaxBoxElements = int64_t{1} << 31;

/// The box of every func in `order` (callee-first, as order_funcs gives it) when the
/// last func in `order` is required over `output_box`. Throws UserError naming the
/// caller and the callee when an index is unbounded. A func that is only called where
/// evaluation never goes (inside a reduction with an empty domain) gets no box.
std::map<std::string, FuncBox> infer_boxes(const ConstantEnv& env,
                                           const std::vector<const Func*>& order,
                                           const FuncBox& output_box);

/// The concrete range [min, max] of each variable of a reduction domain whose bounds
/// depend only on constants (and variables already in `scope`): the hull of the bounds.
std::vector<Interval> domain_intervals(const std::vector<ReductionVariable>& domain,
                                       IntervalScope& scope, const ConstantEnv& env);

}  // namespace stipple::interp
