// Validation of inputs and params, and the callee-first order of funcs.
#include "compiler_core/interp/evaluation_setup.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::interp {

Value ConstantEnv::param(const std::string& name) const {
  auto it = params.find(name);
  STIPPLE_INTERNAL_CHECK(it != params.end(), "undeclared param '" + name + "'");
  return it->second;
}

int64_t ConstantEnv::input_extent(const std::string& input, int dim) const {
  auto it = inputs.find(input);
  STIPPLE_INTERNAL_CHECK(it != inputs.end(), "extent of undeclared input '" + input + "'");
  return it->second->extent_or_one(dim);
}

namespace {

/// A param's value exactly as given, or a UserError: an integer param takes only integers
/// of its type's range (1.5 is not rounded, 99999999999 does not saturate), a float param
/// only finite values of its type's range.
Value param_value(const ParamDecl& decl, double v) {
  const std::string what = fmt::format("param '{}' is {}: {}", decl.name, to_string(decl.type), v);
  if (!std::isfinite(v)) throw UserError(what + " is not a finite number");
  if (decl.type.is_int()) {
    if (v != std::floor(v)) throw UserError(what + " is not an integer");
    if (v < decl.type.min_value() || v > decl.type.max_value()) {
      throw UserError(
          fmt::format("{} is outside {}..{}", what, decl.type.min_value(), decl.type.max_value()));
    }
  } else if (decl.type.code == ScalarType::Float32 &&
             std::abs(v) > double(std::numeric_limits<float>::max())) {
    throw UserError(what + " is outside the range of f32");
  }
  return value_from_double(decl.type.code, v);
}

}  // namespace

ConstantEnv make_constant_env(const Pipeline& pipeline, const InputImages& inputs,
                              const ParamValues& params) {
  ConstantEnv env;
  env.pipeline = &pipeline;
  for (const InputDecl& decl : pipeline.inputs) {
    auto it = inputs.find(decl.name);
    if (it == inputs.end()) throw UserError("missing input image '" + decl.name + "'");
    const Buffer& buf = it->second;
    if (!buf.defined()) throw UserError("input image '" + decl.name + "' is empty");
    if (buf.type() != decl.type.code) {
      throw UserError("input image '" + decl.name + "' has element type " +
                      to_string(Type(buf.type())) + " but the pipeline declares " +
                      to_string(decl.type));
    }
    if (buf.dimensions() != static_cast<int>(decl.dim_names.size())) {
      throw UserError("input image '" + decl.name + "' has " + std::to_string(buf.dimensions()) +
                      " dimensions but the pipeline declares " +
                      std::to_string(decl.dim_names.size()));
    }
    for (int d = 0; d < buf.dimensions(); ++d) {
      if (buf.extent(d) <= 0) {
        throw UserError("input image '" + decl.name + "' has an empty dimension " +
                        std::to_string(d));
      }
    }
    env.inputs[decl.name] = &buf;
  }
  for (const ParamDecl& decl : pipeline.params) {
    env.params[decl.name] = value_from_double(decl.type.code, decl.default_value);
  }
  for (const auto& [name, value] : params) {
    const ParamDecl* decl = pipeline.find_param(name);
    if (!decl) throw UserError("unknown param '" + name + "'");
    env.params[name] = param_value(*decl, value);
  }
  return env;
}

namespace {

/// The funcs one func calls (by name), excluding itself.
class CalleeCollector : public IRVisitor {
 public:
  CalleeCollector(const Pipeline& p, const Func& f) : pipeline_(p), self_(f.name) {}
  std::vector<std::string> callees;

  void visit(const Call* op) override {
    if (op->call_type == CallType::Func) {
      STIPPLE_INTERNAL_CHECK(pipeline_.find_func(op->name) != nullptr,
                             "call to undeclared func '" + op->name + "'");
      if (op->name != self_ && seen_.insert(op->name).second) callees.push_back(op->name);
    } else if (op->call_type == CallType::Input) {
      STIPPLE_INTERNAL_CHECK(pipeline_.find_input(op->name) != nullptr,
                             "call to undeclared input '" + op->name + "'");
    }
    IRVisitor::visit(op);
  }

 private:
  const Pipeline& pipeline_;
  std::string self_;
  std::set<std::string> seen_;
};

std::vector<std::string> callees_of(const Pipeline& p, const Func& f) {
  CalleeCollector c(p, f);
  STIPPLE_INTERNAL_CHECK(f.value.defined(), "func '" + f.name + "' has no definition");
  f.value.accept(&c);
  for (const UpdateDef& u : f.updates) {
    for (const Expr& a : u.args) a.accept(&c);
    u.value.accept(&c);
    for (const ReductionVariable& rv : u.domain) {
      rv.min.accept(&c);
      rv.max.accept(&c);
    }
  }
  return c.callees;
}

}  // namespace

std::vector<const Func*> order_funcs(const Pipeline& pipeline, const std::string& root) {
  const Func* root_func = pipeline.find_func(root);
  STIPPLE_INTERNAL_CHECK(root_func != nullptr, "output func '" + root + "' is not declared");
  // Iterative depth-first post-order; a func met again while still on the stack is a cycle.
  enum class Mark { None, Active, Done };
  std::map<std::string, Mark> marks;
  std::vector<const Func*> order;
  struct Frame {
    const Func* func;
    std::vector<std::string> callees;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  stack.push_back({root_func, callees_of(pipeline, *root_func)});
  marks[root] = Mark::Active;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.callees.size()) {
      marks[top.func->name] = Mark::Done;
      order.push_back(top.func);
      stack.pop_back();
      continue;
    }
    std::string callee = top.callees[top.next++];
    Mark m = marks[callee];
    if (m == Mark::Done) continue;
    STIPPLE_INTERNAL_CHECK(m != Mark::Active, "funcs '" + top.func->name + "' and '" + callee +
                                                  "' call each other in a cycle");
    const Func* f = pipeline.find_func(callee);
    marks[callee] = Mark::Active;
    stack.push_back({f, callees_of(pipeline, *f)});
  }
  return order;
}

}  // namespace stipple::interp
