// The interval rules of the IR's arithmetic, written once over an "end algebra": the
// concrete engine (interval.h, double ends, for the evaluator and the reuse model) and
// the lowering's symbolic one (lowering/bounds_inference.h, Expr ends evaluated by the
// generated code) both instantiate them.
//
// Why a template over the ends rather than one symbolic engine run on constant leaves:
// the concrete engine decides from the values of its ends (the divisor's sign, whether an
// operand is empty, whether a result left its type); the symbolic one knows a value only
// when an end is a constant. Each decision is a query to the algebra that answers
// known (and what) or unknown; a rule takes its exact branch when the answer is known and
// the bound that holds for every value otherwise. Double ends always answer, so the
// concrete engine stays as exact as before; Expr ends answer only what the lowering has
// always decided (a constant divisor, a reduction domain with constant bounds), so the
// bounds it generates are those it always generated. The concrete engine also stays plain
// arithmetic (the reuse model calls it in the inner loop of the search).
//
// An algebra `A` provides (see interval.cpp and lowering/bounds_inference.cpp):
//   using Iv (with `min`, `max`, `may_be_nan`) and End (the type of `min` and `max`);
//   Iv of(const Expr&)                       the interval of a subexpression (recursion);
//   Iv leaf(const Expr&)                     an immediate, param, input extent or variable;
//   void push(const std::string&, Iv), pop() names bound by Let and Reduce;
//   Iv of_type(Type), nothing(), constant(Type, double) (a point);
//   Iv fit(Type, Iv)                         a real result made valid for the type (wrapping,
//                                            float rounding);
//   bool known_empty(const Iv&)              the operand is never evaluated (or a reduction
//                                            variable's range is always empty);
//   bool decides_wrapping(Type)              whether fit can tell that a u8, u16, i8 or i16
//                                            result wraps (if not, such a result and an
//                                            integer cast that may wrap are the type's range,
//                                            and a u32 value always is);
//   bool infinite_end(const Iv&)             an end is unbounded;
//   optional<pair<double, double>> known_divisor(const Expr&, const Iv&);
//   bool is_point(const Expr&, const Iv&)    the divisor is one value (maybe not known);
//   bool same_point(const Iv&)               both ends are the same end;
//   optional<double> value(const End&);
//   End end(Type, double);
//   End add(x, y, up), sub(x, y, up)         (up: an upper end, rounding outward);
//   End min_lower(x, y), max_upper(x, y)     hull ends (an unbounded end absorbs);
//   End min_upper(x, y), max_lower(x, y)     Min's upper and Max's lower end (an unbounded
//                                            end is ignored);
//   End scale(x, c), product(x, y)           a product by a constant factor or a count of
//                                            terms, and a corner (Expr ends fold the first
//                                            only: the bounds stay the expressions the
//                                            lowering always built);
//   End quotient(x, y, Type), magnitude(x), negate(x);
//   End last_of(count, none)                 max(count - 1, none): the largest of `count`
//                                            indices from 0;
//   bool is_nan(const End&).
// and for casts, intrinsics and reductions, where the lowering's rules were always looser
// than the evaluator's (each algebra says what it answers):
//   bool known_at_least(x, v), known_at_most(x, v), known_below(x, v)
//                                            x >= v, x <= v, x < v (an operand's sign);
//   bool may_be_nan(const Iv&)               an operand of sqrt, log, sin, cos, tanh, atan2
//                                            or hypot may be NaN;
//   bool known_nonempty(ReduceOp, const ReductionVariable&, const Iv& lo, const Iv& hi)
//                                            the variable's range is never empty (lo and hi:
//                                            the intervals of its bounds);
//   bool known_count(const End&)             a sum is bounded from this count of terms (if
//                                            not, it is its type's range);
//   bool bounds_abs(const Iv&)               abs is bounded from the operand's ends (if not,
//                                            it is its type's range);
//   bool fits_magnitudes()                   abs and hypot results go through fit (if not,
//                                            they stand as computed);
//   End to_int(Type, x, up)                  an end cast from a float to the integer type;
//   optional<End> to_f16(x), End real(x)     an end rounded to f16, an integer end as a float;
//   End image(Intrinsic, x, up)              floor, ceil, round, sqrt, exp or log of an end,
//                                            rounded outward;
//   End hypot(x, y);
//   End extreme(Type, up)                    the type's largest (up) or least value;
//   End times_extent(n, const Iv&)           n times the number of integers in the interval;
//   End one_term(x)                          a sum of the one term x.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/bounds/interval.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir.h"

