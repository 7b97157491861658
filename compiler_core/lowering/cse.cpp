// Common subexpression elimination over the pointer identity of shared nodes.
#include "compiler_core/lowering/cse.h"

#include <map>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::lowering {

namespace {

// Counts the parents of every node (each shared node is descended into once).
class UseCounter : public IRVisitor {
 public:
  std::map<const void*, int> uses;
  using IRVisitor::visit;

#define STIPPLE_COUNT(N)                       \
  void visit(const N* op) override {           \
    if (uses[op]++ == 0) IRVisitor::visit(op); \
  }
  IR_EXPR_NODES(STIPPLE_COUNT)
#undef STIPPLE_COUNT
};

bool is_leaf(const Expr& e) {
  switch (e.node_type()) {
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Variable:
    case IRNodeType::Param:
    case IRNodeType::InputExtent: return true;
    default: return false;
  }
}

class Replacer : public IRGraphMutator {
 public:
  Replacer(const std::map<const void*, int>& uses, NameGen& names) : uses_(uses), names_(names) {}
  std::vector<std::pair<std::string, Expr>> bindings;  // dependencies first

 protected:
  Expr mutate_node(const Expr& e) override {
    Expr r = IRGraphMutator::mutate_node(e);
    auto u = uses_.find(e.get());
    if (u != uses_.end() && u->second > 1 && !is_leaf(e) && e.type() == Int32()) {
      std::string name = names_.fresh("t");
      bindings.emplace_back(name, r);
      r = Variable::make_typed(Int32(), name);
    }
    return r;
  }

 private:
  const std::map<const void*, int>& uses_;
  NameGen& names_;
};

}  // namespace

Expr cse(const Expr& e, NameGen& names) {
  UseCounter counter;
  e.accept(&counter);
  Replacer r(counter.uses, names);
  Expr body = r.mutate(e);
  for (auto it = r.bindings.rbegin(); it != r.bindings.rend(); ++it) {
    body = Let::make(it->first, it->second, body);
  }
  return body;
}

}  // namespace stipple::lowering
