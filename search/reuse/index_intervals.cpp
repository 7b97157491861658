#include "search/reuse/index_intervals.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler_core/ir/ir_visitor.h"

namespace stipple::search::reuse {

namespace {

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
        case Intrinsic::Fma: count.ops += 2 * weight_; break;  // the contracted a * b + c
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
      Interval range = reduction_range(rv, scope_, k_);
      double n = range.max - range.min + 1;
      if (!std::isfinite(n) || n < 0) n = 1;
      size *= n;
      scope_.push_back({rv.name, range});
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

int64_t IndexConstants::estimated_extent(const std::string& input, int dim) const {
  auto it = input_extents.find(input);
  if (it == input_extents.end() || dim < 0 || dim >= int(it->second.size())) return 1;
  return it->second[dim];
}

Interval IndexConstants::param(const std::string& name, Type) const {
  const ParamDecl* p = pipeline ? pipeline->find_param(name) : nullptr;
  return p ? Interval::point(p->default_value) : Interval::everything();
}

Interval IndexConstants::input_extent(const std::string& input, int dim) const {
  return Interval::point(double(estimated_extent(input, dim)));
}

Interval IndexConstants::free_variable(const std::string&) const { return Interval::everything(); }

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
