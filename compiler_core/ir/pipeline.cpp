#include "compiler_core/ir/pipeline.h"

#include "compiler_core/ir/ir_visitor.h"

namespace stipple {

namespace {
template <typename T>
const T* find_by_name(const std::vector<T>& items, const std::string& name) {
  for (const T& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}
}  // namespace

const Func* Pipeline::find_func(const std::string& n) const { return find_by_name(funcs, n); }
const InputDecl* Pipeline::find_input(const std::string& n) const {
  return find_by_name(inputs, n);
}
const ParamDecl* Pipeline::find_param(const std::string& n) const {
  return find_by_name(params, n);
}

const char* boundary_kind_name(BoundaryKind b) {
  switch (b) {
    case BoundaryKind::Clamp: return "clamp";
    case BoundaryKind::Mirror: return "mirror";
    case BoundaryKind::Constant: return "constant";
  }
  return "?";
}

void add_called_funcs(const Expr& e, std::set<std::string>& out) {
  struct Calls : IRVisitor {
    std::set<std::string>* out;
    using IRVisitor::visit;
    void visit(const Call* op) override {
      if (op->call_type == CallType::Func) out->insert(op->name);
      IRVisitor::visit(op);
    }
  } calls;
  calls.out = &out;
  if (e.defined()) e.accept(&calls);
}

std::set<std::string> called_funcs(const Func& f) {
  std::set<std::string> out;
  add_called_funcs(f.value, out);
  for (const UpdateDef& u : f.updates) {
    for (const Expr& a : u.args) add_called_funcs(a, out);
    add_called_funcs(u.value, out);
    for (const ReductionVariable& rv : u.domain) {
      add_called_funcs(rv.min, out);
      add_called_funcs(rv.max, out);
    }
  }
  return out;
}

}  // namespace stipple
