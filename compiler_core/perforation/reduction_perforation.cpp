// Perforation of reductions (reduction_perforation.h).
#include "compiler_core/perforation/reduction_perforation.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/substitute.h"

namespace stipple::perforation {

namespace {

Expr i32(int64_t v) { return IntImm::make(Int32(), v); }

// i32 arithmetic folded when both sides are constants (and x * 1, x + 0 left as x), so
// that a perforated domain over constant bounds keeps constant bounds: codegen's vector
// median and the input-row versioning need them.
std::optional<int64_t> constant(const Expr& e) {
  if (const IntImm* k = e.as<IntImm>()) return k->value;
  return std::nullopt;
}
Expr add(const Expr& a, const Expr& b) {
  auto x = constant(a), y = constant(b);
  if (x && y) return i32(*x + *y);
  if (y && *y == 0) return a;
  if (x && *x == 0) return b;
  return Add::make(a, b);
}
Expr sub(const Expr& a, const Expr& b) {
  auto x = constant(a), y = constant(b);
  if (x && y) return i32(*x - *y);
  if (y && *y == 0) return a;
  return Sub::make(a, b);
}
Expr mul(const Expr& a, const Expr& b) {
  auto x = constant(a), y = constant(b);
  if (x && y) return i32(*x * *y);
  if (y && *y == 1) return a;
  return Mul::make(a, b);
}
// Floor division, as the language's `/` for a positive divisor.
Expr div(const Expr& a, const Expr& b) {
  auto x = constant(a), y = constant(b);
  if (x && y && *y > 0) return i32((*x - ((*x % *y) + *y) % *y) / *y);
  if (y && *y == 1) return a;
  return Div::make(a, b);
}
Expr max(const Expr& a, const Expr& b) {
  auto x = constant(a), y = constant(b);
  if (x && y) return i32(std::max(*x, *y));
  return Max::make(a, b);
}

// i32(f32(n) * p + offset): about p·n (rounded with offset 0.5); folded, in the same
// f32 arithmetic, when n is a constant.
Expr scaled_count(const Expr& n, double p, double offset) {
  if (const IntImm* k = n.as<IntImm>()) {
    const float v =
        static_cast<float>(k->value) * static_cast<float>(p) + static_cast<float>(offset);
    return IntImm::make(Int32(), static_cast<int64_t>(v));
  }
  Expr scaled = Add::make(Mul::make(Cast::make(Float32(), n), FloatImm::make(Float32(), p)),
                          FloatImm::make(Float32(), offset));
  return Cast::make(Int32(), scaled);
}

// A reduction domain with its perforated variables' iterations thinned: the new domain,
// each old variable in terms of the new one, and iterations / kept (f32) for rescaled sums.
struct PerforatedDomain {
  std::vector<ReductionVariable> domain;
  std::map<std::string, Expr> replacements;
  Expr scale;
  bool perforated = false;
};

PerforatedDomain perforate_domain(
    const std::vector<ReductionVariable>& old,
    const std::map<std::string, const ReductionPerforation*>& reductions,
    const std::map<std::string, const LoopPerforation*>& loops) {
  PerforatedDomain d;
  for (const ReductionVariable& rv : old) {
    ReductionVariable n = rv;
    Expr v = Variable::make(rv.name, VarKind::Reduction);
    Expr count = add(sub(rv.max, rv.min), i32(1));
    Expr kept;
    if (auto r = reductions.find(rv.name); r != reductions.end()) {
      d.perforated = true;
      if (r->second->fraction) {
        // Midpoints of `kept` equal parts: kept = n gives every iteration.
        kept = max(scaled_count(count, *r->second->fraction, 0.5), i32(1));
        d.replacements[rv.name] =
            add(rv.min, div(mul(add(mul(v, i32(2)), i32(1)), count), mul(kept, i32(2))));
      } else {
        const int64_t s = r->second->stride;
        kept = max(add(div(sub(rv.max, rv.min), i32(s)), i32(1)), i32(1));
        d.replacements[rv.name] = add(rv.min, mul(v, i32(s)));
      }
      n.min = i32(0);
      n.max = sub(kept, i32(1));
      Expr ratio = Div::make(Cast::make(Float32(), count), Cast::make(Float32(), kept));
      d.scale = d.scale.defined() ? Mul::make(d.scale, ratio) : ratio;
    } else if (auto l = loops.find(rv.name); l != loops.end()) {
      const LoopPerforation& lp = *l->second;
      d.perforated = true;
      if (lp.kind == LoopPerforationKind::Stride) {
        n.min = i32(0);
        n.max = div(sub(rv.max, rv.min), i32(lp.stride));
        d.replacements[rv.name] = add(rv.min, mul(v, i32(lp.stride)));
      } else if (lp.kind == LoopPerforationKind::Random) {
        // kept ~ (1 - p) n iterations, one at a pseudo-random place in each of kept equal
        // strata: iteration k runs min + (k n + r(k)) / kept, r(k) a hash of k in
        // [0, n). The same iterations for every point (and in the evaluator).
        Expr kept = max(scaled_count(count, 1.0 - lp.fraction, 0.5), i32(1));
        Expr hash = Div::make(add(mul(v, i32(668265263)), i32(374761393)), i32(65536));
        Expr jitter = Mod::make(hash, count);
        n.min = i32(0);
        n.max = sub(kept, i32(1));
        d.replacements[rv.name] = add(rv.min, Div::make(add(mul(v, count), jitter), kept));
      } else {
        Expr skipped = scaled_count(count, lp.fraction, 0.0);
        if (lp.kind == LoopPerforationKind::TruncateLast) {
          n.max = sub(rv.max, skipped);
        } else {
          n.min = add(rv.min, skipped);
        }
      }
    }
    d.domain.push_back(std::move(n));
  }
  return d;
}

// `e` times the f32 factor, in e's float type.
Expr rescaled(const Expr& e, const Expr& scale) {
  return Mul::make(e, e.type() == Float32() ? scale : Cast::make(e.type(), scale));
}

class PerforateReductions : public IRMutator {
 public:
  PerforateReductions(const std::vector<ReductionPerforation>& reductions,
                      const std::vector<LoopPerforation>& loops) {
    for (const ReductionPerforation& r : reductions) reductions_[r.var] = &r;
    for (const LoopPerforation& l : loops) {
      if (l.reduction) loops_[l.var] = &l;
    }
  }

