#include "compiler_core/ir/ir_mutator.h"

namespace stipple {

Expr IRMutator::mutate(const Expr& e) { return e.defined() ? e.get()->mutate_with(this) : e; }
Stmt IRMutator::mutate(const Stmt& s) { return s.defined() ? s.get()->mutate_with(this) : s; }

Expr IRGraphMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second.second;
  Expr result = mutate_node(e);
  memo_.emplace(e.get(), std::pair{e, result});
  return result;
}

std::vector<Expr> IRMutator::mutate_exprs(const std::vector<Expr>& exprs, bool* changed) {
  std::vector<Expr> result;
  result.reserve(exprs.size());
  for (const Expr& e : exprs) {
    result.push_back(mutate(e));
    if (!result.back().same_as(e)) *changed = true;
  }
  return result;
}

Expr IRMutator::visit(const IntImm* op) { return op; }
Expr IRMutator::visit(const FloatImm* op) { return op; }
Expr IRMutator::visit(const Variable* op) { return op; }
Expr IRMutator::visit(const Param* op) { return op; }
Expr IRMutator::visit(const InputExtent* op) { return op; }

Expr IRMutator::visit(const Cast* op) {
  Expr value = mutate(op->value);
  if (value.same_as(op->value)) return op;
  return Cast::make(op->type, std::move(value));
}

#define IR_MUTATE_BINARY(N)                              \
  Expr IRMutator::visit(const N* op) {                   \
    Expr a = mutate(op->a);                              \
    Expr b = mutate(op->b);                              \
    if (a.same_as(op->a) && b.same_as(op->b)) return op; \
    return N::make(std::move(a), std::move(b));          \
  }
IR_MUTATE_BINARY(Add)
IR_MUTATE_BINARY(Sub)
IR_MUTATE_BINARY(Mul)
IR_MUTATE_BINARY(Div)
IR_MUTATE_BINARY(Mod)
IR_MUTATE_BINARY(Min)
IR_MUTATE_BINARY(Max)
IR_MUTATE_BINARY(EQ)
IR_MUTATE_BINARY(NE)
IR_MUTATE_BINARY(LT)
IR_MUTATE_BINARY(LE)
IR_MUTATE_BINARY(GT)
IR_MUTATE_BINARY(GE)
IR_MUTATE_BINARY(And)
IR_MUTATE_BINARY(Or)
#undef IR_MUTATE_BINARY

Expr IRMutator::visit(const Not* op) {
  Expr a = mutate(op->a);
  if (a.same_as(op->a)) return op;
  return Not::make(std::move(a));
}

Expr IRMutator::visit(const Select* op) {
  Expr c = mutate(op->condition);
  Expr t = mutate(op->true_value);
  Expr f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return op;
  }
  return Select::make(std::move(c), std::move(t), std::move(f));
}

Expr IRMutator::visit(const Call* op) {
  bool changed = false;
  std::vector<Expr> args = mutate_exprs(op->args, &changed);
  if (!changed) return op;
  if (op->call_type == CallType::Intrinsic)
    return Call::make_intrinsic(op->intrinsic, std::move(args));
  return Call::make(op->type, op->name, std::move(args), op->call_type);
}

std::vector<ReductionVariable> IRMutator::mutate_domain(
    const std::vector<ReductionVariable>& domain, bool* changed) {
  std::vector<ReductionVariable> out;
  for (const ReductionVariable& rv : domain) {
    ReductionVariable m{rv.name, mutate(rv.min), mutate(rv.max)};
    if (!m.min.same_as(rv.min) || !m.max.same_as(rv.max)) *changed = true;
    out.push_back(std::move(m));
  }
  return out;
}

Expr IRMutator::visit(const Reduce* op) {
  bool changed = false;
  std::vector<ReductionVariable> domain = mutate_domain(op->domain, &changed);
  Expr body = mutate(op->body);
  if (!changed && body.same_as(op->body)) return op;
  return Reduce::make(op->op, std::move(domain), std::move(body));
}

Expr IRMutator::visit(const Let* op) {
  Expr value = mutate(op->value);
  Expr body = mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) return op;
  return Let::make(op->name, std::move(value), std::move(body));
}

Stmt IRMutator::visit(const LetStmt* op) {
  Expr value = mutate(op->value);
  Stmt body = mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) return op;
  return LetStmt::make(op->name, std::move(value), std::move(body));
}

Stmt IRMutator::visit(const For* op) {
  Expr min = mutate(op->min);
  Expr extent = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return op;
  return For::make(op->name, std::move(min), std::move(extent), op->for_type, std::move(body));
}

Stmt IRMutator::visit(const Provide* op) {
  Expr value = mutate(op->value);
  bool changed = false;
  std::vector<Expr> args = mutate_exprs(op->args, &changed);
  if (!changed && value.same_as(op->value)) return op;
  return Provide::make(op->name, std::move(value), std::move(args), op->atomic);
}

Stmt IRMutator::visit(const Allocate* op) {
  bool changed = false;
  std::vector<Expr> extents = mutate_exprs(op->extents, &changed);
  Stmt body = mutate(op->body);
  if (!changed && body.same_as(op->body)) return op;
  return Allocate::make(op->name, op->type, std::move(extents), std::move(body));
}

Stmt IRMutator::visit(const Block* op) {
  Stmt first = mutate(op->first);
  Stmt rest = mutate(op->rest);
  if (first.same_as(op->first) && rest.same_as(op->rest)) return op;
  return Block::make(std::move(first), std::move(rest));
}

Stmt IRMutator::visit(const IfThenElse* op) {
  Expr c = mutate(op->condition);
  Stmt t = mutate(op->then_case);
  Stmt e = mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return op;
  return IfThenElse::make(std::move(c), std::move(t), std::move(e));
}

Stmt IRMutator::visit(const Evaluate* op) {
  Expr value = mutate(op->value);
  if (value.same_as(op->value)) return op;
  return Evaluate::make(std::move(value));
}

void mutate_updates(Func& f, IRMutator& m) {
  for (UpdateDef& u : f.updates) {
    for (Expr& e : u.args) e = m.mutate(e);
    u.value = m.mutate(u.value);
    for (ReductionVariable& rv : u.domain) {
      rv.min = m.mutate(rv.min);
      rv.max = m.mutate(rv.max);
    }
  }
}

}  // namespace stipple