namespace stipple::bounds {

template <typename A>
class IntervalRules {
 public:
  using Iv = typename A::Iv;
  using End = typename A::End;

  explicit IntervalRules(A& a) : a_(a) {}

  /// The interval of `e`, its subexpressions' intervals taken from the algebra.
  Iv of(const Expr& e) {
    Type t = e.type();
    // Without decided wrapping: a u8, u16, i8 or i16 result that may have wrapped is its
    // type's range, and a u32 value always is (its values need not fit the algebra's i32
    // ends).
    if (t.is_int() && !a_.decides_wrapping(t) &&
        (t.bits() < 32 ? may_wrap(e.node_type()) : t.is_unsigned())) {
      return a_.of_type(t);
    }
    switch (e.node_type()) {
      case IRNodeType::IntImm:
      case IRNodeType::FloatImm:
      case IRNodeType::Param:
      case IRNodeType::InputExtent:
      case IRNodeType::Variable: return a_.leaf(e);
      case IRNodeType::Cast: return cast(e.as<Cast>());
      case IRNodeType::Add: return add(e.as<Add>());
      case IRNodeType::Sub: return sub(e.as<Sub>());
      case IRNodeType::Mul: return mul(e.as<Mul>());
      case IRNodeType::Div: return div(e.as<Div>());
      case IRNodeType::Mod: return mod(e.as<Mod>());
      case IRNodeType::Min: return min(e.as<Min>());
      case IRNodeType::Max: return max(e.as<Max>());
      case IRNodeType::EQ:
      case IRNodeType::NE:
      case IRNodeType::LT:
      case IRNodeType::LE:
      case IRNodeType::GT:
      case IRNodeType::GE:
      case IRNodeType::And:
      case IRNodeType::Or:
      case IRNodeType::Not: return a_.of_type(Bool());
      case IRNodeType::Select: {
        const Select* op = e.as<Select>();
        return hull(a_.of(op->true_value), a_.of(op->false_value));
      }
      case IRNodeType::Call: {
        const Call* op = e.as<Call>();
        if (op->call_type == CallType::Intrinsic) return intrinsic(op);
        return a_.of_type(t);  // a load: anything of its type
      }
      case IRNodeType::Reduce: return reduce(e.as<Reduce>());
      case IRNodeType::Let: {
        const Let* op = e.as<Let>();
        a_.push(op->name, a_.of(op->value));
        Iv r = a_.of(op->body);
        a_.pop();
        return r;
      }
      case IRNodeType::LetStmt:
      case IRNodeType::For:
      case IRNodeType::Provide:
      case IRNodeType::Allocate:
      case IRNodeType::Block:
      case IRNodeType::IfThenElse:
      case IRNodeType::Evaluate: break;
    }
    STIPPLE_INTERNAL_CHECK(
        false, std::string("bounds of unexpected node ") + node_type_name(e.node_type()));
    return a_.of_type(t);
  }

  /// The hull of two intervals (select's rule, and a union).
  Iv hull(const Iv& a, const Iv& b) {
    return {a_.min_lower(a.min, b.min), a_.max_upper(a.max, b.max), a.may_be_nan || b.may_be_nan};
  }

 private:
  // Whether a u8, u16, i8 or i16 result of this node may be a wrapped value (min, max, select and
  // let only pass values on; a cast and a variable have rules of their own).
  static bool may_wrap(IRNodeType n) {
    switch (n) {
      case IRNodeType::Cast:
      case IRNodeType::Variable:
      case IRNodeType::Min:
      case IRNodeType::Max:
      case IRNodeType::Select:
      case IRNodeType::Let: return false;
      default: return true;
    }
  }