  using IRMutator::visit;

  Expr visit(const Reduce* op) override {
    Expr body = mutate(op->body);
    PerforatedDomain d = perforate_domain(op->domain, reductions_, loops_);
    if (!d.perforated && body.same_as(op->body)) return op;
    Expr result = Reduce::make(op->op, std::move(d.domain), substitute(body, d.replacements));
    const bool sum = op->op == ReduceOp::Sum || op->op == ReduceOp::FusedSum;
    if (d.scale.defined() && sum && result.type().is_float()) result = rescaled(result, d.scale);
    return result;
  }

 private:
  std::map<std::string, const ReductionPerforation*> reductions_;
  std::map<std::string, const LoopPerforation*> loops_;
};

}  // namespace

Expr perforate_reductions(const Expr& value, const std::vector<ReductionPerforation>& reductions,
                          const std::vector<LoopPerforation>& loops) {
  return PerforateReductions(reductions, loops).mutate(value);
}

UpdateDef perforate_update(const UpdateDef& u, const std::string& func,
                           const std::vector<ReductionPerforation>& reductions) {
  std::map<std::string, const ReductionPerforation*> by_var;
  for (const ReductionPerforation& r : reductions) by_var[r.var] = &r;
  PerforatedDomain d = perforate_domain(u.domain, by_var, {});
  // An empty domain stays empty (perforate_domain keeps at least one iteration, which for
  // an update would write a point the exact update never writes).
  for (size_t k = 0; k < u.domain.size(); ++k) {
    if (!by_var.count(u.domain[k].name)) continue;
    Expr count = add(sub(u.domain[k].max, u.domain[k].min), i32(1));
    if (auto c = constant(count)) {
      if (*c <= 0) d.domain[k].max = i32(-1);
    } else {
      d.domain[k].max = Select::make(GT::make(count, i32(0)), d.domain[k].max, i32(-1));
    }
  }
  UpdateDef out;
  out.domain = std::move(d.domain);
  for (const Expr& a : u.args) out.args.push_back(substitute(a, d.replacements));
  Expr value = u.value;
  // f(a) = f(a) + t or f(a) - t (`+=`, `-=`) of a float, t not reading f: t rescaled, so
  // that the sum estimates the whole one. Contraction makes `+= p * q` fma(p, q, f(a))
  // (and `-= p * q` fma(-p, q, f(a))): q is rescaled, still added with one rounding.
  std::set<std::string> term_reads;
  Expr term = addend_to_own_site(value, func, u.args);
  const Sub* sub_op = value.as<Sub>();
  if (!term.defined() && sub_op) {
    // f(a) - t: the addend of f(a) + t with the same operands, when it is t.
    Expr t = addend_to_own_site(Add::make(sub_op->a, sub_op->b), func, u.args);
    if (t.same_as(sub_op->b)) term = t;
  }
  if (term.defined()) add_called_funcs(term, term_reads);
  if (d.scale.defined() && value.type().is_float() && term.defined() && !term_reads.count(func)) {
    if (const Add* add_op = value.as<Add>()) {
      value = term.same_as(add_op->b) ? Add::make(add_op->a, rescaled(add_op->b, d.scale))
                                      : Add::make(rescaled(add_op->a, d.scale), add_op->b);
    } else if (sub_op) {
      value = Sub::make(sub_op->a, rescaled(sub_op->b, d.scale));
    } else {
      const Call* fma = value.as<Call>();
      value = Call::make_intrinsic(Intrinsic::Fma,
                                   {fma->args[0], rescaled(fma->args[1], d.scale), fma->args[2]});
    }
  }
  out.value = substitute(value, d.replacements);
  return out;
}

}  // namespace stipple::perforation
