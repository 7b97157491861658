#include "search/reuse/index_intervals.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler_core/ir/ir_visitor.h"

namespace stipple::search::reuse {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Interval of_type(Type t) {
  if (t.is_bool()) return Interval::range(0, 1);
  if (t.is_int()) return Interval::range(t.min_value(), t.max_value());
  return Interval::everything();
}

// 0 * inf is 0 here: an interval end times a zero end contributes nothing.
double mul(double a, double b) {
  if (a == 0 || b == 0) return 0;
  return a * b;
}

Interval corners(const Interval& a, const Interval& b, double (*op)(double, double)) {
  double v[4] = {op(a.lo, b.lo), op(a.lo, b.hi), op(a.hi, b.lo), op(a.hi, b.hi)};
  Interval r{v[0], v[0]};
  for (double x : v) {
    if (std::isnan(x)) return Interval::everything();
    r.lo = std::min(r.lo, x);
    r.hi = std::max(r.hi, x);
  }
  return r;
}

double floor_div(double a, double b) { return std::floor(a / b); }
double real_div(double a, double b) { return a / b; }

const Interval* lookup(const IntervalScope& scope, const std::string& name) {
  for (auto it = scope.rbegin(); it != scope.rend(); ++it) {
    if (it->first == name) return &it->second;
  }
  return nullptr;
}

Interval cast_to(Type t, Interval v) {
  if (v.empty()) return v;
  if (t.is_float()) return v;
  if (t.is_bool()) return Interval::range(0, 1);
  Interval range = of_type(t);
  // Float to integer truncates towards zero and saturates; integers that fit keep their
  // values, others wrap (any value of the type).
  Interval r{std::trunc(v.lo), std::trunc(v.hi)};
  if (r.lo >= range.lo && r.hi <= range.hi) return r;
  return range;
}

class IntervalEvaluator {
 public:
  IntervalEvaluator(IntervalScope& scope, const IndexConstants& k) : scope_(scope), k_(k) {}