  template <typename Op>
  std::pair<Iv, Iv> operands(const Op* op) {
    return {a_.of(op->a), a_.of(op->b)};
  }
  bool any_empty(const Iv& a, const Iv& b) { return a_.known_empty(a) || a_.known_empty(b); }
  // A float result may be NaN when an operand may be, or is unbounded (inf - inf, 0 * inf).
  bool float_nan(Type t, const Iv& a, const Iv& b) {
    return t.is_float() &&
           (a.may_be_nan || b.may_be_nan || a_.infinite_end(a) || a_.infinite_end(b));
  }

  Iv add(const Add* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    Type t = op->type;
    return a_.fit(t, {a_.add(a.min, b.min, false), a_.add(a.max, b.max, true), float_nan(t, a, b)});
  }

  Iv sub(const Sub* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    Type t = op->type;
    return a_.fit(t, {a_.sub(a.min, b.max, false), a_.sub(a.max, b.min, true), float_nan(t, a, b)});
  }

  // A point whose value the algebra knows.
  bool constant_point(const Iv& a) { return a_.same_point(a) && a_.value(a.min).has_value(); }

  Iv mul(const Mul* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    Type t = op->type;
    if (t.is_int()) {
      // By a constant factor: the ends scaled (swapped for a negative factor).
      if (constant_point(a)) std::swap(a, b);
      if (constant_point(b)) {
        double c = *a_.value(b.min);
        if (c == 0) return a_.fit(t, a_.constant(t, 0));
        if (c > 0) return a_.fit(t, {a_.scale(a.min, b.min), a_.scale(a.max, b.min), false});
        return a_.fit(t, {a_.scale(a.max, b.min), a_.scale(a.min, b.min), false});
      }
    }
    // The extremes of a product lie at the corners.
    End c0 = a_.product(a.min, b.min), c1 = a_.product(a.min, b.max);
    End c2 = a_.product(a.max, b.min), c3 = a_.product(a.max, b.max);
    return a_.fit(t,
                  {a_.min_lower(a_.min_lower(c0, c1), a_.min_lower(c2, c3)),
                   a_.max_upper(a_.max_upper(c0, c1), a_.max_upper(c2, c3)), float_nan(t, a, b)});
  }

  Iv div(const Div* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    Type t = op->type;
    if (std::optional<std::pair<double, double>> d = a_.known_divisor(op->b, b)) {
      return a_.fit(t, t.is_int() ? int_div(t, a, b, d->first, d->second) : float_div(t, a, b, *d));
    }
    if (a_.is_point(op->b, b)) {
      // One divisor of unknown sign: the quotients of the ends, in either order.
      End q0 = a_.quotient(a.min, b.min, t), q1 = a_.quotient(a.max, b.min, t);
      return a_.fit(t, {a_.min_lower(q0, q1), a_.max_upper(q0, q1), t.is_float()});
    }
    if (t.is_int()) {
      // |floor(a / b)| <= |a| for every integer b (x / 0 == 0).
      End m = a_.max_upper(a_.magnitude(a.min), a_.magnitude(a.max));
      return a_.fit(t, {a_.negate(m), m, false});
    }
    return a_.of_type(t);
  }

  // Floor division by a divisor in [b0, b1]: for a fixed sign of the divisor, monotonic in
  // the dividend (increasing for a positive divisor), and for a fixed dividend monotonic
  // in the divisor over each sign, so the extremes lie at the corners of each sign's part.
  Iv int_div(Type t, const Iv& a, const Iv& b, double b0, double b1) {
    std::optional<Iv> r;
    auto join = [&](const Iv& part) { r = r ? hull(*r, part) : part; };
    auto divisor = [&](double v) { return v == b0 ? b.min : v == b1 ? b.max : a_.end(t, v); };
    auto q = [&](const End& x, double y) { return a_.quotient(x, divisor(y), t); };
    if (b0 <= 0 && 0 <= b1) join(a_.constant(t, 0));  // x / 0 == 0
    if (b1 >= 1) {
      double p0 = std::max(b0, 1.0);
      if (p0 == b1) {
        join({q(a.min, p0), q(a.max, p0), false});
      } else {
        join({a_.min_lower(q(a.min, p0), q(a.min, b1)), a_.max_upper(q(a.max, p0), q(a.max, b1)),
              false});
      }
    }
    if (b0 <= -1) {
      double n1 = std::min(b1, -1.0);
      if (b0 == n1) {
        join({q(a.max, b0), q(a.min, b0), false});
      } else {
        join({a_.min_lower(q(a.max, b0), q(a.max, n1)), a_.max_upper(q(a.min, b0), q(a.min, n1)),
              false});
      }
    }
    return *r;
  }

