#include "compiler_core/ir/ir_visitor.h"

namespace stipple {

void IRVisitor::visit(const IntImm*) {}
void IRVisitor::visit(const FloatImm*) {}
void IRVisitor::visit(const Cast* op) { op->value.accept(this); }
void IRVisitor::visit(const Variable*) {}
void IRVisitor::visit(const Param*) {}
void IRVisitor::visit(const InputExtent*) {}

#define IR_VISIT_BINARY(N)             \
  void IRVisitor::visit(const N* op) { \
    op->a.accept(this);                \
    op->b.accept(this);                \
  }
IR_VISIT_BINARY(Add)
IR_VISIT_BINARY(Sub)
IR_VISIT_BINARY(Mul)
IR_VISIT_BINARY(Div)
IR_VISIT_BINARY(Mod)
IR_VISIT_BINARY(Min)
IR_VISIT_BINARY(Max)
IR_VISIT_BINARY(EQ)
IR_VISIT_BINARY(NE)
IR_VISIT_BINARY(LT)
IR_VISIT_BINARY(LE)
IR_VISIT_BINARY(GT)
IR_VISIT_BINARY(GE)
IR_VISIT_BINARY(And)
IR_VISIT_BINARY(Or)
#undef IR_VISIT_BINARY

void IRVisitor::visit(const Not* op) { op->a.accept(this); }

void IRVisitor::visit(const Select* op) {
  op->condition.accept(this);
  op->true_value.accept(this);
  op->false_value.accept(this);
}

void IRVisitor::visit(const Call* op) {
  for (const Expr& a : op->args) a.accept(this);
}

void IRVisitor::visit(const Reduce* op) {
  for (const ReductionVariable& rv : op->domain) {
    rv.min.accept(this);
    rv.max.accept(this);
  }
  op->body.accept(this);
}

void IRVisitor::visit(const Let* op) {
  op->value.accept(this);
  op->body.accept(this);
}

void IRVisitor::visit(const LetStmt* op) {
  op->value.accept(this);
  op->body.accept(this);
}

void IRVisitor::visit(const For* op) {
  op->min.accept(this);
  op->extent.accept(this);
  op->body.accept(this);
}

void IRVisitor::visit(const Provide* op) {
  op->value.accept(this);
  for (const Expr& a : op->args) a.accept(this);
}

void IRVisitor::visit(const Allocate* op) {
  for (const Expr& e : op->extents) e.accept(this);
  op->body.accept(this);
}

void IRVisitor::visit(const Block* op) {
  op->first.accept(this);
  op->rest.accept(this);
}

void IRVisitor::visit(const IfThenElse* op) {
  op->condition.accept(this);
  op->then_case.accept(this);
  if (op->else_case.defined()) op->else_case.accept(this);
}

void IRVisitor::visit(const Evaluate* op) { op->value.accept(this); }

std::set<std::string> variable_names(const Expr& e) {
  struct Names : IRVisitor {
    std::set<std::string> names;
    using IRVisitor::visit;
    void visit(const Variable* op) override { names.insert(op->name); }
  } v;
  e.accept(&v);
  return std::move(v.names);
}

}  // namespace stipple
