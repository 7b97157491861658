// Constant folding of the loop nest's integer bookkeeping: see fold_constants.h.
#include "compiler_core/lowering/fold_constants.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple::lowering {

namespace {

std::optional<int64_t> i32_constant(const Expr& e) {
  const IntImm* imm = e.as<IntImm>();
  if (!imm || e.type() != Int32()) return std::nullopt;
  return imm->value;
}

class ConstantFolder : public IRMutator {
 private:
  // A name bound to something that is not a constant: hides an outer constant binding.
  static constexpr int64_t kHidden = INT64_MIN;

  template <typename F>
  auto bind(const std::string& name, const Expr& value, F body) {
    std::optional<int64_t> c = i32_constant(value);
    constants_[name].push_back(c ? *c : kHidden);
    auto r = body();
    constants_[name].pop_back();
    return r;
  }
  template <typename F>
  auto bind_none(const std::string& name, F body) {
    constants_[name].push_back(kHidden);
    auto r = body();
    constants_[name].pop_back();
    return r;
  }

  std::map<std::string, std::vector<int64_t>> constants_;

 public:
  using IRMutator::mutate;
  using IRMutator::visit;

  Expr visit(const Variable* op) override {
    auto it = constants_.find(op->name);
    if (it == constants_.end() || it->second.empty() || it->second.back() == kHidden) return op;
    return IntImm::make(Int32(), it->second.back());
  }

  Expr visit(const Let* op) override {
    Expr value = mutate(op->value);
    Expr body = bind(op->name, value, [&] { return mutate(op->body); });
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->name, value, body);
  }

  Stmt visit(const LetStmt* op) override {
    Expr value = mutate(op->value);
    Stmt body = bind(op->name, value, [&] { return mutate(op->body); });
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return LetStmt::make(op->name, value, body);
  }

  Stmt visit(const For* op) override {
    Expr min = mutate(op->min);
    Expr extent = mutate(op->extent);
    const bool once = (op->for_type == ForType::Serial || op->for_type == ForType::Unrolled) &&
                      i32_constant(extent) == 1;
    if (once) {
      // The body's variable is the min: a Let, which a constant min folds on through.
      return LetStmt::make(op->name, min, bind(op->name, min, [&] { return mutate(op->body); }));
    }
    Stmt body = bind_none(op->name, [&] { return mutate(op->body); });
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return op;
    return For::make(op->name, min, extent, op->for_type, body);
  }

  Expr visit(const Reduce* op) override {
    // Its variables hide constants of the same name inside it.
    bool changed = false;
    std::vector<ReductionVariable> domain = mutate_domain(op->domain, &changed);
    for (const ReductionVariable& rv : op->domain) constants_[rv.name].push_back(kHidden);
    Expr body = mutate(op->body);
    for (const ReductionVariable& rv : op->domain) constants_[rv.name].pop_back();
    if (!changed && body.same_as(op->body)) return op;
    return Reduce::make(op->op, std::move(domain), body);
  }

#define STIPPLE_FOLD(N, f)                                                \
  Expr visit(const N* op) override {                                      \
    Expr a = mutate(op->a), b = mutate(op->b);                            \
    std::optional<int64_t> x = i32_constant(a), y = i32_constant(b);      \
    if (x && y) return IntImm::make(Int32(), wrap(ScalarType::Int32, f)); \
    if (a.same_as(op->a) && b.same_as(op->b)) return op;                  \
    return N::make(a, b);                                                 \
  }
  STIPPLE_FOLD(Add, *x + *y)
  STIPPLE_FOLD(Sub, *x - *y)
  STIPPLE_FOLD(Mul, *x** y)
  STIPPLE_FOLD(Div, floor_div(*x, *y))
  STIPPLE_FOLD(Mod, euclid_mod(*x, *y))
  STIPPLE_FOLD(Min, std::min(*x, *y))
  STIPPLE_FOLD(Max, std::max(*x, *y))
#undef STIPPLE_FOLD
};

}  // namespace

Stmt fold_constants(const Stmt& s) { return ConstantFolder().mutate(s); }

}  // namespace stipple::lowering
