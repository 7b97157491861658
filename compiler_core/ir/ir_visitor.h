// Read-only traversal of the IR. The default visit of each node visits its children in
// order; override the nodes you care about and call the base to keep descending.
#pragma once

#include <set>
#include <string>

#include "compiler_core/ir/ir.h"

namespace stipple {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
#define IR_VISIT_DECL(N) virtual void visit(const N* op);
  IR_EXPR_NODES(IR_VISIT_DECL)
  IR_STMT_NODES(IR_VISIT_DECL)
#undef IR_VISIT_DECL
};

/// The names of the Variables `e` reads (Let-bound ones included).
std::set<std::string> variable_names(const Expr& e);

}  // namespace stipple
