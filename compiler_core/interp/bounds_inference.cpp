// Interval arithmetic over IR expressions and the required box of every func.
#include "compiler_core/interp/bounds_inference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::interp {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Endpoint arithmetic that never yields NaN: a NaN endpoint (inf - inf) widens outward.
double lower(double v) { return std::isnan(v) ? -kInf : v; }
double upper(double v) { return std::isnan(v) ? kInf : v; }
// A zero factor is exactly zero, even against an infinite endpoint.
double mul_endpoint(double a, double b) { return (a == 0 || b == 0) ? 0 : a * b; }

bool has_infinite_end(const Interval& a) { return std::isinf(a.min) || std::isinf(a.max); }

Interval bool_interval() { return {0, 1, false}; }

// Float results are widened by a relative 2^-20 so that single-precision rounding of the
// real computation never leaves the interval.
double widen(double v, double dir) {
  if (!std::isfinite(v)) return v;
  return v + dir * (std::abs(v) * 0x1p-20 + 0x1p-100);
}

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
  return {widen(lower(iv.min), -1), widen(upper(iv.max), 1), iv.may_be_nan};
}

Interval corners(double a0, double a1, double b0, double b1, double (*op)(double, double)) {
  double c[4] = {op(a0, b0), op(a0, b1), op(a1, b0), op(a1, b1)};
  Interval r{kInf, -kInf, false};
  for (double v : c) {
    if (std::isnan(v)) return Interval::everything();
    r.min = std::min(r.min, v);
    r.max = std::max(r.max, v);
  }
  return r;
}

Interval int_div(const Interval& a, const Interval& b) {
  // Integer intervals are always finite (fit() clamps them to their type).
  int64_t a0 = static_cast<int64_t>(a.min), a1 = static_cast<int64_t>(a.max);
  int64_t b0 = static_cast<int64_t>(b.min), b1 = static_cast<int64_t>(b.max);
  Interval r{kInf, -kInf, false};
  auto add = [&](int64_t v) {
    r.min = std::min(r.min, static_cast<double>(v));
    r.max = std::max(r.max, static_cast<double>(v));
  };
  if (b0 <= 0 && 0 <= b1) add(0);  // x / 0 == 0
  // Floor division is monotonic in a for a fixed sign of b, and for fixed a monotonic in
  // b over each sign of b, so the extremes lie at the corners of each sign's part.
  if (b1 >= 1) {
    int64_t p0 = std::max<int64_t>(b0, 1);
    for (int64_t x : {a0, a1}) {
      for (int64_t y : {p0, b1}) add(floor_div(x, y));
    }
  }
  if (b0 <= -1) {
    int64_t n1 = std::min<int64_t>(b1, -1);
    for (int64_t x : {a0, a1}) {
      for (int64_t y : {b0, n1}) add(floor_div(x, y));
    }
  }
  return r;
}

Interval int_mod(const Interval& a, const Interval& b) {
  double m = std::max(std::abs(b.min), std::abs(b.max));
  if (m == 0) return Interval::point(0);
  if (b.min == b.max && a.min >= 0 && a.max < m) return a;  // already reduced
  return {0, m - 1, false};
}

Interval float_mod(const Interval& a, const Interval& b) {
  // a - b * floor(a / b) lies in [0, b] for b > 0 (b itself after rounding) and [b, 0] for b < 0.
  bool nan = a.may_be_nan || b.may_be_nan || has_infinite_end(a) || has_infinite_end(b);
  if (b.min > 0) return {0, b.max, nan};
  if (b.max < 0) return {b.min, 0, nan};
  return Interval::everything();
}

Interval abs_interval(const Interval& a) {
  if (a.min >= 0) return a;
  if (a.max <= 0) return {-a.max, -a.min, a.may_be_nan};
  return {0, std::max(-a.min, a.max), a.may_be_nan};
}

