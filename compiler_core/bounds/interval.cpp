// Interval arithmetic over IR expressions with concrete ends: the end algebra of the shared
// rules (interval_rules.h) for double ends.
#include "compiler_core/bounds/interval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "compiler_core/bounds/interval_rules.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple::bounds {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Endpoint arithmetic that never yields NaN: a NaN endpoint (inf - inf) widens outward.
double lower(double v) { return std::isnan(v) ? -kInf : v; }
double upper(double v) { return std::isnan(v) ? kInf : v; }
// A zero factor is exactly zero, even against an infinite endpoint.
double mul_endpoint(double a, double b) { return (a == 0 || b == 0) ? 0 : a * b; }

bool has_infinite_end(const Interval& a) { return std::isinf(a.min) || std::isinf(a.max); }

Interval bool_interval() { return {0, 1, false}; }

/// Makes an interval computed with exact real arithmetic valid for values of type t:
/// an integer result that may leave the type's range may wrap to anything in it.
Interval fit(Type t, Interval iv) {
  if (t.is_bool()) return bool_interval();
  if (t.is_int()) {
    if (std::isnan(iv.min) || std::isnan(iv.max) || iv.min < t.min_value() ||
        iv.max > t.max_value()) {
      return Interval::of_type(t);
    }
    return {std::floor(iv.min), std::ceil(iv.max), false};
  }
  // An end past the type's largest finite value may round to infinity (f32 products of
  // large values overflow where the real result does not).
  double finite = t.element_of() == Float32() ? std::numeric_limits<float>::max()
                                              : std::numeric_limits<double>::max();
  double lo = widen_float_end(lower(iv.min), false), hi = widen_float_end(upper(iv.max), true);
  return {lo < -finite ? -kInf : lo, hi > finite ? kInf : hi, iv.may_be_nan};
}

}  // namespace

double widen_float_end(double v, bool up) {
  if (!std::isfinite(v)) return v;
  double d = std::abs(v) * kFloatWidenRelative + kFloatWidenAbsolute;
  return up ? v + d : v - d;
}

bool int_cast_keeps_values(Type from, Type to) {
  return !from.is_float() && to.is_int() && to.min_value() <= from.min_value() &&
         from.max_value() <= to.max_value();
}

double empty_reduction_value(ReduceOp op, Type body_type) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::FusedSum:
    case ReduceOp::Median: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Minimum: return body_type.max_value();
    case ReduceOp::Maximum: return body_type.min_value();
    case ReduceOp::ArgMin: return -1;
  }
  return 0;
}

Interval Interval::everything() { return {-kInf, kInf, true}; }

Interval Interval::nothing() { return {kInf, -kInf, false}; }

Interval Interval::of_type(Type t) {
  if (t.is_float()) return everything();
  return {t.min_value(), t.max_value(), false};
}

bool Interval::is_bounded() const {
  return !may_be_nan && std::isfinite(min) && std::isfinite(max);
}

double Interval::extent() const { return is_empty() ? 0 : max - min + 1; }

Interval Interval::union_with(const Interval& o) const {
  return {std::min(min, o.min), std::max(max, o.max), may_be_nan || o.may_be_nan};
}

Interval Interval::intersect_with(const Interval& o) const {
  return {std::max(min, o.min), std::min(max, o.max), may_be_nan && o.may_be_nan};
}

namespace {

/// Double ends (interval_rules.h): every query is answered from the values, so each rule
/// takes its exact branch.
class ConcreteEnds {
 public:
  using Iv = Interval;
  using End = double;

  ConcreteEnds(IntervalScope& scope, const IntervalConstants& k) : scope_(scope), k_(k) {}

  Iv of(const Expr& e) { return IntervalRules<ConcreteEnds>(*this).of(e); }
  Iv leaf(const Expr& e) {
    switch (e.node_type()) {
      case IRNodeType::IntImm: return Interval::point(static_cast<double>(e.as<IntImm>()->value));
      case IRNodeType::FloatImm: return Interval::point(e.as<FloatImm>()->value);
      case IRNodeType::Param: return k_.param(e.as<Param>()->name, e.type());
      case IRNodeType::InputExtent: {
        const InputExtent* op = e.as<InputExtent>();
        return k_.input_extent(op->input, op->dim);
      }
      default: break;
    }
    const std::string& name = e.as<Variable>()->name;
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    return k_.free_variable(name);
  }
  void push(const std::string& name, Iv iv) { scope_.emplace_back(name, iv); }
  void pop() { scope_.pop_back(); }

  static Iv of_type(Type t) { return t.is_bool() ? bool_interval() : Interval::of_type(t); }
  static Iv nothing() { return Interval::nothing(); }
  static Iv constant(Type, double v) { return Interval::point(v); }
  static Iv fit(Type t, const Iv& iv) { return bounds::fit(t, iv); }

