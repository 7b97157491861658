// Symbolic interval arithmetic over Exprs: the end algebra of the shared rules
// (compiler_core/bounds/interval_rules.h) for Expr ends (see the header and README.md,
// "Bounds").
#include "compiler_core/lowering/bounds_inference.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>

#include "compiler_core/bounds/interval.h"
#include "compiler_core/bounds/interval_rules.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::lowering {

namespace {

Expr i32(int64_t v) { return IntImm::make(Int32(), v); }
Expr f64(double v) { return FloatImm::make(Float64(), v); }

bool is_const(const Expr& e, int64_t* v) {
  const IntImm* imm = e.as<IntImm>();
  if (imm && e.type() == Int32()) {
    *v = imm->value;
    return true;
  }
  return false;
}

// Whether e has at most `budget` nodes (counting shared nodes each time they are reached),
// so that structural comparisons never walk a large DAG as a tree.
bool small(const Expr& e, int& budget) {
  if (--budget < 0) return false;
  switch (e.node_type()) {
    case IRNodeType::Cast: return small(e.as<Cast>()->value, budget);
#define STIPPLE_SMALL(N) \
  case IRNodeType::N: return small(e.as<N>()->a, budget) && small(e.as<N>()->b, budget);
      STIPPLE_SMALL(Add)
      STIPPLE_SMALL(Sub)
      STIPPLE_SMALL(Mul)
      STIPPLE_SMALL(Div)
      STIPPLE_SMALL(Mod)
      STIPPLE_SMALL(Min)
      STIPPLE_SMALL(Max)
#undef STIPPLE_SMALL
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Variable:
    case IRNodeType::Param:
    case IRNodeType::InputExtent: return true;
    default: return false;
  }
}

}  // namespace

bool cheap_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  int ba = 64, bb = 64;
  return small(a, ba) && small(b, bb) && equal(a, b);
}

namespace {

// Constructors that fold i32 constants and drop identities, so that bounds stay small
// and equal bounds from different call sites are recognisably equal.
Expr fold(IRNodeType op, const Expr& a, const Expr& b) {
  int64_t x = 0, y = 0;
  bool ca = is_const(a, &x), cb = is_const(b, &y);
  if (a.type() == Int32() && b.type() == Int32()) {
    auto fits = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
    switch (op) {
      case IRNodeType::Add:
        if (ca && cb && fits(x + y)) return i32(x + y);
        if (ca && x == 0) return b;
        if (cb && y == 0) return a;
        return Add::make(a, b);
      case IRNodeType::Sub:
        if (ca && cb && fits(x - y)) return i32(x - y);
        if (cb && y == 0) return a;
        if (cheap_equal(a, b)) return i32(0);
        return Sub::make(a, b);
      case IRNodeType::Mul:
        if (ca && cb && fits(x * y)) return i32(x * y);
        if ((ca && x == 0) || (cb && y == 0)) return i32(0);
        if (ca && x == 1) return b;
        if (cb && y == 1) return a;
        return Mul::make(a, b);
      case IRNodeType::Min:
        if (ca && cb) return i32(std::min(x, y));
        if (cheap_equal(a, b)) return a;
        return Min::make(a, b);
      case IRNodeType::Max:
        if (ca && cb) return i32(std::max(x, y));
        if (cheap_equal(a, b)) return a;
        return Max::make(a, b);
      default: break;
    }
  }
  switch (op) {
    case IRNodeType::Add: return Add::make(a, b);
    case IRNodeType::Sub: return Sub::make(a, b);
    case IRNodeType::Mul: return Mul::make(a, b);
    case IRNodeType::Div: return Div::make(a, b);
    case IRNodeType::Min: return cheap_equal(a, b) ? a : Min::make(a, b);
    case IRNodeType::Max: return cheap_equal(a, b) ? a : Max::make(a, b);
    default: break;
  }
  STIPPLE_INTERNAL_CHECK(false, "fold of another node");
  return Expr();
}

Expr emin(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return Expr();
  if (a.same_as(b)) return a;
  return fold(IRNodeType::Min, a, b);
}
Expr emax(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return Expr();
  if (a.same_as(b)) return a;
  return fold(IRNodeType::Max, a, b);
}
template <typename Op>
Expr bin(const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return Expr();
  return fold(Op::kNodeType, a, b);
}

// Float ends move outward as the concrete engine's (bounds::widen_float_end), so that
// rounding of the real computation in f32 never leaves the interval.
Expr widen(const Expr& v, bool up) {
  if (!v.defined()) return v;
  if (const FloatImm* imm = v.as<FloatImm>()) return f64(bounds::widen_float_end(imm->value, up));
  Expr d = Add::make(
      Mul::make(Call::make_intrinsic(Intrinsic::Abs, {v}), f64(bounds::kFloatWidenRelative)),
      f64(bounds::kFloatWidenAbsolute));
  return up ? Add::make(v, d) : Sub::make(v, d);
}
SInterval widened(SInterval iv) {
  iv.min = widen(iv.min, false);
  iv.max = widen(iv.max, true);
  if (!iv.min.defined() || !iv.max.defined()) iv.may_be_nan = true;
  return iv;
}

SInterval int_range(Type t) {
  if (t.is_bool()) return {i32(0), i32(1), false};
  if (t.is_int() && t.bits() < 32) {  // u8, u16, i8, i16
    return {i32(static_cast<int64_t>(t.min_value())), i32(static_cast<int64_t>(t.max_value())),
            false};
  }
  if (t.is_int()) return {Expr(), Expr(), false};  // i32, u32: no i32 range
  return SInterval::everything();
}

}  // namespace

