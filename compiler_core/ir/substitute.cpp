// Substitution of expressions for variables (substitute.h).
#include "compiler_core/ir/substitute.h"

#include "compiler_core/ir/ir_mutator.h"

namespace stipple {

namespace {

class Substitute : public IRMutator {
 public:
  explicit Substitute(std::map<std::string, Expr> replacements)
      : replacements_(std::move(replacements)) {}

  using IRMutator::visit;

  Expr visit(const Variable* op) override {
    auto it = replacements_.find(op->name);
    return it == replacements_.end() ? Expr(op) : it->second;
  }

  Expr visit(const Let* op) override {
    Expr value = mutate(op->value);
    auto saved = replacements_;
    replacements_.erase(op->name);
    Expr body = mutate(op->body);
    replacements_ = std::move(saved);
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->name, value, body);
  }

  Expr visit(const Reduce* op) override {
    auto saved = replacements_;
    std::vector<ReductionVariable> domain;
    bool changed = false;
    for (const ReductionVariable& rv : op->domain) {
      ReductionVariable n{rv.name, mutate(rv.min), mutate(rv.max)};
      changed = changed || !n.min.same_as(rv.min) || !n.max.same_as(rv.max);
      replacements_.erase(rv.name);
      domain.push_back(std::move(n));
    }
    Expr body = mutate(op->body);
    replacements_ = std::move(saved);
    if (!changed && body.same_as(op->body)) return op;
    return Reduce::make(op->op, std::move(domain), body);
  }

 private:
  std::map<std::string, Expr> replacements_;
};

}  // namespace

Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements) {
  if (replacements.empty()) return e;
  return Substitute(replacements).mutate(e);
}

}  // namespace stipple