  Iv float_div(Type t, const Iv& a, const Iv& b, std::pair<double, double> d) {
    if (d.first <= 0 && d.second >= 0) return a_.of_type(t);
    End c[4] = {a_.quotient(a.min, b.min, t), a_.quotient(a.min, b.max, t),
                a_.quotient(a.max, b.min, t), a_.quotient(a.max, b.max, t)};
    for (const End& v : c) {
      if (a_.is_nan(v)) return a_.of_type(t);  // inf / inf
    }
    return {a_.min_lower(a_.min_lower(c[0], c[1]), a_.min_lower(c[2], c[3])),
            a_.max_upper(a_.max_upper(c[0], c[1]), a_.max_upper(c[2], c[3])), float_nan(t, a, b)};
  }

  Iv mod(const Mod* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    Type t = op->type;
    if (t.is_int()) {
      // Euclidean: 0..|b| - 1 (x % 0 == 0), and `a` itself when a constant divisor
      // already leaves it unchanged.
      End m = a_.max_upper(a_.magnitude(b.min), a_.magnitude(b.max));
      if (std::optional<double> mv = a_.value(m)) {
        if (*mv == 0) return a_.fit(t, a_.constant(t, 0));
        std::optional<double> lo = a_.value(a.min), hi = a_.value(a.max);
        if (a_.same_point(b) && lo && hi && *lo >= 0 && *hi < *mv) return a_.fit(t, a);
      }
      return a_.fit(t, {a_.end(t, 0), a_.last_of(m, 0), false});
    }
    // a - b * floor(a / b) lies in [0, b] for b > 0 (b itself after rounding) and [b, 0]
    // for b < 0; for a divisor of unknown sign, in their hull.
    std::optional<double> lo = a_.value(b.min), hi = a_.value(b.max);
    if (lo && hi) {
      bool nan = float_nan(t, a, b);
      if (*lo > 0) return a_.fit(t, {a_.end(t, 0), b.max, nan});
      if (*hi < 0) return a_.fit(t, {b.min, a_.end(t, 0), nan});
      return a_.of_type(t);  // x % 0 is NaN
    }
    if (a_.infinite_end(b)) return a_.of_type(t);
    return {a_.min_lower(b.min, a_.end(t, 0)), a_.max_upper(b.max, a_.end(t, 0)), true};
  }

  Iv min(const Min* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    return {a_.min_lower(a.min, b.min), a_.min_upper(a.max, b.max), a.may_be_nan || b.may_be_nan};
  }

  Iv max(const Max* op) {
    auto [a, b] = operands(op);
    if (any_empty(a, b)) return a_.nothing();
    return {a_.max_lower(a.min, b.min), a_.max_upper(a.max, b.max), a.may_be_nan || b.may_be_nan};
  }

  Iv cast(const Cast* op) {
    Iv a = a_.of(op->value);
    if (a_.known_empty(a)) return a_.nothing();
    Type from = op->value.type(), to = op->type;
    if (to.is_bool()) return a_.of_type(to);
    if (to.is_int() && from.is_float()) return cast_float_to_int(to, a);
    if (to.is_int()) {
      // From an integer or bool: kept where no value can wrap.
      if (int_cast_keeps_values(from, to)) return a;
      return a_.decides_wrapping(to) ? a_.fit(to, a) : a_.of_type(to);
    }
    if (to.is_f16()) {
      // Rounding to f16 is monotonic: the rounded ends, where the algebra can round them
      // (it moves values too far for fit's widening).
      std::optional<End> lo = a_.to_f16(a.min), hi = a_.to_f16(a.max);
      if (lo && hi) return {*lo, *hi, a.may_be_nan};
      return a_.of_type(to);
    }
    if (from.is_float()) return a_.fit(to, a);
    return a_.fit(to, {a_.real(a.min), a_.real(a.max), a.may_be_nan});
  }