SInterval SInterval::point(Expr e) {
  Type t = e.type();
  if (t.is_bool()) return {i32(0), i32(1), false};
  if (t.is_float()) {
    Expr v = t == Float64() ? e : Cast::make(Float64(), e);
    return {v, v, false};
  }
  Expr v = t == Int32() ? e : Cast::make(Int32(), e);
  return {v, v, false};
}

SInterval interval_union(const SInterval& a, const SInterval& b) {
  return {emin(a.min, b.min), emax(a.max, b.max), a.may_be_nan || b.may_be_nan};
}

bool BoundsContext::available(const VarInfo& info) const {
  if (info.never || info.path.size() > level_.size()) return false;
  for (size_t i = 0; i < info.path.size(); ++i) {
    if (info.path[i] != level_[i]) return false;
  }
  return true;
}

namespace {

// `m + ((x - m) + 1) - 1` (the last point of a loop or split over a func's region
// m..x) is x. Taking the interval of the sum term by term would add m's range twice,
// and in deep compute_at nests that doubling compounds level after level until an
// allocation no longer fits (a random schedule of interpolate's pyramid did).
Expr last_point(const Expr& lo, const Expr& extent) {
  const Add* a = extent.as<Add>();
  int64_t one = 0;
  if (a && is_const(a->b, &one) && one == 1) {
    if (const Sub* d = a->a.as<Sub>()) {
      if (cheap_equal(d->b, lo)) return d->a;
    }
  }
  return bin<Sub>(bin<Add>(lo, extent), i32(1));
}

Expr last_point(const Expr& e) {
  int64_t one = 0;
  if (const Sub* s = e.as<Sub>()) {
    const Add* a = s->a.as<Add>();
    if (a && is_const(s->b, &one) && one == 1) return last_point(a->a, a->b);
  }
  return e;
}

}  // namespace

SInterval BoundsContext::variable(const std::string& name) {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  auto found = table_.find(name);
  if (found == table_.end() || available(found->second))
    return SInterval::point(Variable::make(name));
  auto memo = memo_.find(name);
  if (memo != memo_.end()) return memo->second;
  const VarInfo& info = found->second;
  SInterval r;
  if (info.kind == VarInfo::Kind::Loop) {
    SInterval lo = interval_of(info.min);
    SInterval hi = interval_of(last_point(info.min, info.extent));
    r = {lo.min, hi.max, false};
  } else {
    r = interval_of(info.min);
    if (info.clamp_lo.defined()) {
      Expr c = interval_of(info.clamp_lo).min;
      r.min = r.min.defined() ? emax(r.min, c) : c;
    }
    if (info.clamp_hi.defined()) {
      Expr c = interval_of(last_point(info.clamp_hi)).max;
      r.max = r.max.defined() ? emin(r.max, c) : c;
    }
  }
  memo_[name] = r;
  return r;
}

