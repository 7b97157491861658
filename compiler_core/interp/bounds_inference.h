// Bounds inference over concrete values: the box each func must be realised over.
//
// Every constant (params, input extents) is a point; a consumer's pure variables range
// over the consumer's box and reduction variables over their evaluated ranges. The
// interval arithmetic itself is compiler_core/bounds/interval.h's, shared with the reuse
// model.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/bounds/interval.h"
#include "compiler_core/interp/evaluation_setup.h"

namespace stipple::interp {

using bounds::Interval;
using bounds::IntervalConstants;
using bounds::IntervalScope;

/// The params and input extents of one evaluation as interval constants (points); a
/// variable outside the scope is an InternalError.
class EnvConstants : public IntervalConstants {
 public:
  explicit EnvConstants(const ConstantEnv& env) : env_(env) {}
  Interval param(const std::string& name, Type t) const override;
  Interval input_extent(const std::string& input, int dim) const override;
  Interval free_variable(const std::string& name) const override;

 private:
  const ConstantEnv& env_;
};

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
                                       IntervalScope& scope, const IntervalConstants& k);

}  // namespace stipple::interp