  // Float to integer truncates and saturates, so the ends cast bound the result; NaN is 0.
  Iv cast_float_to_int(Type to, const Iv& a) {
    End lo = a_.to_int(to, a.min, false), hi = a_.to_int(to, a.max, true);
    // A NaN end (a NaN constant) casts to 0, which may lie on either side of the other.
    Iv r = a_.is_nan(a.min) || a_.is_nan(a.max)
               ? Iv{a_.min_lower(lo, hi), a_.max_upper(lo, hi), false}
               : Iv{lo, hi, false};
    return a.may_be_nan ? hull(r, a_.constant(to, 0)) : r;
  }

  Iv intrinsic(const Call* op) {
    Iv a = a_.of(op->args[0]);
    if (a_.known_empty(a)) return a_.nothing();
    Type t = op->type;
    Intrinsic f = op->intrinsic;
    switch (f) {
      case Intrinsic::Abs: return abs(t, a);
      // Each is monotonic, so its ends are the ends' images, and exact: an integral value
      // is never rounded, so no widening.
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
      case Intrinsic::Round:
        return {a_.image(f, a.min, false), a_.image(f, a.max, true), a.may_be_nan};
      case Intrinsic::Sqrt:
        return a_.fit(t, {a_.image(f, a.min, false), a_.image(f, a.max, true),
                          a_.may_be_nan(a) || a_.known_below(a.min, 0)});
      case Intrinsic::Exp:
        return a_.fit(t, {a_.image(f, a.min, false), a_.image(f, a.max, true), a.may_be_nan});
      case Intrinsic::Log: {
        // No lower end unless the argument's is known not to be negative (log(0) is -inf).
        End lo = a_.known_at_least(a.min, 0) ? a_.image(f, a.min, false) : a_.of_type(t).min;
        return a_.fit(t,
                      {lo, a_.image(f, a.max, true), a_.may_be_nan(a) || a_.known_below(a.min, 0)});
      }
      // Unbounded: pow (an index through pow must be clamped, so that the evaluator accepts
      // no index that the lowering cannot bound), tan (poles, and the C library's tan).
      case Intrinsic::Pow:
      case Intrinsic::Tan: return a_.of_type(t);
      case Intrinsic::Sin:
      case Intrinsic::Cos:
        return {a_.end(t, -1), a_.end(t, 1), a_.may_be_nan(a) || a_.infinite_end(a)};
      case Intrinsic::Tanh:
        return {a_.end(t, -1), a_.end(t, 1), a_.may_be_nan(a)};  // tanh(+-inf) is +-1
      case Intrinsic::Atan2: {
        // In [-pi, pi]; an f32 result may round past pi, so the ends are widened.
        Iv x = a_.of(op->args[1]);
        if (a_.known_empty(x)) return a_.nothing();
        const double pi = 3.14159265358979323846;
        return {a_.end(t, widen_float_end(-pi, false)), a_.end(t, widen_float_end(pi, true)),
                a_.may_be_nan(a) || a_.may_be_nan(x)};
      }
      case Intrinsic::Hypot: {
        // max(|a|, |b|) <= hypot(a, b) <= hypot of the largest magnitudes (monotonic in
        // each magnitude); fit widens the ends for rounding. hypot(inf, NaN) is inf.
        Iv b = a_.of(op->args[1]);
        if (a_.known_empty(b)) return a_.nothing();
        Iv ma = magnitudes(t, a), mb = magnitudes(t, b);
        Iv r{a_.max_lower(ma.min, mb.min), a_.hypot(ma.max, mb.max),
             a_.may_be_nan(a) || a_.may_be_nan(b)};
        return a_.fits_magnitudes() ? a_.fit(t, r) : r;
      }
      case Intrinsic::Fma:
        // The exact a * b + c lies in the interval of the real product plus c, and one
        // rounding of it stays within the widened ends of that interval.
        return a_.of(Add::make(Mul::make(op->args[0], op->args[1]), op->args[2]));
      case Intrinsic::None: break;
    }
    STIPPLE_INTERNAL_CHECK(false, "call of intrinsic None");
    return a_.of_type(t);
  }