bool BoundsContext::invariant(const Expr& e) {
  auto found = invariant_memo_.find(e.get());
  if (found != invariant_memo_.end()) return found->second.second;
  bool r = true;
  switch (e.node_type()) {
    case IRNodeType::Variable: {
      const std::string& name = e.as<Variable>()->name;
      for (const auto& s : scope_) {
        if (s.first == name) r = false;
      }
      auto it = table_.find(name);
      if (it != table_.end() && !available(it->second)) r = false;
      break;
    }
    case IRNodeType::Call: {
      const Call* op = e.as<Call>();
      r = op->call_type == CallType::Intrinsic;
      for (const Expr& a : op->args) r = r && invariant(a);
      break;
    }
    case IRNodeType::Reduce:
    case IRNodeType::Let: r = false; break;
    case IRNodeType::Cast: r = invariant(e.as<Cast>()->value); break;
    case IRNodeType::Not: r = invariant(e.as<Not>()->a); break;
    case IRNodeType::Select: {
      const Select* op = e.as<Select>();
      r = invariant(op->condition) && invariant(op->true_value) && invariant(op->false_value);
      break;
    }
#define STIPPLE_BINARY(N) \
  case IRNodeType::N: r = invariant(e.as<N>()->a) && invariant(e.as<N>()->b); break;
      STIPPLE_BINARY(Add)
      STIPPLE_BINARY(Sub)
      STIPPLE_BINARY(Mul)
      STIPPLE_BINARY(Div)
      STIPPLE_BINARY(Mod)
      STIPPLE_BINARY(Min)
      STIPPLE_BINARY(Max)
      STIPPLE_BINARY(EQ)
      STIPPLE_BINARY(NE)
      STIPPLE_BINARY(LT)
      STIPPLE_BINARY(LE)
      STIPPLE_BINARY(GT)
      STIPPLE_BINARY(GE)
      STIPPLE_BINARY(And)
      STIPPLE_BINARY(Or)
#undef STIPPLE_BINARY
    default: break;
  }
  // Variables bound by Reduce and Let nodes are unique, so a node's answer never changes
  // within one context.
  // The memo holds the node, so that its address is not reused by another node.
  invariant_memo_[e.get()] = {e, r};
  return r;
}

SInterval BoundsContext::interval_of(const Expr& e) {
  // Definitions expanded from deeper levels are DAGs: each node is computed once.
  auto found = interval_memo_.find(e.get());
  if (found != interval_memo_.end()) return found->second.second;
  SInterval r = invariant(e) ? SInterval::point(e) : compute(e);
  interval_memo_[e.get()] = {e, r};
  return r;
}

/// Expr ends (interval_rules.h): a query is answered only where the lowering has always
/// decided it, for a constant divisor; every other decision is unknown, and a rule takes
/// the bound that holds for every value. The lowering takes i32 arithmetic not to wrap
/// (README.md, "Bounds"), so fit keeps an i32 interval and gives a u8 or u16 result the
/// type's range. Undefined ends are unbounded; constants are folded (`fold` above) so that
/// bounds stay small.
class SymbolicEnds {
 public:
  using Iv = SInterval;
  using End = Expr;

  explicit SymbolicEnds(BoundsContext& ctx) : ctx_(ctx) {}

  Iv of(const Expr& e) { return ctx_.interval_of(e); }
  Iv leaf(const Expr& e) {
    if (const Variable* v = e.as<Variable>()) return ctx_.variable(v->name);
    return SInterval::point(e);
  }
  void push(const std::string& name, Iv iv) { ctx_.push(name, std::move(iv)); }
  void pop() { ctx_.pop(); }

