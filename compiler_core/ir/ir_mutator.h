// Rewriting traversal of the IR. The default visit of each node mutates its children and
// rebuilds the node only when a child changed, so untouched subtrees stay shared.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);
  /// Mutates each element; `changed` is set when any element changed.
  std::vector<Expr> mutate_exprs(const std::vector<Expr>& exprs, bool* changed);
  /// Mutates the bounds of each reduction variable (names kept); `changed` as above.
  std::vector<ReductionVariable> mutate_domain(const std::vector<ReductionVariable>& domain,
                                               bool* changed);

#define IR_MUTATE_DECL(N) virtual Expr visit(const N* op);
  IR_EXPR_NODES(IR_MUTATE_DECL)
#undef IR_MUTATE_DECL
#define IR_MUTATE_DECL(N) virtual Stmt visit(const N* op);
  IR_STMT_NODES(IR_MUTATE_DECL)
#undef IR_MUTATE_DECL
};

/// An IRMutator that mutates each expression node once however many parents share it
/// (Halide's IRGraphMutator), so a shared subexpression stays one shared node, which is
/// what CSE finds by identity; it also does the work once.
class IRGraphMutator : public IRMutator {
 public:
  using IRMutator::mutate;
  Expr mutate(const Expr& e) override;

 protected:
  /// The mutation of one node, run once per node: IRMutator's by default.
  virtual Expr mutate_node(const Expr& e) { return IRMutator::mutate(e); }

 private:
  // Each node with its result; the node is held so that its address stays its own.
  std::map<const IRNode*, std::pair<Expr, Expr>> memo_;
};

/// Mutates every expression of f's update definitions: each one's left side, value and
/// domain bounds (the pure value is left to the caller, which often treats it apart).
void mutate_updates(Func& f, IRMutator& m);

}  // namespace stipple
