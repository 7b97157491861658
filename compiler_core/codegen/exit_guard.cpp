#include "compiler_core/codegen/exit_guard.h"

#include <map>
#include <string>
#include <utility>

#include "compiler_core/ir/ir_visitor.h"

namespace stipple::codegen {

namespace {

/// How an expression changes as the loop variable grows.
enum class Trend { Invariant, NonDecreasing, Unknown };

Trend combine(Trend a, Trend b) {
  if (a == Trend::Unknown || b == Trend::Unknown) return Trend::Unknown;
  return a == Trend::Invariant && b == Trend::Invariant ? Trend::Invariant : Trend::NonDecreasing;
}

class TrendOf {
 public:
  TrendOf(std::string loop_var, const std::map<std::string, Expr>& lets)
      : loop_var_(std::move(loop_var)), lets_(lets) {}

  Trend of(const Expr& e) {
    switch (e.node_type()) {
      case IRNodeType::IntImm:
      case IRNodeType::FloatImm:
      case IRNodeType::Param:
      case IRNodeType::InputExtent: return Trend::Invariant;
      case IRNodeType::Variable: return variable(e.as<Variable>()->name);
      case IRNodeType::Add: return combine(of(e.as<Add>()->a), of(e.as<Add>()->b));
      case IRNodeType::Min: return combine(of(e.as<Min>()->a), of(e.as<Min>()->b));
      case IRNodeType::Max: return combine(of(e.as<Max>()->a), of(e.as<Max>()->b));
      case IRNodeType::Sub: {
        const Sub* op = e.as<Sub>();
        return of(op->b) == Trend::Invariant ? of(op->a) : Trend::Unknown;
      }
      case IRNodeType::Mul: {
        const Mul* op = e.as<Mul>();
        for (const auto& [factor, other] : {std::pair{op->a, op->b}, std::pair{op->b, op->a}}) {
          const IntImm* c = factor.as<IntImm>();
          if (c && c->value >= 0) return c->value == 0 ? Trend::Invariant : of(other);
        }
        break;
      }
      default: break;
    }
    return depends(e) ? Trend::Unknown : Trend::Invariant;
  }

  /// Whether the truth of `c` can only go from true to false as the loop variable grows.
  bool falls(const Expr& c) {
    if (const And* op = c.as<And>()) return falls(op->a) && falls(op->b);
    auto below = [&](const Expr& grows, const Expr& fixed) {
      const Trend t = of(grows);
      return grows.type() == Int32() && t != Trend::Unknown && of(fixed) == Trend::Invariant;
    };
    if (const LE* op = c.as<LE>()) return below(op->a, op->b);
    if (const LT* op = c.as<LT>()) return below(op->a, op->b);
    if (const GE* op = c.as<GE>()) return below(op->b, op->a);
    if (const GT* op = c.as<GT>()) return below(op->b, op->a);
    return !depends(c);
  }

 private:
  Trend variable(const std::string& name) {
    if (name == loop_var_) return Trend::NonDecreasing;
    auto it = lets_.find(name);
    return it == lets_.end() ? Trend::Invariant : of(it->second);
  }

  bool depends(const Expr& e) {
    for (const std::string& n : variable_names(e)) {
      if (variable(n) != Trend::Invariant) return true;
    }
    return false;
  }

  std::string loop_var_;
  const std::map<std::string, Expr>& lets_;
};

}  // namespace

const IfThenElse* exit_guard_of(const For* loop) {
  // Names bound by the IR are unique, so the lets can be looked up by name.
  std::map<std::string, Expr> lets;
  const Stmt* s = &loop->body;
  while (const LetStmt* let = s->as<LetStmt>()) {
    lets[let->name] = let->value;
    s = &let->body;
  }
  const IfThenElse* guard = s->as<IfThenElse>();
  if (guard == nullptr || guard->else_case.defined()) return nullptr;
  TrendOf trend(loop->name, lets);
  return trend.falls(guard->condition) ? guard : nullptr;
}

}  // namespace stipple::codegen