  static Iv of_type(Type t) { return int_range(t); }
  static Iv nothing() { return SInterval::everything(); }  // never asked: nothing is known empty
  static Iv constant(Type t, double v) { return SInterval::point(end(t, v)); }
  static Iv fit(Type t, const Iv& iv) {
    if (t.is_float()) return widened(iv);
    if (t == Int32()) return iv;
    return int_range(t);
  }

  static bool known_empty(const Iv&) { return false; }
  static bool decides_wrapping(Type) { return false; }
  static bool infinite_end(const Iv& a) { return !a.min.defined() || !a.max.defined(); }
  std::optional<std::pair<double, double>> known_divisor(const Expr& b, const Iv&) {
    int64_t c = 0;
    if (ctx_.invariant(b) && is_const(b, &c)) {
      return std::pair{static_cast<double>(c), static_cast<double>(c)};
    }
    return std::nullopt;
  }
  bool is_point(const Expr& b, const Iv&) { return ctx_.invariant(b); }
  static bool same_point(const Iv& b) { return b.min.defined() && b.min.same_as(b.max); }
  static std::optional<double> value(const Expr& v) {
    int64_t c = 0;
    if (v.defined() && is_const(v, &c)) return static_cast<double>(c);
    return std::nullopt;
  }
  static Expr end(Type t, double v) { return t.is_float() ? f64(v) : i32(static_cast<int64_t>(v)); }

  static Expr add(const Expr& x, const Expr& y, bool) { return bin<Add>(x, y); }
  static Expr sub(const Expr& x, const Expr& y, bool) { return bin<Sub>(x, y); }
  static Expr min_lower(const Expr& x, const Expr& y) { return emin(x, y); }
  static Expr max_upper(const Expr& x, const Expr& y) { return emax(x, y); }
  static Expr min_upper(const Expr& x, const Expr& y) {
    return x.defined() ? (y.defined() ? emin(x, y) : x) : y;
  }
  static Expr max_lower(const Expr& x, const Expr& y) {
    return x.defined() ? (y.defined() ? emax(x, y) : x) : y;
  }
  static Expr scale(const Expr& x, const Expr& c) { return bin<Mul>(x, c); }
  static Expr product(const Expr& x, const Expr& y) {
    return x.defined() && y.defined() ? Mul::make(x, y) : Expr();
  }
  static Expr quotient(const Expr& x, const Expr& y, Type) { return bin<Div>(x, y); }
  static Expr magnitude(const Expr& x) {
    if (!x.defined()) return x;
    return Max::make(x, Sub::make(x.type().is_float() ? f64(0) : i32(0), x));
  }
  static Expr negate(const Expr& x) { return x.defined() ? Sub::make(i32(0), x) : x; }
  static Expr last_of(const Expr& count, double none) {
    if (!count.defined()) return count;
    return Max::make(Sub::make(count, i32(1)), i32(static_cast<int64_t>(none)));
  }
  static bool is_nan(const Expr&) { return false; }

  // Casts, intrinsics and reductions: the lowering's rules were always looser than the
  // evaluator's. No sign of an operand is known, nor whether it is NaN; a domain is known
  // not to be empty only for constant bounds, and never for an argmin (whose bounds always
  // had -1); a sum over a domain of unbounded size, and an abs of an unbounded operand, are
  // their type's range; abs and hypot are not fitted (an exact abs, a hypot in [0, inf)).
  static bool known_at_least(const Expr&, double) { return false; }
  static bool known_at_most(const Expr&, double) { return false; }
  static bool known_below(const Expr&, double) { return false; }
  static bool may_be_nan(const Iv&) { return true; }
  static bool known_nonempty(ReduceOp op, const ReductionVariable& rv, const Iv&, const Iv&) {
    int64_t lo = 0, hi = 0;
    return op != ReduceOp::ArgMin && is_const(rv.min, &lo) && is_const(rv.max, &hi) && lo <= hi;
  }
  static bool known_count(const Expr& n) { return n.defined(); }
  static bool bounds_abs(const Iv& a) { return !infinite_end(a); }
  static bool fits_magnitudes() { return false; }

