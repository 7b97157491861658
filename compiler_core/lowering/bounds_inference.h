// Symbolic bounds inference: interval arithmetic over Exprs.
//
// The concrete engine (compiler_core/bounds/interval.h, used by the evaluator and the
// reuse model) computes intervals of numbers once the inputs and params are known; the
// lowering knows neither, so here an interval's ends are Exprs (Min/Max/Add trees that
// LLVM folds) evaluated by the generated code. Both run the same per-node rules
// (compiler_core/bounds/interval_rules.h); over Expr ends a decision that depends on a
// runtime value (a divisor's sign, a domain's emptiness) is known only for a constant, and
// otherwise the rule takes its looser bound (README.md, "Bounds"): intervals are sound
// (they contain every value the generated code can compute), not always tight.
//
// Integer intervals have i32 ends; float intervals have f64 ends, widened like the
// concrete engine's so that single-precision rounding never leaves them. An undefined end is
// infinite (an unclamped data-dependent index, a float that may overflow).
//
// Variables are looked up in a VarTable: a variable bound at or outside the level where
// the bounds are wanted is a point (its own name); a loop variable inside that level
// ranges over its loop; any other name with a definition (a region bound, a stage
// variable computed from split loops) is expanded into its definition's interval.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir.h"

namespace stipple::lowering {

struct SInterval {
  Expr min, max;  // undefined: -inf / +inf
  bool may_be_nan = false;

  bool bounded() const { return min.defined() && max.defined() && !may_be_nan; }
  static SInterval point(Expr e);
  static SInterval everything() { return {Expr(), Expr(), true}; }
};

/// The hull of two intervals.
SInterval interval_union(const SInterval& a, const SInterval& b);

/// What a name means for bounds inference.
struct VarInfo {
  enum class Kind { Loop, Let } kind = Kind::Let;
  /// Loop: the loop's min and extent. Let: the definition (min), and optional clamps
  /// (the value is known to lie in [lo, hi] wherever it is used: guards ensure it).
  Expr min, extent;
  Expr clamp_lo, clamp_hi;
  /// The loop path (unique loop variable names, outermost first) at which the name is
  /// bound; `never` for names that are always expanded.
  std::vector<std::string> path;
  bool never = false;
};

using VarTable = std::map<std::string, VarInfo>;

/// Computes intervals at one level (a loop path) of the loop nest.
class BoundsContext {
 public:
  BoundsContext(const VarTable& table, std::vector<std::string> level)
      : table_(table), level_(std::move(level)) {}

  SInterval interval_of(const Expr& e);

  /// Variables bound by Reduce and Let nodes while walking an expression.
  void push(const std::string& name, SInterval iv) { scope_.emplace_back(name, std::move(iv)); }
  void pop() { scope_.pop_back(); }

  /// The interval of a named variable at this level.
  SInterval variable(const std::string& name);

 private:
  friend class SymbolicEnds;  // the end algebra of the shared rules (bounds_inference.cpp)

  bool available(const VarInfo& info) const;
  bool invariant(const Expr& e);
  SInterval compute(const Expr& e);

  const VarTable& table_;
  std::vector<std::string> level_;
  std::vector<std::pair<std::string, SInterval>> scope_;
  std::map<std::string, SInterval> memo_;  // expanded table names
  std::map<const void*, std::pair<Expr, bool>> invariant_memo_;
  // Holds the node, so that its address is not reused by another node. Sound because the
  // names bound by Reduce and Let nodes are unique, so a node means one thing here.
  std::map<const void*, std::pair<Expr, SInterval>> interval_memo_;
};

/// Structural equality that gives up (false) on expressions over 64 nodes, so that it
/// never walks a large DAG as a tree.
bool cheap_equal(const Expr& a, const Expr& b);

/// Calls `cb(call, arg intervals)` for every call to a func in `e`, with the scopes of
/// Reduce and Let nodes in place (like the interp CallSiteWalker).
void for_each_func_call(const Expr& e, BoundsContext& ctx,
                        const std::function<void(const Call*, const std::vector<SInterval>&)>& cb);

}  // namespace stipple::lowering
