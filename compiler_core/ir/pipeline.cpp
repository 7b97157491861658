#include "compiler_core/ir/pipeline.h"

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

}  // namespace stipple