  static bool known_empty(const Iv& a) { return a.is_empty(); }
  static bool decides_wrapping(Type) { return true; }
  static bool infinite_end(const Iv& a) { return has_infinite_end(a); }
  static std::optional<std::pair<double, double>> known_divisor(const Expr&, const Iv& b) {
    return std::pair{b.min, b.max};
  }
  static bool is_point(const Expr&, const Iv& b) { return b.min == b.max; }
  static bool same_point(const Iv& b) { return b.min == b.max; }
  static std::optional<double> value(double v) { return v; }
  static double end(Type, double v) { return v; }

  static double add(double x, double y, bool up) { return up ? upper(x + y) : lower(x + y); }
  static double sub(double x, double y, bool up) { return up ? upper(x - y) : lower(x - y); }
  static double min_lower(double x, double y) { return std::min(x, y); }
  static double max_upper(double x, double y) { return std::max(x, y); }
  static double min_upper(double x, double y) { return std::min(x, y); }
  static double max_lower(double x, double y) { return std::max(x, y); }
  static double scale(double x, double c) { return mul_endpoint(x, c); }
  static double product(double x, double y) { return mul_endpoint(x, y); }
  static double quotient(double x, double y, Type t) {
    if (t.is_int()) {
      // An integer end is infinite where nothing bounded it: a free variable (fit() only
      // clamps results). The divisors here are at least 1 in magnitude. An infinite
      // dividend stays infinite; a finite one over an infinite divisor floors to 0 or -1,
      // as over any divisor larger than it.
      if (std::isinf(x)) return (x > 0) == (y > 0) ? kInf : -kInf;
      if (std::isinf(y)) return x == 0 || (x > 0) == (y > 0) ? 0.0 : -1.0;
      return static_cast<double>(floor_div(static_cast<int64_t>(x), static_cast<int64_t>(y)));
    }
    return x / y;
  }
  static double magnitude(double x) { return std::abs(x); }
  static double negate(double x) { return -x; }
  static double last_of(double count, double none) { return std::max(count - 1, none); }
  static bool is_nan(double v) { return std::isnan(v); }

  static bool known_at_least(double x, double v) { return x >= v; }
  static bool known_at_most(double x, double v) { return x <= v; }
  static bool known_below(double x, double v) { return x < v; }
  static bool may_be_nan(const Iv& a) { return a.may_be_nan; }
  static bool known_nonempty(ReduceOp, const ReductionVariable&, const Iv& lo, const Iv& hi) {
    return !(lo.max > hi.min);
  }
  // An infinite count too: the sum's ends are then infinite (or 0 for a body of 0).
  static bool known_count(double) { return true; }
  static bool bounds_abs(const Iv&) { return true; }
  // An abs is widened as if rounded, and an integer one may wrap (abs(-2^31)).
  static bool fits_magnitudes() { return true; }

  static double to_int(Type t, double x, bool) {
    return static_cast<double>(float_to_int(t.code, x));
  }
  static std::optional<double> to_f16(double x) {
    return static_cast<double>(round_to_f16(f64_to_f32_round_odd(x)));
  }
  static double real(double x) { return x; }
  static double image(Intrinsic f, double x, bool) {
    switch (f) {
      case Intrinsic::Floor: return std::floor(x);
      case Intrinsic::Ceil: return std::ceil(x);
      // Half to even, as the evaluator's (std::round, half away from zero, would move a
      // lower end 2.5 to 3).
      case Intrinsic::Round: return std::nearbyint(x);
      case Intrinsic::Sqrt: return std::sqrt(std::max(x, 0.0));
      case Intrinsic::Exp: return std::exp(x);
      case Intrinsic::Log: return x > 0 ? std::log(x) : -kInf;  // not NaN below 0
      default: break;
    }
    STIPPLE_INTERNAL_CHECK(false, std::string("image of ") + intrinsic_name(f));
    return x;
  }
  static double hypot(double x, double y) { return std::hypot(x, y); }
  static double extreme(Type t, bool up) { return up ? t.max_value() : t.min_value(); }
  // No range is empty where the count is used (an empty one is the reduction's result).
  static double times_extent(double n, const Iv& r) { return n * r.extent(); }
  // 0 + x: a -0 end is 0.
  static double one_term(double x) { return mul_endpoint(1, x); }

 private:
  IntervalScope& scope_;
  const IntervalConstants& k_;
};

}  // namespace

Interval interval_of(const Expr& e, IntervalScope& scope, const IntervalConstants& k) {
  return ConcreteEnds(scope, k).of(e);
}

Interval reduction_range(const ReductionVariable& rv, IntervalScope& scope,
                         const IntervalConstants& k) {
  return {interval_of(rv.min, scope, k).min, interval_of(rv.max, scope, k).max, false};
}

}  // namespace stipple::bounds
