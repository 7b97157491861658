// Perforation of reductions (reduction_perforation.h).
#include "compiler_core/perforation/reduction_perforation.h"

#include <map>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/substitute.h"

namespace stipple::perforation {

namespace {

Expr i32(int64_t v) { return IntImm::make(Int32(), v); }

// i32(f32(n) * p + 0.5): about p·n, rounded.
Expr scaled_count(const Expr& n, double p, double offset) {
  Expr scaled = Add::make(Mul::make(Cast::make(Float32(), n), FloatImm::make(Float32(), p)),
                          FloatImm::make(Float32(), offset));
  return Cast::make(Int32(), scaled);
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
    std::vector<ReductionVariable> domain;
    std::map<std::string, Expr> replacements;
    Expr scale;  // f32: iterations / kept, for rescaled sums
    bool perforated = false;
    for (const ReductionVariable& rv : op->domain) {
      ReductionVariable n = rv;
      Expr v = Variable::make(rv.name, VarKind::Reduction);
      Expr count = Add::make(Sub::make(rv.max, rv.min), i32(1));
      Expr kept;
      if (auto r = reductions_.find(rv.name); r != reductions_.end()) {
        perforated = true;
        if (r->second->fraction) {
          // Midpoints of `kept` equal parts: kept = n gives every iteration.
          kept = Max::make(scaled_count(count, *r->second->fraction, 0.5), i32(1));
          replacements[rv.name] =
              Add::make(rv.min, Div::make(Mul::make(Add::make(Mul::make(v, i32(2)), i32(1)), count),
                                          Mul::make(kept, i32(2))));
        } else {
          const int64_t s = r->second->stride;
          kept = Max::make(Add::make(Div::make(Sub::make(rv.max, rv.min), i32(s)), i32(1)), i32(1));
          replacements[rv.name] = Add::make(rv.min, Mul::make(v, i32(s)));
        }
        n.min = i32(0);
        n.max = Sub::make(kept, i32(1));
        Expr ratio = Div::make(Cast::make(Float32(), count), Cast::make(Float32(), kept));
        scale = scale.defined() ? Mul::make(scale, ratio) : ratio;
      } else if (auto l = loops_.find(rv.name); l != loops_.end()) {
        const LoopPerforation& lp = *l->second;
        perforated = true;
        if (lp.kind == LoopPerforationKind::Stride) {
          n.min = i32(0);
          n.max = Div::make(Sub::make(rv.max, rv.min), i32(lp.stride));
          replacements[rv.name] = Add::make(rv.min, Mul::make(v, i32(lp.stride)));
        } else {
          Expr skipped = scaled_count(count, lp.fraction, 0.0);
          if (lp.kind == LoopPerforationKind::TruncateLast) {
            n.max = Sub::make(rv.max, skipped);
          } else {
            n.min = Add::make(rv.min, skipped);
          }
        }
      }
      domain.push_back(std::move(n));
    }
    if (!perforated && body.same_as(op->body)) return op;
    Expr result = Reduce::make(op->op, std::move(domain), substitute(body, replacements));
    if (scale.defined() && op->op == ReduceOp::Sum && result.type().is_float()) {
      Expr factor = result.type() == Float32() ? scale : Cast::make(result.type(), scale);
      result = Mul::make(result, factor);
    }
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

}  // namespace stipple::perforation