Interval intrinsic_interval(const Call* op, IntervalScope& scope, const ConstantEnv& env) {
  Interval a = interval_of(op->args[0], scope, env);
  Type t = op->type;
  bool nan = a.may_be_nan;
  switch (op->intrinsic) {
    case Intrinsic::Abs: return fit(t, abs_interval(a));
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round: return fit(t, {std::floor(a.min), std::ceil(a.max), nan});
    case Intrinsic::Sqrt:
      return fit(
          t, {std::sqrt(std::max(a.min, 0.0)), std::sqrt(std::max(a.max, 0.0)), nan || a.min < 0});
    case Intrinsic::Exp: return fit(t, {std::exp(a.min), std::exp(a.max), nan});
    case Intrinsic::Log:
      return fit(t, {a.min > 0 ? std::log(a.min) : -kInf, a.max > 0 ? std::log(a.max) : -kInf,
                     nan || a.min < 0});
    case Intrinsic::Pow: return Interval::everything();
    case Intrinsic::Sin:
    case Intrinsic::Cos: return {-1, 1, nan || has_infinite_end(a)};
    case Intrinsic::None: break;
  }
  STIPPLE_INTERNAL_CHECK(false, "call of intrinsic None");
  return Interval::everything();
}

double count_of(const std::vector<Interval>& ranges) {
  double n = 1;
  for (const Interval& r : ranges) n *= std::max(0.0, r.max - r.min + 1);
  return n;
}

