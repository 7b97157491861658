// Interval arithmetic over IR expressions with concrete ends: the end algebra of the shared
// rules (interval_rules.h) for double ends, and its casts, intrinsics and reductions.
#include "compiler_core/bounds/interval.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

/// `fit` for an operation whose real result is a value of a float type t: no widening.
Interval exact(Type t, Interval iv) { return t.is_float() ? iv : fit(t, iv); }

Interval abs_interval(const Interval& a) {
  if (a.min >= 0) return a;
  if (a.max <= 0) return {-a.max, -a.min, a.may_be_nan};
  return {0, std::max(-a.min, a.max), a.may_be_nan};
}

Interval intrinsic_interval(const Call* op, IntervalScope& scope, const IntervalConstants& k) {
  Interval a = interval_of(op->args[0], scope, k);
  if (a.is_empty()) return Interval::nothing();
  Type t = op->type;
  bool nan = a.may_be_nan;
  switch (op->intrinsic) {
    case Intrinsic::Abs: return fit(t, abs_interval(a));
    // Each is monotonic, so its ends are the ends' images, and exact: an integral value
    // is never rounded, so no widening. Round is half to even, as the evaluator's
    // (std::round, half away from zero, would move a lower end 2.5 to 3).
    case Intrinsic::Floor: return exact(t, {std::floor(a.min), std::floor(a.max), nan});
    case Intrinsic::Ceil: return exact(t, {std::ceil(a.min), std::ceil(a.max), nan});
    case Intrinsic::Round: return exact(t, {std::nearbyint(a.min), std::nearbyint(a.max), nan});
    case Intrinsic::Sqrt:
      return fit(
          t, {std::sqrt(std::max(a.min, 0.0)), std::sqrt(std::max(a.max, 0.0)), nan || a.min < 0});
    case Intrinsic::Exp: return fit(t, {std::exp(a.min), std::exp(a.max), nan});
    case Intrinsic::Log:
      return fit(t, {a.min > 0 ? std::log(a.min) : -kInf, a.max > 0 ? std::log(a.max) : -kInf,
                     nan || a.min < 0});
    // The lowering cannot bound pow either; an index through pow must be clamped.
    case Intrinsic::Pow: return Interval::everything();
    case Intrinsic::Sin:
    case Intrinsic::Cos: return {-1, 1, nan || has_infinite_end(a)};
    case Intrinsic::Tan: return Interval::everything();  // poles, and the C library's tan
    case Intrinsic::Tanh: return {-1, 1, nan};           // tanh(+-inf) is +-1
    case Intrinsic::Atan2: {
      // In [-pi, pi]; an f32 result may round past pi, so the ends are widened.
      Interval x = interval_of(op->args[1], scope, k);
      if (x.is_empty()) return Interval::nothing();
      const double pi = 3.14159265358979323846;
      return {widen_float_end(-pi, false), widen_float_end(pi, true), nan || x.may_be_nan};
    }
    case Intrinsic::Hypot: {
      // max(|a|, |b|) <= hypot(a, b) <= hypot of the largest magnitudes (monotonic in
      // each magnitude); fit widens the ends for rounding. hypot(inf, NaN) is inf.
      Interval b = interval_of(op->args[1], scope, k);
      if (b.is_empty()) return Interval::nothing();
      Interval aa = abs_interval(a), ab = abs_interval(b);
      return fit(t, {std::max(aa.min, ab.min), std::hypot(aa.max, ab.max), nan || b.may_be_nan});
    }
    case Intrinsic::Fma:
      // The exact a * b + c lies in the interval of the real product plus c, and one
      // rounding of it stays within the widened ends of that interval.
      return interval_of(Add::make(Mul::make(op->args[0], op->args[1]), op->args[2]), scope, k);
    case Intrinsic::None: break;
  }
  STIPPLE_INTERNAL_CHECK(false, "call of intrinsic None");
  return Interval::everything();
}

Interval reduce_interval(const Reduce* op, IntervalScope& scope, const IntervalConstants& k) {
  Type t = op->type;
  Type body_type = op->body.type();
  bool possibly_empty = false, always_empty = false;
  std::vector<Interval> ranges;
  for (const ReductionVariable& rv : op->domain) {
    Interval lo = interval_of(rv.min, scope, k), hi = interval_of(rv.max, scope, k);
    if (lo.max > hi.min) possibly_empty = true;
    if (lo.min > hi.max) always_empty = true;
    ranges.push_back({lo.min, hi.max, false});
  }
  Interval empty_value = Interval::point(empty_reduction_value(op->op, body_type));
  if (always_empty) return empty_value;
  for (size_t i = 0; i < ranges.size(); ++i) scope.emplace_back(op->domain[i].name, ranges[i]);
  Interval body = interval_of(op->body, scope, k);
  scope.resize(scope.size() - ranges.size());
  double n = 1;
  for (const Interval& r : ranges) n *= r.extent();
  Interval r;
  switch (op->op) {
    case ReduceOp::Sum: {
      double fewest = possibly_empty ? 0 : 1;  // terms
      r = {lower(std::min(mul_endpoint(fewest, body.min), mul_endpoint(n, body.min))),
           upper(std::max(mul_endpoint(fewest, body.max), mul_endpoint(n, body.max))),
           body.may_be_nan || has_infinite_end(body)};
      return fit(t, r);
    }
    case ReduceOp::Prod:
      if (body.min >= 0 && body.max <= 1) return {0, 1, body.may_be_nan};
      return Interval::of_type(t);
    case ReduceOp::Minimum:
    case ReduceOp::Maximum:
    case ReduceOp::Median: r = body; break;
    case ReduceOp::ArgMin: r = fit(Int32(), {0, n - 1, false}); break;
  }
  return possibly_empty ? r.union_with(empty_value) : r;
}

Interval cast_interval(const Cast* op, IntervalScope& scope, const IntervalConstants& k) {
  Interval a = interval_of(op->value, scope, k);
  if (a.is_empty()) return Interval::nothing();
  Type from = op->value.type(), to = op->type;
  if (to.is_bool()) return bool_interval();
  if (to.is_int() && from.is_float()) {
    Interval r =
        Interval::point(static_cast<double>(float_to_int(to.code, a.min)))
            .union_with(Interval::point(static_cast<double>(float_to_int(to.code, a.max))));
    return a.may_be_nan ? r.union_with(Interval::point(0)) : r;
  }
  if (to.is_int() && int_cast_keeps_values(from, to)) return a;
  if (to.is_f16()) {  // rounding to f16 is monotonic: the rounded ends
    auto f16 = [](double v) { return static_cast<double>(round_to_f16(f64_to_f32_round_odd(v))); };
    return {f16(a.min), f16(a.max), a.may_be_nan};
  }
  return fit(to, a);
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
  Iv cast(const Cast* op) { return cast_interval(op, scope_, k_); }
  Iv intrinsic(const Call* op) { return intrinsic_interval(op, scope_, k_); }
  Iv reduce(const Reduce* op) { return reduce_interval(op, scope_, k_); }

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
    // Integer intervals are always finite (fit() clamps them to their type).
    if (t.is_int()) {
      return static_cast<double>(floor_div(static_cast<int64_t>(x), static_cast<int64_t>(y)));
    }
    return x / y;
  }
  static double magnitude(double x) { return std::abs(x); }
  static double negate(double x) { return -x; }
  static double last_of(double count, double none) { return std::max(count - 1, none); }
  static bool is_nan(double v) { return std::isnan(v); }

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
