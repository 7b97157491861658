// Folding reductions (sum, prod, minimum, maximum), alone or fused with their siblings.
//
// A stored value often holds several reductions over the same domain: the bilateral
// filter's sum of weighted pixels divided by its sum of weights, where the weight (an exp
// of a pixel difference) is the same expression in both. Emitted one after the other, each
// reduction runs its own loops and computes every weight again. Fused, one loop nest runs
// all of them, with one accumulator each, and their bodies are emitted one after the other
// at every point, so LLVM's EarlyCSE and GVN compute what the bodies share once. Each
// accumulator still folds its own body in the domain's order, so every result is exactly
// what the reduction alone computes. Only reductions that the value evaluates
// unconditionally are fused (not those in a select's arms or the right side of && and ||,
// which may be guarded), and only those that do not use names bound inside the value.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::codegen {

namespace {

bool is_fold(const Reduce* op) {
  return op->op == ReduceOp::Sum || op->op == ReduceOp::FusedSum || op->op == ReduceOp::Prod ||
         op->op == ReduceOp::Minimum || op->op == ReduceOp::Maximum;
}

bool same_domain(const Reduce* a, const Reduce* b) {
  if (a->domain.size() != b->domain.size()) return false;
  for (size_t v = 0; v < a->domain.size(); ++v) {
    if (!equal(a->domain[v].min, b->domain[v].min) || !equal(a->domain[v].max, b->domain[v].max)) {
      return false;
    }
  }
  return true;
}

/// The fold reductions an expression always evaluates, outermost only (not those inside
/// another reduction's body), that use no name bound by a Let inside the expression.
class UnconditionalFolds : public IRVisitor {
 public:
  std::vector<const Reduce*> found;

  void visit(const Reduce* op) override {
    if (!is_fold(op)) return;
    if (!mentions(Expr(op), let_bound_, /*or_loads=*/false)) found.push_back(op);
  }
  void visit(const Select* op) override { op->condition.accept(this); }
  void visit(const And* op) override { op->a.accept(this); }
  void visit(const Or* op) override { op->a.accept(this); }
  void visit(const Let* op) override {
    op->value.accept(this);
    const bool fresh = let_bound_.insert(op->name).second;
    op->body.accept(this);
    if (fresh) let_bound_.erase(op->name);
  }

 private:
  std::set<std::string> let_bound_;
};

/// See mentions().
class Mentions : public IRVisitor {
 public:
  Mentions(const std::set<std::string>& names, bool or_loads)
      : names_(names), or_loads_(or_loads) {}
  bool found = false;
  void visit(const Variable* op) override { found = found || names_.count(op->name) > 0; }
  void visit(const Call* op) override {
    if (or_loads_ && op->call_type != CallType::Intrinsic) found = true;
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    if (or_loads_) found = true;
    IRVisitor::visit(op);
  }
  void visit(const Let* op) override {
    if (or_loads_) found = true;
    IRVisitor::visit(op);
  }

 private:
  const std::set<std::string>& names_;
  bool or_loads_;
};

}  // namespace

bool mentions(const Expr& e, const std::set<std::string>& names, bool or_loads) {
  Mentions m(names, or_loads);
  e.accept(&m);
  return m.found;
}

void CodeGen::emit_fused_reductions(const Expr& value) {
  UnconditionalFolds folds;
  value.accept(&folds);
  std::vector<const Reduce*> left = folds.found;
  while (!left.empty()) {
    std::vector<const Reduce*> group, rest;
    for (const Reduce* r : left) {
      if (std::find(group.begin(), group.end(), r) != group.end()) continue;  // shared node
      if (group.empty() || same_domain(group[0], r)) {
        group.push_back(r);
      } else {
        rest.push_back(r);
      }
    }
    if (group.size() > 1) {
      ++reduction_depth_;
      std::vector<llvm::Value*> values = emit_folds(group);
      --reduction_depth_;
      for (size_t i = 0; i < group.size(); ++i) fused_values_[group[i]] = values[i];
    }
    left = std::move(rest);
  }
}

std::vector<llvm::Value*> CodeGen::emit_folds(const std::vector<const Reduce*>& group) {
  return versioned_for_input_rows(group, [&] {
    // In vector code the accumulators are vectors (one reduction per lane); the domain is
    // uniform (VectorizabilityCheck), so the loops are shared by all lanes.
    std::vector<llvm::AllocaInst*> acc;
    std::vector<llvm::Type*> types;
    for (const Reduce* op : group) {
      const Type t = op->body.type();
      const double init = op->op == ReduceOp::Sum || op->op == ReduceOp::FusedSum ? 0
                          : op->op == ReduceOp::Prod                              ? 1
                          : op->op == ReduceOp::Minimum                           ? t.max_value()
                                                                                  : t.min_value();
      types.push_back(shaped(value_type(t), widen(i32(0))));
      acc.push_back(entry_alloca(types.back(), "acc"));
      b_.CreateStore(widen(constant_of(t, init)), acc.back());
    }
    llvm::Value* empty = nullptr;
    emit_reduction_loops(group, &empty, [&] {
      for (size_t i = 0; i < group.size(); ++i) {
        const Reduce* op = group[i];
        if (const Mul* product = fused_product(op)) {
          llvm::Value* a = emit(product->a);
          llvm::Value* b = emit(product->b);
          b_.CreateStore(widen(emit_fma(a, b, b_.CreateLoad(types[i], acc[i]))), acc[i]);
          continue;
        }
        const IRNodeType combine = op->op == ReduceOp::Sum       ? IRNodeType::Add
                                   : op->op == ReduceOp::Prod    ? IRNodeType::Mul
                                   : op->op == ReduceOp::Minimum ? IRNodeType::Min
                                                                 : IRNodeType::Max;
        llvm::Value* v = emit(op->body);
        // acc first: min is select(acc < v, acc, v), as the evaluator folds it.
        llvm::Value* folded =
            emit_binary(combine, op->body.type(), b_.CreateLoad(types[i], acc[i]), v);
        b_.CreateStore(widen(folded), acc[i]);
      }
    });
    std::vector<llvm::Value*> out;
    for (size_t i = 0; i < group.size(); ++i) out.push_back(b_.CreateLoad(types[i], acc[i]));
    return out;
  });
}

}  // namespace stipple::codegen