Interval reduce_interval(const Reduce* op, IntervalScope& scope, const ConstantEnv& env) {
  Type t = op->type;
  Type body_type = op->body.type();
  bool possibly_empty = false, always_empty = false;
  std::vector<Interval> ranges;
  for (const ReductionVariable& rv : op->domain) {
    Interval lo = interval_of(rv.min, scope, env), hi = interval_of(rv.max, scope, env);
    if (lo.max > hi.min) possibly_empty = true;
    if (lo.min > hi.max) always_empty = true;
    ranges.push_back({lo.min, hi.max, false});
  }
  Interval empty_value = Interval::point(0);
  switch (op->op) {
    case ReduceOp::Sum:
    case ReduceOp::Median: break;
    case ReduceOp::Prod: empty_value = Interval::point(1); break;
    case ReduceOp::Minimum: empty_value = Interval::point(body_type.max_value()); break;
    case ReduceOp::Maximum: empty_value = Interval::point(body_type.min_value()); break;
    case ReduceOp::ArgMin: empty_value = Interval::point(-1); break;
  }
  if (always_empty) return empty_value;
  for (size_t i = 0; i < ranges.size(); ++i) scope.emplace_back(op->domain[i].name, ranges[i]);
  Interval body = interval_of(op->body, scope, env);
  scope.resize(scope.size() - ranges.size());
  double n = count_of(ranges);
  Interval r;
  switch (op->op) {
    case ReduceOp::Sum: {
      double k = possibly_empty ? 0 : 1;  // fewest terms
      r = {lower(std::min(mul_endpoint(k, body.min), mul_endpoint(n, body.min))),
           upper(std::max(mul_endpoint(k, body.max), mul_endpoint(n, body.max))),
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

Interval cast_interval(const Cast* op, IntervalScope& scope, const ConstantEnv& env) {
  Interval a = interval_of(op->value, scope, env);
  Type from = op->value.type(), to = op->type;
  if (to.is_bool()) return bool_interval();
  if (to.is_int() && from.is_float()) {
    Interval r =
        Interval::point(static_cast<double>(float_to_int(to.code, a.min)))
            .union_with(Interval::point(static_cast<double>(float_to_int(to.code, a.max))));
    return a.may_be_nan ? r.union_with(Interval::point(0)) : r;
  }
  return fit(to, a);
}

}  // namespace

Interval Interval::everything() { return {-kInf, kInf, true}; }

Interval Interval::of_type(Type t) {
  if (t.is_float()) return everything();
  return {t.min_value(), t.max_value(), false};
}

bool Interval::is_bounded() const {
  return !may_be_nan && std::isfinite(min) && std::isfinite(max);
}

Interval Interval::union_with(const Interval& o) const {
  return {std::min(min, o.min), std::max(max, o.max), may_be_nan || o.may_be_nan};
}

Interval interval_of(const Expr& e, IntervalScope& scope, const ConstantEnv& env) {
  Type t = e.type();
  auto binary = [&](const auto* op) {
    return std::pair{interval_of(op->a, scope, env), interval_of(op->b, scope, env)};
  };
  auto float_nan = [](const Interval& a, const Interval& b) {
    return a.may_be_nan || b.may_be_nan || has_infinite_end(a) || has_infinite_end(b);
  };
  switch (e.node_type()) {
    case IRNodeType::IntImm: return Interval::point(static_cast<double>(e.as<IntImm>()->value));
    case IRNodeType::FloatImm: return Interval::point(e.as<FloatImm>()->value);
    case IRNodeType::Cast: return cast_interval(e.as<Cast>(), scope, env);
    case IRNodeType::Variable: {
      const std::string& name = e.as<Variable>()->name;
      for (auto it = scope.rbegin(); it != scope.rend(); ++it) {
        if (it->first == name) return it->second;
      }
      STIPPLE_INTERNAL_CHECK(false, "bounds of unbound variable '" + name + "'");
      break;
    }
    case IRNodeType::Param: {
      double v = to_double(t.code, env.param(e.as<Param>()->name));
      return std::isnan(v) ? Interval::everything() : Interval::point(v);
    }
    case IRNodeType::InputExtent: {
      const InputExtent* op = e.as<InputExtent>();
      return Interval::point(static_cast<double>(env.input_extent(op->input, op->dim)));
    }
    case IRNodeType::Add: {
      auto [a, b] = binary(e.as<Add>());
      return fit(t, {lower(a.min + b.min), upper(a.max + b.max), float_nan(a, b)});
    }
    case IRNodeType::Sub: {
      auto [a, b] = binary(e.as<Sub>());
      return fit(t, {lower(a.min - b.max), upper(a.max - b.min), float_nan(a, b)});
    }
    case IRNodeType::Mul: {
      auto [a, b] = binary(e.as<Mul>());
      Interval r = corners(a.min, a.max, b.min, b.max, mul_endpoint);
      r.may_be_nan = float_nan(a, b);
      return fit(t, r);
    }
    case IRNodeType::Div: {
      auto [a, b] = binary(e.as<Div>());
      if (t.is_int()) return fit(t, int_div(a, b));
      if (b.min <= 0 && b.max >= 0) return Interval::everything();
      Interval r = corners(a.min, a.max, b.min, b.max, [](double x, double y) { return x / y; });
      r.may_be_nan = r.may_be_nan || float_nan(a, b);
      return fit(t, r);
    }
    case IRNodeType::Mod: {
      auto [a, b] = binary(e.as<Mod>());
      return fit(t, t.is_int() ? int_mod(a, b) : float_mod(a, b));
    }
    case IRNodeType::Min: {
      auto [a, b] = binary(e.as<Min>());
      return {std::min(a.min, b.min), std::min(a.max, b.max), a.may_be_nan || b.may_be_nan};
    }
    case IRNodeType::Max: {
      auto [a, b] = binary(e.as<Max>());
      return {std::max(a.min, b.min), std::max(a.max, b.max), a.may_be_nan || b.may_be_nan};
    }
    case IRNodeType::EQ:
    case IRNodeType::NE:
    case IRNodeType::LT:
    case IRNodeType::LE:
    case IRNodeType::GT:
    case IRNodeType::GE:
    case IRNodeType::And:
    case IRNodeType::Or:
    case IRNodeType::Not: return bool_interval();
    case IRNodeType::Select: {
      const Select* op = e.as<Select>();
      return interval_of(op->true_value, scope, env)
          .union_with(interval_of(op->false_value, scope, env));
    }
    case IRNodeType::Call: {
      const Call* op = e.as<Call>();
      if (op->call_type == CallType::Intrinsic) return intrinsic_interval(op, scope, env);
      return Interval::of_type(t);
    }
    case IRNodeType::Reduce: return reduce_interval(e.as<Reduce>(), scope, env);
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      scope.emplace_back(op->name, interval_of(op->value, scope, env));
      Interval r = interval_of(op->body, scope, env);
      scope.pop_back();
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
  STIPPLE_INTERNAL_CHECK(false,
                         std::string("bounds of unexpected node ") + node_type_name(e.node_type()));
  return Interval::everything();
}

std::vector<Interval> domain_intervals(const std::vector<ReductionVariable>& domain,
                                       IntervalScope& scope, const ConstantEnv& env) {
  std::vector<Interval> ranges;
  for (const ReductionVariable& rv : domain) {
    ranges.push_back(
        {interval_of(rv.min, scope, env).min, interval_of(rv.max, scope, env).max, false});
  }
  return ranges;
}

namespace {

using CallCallback = std::function<void(const Call*, const std::vector<Interval>&)>;

/// Walks an expression, keeping the scope of Reduce and Let variables, and reports the
/// argument intervals of every call to a func.
class CallSiteWalker : public IRVisitor {
 public:
  CallSiteWalker(IntervalScope& scope, const ConstantEnv& env, CallCallback cb)
      : scope_(scope), env_(env), cb_(std::move(cb)) {}

  void visit(const Call* op) override {
    if (op->call_type == CallType::Func) {
      std::vector<Interval> args;
      for (const Expr& a : op->args) args.push_back(interval_of(a, scope_, env_));
      cb_(op, args);
    }
    IRVisitor::visit(op);
  }

  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
    }
    std::vector<Interval> ranges = domain_intervals(op->domain, scope_, env_);
    for (const Interval& r : ranges) {
      if (r.min > r.max) return;  // the body is never evaluated
    }
    for (size_t i = 0; i < ranges.size(); ++i) scope_.emplace_back(op->domain[i].name, ranges[i]);
    op->body.accept(this);
    scope_.resize(scope_.size() - ranges.size());
  }

  void visit(const Let* op) override {
    op->value.accept(this);
    scope_.emplace_back(op->name, interval_of(op->value, scope_, env_));
    op->body.accept(this);
    scope_.pop_back();
  }

 private:
  IntervalScope& scope_;
  const ConstantEnv& env_;
  CallCallback cb_;
};

using Box = std::vector<Interval>;

/// Checks that an index interval is a usable box extent; names callee and caller if not.
void require_bounded(const Interval& iv, const std::string& callee, size_t dim,
                     const std::string& where) {
  auto limit = static_cast<double>(kMaxBoxCoordinate);
  if (iv.is_bounded() && iv.min >= -limit && iv.max <= limit) return;
  throw UserError("cannot infer the bounds of func '" + callee + "' (dimension " +
                  std::to_string(dim) + "): its index at " + where +
                  " is unbounded; clamp the index");
}

void grow(Box& box, const std::vector<Interval>& args, const std::string& callee,
          const std::string& where) {
  STIPPLE_INTERNAL_CHECK(box.size() == args.size(), "call to '" + callee + "' with " +
                                                        std::to_string(args.size()) + " arguments");
  for (size_t d = 0; d < args.size(); ++d) {
    require_bounded(args[d], callee, d, where);
    box[d] = box[d].union_with(args[d]);
  }
}

/// The scope of an update definition: its bare pure variables over the func's box and
/// its reduction variables over their ranges. False when the domain is empty.
bool update_scope(const Func& f, const UpdateDef& u, const Box& box, const ConstantEnv& env,
                  IntervalScope& scope) {
  STIPPLE_INTERNAL_CHECK(u.args.size() == f.args.size(),
                         "update of '" + f.name + "' with the wrong number of arguments");
  for (size_t d = 0; d < u.args.size(); ++d) {
    const Variable* v = u.args[d].as<Variable>();
    if (v && v->kind == VarKind::Pure) scope.emplace_back(v->name, box[d]);
  }
  std::vector<Interval> ranges = domain_intervals(u.domain, scope, env);
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].min > ranges[i].max) return false;
    scope.emplace_back(u.domain[i].name, ranges[i]);
  }
  return true;
}