  // The values of |x| for x in `a`: `a` itself or negated where its sign is known, else
  // 0 up to the larger magnitude of its ends.
  Iv magnitudes(Type t, const Iv& a) {
    if (a_.known_at_least(a.min, 0)) return a;
    if (a_.known_at_most(a.max, 0)) return {a_.negate(a.max), a_.negate(a.min), a.may_be_nan};
    return {a_.end(t, 0), a_.max_upper(a_.magnitude(a.min), a_.magnitude(a.max)), a.may_be_nan};
  }

  Iv abs(Type t, const Iv& a) {
    if (!a_.bounds_abs(a)) return a_.of_type(t);
    Iv r = magnitudes(t, a);
    return a_.fits_magnitudes() ? a_.fit(t, r) : r;
  }

  Iv reduce(const Reduce* op) {
    Type t = op->type, body_type = op->body.type();
    bool may_be_empty = false, empty = false;
    std::vector<Iv> ranges;
    End count = a_.end(Int32(), 1);  // of the domain's points
    for (const ReductionVariable& rv : op->domain) {
      Iv lo = a_.of(rv.min), hi = a_.of(rv.max);
      if (!a_.known_nonempty(op->op, rv, lo, hi)) may_be_empty = true;
      Iv range{lo.min, hi.max, false};
      if (a_.known_empty(range)) empty = true;
      count = a_.times_extent(count, range);
      ranges.push_back(range);
    }
    if (empty) return a_.constant(t, empty_reduction_value(op->op, body_type));
    for (size_t i = 0; i < ranges.size(); ++i) a_.push(op->domain[i].name, ranges[i]);
    Iv body = a_.of(op->body);
    for (size_t i = 0; i < ranges.size(); ++i) a_.pop();
    switch (op->op) {
      case ReduceOp::Sum:
      // Each point adds a * b rounded once instead of twice: within the same bounds.
      case ReduceOp::FusedSum: return sum(t, body, count, may_be_empty);
      case ReduceOp::Prod:
        // Factors in [0, 1] keep the product there (and 1, the empty product); else anything.
        if (a_.known_at_least(body.min, 0) && a_.known_at_most(body.max, 1)) {
          return {a_.end(t, 0), a_.end(t, 1), body.may_be_nan};
        }
        return a_.of_type(t);
      case ReduceOp::Minimum:
      case ReduceOp::Maximum:
      case ReduceOp::Median:
        return may_be_empty ? hull(body, empty_value(op->op, body_type)) : body;
      case ReduceOp::ArgMin: {
        // An index from 0 to count - 1, or -1 for an empty domain.
        double none = may_be_empty ? -1 : 0;
        return a_.fit(Int32(), {a_.end(Int32(), none), a_.last_of(count, none), false});
      }
    }
    return a_.of_type(t);
  }

  // From the fewest terms (none where the domain may be empty, else one) to `count` terms,
  // each in the body's interval.
  Iv sum(Type t, const Iv& body, const End& count, bool may_be_empty) {
    if (!a_.known_count(count)) return a_.of_type(t);
    End most = t.is_float() ? a_.real(count) : count;
    End none = a_.end(t, 0);
    End lo = may_be_empty ? none : a_.one_term(body.min);
    End hi = may_be_empty ? none : a_.one_term(body.max);
    return a_.fit(
        t, {a_.min_lower(lo, a_.scale(most, body.min)), a_.max_upper(hi, a_.scale(most, body.max)),
            body.may_be_nan || a_.infinite_end(body)});
  }

  // What a minimum, maximum or median over an empty domain yields (empty_reduction_value).
  Iv empty_value(ReduceOp op, Type body_type) {
    if (op == ReduceOp::Median) return a_.leaf(make_zero(body_type));
    End e = a_.extreme(body_type, op == ReduceOp::Minimum);
    return {e, e, false};
  }

  A& a_;
};

}  // namespace stipple::bounds