  Interval eval(const Expr& e) {
    switch (e.node_type()) {
      case IRNodeType::IntImm: return Interval::point(double(e.as<IntImm>()->value));
      case IRNodeType::FloatImm: return Interval::point(e.as<FloatImm>()->value);
      case IRNodeType::Cast: return cast_to(e.type(), eval(e.as<Cast>()->value));
      case IRNodeType::Variable: {
        const Interval* v = lookup(scope_, e.as<Variable>()->name);
        return v ? *v : Interval::everything();
      }
      case IRNodeType::Param: {
        const ParamDecl* p = k_.pipeline ? k_.pipeline->find_param(e.as<Param>()->name) : nullptr;
        return p ? Interval::point(p->default_value) : Interval::everything();
      }
      case IRNodeType::InputExtent: {
        const InputExtent* ie = e.as<InputExtent>();
        return Interval::point(double(k_.input_extent(ie->input, ie->dim)));
      }
      case IRNodeType::Add: {
        auto* op = e.as<Add>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        return {a.lo + b.lo, a.hi + b.hi};
      }
      case IRNodeType::Sub: {
        auto* op = e.as<Sub>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        return {a.lo - b.hi, a.hi - b.lo};
      }
      case IRNodeType::Mul: {
        auto* op = e.as<Mul>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        return corners(a, b, mul);
      }
      case IRNodeType::Div: {
        auto* op = e.as<Div>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        bool integer = e.type().is_int();
        if (b.lo == 0 && b.hi == 0) return integer ? Interval::point(0) : Interval::everything();
        if (b.lo <= 0 && b.hi >= 0) {
          // A divisor that may be zero (x / 0 is 0 for integers) or change sign.
          if (!integer) return Interval::everything();
          double m = std::max(std::fabs(a.lo), std::fabs(a.hi));
          return Interval::range(-m, m);
        }
        return corners(a, b, integer ? floor_div : real_div);
      }
      case IRNodeType::Mod: {
        auto* op = e.as<Mod>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        double m = std::max(std::fabs(b.lo), std::fabs(b.hi));
        if (!std::isfinite(m)) return Interval::range(0, kInf);
        if (!e.type().is_int()) return Interval::range(0, m);
        if (m == 0) return Interval::point(0);
        if (b.lo == b.hi && a.lo >= 0 && a.hi <= m - 1) return a;
        return Interval::range(0, m - 1);
      }
      case IRNodeType::Min: {
        auto* op = e.as<Min>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      }
      case IRNodeType::Max: {
        auto* op = e.as<Max>();
        Interval a = eval(op->a), b = eval(op->b);
        if (a.empty() || b.empty()) return Interval::none();
        return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      case IRNodeType::EQ:
      case IRNodeType::NE:
      case IRNodeType::LT:
      case IRNodeType::LE:
      case IRNodeType::GT:
      case IRNodeType::GE:
      case IRNodeType::And:
      case IRNodeType::Or:
      case IRNodeType::Not: return Interval::range(0, 1);
      case IRNodeType::Select: {
        auto* op = e.as<Select>();
        return eval(op->true_value).hull(eval(op->false_value));
      }
      case IRNodeType::Call: return eval_call(e.as<Call>());
      case IRNodeType::Reduce: return eval_reduce(e.as<Reduce>());
      case IRNodeType::Let: {
        auto* op = e.as<Let>();
        scope_.push_back({op->name, eval(op->value)});
        Interval r = eval(op->body);
        scope_.pop_back();
        return r;
      }
      default: break;  // statements never appear in expressions
    }
    return Interval::everything();
  }

 private:
  Interval eval_call(const Call* c) {
    if (c->call_type == CallType::Func) return of_type(c->type);
    if (c->call_type == CallType::Input) return of_type(c->type);
    std::vector<Interval> a;
    for (const Expr& arg : c->args) a.push_back(eval(arg));
    for (const Interval& i : a) {
      if (i.empty()) return Interval::none();
    }
    switch (c->intrinsic) {
      case Intrinsic::Abs: {
        const Interval& x = a[0];
        if (x.lo >= 0) return x;
        if (x.hi <= 0) return {-x.hi, -x.lo};
        return {0, std::max(-x.lo, x.hi)};
      }
      case Intrinsic::Floor: return {std::floor(a[0].lo), std::floor(a[0].hi)};
      case Intrinsic::Ceil: return {std::ceil(a[0].lo), std::ceil(a[0].hi)};
      case Intrinsic::Round: return {std::round(a[0].lo), std::round(a[0].hi)};
      case Intrinsic::Sqrt:
        return {std::sqrt(std::max(a[0].lo, 0.0)), std::sqrt(std::max(a[0].hi, 0.0))};
      case Intrinsic::Exp: return {std::exp(a[0].lo), std::exp(a[0].hi)};
      case Intrinsic::Log:
        return {a[0].lo > 0 ? std::log(a[0].lo) : -kInf, a[0].hi > 0 ? std::log(a[0].hi) : -kInf};
      case Intrinsic::Pow:
        if (a[0].lo == a[0].hi && a[1].lo == a[1].hi) {
          return Interval::point(std::pow(a[0].lo, a[1].lo));
        }
        if (a[0].lo > 0 && std::isfinite(a[0].hi) && std::isfinite(a[1].lo) &&
            std::isfinite(a[1].hi)) {
          double v[4] = {std::pow(a[0].lo, a[1].lo), std::pow(a[0].lo, a[1].hi),
                         std::pow(a[0].hi, a[1].lo), std::pow(a[0].hi, a[1].hi)};
          return {*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
        }
        return Interval::everything();
      case Intrinsic::Sin:
      case Intrinsic::Cos: return Interval::range(-1, 1);
      case Intrinsic::None: break;
    }
    return Interval::everything();
  }

  Interval eval_reduce(const Reduce* r) {
    size_t pushed = 0;
    double count = 1;
    for (const ReductionVariable& rv : r->domain) {
      Interval lo = eval(rv.min), hi = eval(rv.max);
      Interval v{lo.lo, hi.hi};
      count *= std::max(0.0, hi.hi - lo.lo + 1);
      scope_.push_back({rv.name, v});
      ++pushed;
    }
    Interval body = eval(r->body);
    scope_.resize(scope_.size() - pushed);
    switch (r->op) {
      case ReduceOp::Sum:
        if (!std::isfinite(count)) return Interval::everything();
        return Interval{mul(count, body.lo), mul(count, body.hi)}.hull(Interval::point(0));
      case ReduceOp::Prod: return Interval::everything();
      case ReduceOp::Minimum:
      case ReduceOp::Maximum: return body;
      case ReduceOp::Median: return body.hull(Interval::point(0));
      case ReduceOp::ArgMin: return Interval::range(-1, std::max(0.0, count - 1));
    }
    return Interval::everything();
  }

  IntervalScope& scope_;
  const IndexConstants& k_;
};

class Finder : public IRVisitor {
 public:
  bool data = false, runtime_constants = false, unslidable = false;
  std::set<std::string> pure_vars;
  std::vector<std::string> pure_order;

  void visit(const Call* op) override {
    // A load makes the index data dependent; an intrinsic (abs, floor of a float) is
    // outside what the sliding-window analysis follows.
    if (op->call_type != CallType::Intrinsic) data = true;
    unslidable = true;
    IRVisitor::visit(op);
  }
  void visit(const Param* op) override {
    runtime_constants = true;
    IRVisitor::visit(op);
  }
  void visit(const InputExtent* op) override {
    runtime_constants = true;
    IRVisitor::visit(op);
  }
  void visit(const Mod* op) override {
    unslidable = true;
    IRVisitor::visit(op);
  }
  void visit(const Select* op) override {
    unslidable = true;
    IRVisitor::visit(op);
  }
  void visit(const Div* op) override {
    if (!op->b.as<IntImm>() || op->b.as<IntImm>()->value <= 0) unslidable = true;
    IRVisitor::visit(op);
  }
  void visit(const Variable* op) override {
    if (op->kind == VarKind::Pure && pure_vars.insert(op->name).second) {
      pure_order.push_back(op->name);
    }
  }
  void visit(const Cast* op) override {
    if (!op->type.is_int()) unslidable = true;
    IRVisitor::visit(op);
  }
};

Finder find(const Expr& e) {
  Finder f;
  e.accept(&f);
  return f;
}

class OpCounter : public IRVisitor {
 public:
  OpCounter(IntervalScope& scope, const IndexConstants& k) : scope_(scope), k_(k) {}
  OpCount count;

  void visit(const Cast* op) override { arith(1, op); }
  void visit(const Add* op) override { arith(1, op); }
  void visit(const Sub* op) override { arith(1, op); }
  void visit(const Mul* op) override { arith(1, op); }
  void visit(const Div* op) override { arith(4, op); }
  void visit(const Mod* op) override { arith(4, op); }
  void visit(const Min* op) override { arith(1, op); }
  void visit(const Max* op) override { arith(1, op); }
  void visit(const EQ* op) override { arith(1, op); }
  void visit(const NE* op) override { arith(1, op); }
  void visit(const LT* op) override { arith(1, op); }
  void visit(const LE* op) override { arith(1, op); }
  void visit(const GT* op) override { arith(1, op); }
  void visit(const GE* op) override { arith(1, op); }
  void visit(const And* op) override { arith(1, op); }
  void visit(const Or* op) override { arith(1, op); }
  void visit(const Not* op) override { arith(1, op); }
  void visit(const Select* op) override { arith(1, op); }
  void visit(const Call* op) override {
    if (op->call_type == CallType::Intrinsic) {
      switch (op->intrinsic) {
        case Intrinsic::Abs:
        case Intrinsic::Floor:
        case Intrinsic::Ceil:
        case Intrinsic::Round: count.ops += weight_; break;
        case Intrinsic::Sqrt: count.ops += 4 * weight_; break;
        default: count.ops += 20 * weight_; break;
      }
    } else {
      count.loads += weight_;
      count.calls[op->name] += weight_;
    }
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    double size = 1;
    size_t pushed = 0;
    for (const ReductionVariable& rv : op->domain) {
      Interval lo = interval_of(rv.min, scope_, k_), hi = interval_of(rv.max, scope_, k_);
      double n = hi.hi - lo.lo + 1;
      if (!std::isfinite(n) || n < 0) n = 1;
      size *= n;
      scope_.push_back({rv.name, Interval{lo.lo, hi.hi}});
      ++pushed;
    }
    double saved = weight_;
    weight_ *= size;
    count.ops += weight_;  // one accumulation per iteration
    op->body.accept(this);
    weight_ = saved;
    scope_.resize(scope_.size() - pushed);
  }

 private:
  template <typename T>
  void arith(double w, const T* op) {
    count.ops += w * weight_;
    IRVisitor::visit(op);
  }
  IntervalScope& scope_;
  const IndexConstants& k_;
  double weight_ = 1;
};

}  // namespace

bool Interval::bounded() const { return std::isfinite(lo) && std::isfinite(hi); }

Interval Interval::hull(const Interval& o) const {
  if (empty()) return o;
  if (o.empty()) return *this;
  return {std::min(lo, o.lo), std::max(hi, o.hi)};
}

Interval Interval::intersect(const Interval& o) const {
  return {std::max(lo, o.lo), std::min(hi, o.hi)};
}

int64_t IndexConstants::input_extent(const std::string& input, int dim) const {
  auto it = input_extents.find(input);
  if (it == input_extents.end() || dim < 0 || dim >= int(it->second.size())) return 1;
  return it->second[dim];
}

IndexConstants make_index_constants(const Pipeline& p, const std::vector<int64_t>& output_extents) {
  IndexConstants k;
  k.pipeline = &p;
  for (const InputDecl& in : p.inputs) {
    std::vector<int64_t> ext(in.dim_names.size(), 0);
    k.input_extents[in.name] = ext;
  }
  for (size_t d = 0; d < p.output.extents.size() && d < output_extents.size(); ++d) {
    const InputExtent* ie = p.output.extents[d].as<InputExtent>();
    if (!ie) continue;
    auto it = k.input_extents.find(ie->input);
    if (it != k.input_extents.end() && ie->dim < int(it->second.size())) {
      it->second[ie->dim] = output_extents[d];
    }
  }
  for (auto& [name, ext] : k.input_extents) {
    for (size_t d = 0; d < ext.size(); ++d) {
      if (ext[d] > 0) continue;
      ext[d] = d < output_extents.size() ? output_extents[d] : 4;
    }
  }
  return k;
}

Interval interval_of(const Expr& e, IntervalScope& scope, const IndexConstants& k) {
  return IntervalEvaluator(scope, k).eval(e);
}

bool reads_data(const Expr& e) { return find(e).data; }
bool mentions_runtime_constants(const Expr& e) { return find(e).runtime_constants; }
bool is_slidable_index(const Expr& e) { return !find(e).unslidable; }
std::vector<std::string> pure_variables(const Expr& e) { return find(e).pure_order; }

OpCount count_ops(const Expr& e, IntervalScope& scope, const IndexConstants& k) {
  OpCounter c(scope, k);
  e.accept(&c);
  return c.count;
}

}  // namespace stipple::search::reuse