void walk_update(const UpdateDef& u, CallSiteWalker& walker) {
  for (const ReductionVariable& rv : u.domain) {
    rv.min.accept(&walker);
    rv.max.accept(&walker);
  }
  for (const Expr& a : u.args) a.accept(&walker);
  u.value.accept(&walker);
}

}  // namespace

std::map<std::string, FuncBox> infer_boxes(const ConstantEnv& env,
                                           const std::vector<const Func*>& order,
                                           const FuncBox& output_box) {
  STIPPLE_INTERNAL_CHECK(!order.empty(), "bounds inference without funcs");
  std::map<std::string, Box> required;
  Box& out = required[order.back()->name];
  for (size_t d = 0; d < output_box.min.size(); ++d) {
    out.push_back(
        {static_cast<double>(output_box.min[d]), static_cast<double>(output_box.max[d]), false});
  }
  std::map<std::string, FuncBox> result;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Func& f = **it;
    auto found = required.find(f.name);
    // Only called where the evaluator never goes (an empty reduction): not realised.
    if (found == required.end()) continue;
    Box box = found->second;
    STIPPLE_INTERNAL_CHECK(box.size() == f.args.size(),
                           "func '" + f.name + "' required with the wrong number of dimensions");

    // The func's own updates: where they store and where they read the func itself,
    // with pure variables over the box its consumers need (one pass).
    Box own = box;
    const std::string update_where = "an update of '" + f.name + "'";
    for (const UpdateDef& u : f.updates) {
      IntervalScope scope;
      if (!update_scope(f, u, box, env, scope)) continue;
      // Where the update stores: a bounded index widens the box; an unbounded one (a
      // data-dependent scatter such as grid(x/8, y/8, i32(in(x, y) * 10))) does not, and
      // the evaluator skips its stores outside the box, which nothing reads.
      for (size_t d = 0; d < u.args.size(); ++d) {
        Interval iv = interval_of(u.args[d], scope, env);
        auto limit = static_cast<double>(kMaxBoxCoordinate);
        if (iv.is_bounded() && iv.min >= -limit && iv.max <= limit) own[d] = own[d].union_with(iv);
      }
      // Reads of the func itself, except the read of the very site being stored (the
      // f(args) of `f(args) += e`), which is skipped together with its store.
      CallSiteWalker self_reads(scope, env, [&](const Call* c, const std::vector<Interval>& args) {
        if (c->name != f.name) return;
        bool same_site = c->args.size() == u.args.size();
        for (size_t d = 0; same_site && d < c->args.size(); ++d) {
          same_site = equal(c->args[d], u.args[d]);
        }
        if (!same_site) grow(own, args, f.name, update_where);
      });
      walk_update(u, self_reads);
    }
    box = own;

    FuncBox fb;
    double elements = 1;
    for (const Interval& iv : box) {
      fb.min.push_back(static_cast<int64_t>(iv.min));
      fb.max.push_back(static_cast<int64_t>(iv.max));
      elements *= iv.max - iv.min + 1;
    }
    if (elements > static_cast<double>(kMaxBoxElements)) {
      throw UserError("cannot infer the bounds of func '" + f.name +
                      "': it would be realised over " +
                      std::to_string(static_cast<int64_t>(elements)) +
                      " points, more than 2^31; clamp its indices");
    }
    result[f.name] = fb;

    // What this func needs of its callees, over its final box.
    const std::string where = "a call in '" + f.name + "'";
    auto require = [&](const Call* c, const std::vector<Interval>& args) {
      if (c->name == f.name) return;
      auto [slot, inserted] = required.try_emplace(c->name);
      if (inserted) {
        for (const Interval& a : args) {
          require_bounded(a, c->name, &a - args.data(), where);
          slot->second.push_back(a);
        }
        return;
      }
      grow(slot->second, args, c->name, where);
    };
    IntervalScope pure_scope;
    for (size_t d = 0; d < f.args.size(); ++d) pure_scope.emplace_back(f.args[d], box[d]);
    CallSiteWalker pure_walker(pure_scope, env, require);
    f.value.accept(&pure_walker);
    for (const UpdateDef& u : f.updates) {
      IntervalScope scope;
      if (!update_scope(f, u, box, env, scope)) continue;
      CallSiteWalker walker(scope, env, require);
      walk_update(u, walker);
    }
  }
  return result;
}

}  // namespace stipple::interp
