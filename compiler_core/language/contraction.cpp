#include "compiler_core/language/contraction.h"

#include <utility>

#include "compiler_core/ir/ir_mutator.h"

namespace stipple {

namespace {

bool contracts(Type t) { return t.is_float() && !t.is_f16(); }

/// -e, exactly: a literal's sign flipped (a product's literal factor's, as rounding is
/// symmetric), or e * -1 (which LLVM emits as a negation that the FMA instruction absorbs).
Expr negate(const Expr& e) {
  if (const FloatImm* f = e.as<FloatImm>()) return FloatImm::make(e.type(), -f->value);
  if (const Mul* m = e.as<Mul>()) {
    if (m->b.as<FloatImm>()) return Mul::make(m->a, negate(m->b));
    if (m->a.as<FloatImm>()) return Mul::make(negate(m->a), m->b);
  }
  return Mul::make(e, FloatImm::make(e.type(), -1.0));
}

Expr fma(Expr a, Expr b, Expr c) {
  return Call::make_intrinsic(Intrinsic::Fma, {std::move(a), std::move(b), std::move(c)});
}

/// -(a * b) as two factors, negating b when it is a literal, else a.
std::pair<Expr, Expr> negated_factors(const Mul* m) {
  if (m->b.as<FloatImm>()) return {m->a, negate(m->b)};
  return {negate(m->a), m->b};
}

// A graph mutator: a subexpression the checker shares (an update's site and its `+=` read
// of it) stays shared, which is what lowering's CSE finds by identity.
class Contract : public IRGraphMutator {
 public:
  using IRMutator::visit;

  Expr visit(const Add* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (contracts(op->type)) {
      if (const Mul* m = a.as<Mul>()) return fma(m->a, m->b, b);
      if (const Mul* m = b.as<Mul>()) return fma(m->a, m->b, a);
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return op;
    return Add::make(std::move(a), std::move(b));
  }

  Expr visit(const Sub* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (contracts(op->type)) {
      if (const Mul* m = a.as<Mul>()) return fma(m->a, m->b, negate(b));
      if (const Mul* m = b.as<Mul>()) {
        auto [x, y] = negated_factors(m);
        return fma(x, y, a);
      }
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return op;
    return Sub::make(std::move(a), std::move(b));
  }

  Expr visit(const Reduce* op) override {
    Expr e = IRMutator::visit(op);
    const Reduce* r = e.as<Reduce>();
    if (r->op != ReduceOp::Sum || !contracts(r->type) || !r->body.as<Mul>()) return e;
    return Reduce::make(ReduceOp::FusedSum, r->domain, r->body);
  }
};

}  // namespace

Pipeline contract_products(Pipeline p) {
  // Everywhere, indices and bounds included: an update's left side must stay the site its
  // `+=` reads (`h(i32(v * s + 0.5)) += 1` reads h at the contracted index too).
  Contract contract;
  for (Func& f : p.funcs) {
    f.value = contract.mutate(f.value);
    mutate_updates(f, contract);
  }
  for (Expr& e : p.output.extents) e = contract.mutate(e);
  return p;
}

}  // namespace stipple