  // A saturating cast: the type's end for an unbounded one.
  static Expr to_int(Type t, const Expr& x, bool up) {
    if (!x.defined()) return up ? int_range(t).max : int_range(t).min;
    Expr c = Cast::make(t, x);
    return t == Int32() ? c : Cast::make(Int32(), c);
  }
  static std::optional<Expr> to_f16(const Expr&) { return std::nullopt; }
  static Expr real(const Expr& x) { return x.defined() ? Cast::make(Float64(), x) : x; }
  static Expr image(Intrinsic f, const Expr& x, bool up);
  static Expr hypot(const Expr&, const Expr&) { return Expr(); }
  // A u8 or u16 extreme is an end; an i32 one is no usable index, and a float's is infinite.
  static Expr extreme(Type t, bool up) {
    if (!t.is_unsigned() || t.bits() >= 32) return Expr();
    return i32(static_cast<int64_t>(up ? t.max_value() : t.min_value()));
  }
  static Expr times_extent(const Expr& n, const Iv& r) {
    if (!n.defined() || !r.min.defined() || !r.max.defined()) return Expr();
    return Mul::make(n, Max::make(Add::make(Sub::make(r.max, r.min), i32(1)), i32(0)));
  }
  static Expr one_term(const Expr& x) { return x; }

 private:
  BoundsContext& ctx_;
};

// Floor, ceil and round take a lower end's floor and an upper end's ceil alike (round's
// ties need no case). sqrt and exp of an unbounded lower end are 0.
Expr SymbolicEnds::image(Intrinsic f, const Expr& x, bool up) {
  switch (f) {
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round:
      return x.defined() ? Call::make_intrinsic(up ? Intrinsic::Ceil : Intrinsic::Floor, {x}) : x;
    case Intrinsic::Sqrt:
      if (!x.defined()) return up ? x : f64(0);
      return Call::make_intrinsic(Intrinsic::Sqrt, {emax(x, f64(0))});
    case Intrinsic::Exp:
      if (!x.defined()) return up ? x : f64(0);
      return Call::make_intrinsic(Intrinsic::Exp, {x});
    case Intrinsic::Log: return x.defined() ? Call::make_intrinsic(Intrinsic::Log, {x}) : x;
    default: break;
  }
  STIPPLE_INTERNAL_CHECK(false, std::string("image of ") + intrinsic_name(f));
  return x;
}

SInterval BoundsContext::compute(const Expr& e) {
  SymbolicEnds ends(*this);
  return bounds::IntervalRules<SymbolicEnds>(ends).of(e);
}

namespace {

class CallWalker : public IRVisitor {
 public:
  CallWalker(BoundsContext& ctx,
             const std::function<void(const Call*, const std::vector<SInterval>&)>& cb)
      : ctx_(ctx), cb_(cb) {}
  using IRVisitor::visit;
  void visit(const Call* op) override {
    if (op->call_type == CallType::Func) {
      std::vector<SInterval> args;
      for (const Expr& a : op->args) args.push_back(ctx_.interval_of(a));
      cb_(op, args);
    }
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    std::vector<SInterval> ranges;
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
      ranges.push_back({ctx_.interval_of(rv.min).min, ctx_.interval_of(rv.max).max, false});
    }
    for (size_t i = 0; i < ranges.size(); ++i) ctx_.push(op->domain[i].name, ranges[i]);
    op->body.accept(this);
    for (size_t i = 0; i < ranges.size(); ++i) ctx_.pop();
  }
  void visit(const Let* op) override {
    op->value.accept(this);
    ctx_.push(op->name, ctx_.interval_of(op->value));
    op->body.accept(this);
    ctx_.pop();
  }

 private:
  BoundsContext& ctx_;
  const std::function<void(const Call*, const std::vector<SInterval>&)>& cb_;
};

}  // namespace

void for_each_func_call(const Expr& e, BoundsContext& ctx,
                        const std::function<void(const Call*, const std::vector<SInterval>&)>& cb) {
  CallWalker w(ctx, cb);
  e.accept(&w);
}

}  // namespace stipple::lowering
