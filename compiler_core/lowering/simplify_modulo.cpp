// Modulo simplification: see simplify_modulo.h.
#include "compiler_core/lowering/simplify_modulo.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir_mutator.h"

namespace stipple::lowering {

namespace {

// A sum with more terms than this is left alone (lowering's bounds are long chains of
// Lets; the sums worth simplifying are a split variable and a few offsets).
constexpr size_t kMaxTerms = 64;

struct Term {
  Expr e;
  bool negated = false;
};

// The terms of one i32 sum, looking through the Lets in scope; `dropped` counts the terms
// that are multiples of the modulus.
class SumTerms {
 public:
  SumTerms(const std::map<std::string, Expr>& lets, int64_t modulus)
      : lets_(lets), modulus_(modulus) {}

  // False when the sum is too big to expand.
  bool collect(const Expr& e, bool negated) {
    if (terms.size() + dropped > kMaxTerms) return false;
    if (const auto* add = e.as<Add>()) return collect(add->a, negated) && collect(add->b, negated);
    if (const auto* sub = e.as<Sub>()) return collect(sub->a, negated) && collect(sub->b, !negated);
    if (const auto* v = e.as<Variable>()) {
      // Expanded only when that drops a term: a variable stays a variable otherwise.
      auto it = lets_.find(v->name);
      if (it != lets_.end() && it->second.type() == Int32()) {
        SumTerms value(lets_, modulus_);
        if (value.collect(it->second, negated) && value.dropped > 0 &&
            terms.size() + dropped + value.terms.size() + value.dropped <= kMaxTerms) {
          terms.insert(terms.end(), value.terms.begin(), value.terms.end());
          dropped += value.dropped;
          return true;
        }
      }
    }
    if (is_multiple(e)) {
      ++dropped;
      return true;
    }
    terms.push_back({e, negated});
    return true;
  }

  std::vector<Term> terms;
  size_t dropped = 0;

 private:
  bool divisible(const Expr& e) const {
    const auto* k = e.as<IntImm>();
    return k && k->value % modulus_ == 0;
  }
  bool is_multiple(const Expr& e) const {
    if (divisible(e)) return true;
    const auto* mul = e.as<Mul>();
    return mul && (divisible(mul->a) || divisible(mul->b));
  }

  const std::map<std::string, Expr>& lets_;
  int64_t modulus_;
};

Expr rebuild(const std::vector<Term>& terms) {
  Expr sum;
  for (const Term& t : terms) {
    if (!sum.defined()) {
      sum = t.negated ? Sub::make(make_zero(Int32()), t.e) : t.e;
    } else {
      sum = t.negated ? Sub::make(sum, t.e) : Add::make(sum, t.e);
    }
  }
  return sum.defined() ? sum : make_zero(Int32());
}

class ModuloSimplifier : public IRMutator {
 public:
  using IRMutator::mutate;
  using IRMutator::visit;

  Expr visit(const Mod* op) override {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    const auto* c = b.as<IntImm>();
    if (op->type == Int32() && c && c->value > 0 && c->value <= (int64_t{1} << 30) &&
        (c->value & (c->value - 1)) == 0) {
      SumTerms sum(lets_, c->value);
      if (sum.collect(a, false) && sum.dropped > 0) return Mod::make(rebuild(sum.terms), b);
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return op;
    return Mod::make(std::move(a), std::move(b));
  }

  Expr visit(const Let* op) override {
    Expr value = mutate(op->value);
    Expr body = in_scope<Expr>({{op->name, value}}, [&] { return mutate(op->body); });
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->name, std::move(value), std::move(body));
  }

  Stmt visit(const LetStmt* op) override {
    Expr value = mutate(op->value);
    Stmt body = in_scope<Stmt>({{op->name, value}}, [&] { return mutate(op->body); });
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return LetStmt::make(op->name, std::move(value), std::move(body));
  }

  // Loop and reduction variables hide a Let of the same name inside them.
  Stmt visit(const For* op) override {
    return in_scope<Stmt>({{op->name, Expr()}}, [&] { return IRMutator::visit(op); });
  }
  Expr visit(const Reduce* op) override {
    std::vector<std::pair<std::string, Expr>> hidden;
    for (const ReductionVariable& rv : op->domain) hidden.emplace_back(rv.name, Expr());
    return in_scope<Expr>(hidden, [&] { return IRMutator::visit(op); });
  }

 private:
  // Runs `f` with each name bound to its value (or unbound, for an undefined value), then
  // restores what the names meant outside.
  template <typename R, typename F>
  R in_scope(const std::vector<std::pair<std::string, Expr>>& bindings, F f) {
    std::vector<std::pair<std::string, std::optional<Expr>>> outer;
    for (const auto& [name, value] : bindings) {
      auto it = lets_.find(name);
      outer.emplace_back(name, it == lets_.end() ? std::nullopt : std::optional(it->second));
      if (value.defined()) {
        lets_[name] = value;
      } else {
        lets_.erase(name);
      }
    }
    R r = f();
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) {
      if (it->second) {
        lets_[it->first] = *it->second;
      } else {
        lets_.erase(it->first);
      }
    }
    return r;
  }

  // Lowering names every variable uniquely in the loop nest (inline_functions.h), so a
  // Let's value means the same wherever the Let's variable is used.
  std::map<std::string, Expr> lets_;
};

}  // namespace

Stmt simplify_modulo(const Stmt& s) {
  ModuloSimplifier m;
  return m.mutate(s);
}

}  // namespace stipple::lowering
