// Congruence proofs with Z3 (congruence.h), and exact division of affine expressions.
#include "compiler_core/perforation/congruence.h"

#include <z3++.h>

#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_printer.h"

namespace stipple::perforation {

struct CongruenceProver::Solver {
  z3::context ctx;
};

namespace {

// An i32 or Bool IR expression as a Z3 integer or Boolean term. What has no integer
// meaning here becomes an unknown named by its printed form, so that two occurrences of
// the same subexpression are the same unknown.
class ToZ3 {
 public:
  explicit ToZ3(z3::context& ctx) : ctx_(ctx) {}

  z3::expr integer(const Expr& e) {
    if (e.type() != Int32()) return opaque(e);
    if (const IntImm* op = e.as<IntImm>()) return ctx_.int_val(op->value);
    if (const Variable* op = e.as<Variable>()) {
      auto it = lets_.find(op->name);
      if (it != lets_.end()) return it->second;
      return ctx_.int_const(("var:" + op->name).c_str());
    }
    if (const Param* op = e.as<Param>()) return ctx_.int_const(("param:" + op->name).c_str());
    if (e.as<InputExtent>()) return opaque(e);
    if (const Add* op = e.as<Add>()) return integer(op->a) + integer(op->b);
    if (const Sub* op = e.as<Sub>()) return integer(op->a) - integer(op->b);
    if (const Mul* op = e.as<Mul>()) return integer(op->a) * integer(op->b);
    if (const Div* op = e.as<Div>()) {
      // The language's division rounds down; Z3's `div` does too for a positive divisor.
      // A zero divisor gives 0 in the language.
      if (const IntImm* d = op->b.as<IntImm>()) {
        if (d->value > 0) return integer(op->a) / ctx_.int_val(d->value);
        if (d->value == 0) return ctx_.int_val(0);
      }
      return opaque(e);
    }
    if (const Mod* op = e.as<Mod>()) {
      if (const IntImm* d = op->b.as<IntImm>()) {
        if (d->value > 0) return z3::mod(integer(op->a), ctx_.int_val(d->value));
      }
      return opaque(e);
    }
    if (const Min* op = e.as<Min>()) {
      z3::expr a = integer(op->a), b = integer(op->b);
      return z3::ite(a <= b, a, b);
    }
    if (const Max* op = e.as<Max>()) {
      z3::expr a = integer(op->a), b = integer(op->b);
      return z3::ite(a >= b, a, b);
    }
    if (const Select* op = e.as<Select>()) {
      return z3::ite(boolean(op->condition), integer(op->true_value), integer(op->false_value));
    }
    if (const Let* op = e.as<Let>()) {
      if (op->value.type() != Int32()) return opaque(e);
      z3::expr v = integer(op->value);
      auto saved = lets_.find(op->name);
      std::optional<z3::expr> old;
      if (saved != lets_.end()) old = saved->second;
      lets_.insert_or_assign(op->name, v);
      z3::expr body = integer(op->body);
      if (old) {
        lets_.insert_or_assign(op->name, *old);
      } else {
        lets_.erase(op->name);
      }
      return body;
    }
    return opaque(e);
  }

  z3::expr boolean(const Expr& e) {
    auto cmp = [&](const auto* op, auto f) -> std::optional<z3::expr> {
      if (op->a.type() != Int32()) return std::nullopt;
      return f(integer(op->a), integer(op->b));
    };
    std::optional<z3::expr> r;
    if (const EQ* op = e.as<EQ>()) r = cmp(op, [](z3::expr a, z3::expr b) { return a == b; });
    if (const NE* op = e.as<NE>()) r = cmp(op, [](z3::expr a, z3::expr b) { return a != b; });
    if (const LT* op = e.as<LT>()) r = cmp(op, [](z3::expr a, z3::expr b) { return a < b; });
    if (const LE* op = e.as<LE>()) r = cmp(op, [](z3::expr a, z3::expr b) { return a <= b; });
    if (const GT* op = e.as<GT>()) r = cmp(op, [](z3::expr a, z3::expr b) { return a > b; });
    if (const GE* op = e.as<GE>()) r = cmp(op, [](z3::expr a, z3::expr b) { return a >= b; });
    if (const And* op = e.as<And>()) r = boolean(op->a) && boolean(op->b);
    if (const Or* op = e.as<Or>()) r = boolean(op->a) || boolean(op->b);
    if (const Not* op = e.as<Not>()) r = !boolean(op->a);
    if (r) return *r;
    return ctx_.bool_const(("opaque:" + to_string(e)).c_str());
  }

 private:
  z3::expr opaque(const Expr& e) { return ctx_.int_const(("opaque:" + to_string(e)).c_str()); }

