// Hoisting of reductions invariant in an enclosing reduction
// (hoist_invariant_reductions.h).
#include "compiler_core/lowering/hoist_invariant_reductions.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::lowering {

namespace {

// Whether `e` contains a Reduce, and the variables it uses that it does not bind itself.
struct Uses : IRVisitor {
  bool reduces = false;
  std::set<std::string> free;
  std::vector<std::string> bound;

  using IRVisitor::visit;
  void visit(const Variable* op) override {
    for (const std::string& b : bound) {
      if (b == op->name) return;
    }
    free.insert(op->name);
  }
  void visit(const Let* op) override {
    op->value.accept(this);
    bound.push_back(op->name);
    op->body.accept(this);
    bound.pop_back();
  }
  void visit(const Reduce* op) override {
    reduces = true;
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
    }
    for (const ReductionVariable& rv : op->domain) bound.push_back(rv.name);
    op->body.accept(this);
    for (size_t i = 0; i < op->domain.size(); ++i) bound.pop_back();
  }
};

// A Reduce's body mutated by `m`. A fused sum's body stays a product (ReduceOp::FusedSum):
// its factors are mutated apart, so neither pass hoists the product whole.
Expr mutate_body(IRMutator& m, const Reduce* op) {
  const Mul* product = fused_product(op);
  if (!product) return m.mutate(op->body);
  Expr a = m.mutate(product->a), b = m.mutate(product->b);
  if (a.same_as(product->a) && b.same_as(product->b)) return op->body;
  return Mul::make(std::move(a), std::move(b));
}

// Inside one Reduce's body: replaces the maximal invariant subexpressions that reduce by
// fresh variables and collects their definitions.
class Extract : public IRMutator {
 public:
  Extract(std::vector<std::string> bound, NameGen& names,
          std::vector<std::pair<std::string, Expr>>& lifted)
      : bound_(std::move(bound)), names_(names), lifted_(lifted) {}

  using IRMutator::mutate;
  Expr mutate(const Expr& e) override {
    if (!e.defined() || e.node_type() == IRNodeType::Variable) return e;
    Uses uses;
    e.accept(&uses);
    if (!uses.reduces) return e;  // nothing to hoist below here
    bool invariant = true;
    for (const std::string& b : bound_) invariant = invariant && uses.free.count(b) == 0;
    if (invariant) {
      std::string name = names_.fresh("hoisted");
      lifted_.push_back({name, e});
      return Variable::make_typed(e.type(), name);
    }
    return IRMutator::mutate(e);
  }

  using IRMutator::visit;
  Expr visit(const Let* op) override {
    Expr value = mutate(op->value);
    bound_.push_back(op->name);
    Expr body = mutate(op->body);
    bound_.pop_back();
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->name, std::move(value), std::move(body));
  }
  Expr visit(const Reduce* op) override {
    bool changed = false;
    std::vector<ReductionVariable> domain = mutate_domain(op->domain, &changed);
    for (const ReductionVariable& rv : op->domain) bound_.push_back(rv.name);
    Expr body = mutate_body(*this, op);
    bound_.resize(bound_.size() - op->domain.size());
    if (!changed && body.same_as(op->body)) return op;
    return Reduce::make(op->op, std::move(domain), std::move(body));
  }

 private:
  std::vector<std::string> bound_;
  NameGen& names_;
  std::vector<std::pair<std::string, Expr>>& lifted_;
};

// Bottom up: inner reductions first, so that what they hoist can move further out.
class Hoist : public IRMutator {
 public:
  explicit Hoist(NameGen& names) : names_(names) {}

  using IRMutator::visit;
  Expr visit(const Reduce* op) override {
    Expr inner = IRMutator::visit(op);
    const Reduce* r = inner.as<Reduce>();
    std::vector<std::string> bound;
    for (const ReductionVariable& rv : r->domain) bound.push_back(rv.name);
    std::vector<std::pair<std::string, Expr>> lifted;
    Extract extract(bound, names_, lifted);
    Expr body = mutate_body(extract, r);
    if (lifted.empty()) return inner;
    Expr result = Reduce::make(r->op, r->domain, body);
    for (auto it = lifted.rbegin(); it != lifted.rend(); ++it) {
      result = Let::make(it->first, it->second, result);
    }
    return result;
  }

 private:
  NameGen& names_;
};

// Every name a statement uses or binds, so that the names the pass makes are new.
class Names : public IRVisitor {
 public:
  std::set<std::string> names;

  using IRVisitor::visit;
  void visit(const Variable* op) override { names.insert(op->name); }
  void visit(const Let* op) override {
    names.insert(op->name);
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) names.insert(rv.name);
    IRVisitor::visit(op);
  }
  void visit(const LetStmt* op) override {
    names.insert(op->name);
    IRVisitor::visit(op);
  }
  void visit(const For* op) override {
    names.insert(op->name);
    IRVisitor::visit(op);
  }
};

// Applies Hoist to each expression of a statement (Hoist descends into it itself).
class HoistInStmt : public IRMutator {
 public:
  explicit HoistInStmt(NameGen& names) : hoist_(names) {}

  using IRMutator::mutate;
  Expr mutate(const Expr& e) override { return e.defined() ? hoist_.mutate(e) : e; }

 private:
  Hoist hoist_;
};

}  // namespace

Expr hoist_invariant_reductions(const Expr& e, NameGen& names) {
  Hoist hoist(names);
  return hoist.mutate(e);
}

Stmt hoist_invariant_reductions(const Stmt& s) {
  Names used;
  s.accept(&used);
  NameGen names;
  names.avoid(std::move(used.names));
  HoistInStmt pass(names);
  return pass.mutate(s);
}

}  // namespace stipple::lowering
