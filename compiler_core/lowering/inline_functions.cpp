// Inlining of pure funcs and renaming of variables to names unique in the loop nest.
#include "compiler_core/lowering/inline_functions.h"

#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"

namespace stipple::lowering {

std::string NameGen::fresh(const std::string& base) {
  std::string name;
  do {
    name = base + "$" + std::to_string(++counters_[base]);
  } while (taken_.count(name));
  return name;
}

namespace {

/// A small integer-affine argument (variables, params and constants under +, - and
/// multiplication by a constant, at most `budget` nodes): substituted when inlined, like
/// a plain variable. Bound by a Let instead, `f(x - i)` hid from codegen that the read
/// it feeds is affine in the reduction variable i (input-row versioning,
/// codegen_input_rows.cpp: a vectorised 17-tap blur reading an inlined func ran 1.5x
/// slower). Duplicating it where the definition uses its argument twice costs an add.
bool small_affine(const Expr& e, int& budget) {
  if (--budget < 0) return false;
  if (e.as<Variable>() || e.as<IntImm>() || e.as<Param>()) return e.type() == Int32();
  if (const Add* a = e.as<Add>()) return small_affine(a->a, budget) && small_affine(a->b, budget);
  if (const Sub* d = e.as<Sub>()) return small_affine(d->a, budget) && small_affine(d->b, budget);
  if (const Mul* m = e.as<Mul>()) {
    if (m->a.as<IntImm>()) return small_affine(m->b, budget);
    if (m->b.as<IntImm>()) return small_affine(m->a, budget);
  }
  return false;
}

class InlineAndQualify : public IRMutator {
 public:
  InlineAndQualify(const Pipeline& p, const std::set<std::string>& inlined,
                   std::map<std::string, std::string> renames, NameGen& names,
                   std::map<std::string, Expr> substitutes = {})
      : p_(p),
        inlined_(inlined),
        renames_(std::move(renames)),
        substitutes_(std::move(substitutes)),
        names_(names) {}

  using IRMutator::visit;

  Expr visit(const Variable* op) override {
    if (auto s = substitutes_.find(op->name); s != substitutes_.end()) return s->second;
    auto it = renames_.find(op->name);
    if (it == renames_.end() || it->second == op->name) return op;
    // A Let's variable keeps its type (a `let t = in(x, y) * 2.0` is an f32).
    if (op->kind == VarKind::Let) return Variable::make_typed(op->type, it->second);
    return Variable::make(it->second, op->kind);
  }

  Expr visit(const Reduce* op) override {
    // Domain bounds see the outer names; the body sees the fresh ones.
    std::vector<ReductionVariable> domain;
    for (const ReductionVariable& rv : op->domain) {
      domain.push_back({rv.name, mutate(rv.min), mutate(rv.max)});
    }
    auto saved = renames_;
    for (ReductionVariable& rv : domain) {
      std::string fresh = names_.fresh(rv.name);
      renames_[rv.name] = fresh;
      rv.name = fresh;
    }
    Expr body = mutate(op->body);
    renames_ = std::move(saved);
    return Reduce::make(op->op, std::move(domain), body);
  }

  Expr visit(const Let* op) override {
    Expr value = mutate(op->value);
    auto saved = renames_;
    std::string fresh = names_.fresh(op->name);
    renames_[op->name] = fresh;
    Expr body = mutate(op->body);
    renames_ = std::move(saved);
    return Let::make(fresh, value, body);
  }

  Expr visit(const Call* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate_exprs(op->args, &changed);
    if (op->call_type != CallType::Func || !inlined_.count(op->name)) {
      if (!changed) return op;
      if (op->call_type == CallType::Intrinsic) return Call::make_intrinsic(op->intrinsic, args);
      return Call::make(op->type, op->name, args, op->call_type);
    }
    const Func* f = p_.find_func(op->name);
    STIPPLE_INTERNAL_CHECK(f && f->updates.empty(), "inlining '" + op->name + "'");
    STIPPLE_INTERNAL_CHECK(f->args.size() == args.size(), "call to '" + op->name + "' arity");
    // The definition sees only its own arguments, under fresh names bound by Lets; an
    // argument that is a variable, a constant or small and affine (small_affine) is
    // substituted instead (no name inside the definition can capture it: every binder
    // there gets a fresh name), which keeps two inlined reductions over the same
    // arguments recognisably equal (codegen fuses them, codegen_reductions.cpp), reads
    // affine for codegen, and the printed loop nest short.
    std::map<std::string, std::string> inner;
    std::map<std::string, Expr> substitutes;
    std::vector<std::string> fresh;
    for (size_t i = 0; i < f->args.size(); ++i) {
      const std::string& a = f->args[i];
      fresh.push_back(names_.fresh(f->name + "." + a));
      inner[a] = fresh.back();
      int budget = 7;
      if (args[i].as<Variable>() || args[i].as<IntImm>() || args[i].as<FloatImm>() ||
          args[i].as<Param>() || small_affine(args[i], budget)) {
        substitutes[a] = args[i];
      }
    }
    InlineAndQualify sub(p_, inlined_, std::move(inner), names_, std::move(substitutes));
    Expr body = sub.mutate(f->value);
    for (size_t i = args.size(); i-- > 0;) {
      if (!sub.substitutes_.count(f->args[i])) body = Let::make(fresh[i], args[i], body);
    }
    return body;
  }

 private:
  const Pipeline& p_;
  const std::set<std::string>& inlined_;
  std::map<std::string, std::string> renames_;
  std::map<std::string, Expr> substitutes_;  // the definition's arguments that are substituted
  NameGen& names_;
};

}  // namespace

Expr inline_and_qualify(const Expr& e, const Pipeline& p, const std::set<std::string>& inlined,
                        const std::map<std::string, std::string>& renames, NameGen& names) {
  return InlineAndQualify(p, inlined, renames, names).mutate(e);
}

}  // namespace stipple::lowering
