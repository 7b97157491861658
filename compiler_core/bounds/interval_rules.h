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
// always decided (a constant divisor), so the bounds it generates are those it always
// generated. The concrete engine also stays plain arithmetic (the reuse model calls it
// in the inner loop of the search).
//
// An algebra `A` provides (see interval.cpp and lowering/bounds_inference.cpp):
//   using Iv (with `min`, `max`, `may_be_nan`) and End (the type of `min` and `max`);
//   Iv of(const Expr&)                       the interval of a subexpression (recursion);
//   Iv leaf(const Expr&)                     an immediate, param, input extent or variable;
//   void push(const std::string&, Iv), pop() names bound by Let and Reduce;
//   Iv cast(const Cast*), intrinsic(const Call*), reduce(const Reduce*);
//   Iv of_type(Type), nothing(), constant(Type, double) (a point);
//   Iv fit(Type, Iv)                         a real result made valid for the type (wrapping,
//                                            float rounding);
//   bool known_empty(const Iv&)              the operand is never evaluated;
//   bool decides_wrapping(Type)              whether fit can tell that a u8, u16, i8 or i16
//                                            result wraps (if not, such a result is the
//                                            type's range, and a u32 value always is);
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
//   End scale(x, c), product(x, y)           a product by a constant factor, and a corner
//                                            (Expr ends fold the first only: the bounds stay
//                                            the expressions the lowering always built);
//   End quotient(x, y, Type), magnitude(x), negate(x);
//   End last_of(count, none)                 max(count - 1, none): the largest of `count`
//                                            indices from 0;
//   bool is_nan(const End&).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

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
      case IRNodeType::Cast: return a_.cast(e.as<Cast>());
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
        if (op->call_type == CallType::Intrinsic) return a_.intrinsic(op);
        return a_.of_type(t);  // a load: anything of its type
      }
      case IRNodeType::Reduce: return a_.reduce(e.as<Reduce>());
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

  A& a_;
};

}  // namespace stipple::bounds
