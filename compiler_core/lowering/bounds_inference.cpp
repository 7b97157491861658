// Symbolic interval arithmetic over Exprs: the end algebra of the shared rules
// (compiler_core/bounds/interval_rules.h) for Expr ends, and its casts, intrinsics and
// reductions (see the header and README.md, "Bounds").
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
  Iv cast(const Cast* op);
  Iv intrinsic(const Call* op);
  Iv reduce(const Reduce* op);

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

 private:
  BoundsContext& ctx_;
};

SInterval SymbolicEnds::cast(const Cast* op) {
  Type t = op->type;
  Type from = op->value.type();
  if (t.is_bool()) return int_range(t);
  SInterval a = ctx_.interval_of(op->value);
  if (t.is_int() && from.is_float()) {
    SInterval r;
    auto conv = [&](const Expr& v) {
      Expr c = Cast::make(t, v);
      return t == Int32() ? c : Cast::make(Int32(), c);
    };
    SInterval range = int_range(t);
    r.min = a.min.defined() ? conv(a.min) : range.min;
    r.max = a.max.defined() ? conv(a.max) : range.max;
    if (a.may_be_nan) {
      r.min = emin(r.min, i32(0));
      r.max = emax(r.max, i32(0));
    }
    return r;
  }
  if (t.is_int()) {
    // From an integer or bool: the range is kept where the value cannot wrap.
    return bounds::int_cast_keeps_values(from, t) ? a : int_range(t);
  }
  // To a float (f16 rounding moves values too far for `widened`: no bounds).
  if (t.is_f16()) return SInterval::everything();
  SInterval r = a;
  if (!from.is_float()) {
    r.min = a.min.defined() ? Cast::make(Float64(), a.min) : Expr();
    r.max = a.max.defined() ? Cast::make(Float64(), a.max) : Expr();
  }
  return widened(r);
}

SInterval SymbolicEnds::intrinsic(const Call* op) {
  Type t = op->type;
  SInterval a = ctx_.interval_of(op->args[0]);
  switch (op->intrinsic) {
    case Intrinsic::Abs: {
      if (!a.min.defined() || !a.max.defined()) return int_range(t);
      Expr zero = t.is_float() ? f64(0) : i32(0);
      Expr m =
          emax(Max::make(a.min, Sub::make(zero, a.min)), Max::make(a.max, Sub::make(zero, a.max)));
      if (t.is_unsigned()) return int_range(t);
      return {zero, m, a.may_be_nan};
    }
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round: {
      SInterval r = a;
      if (r.min.defined()) r.min = Call::make_intrinsic(Intrinsic::Floor, {r.min});
      if (r.max.defined()) r.max = Call::make_intrinsic(Intrinsic::Ceil, {r.max});
      return r;
    }
    case Intrinsic::Sqrt: {
      SInterval r{
          a.min.defined() ? Call::make_intrinsic(Intrinsic::Sqrt, {emax(a.min, f64(0))}) : f64(0),
          a.max.defined() ? Call::make_intrinsic(Intrinsic::Sqrt, {emax(a.max, f64(0))}) : Expr(),
          true};
      return widened(r);
    }
    case Intrinsic::Exp: {
      SInterval r{a.min.defined() ? Call::make_intrinsic(Intrinsic::Exp, {a.min}) : f64(0),
                  a.max.defined() ? Call::make_intrinsic(Intrinsic::Exp, {a.max}) : Expr(),
                  a.may_be_nan};
      return widened(r);
    }
    case Intrinsic::Log: {
      SInterval r{Expr(), a.max.defined() ? Call::make_intrinsic(Intrinsic::Log, {a.max}) : Expr(),
                  true};
      return widened(r);
    }
    case Intrinsic::Sin:
    case Intrinsic::Cos:
    case Intrinsic::Tanh: return {f64(-1), f64(1), true};
    case Intrinsic::Atan2: {
      const double pi = 3.14159265358979323846;  // an f32 result may round past it
      return {f64(bounds::widen_float_end(-pi, false)), f64(bounds::widen_float_end(pi, true)),
              true};
    }
    case Intrinsic::Hypot: return {f64(0), Expr(), true};
    case Intrinsic::Fma:
      // The exact a * b + c rounded once: inside the widened bounds of a * b + c.
      return ctx_.interval_of(Add::make(Mul::make(op->args[0], op->args[1]), op->args[2]));
    case Intrinsic::Tan:
    case Intrinsic::Pow:
    case Intrinsic::None: break;
  }
  return SInterval::everything();
}

SInterval SymbolicEnds::reduce(const Reduce* op) {
  bool possibly_empty = false;
  std::vector<SInterval> ranges;
  Expr count = i32(1);
  for (const ReductionVariable& rv : op->domain) {
    int64_t lo = 0, hi = 0;
    if (!(is_const(rv.min, &lo) && is_const(rv.max, &hi) && lo <= hi)) possibly_empty = true;
    SInterval r{ctx_.interval_of(rv.min).min, ctx_.interval_of(rv.max).max, false};
    ranges.push_back(r);
    count = (r.min.defined() && r.max.defined() && count.defined())
                ? Mul::make(count, Max::make(Add::make(Sub::make(r.max, r.min), i32(1)), i32(0)))
                : Expr();
  }
  for (size_t i = 0; i < ranges.size(); ++i) ctx_.push(op->domain[i].name, ranges[i]);
  SInterval body = ctx_.interval_of(op->body);
  for (size_t i = 0; i < ranges.size(); ++i) ctx_.pop();
  Type bt = op->body.type();
  switch (op->op) {
    case ReduceOp::Sum: {
      if (bt.is_unsigned()) return int_range(bt);
      if (!count.defined()) return bt.is_float() ? SInterval::everything() : int_range(bt);
      Expr n = bt.is_float() ? Cast::make(Float64(), count) : count;
      Expr zero = bt.is_float() ? f64(0) : i32(0);
      Expr k_lo = possibly_empty ? zero : body.min, k_hi = possibly_empty ? zero : body.max;
      SInterval r{emin(k_lo, bin<Mul>(n, body.min)), emax(k_hi, bin<Mul>(n, body.max)),
                  body.may_be_nan || !body.bounded()};
      return bt.is_float() ? widened(r) : r;
    }
    case ReduceOp::Prod: return bt.is_float() ? SInterval::everything() : int_range(bt);
    case ReduceOp::Minimum:
    case ReduceOp::Maximum:
    case ReduceOp::Median: {
      if (!possibly_empty) return body;
      SInterval empty;
      if (op->op == ReduceOp::Median) {
        empty = SInterval::point(make_zero(bt));
      } else if (bt.is_unsigned()) {
        empty =
            SInterval::point(i32(static_cast<int64_t>(bounds::empty_reduction_value(op->op, bt))));
      } else {
        empty = {Expr(), Expr(), false};
      }
      return interval_union(body, empty);
    }
    case ReduceOp::ArgMin:
      return {i32(-1), count.defined() ? Max::make(Sub::make(count, i32(1)), i32(-1)) : Expr(),
              false};
  }
  return SInterval::everything();
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