  z3::context& ctx_;
  std::map<std::string, z3::expr> lets_;
};

}  // namespace

CongruenceProver::CongruenceProver() : solver_(std::make_unique<Solver>()) {}
CongruenceProver::~CongruenceProver() = default;

std::optional<int64_t> CongruenceProver::residue(const Expr& e, int64_t modulus,
                                                 const KnownCongruences& known) {
  STIPPLE_INTERNAL_CHECK(modulus >= 1, "congruence modulo " + std::to_string(modulus));
  if (modulus == 1) return 0;
  if (e.type() != Int32()) return std::nullopt;
  std::string key = to_string(e) + " mod " + std::to_string(modulus);
  for (const auto& [name, c] : known) {
    key += "; " + name + " = " + std::to_string(c.residue) + " mod " + std::to_string(c.modulus);
  }
  if (auto it = cache_.find(key); it != cache_.end()) {
    ++cache_hits_;
    return it->second;
  }
  ++solver_calls_;
  z3::context& ctx = solver_->ctx;
  ToZ3 to_z3(ctx);
  z3::solver s(ctx);
  z3::params params(ctx);
  params.set("timeout", 2000u);  // ms; an unknown answer only means no simplification
  s.set(params);
  for (const auto& [name, c] : known) {
    s.add(z3::mod(ctx.int_const(("var:" + name).c_str()), ctx.int_val(c.modulus)) ==
          ctx.int_val(c.residue));
  }
  z3::expr r = z3::mod(to_z3.integer(e), ctx.int_val(modulus));
  std::optional<int64_t> result;
  // One satisfying assignment gives the only candidate; then no assignment may give
  // another residue.
  if (s.check() == z3::sat) {
    int64_t candidate = 0;
    if (s.get_model().eval(r, true).is_numeral_i64(candidate)) {
      s.add(r != ctx.int_val(candidate));
      if (s.check() == z3::unsat) result = candidate;
    }
  }
  cache_.emplace(std::move(key), result);
  return result;
}

namespace {

struct AffineTerm {
  Expr atom;
  int64_t coefficient;
};

// e * scale added to terms + constant.
void collect_affine(const Expr& e, int64_t scale, std::vector<AffineTerm>& terms,
                    int64_t& constant) {
  if (const IntImm* op = e.as<IntImm>()) {
    constant += scale * op->value;
    return;
  }
  if (const Add* op = e.as<Add>()) {
    collect_affine(op->a, scale, terms, constant);
    collect_affine(op->b, scale, terms, constant);
    return;
  }
  if (const Sub* op = e.as<Sub>()) {
    collect_affine(op->a, scale, terms, constant);
    collect_affine(op->b, -scale, terms, constant);
    return;
  }
  if (const Mul* op = e.as<Mul>()) {
    if (const IntImm* k = op->b.as<IntImm>())
      return collect_affine(op->a, scale * k->value, terms, constant);
    if (const IntImm* k = op->a.as<IntImm>())
      return collect_affine(op->b, scale * k->value, terms, constant);
  }
  for (AffineTerm& t : terms) {
    if (equal(t.atom, e)) {
      t.coefficient += scale;
      return;
    }
  }
  terms.push_back({e, scale});
}

}  // namespace

Expr exact_quotient(const Expr& e, int64_t residue, int64_t modulus) {
  STIPPLE_INTERNAL_CHECK(modulus >= 1 && e.type() == Int32(), "exact_quotient of a non-i32");
  std::vector<AffineTerm> terms;
  int64_t constant = 0;
  collect_affine(e, 1, terms, constant);
  bool divisible = (constant - residue) % modulus == 0;
  for (const AffineTerm& t : terms) divisible = divisible && t.coefficient % modulus == 0;
  if (!divisible) {
    Expr shifted = residue == 0 ? e : Sub::make(e, IntImm::make(Int32(), residue));
    return modulus == 1 ? shifted : Div::make(shifted, IntImm::make(Int32(), modulus));
  }
  Expr sum;
  for (const AffineTerm& t : terms) {
    int64_t c = t.coefficient / modulus;
    if (c == 0) continue;
    Expr term =
        c == 1 || c == -1 ? t.atom : Mul::make(t.atom, IntImm::make(Int32(), c < 0 ? -c : c));
    if (!sum.defined()) {
      sum = c < 0 ? Sub::make(IntImm::make(Int32(), 0), term) : term;
    } else {
      sum = c < 0 ? Sub::make(sum, term) : Add::make(sum, term);
    }
  }
  int64_t k = (constant - residue) / modulus;
  if (!sum.defined()) return IntImm::make(Int32(), k);
  if (k > 0) return Add::make(sum, IntImm::make(Int32(), k));
  if (k < 0) return Sub::make(sum, IntImm::make(Int32(), -k));
  return sum;
}

}  // namespace stipple::perforation
