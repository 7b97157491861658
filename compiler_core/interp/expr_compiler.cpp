// Compiles IR expressions into ExprProgram nodes: slots for variables, constants for
// params and input extents, resolved buffers for calls, folded constant subtrees.
#include "compiler_core/interp/expr_program.h"
#include "compiler_core/ir/error.h"

namespace stipple::interp {

namespace {

Node constant_node(ScalarType t, Value v) {
  Node n;
  n.op = Op::Const;
  n.type = t;
  n.operand = t;
  n.imm = v;
  return n;
}

Op intrinsic_op(Intrinsic i) {
  switch (i) {
    case Intrinsic::Abs: return Op::Abs;
    case Intrinsic::Floor: return Op::Floor;
    case Intrinsic::Ceil: return Op::Ceil;
    case Intrinsic::Round: return Op::Round;
    case Intrinsic::Sqrt: return Op::Sqrt;
    case Intrinsic::Exp: return Op::Exp;
    case Intrinsic::Log: return Op::Log;
    case Intrinsic::Pow: return Op::Pow;
    case Intrinsic::Sin: return Op::Sin;
    case Intrinsic::Cos: return Op::Cos;
    case Intrinsic::Tan: return Op::Tan;
    case Intrinsic::Atan2: return Op::Atan2;
    case Intrinsic::Hypot: return Op::Hypot;
    case Intrinsic::Tanh: return Op::Tanh;
    case Intrinsic::Fma: return Op::Fma;
    case Intrinsic::None: break;
  }
  STIPPLE_INTERNAL_CHECK(false, "intrinsic None");
  return Op::Abs;
}

// Ops whose value depends only on their children (no slots, no buffers).
bool is_pure_op(Op op) {
  switch (op) {
    case Op::Const:
    case Op::Var:
    case Op::Let:
    case Op::LoadFunc:
    case Op::LoadInput:
    case Op::Reduce: return false;
    default: return true;
  }
}

}  // namespace

int32_t ExprCompiler::bind(const std::string& name) {
  int32_t s = p_.num_slots++;
  scope_.emplace_back(name, s);
  return s;
}

int32_t ExprCompiler::add(Node n) {
  p_.nodes.push_back(n);
  return static_cast<int32_t>(p_.nodes.size() - 1);
}

/// Replaces a node whose children are all constants by its value, computed by the same
/// Machine that would compute it per point (so folding cannot change a result).
int32_t ExprCompiler::fold(int32_t i) {
  const Node n = p_.nodes[i];
  auto is_const = [&](int32_t c) { return c < 0 || p_.nodes[c].op == Op::Const; };
  if (n.op == Op::Select && is_const(n.a)) return p_.nodes[n.a].imm.i ? n.b : n.c;
  bool loads_constant = false;
  if (n.op == Op::LoadFunc || n.op == Op::LoadInput) {
    const Load& l = p_.loads[n.aux];
    loads_constant = l.name != mutable_func_ || n.op == Op::LoadInput;
    for (int d = 0; d < l.dims && loads_constant; ++d) {
      int32_t arg = p_.args[l.first_arg + d];
      loads_constant = is_const(arg);
      // An out-of-box constant index stays a runtime load: it may sit in a branch or an
      // empty reduction that never runs, and must fail only if it does.
      if (loads_constant && n.op == Op::LoadFunc) {
        int64_t c = p_.nodes[arg].imm.i - l.min[d];
        loads_constant = c >= 0 && c < l.extent[d];
      }
    }
  }
  if (!loads_constant &&
      (!is_pure_op(n.op) || !is_const(n.a) || !is_const(n.b) || !is_const(n.c))) {
    return i;
  }
  Machine m(p_);
  p_.nodes[i] = constant_node(n.type, m.eval(i));
  return i;
}

Load ExprCompiler::resolve_load(const Call* op) const {
  Load l;
  l.name = op->name;
  const Buffer* buf = nullptr;
  if (op->call_type == CallType::Func) {
    auto it = funcs_.find(op->name);
    if (it == funcs_.end()) {
      // Bounds inference found no point of it to be needed: a load with no data, which
      // fails if it ever runs.
      STIPPLE_INTERNAL_CHECK(op->args.size() <= kMaxDims,
                             "'" + op->name + "' has more than 8 dimensions");
      l.type = op->type.code;
      l.dims = static_cast<int>(op->args.size());
      return l;
    }
    buf = &it->second;
  } else {
    const InputDecl* decl = env_.pipeline->find_input(op->name);
    STIPPLE_INTERNAL_CHECK(decl != nullptr, "call to undeclared input '" + op->name + "'");
    auto it = env_.inputs.find(op->name);
    STIPPLE_INTERNAL_CHECK(it != env_.inputs.end(), "input '" + op->name + "' not given");
    buf = it->second;
    l.boundary = decl->boundary;
    l.constant = value_from_double(decl->type.code, decl->boundary_value);
  }
  STIPPLE_INTERNAL_CHECK(buf->type() == op->type.code,
                         "call to '" + op->name + "' of type " + to_string(op->type) +
                             " reads a buffer of type " + to_string(Type(buf->type())));
  STIPPLE_INTERNAL_CHECK(static_cast<int>(op->args.size()) == buf->dimensions(),
                         "call to '" + op->name + "' with " + std::to_string(op->args.size()) +
                             " arguments of a buffer of " + std::to_string(buf->dimensions()) +
                             " dimensions");
  STIPPLE_INTERNAL_CHECK(buf->dimensions() <= kMaxDims,
                         "'" + op->name + "' has more than 8 dimensions");
  l.data = buf->data();
  l.type = buf->type();
  l.dims = buf->dimensions();
  for (int d = 0; d < l.dims; ++d) {
    l.min[d] = buf->min(d);
    l.extent[d] = buf->extent(d);
    l.stride[d] = buf->dim(d).stride;
  }
  return l;
}

/// The inline form of an index that is a sum of at most two variables (added, not
/// subtracted) and constants; a general node otherwise.
LoadArg ExprCompiler::load_arg(int32_t node) const {
  LoadArg a;
  // Adds `i` with `sign` into a; false when it is not of the inline form.
  auto add_term = [&](auto&& self, int32_t i, int64_t sign) -> bool {
    const Node& n = p_.nodes[i];
    if (n.type != ScalarType::Int32) return false;
    switch (n.op) {
      case Op::Const: a.offset += sign * n.imm.i; return true;
      case Op::Var:
        if (sign < 0) return false;
        if (a.slot_a < 0) {
          a.slot_a = n.aux;
        } else if (a.slot_b < 0) {
          a.slot_b = n.aux;
        } else {
          return false;
        }
        return true;
      case Op::Add: return self(self, n.a, sign) && self(self, n.b, sign);
      case Op::Sub: return self(self, n.a, sign) && self(self, n.b, -sign);
      default: return false;
    }
  };
  if (!add_term(add_term, node, 1)) return LoadArg{node, -1, -1, 0};
  return a;
}

int32_t ExprCompiler::compile_call(const Call* op) {
  Node n;
  n.type = op->type.code;
  if (op->call_type == CallType::Intrinsic) {
    n.op = intrinsic_op(op->intrinsic);
    n.operand = op->args[0].type().code;
    n.a = compile(op->args[0]);
    if (op->args.size() > 1) n.b = compile(op->args[1]);
    if (op->args.size() > 2) n.c = compile(op->args[2]);
    return fold(add(n));
  }
  Load l = resolve_load(op);
  std::vector<int32_t> arg_nodes;
  for (const Expr& a : op->args) arg_nodes.push_back(compile(a));
  l.first_arg = static_cast<int32_t>(p_.args.size());
  p_.args.insert(p_.args.end(), arg_nodes.begin(), arg_nodes.end());
  for (size_t d = 0; d < arg_nodes.size(); ++d) l.arg[d] = load_arg(arg_nodes[d]);
  n.op = op->call_type == CallType::Func ? Op::LoadFunc : Op::LoadInput;
  n.aux = static_cast<int32_t>(p_.loads.size());
  p_.loads.push_back(l);
  return fold(add(n));
}

int32_t ExprCompiler::compile_reduce(const Reduce* op) {
  ReduceInfo r;
  r.op = op->op;
  r.body_type = op->body.type().code;
  // Bounds are compiled outside the reduction's own scope.
  for (const ReductionVariable& rv : op->domain) {
    r.mins.push_back(compile(rv.min));
    r.maxs.push_back(compile(rv.max));
  }
  for (const ReductionVariable& rv : op->domain) r.slots.push_back(bind(rv.name));
  if (const Mul* product = fused_product(op)) {
    r.body = compile(product->a);
    r.factor = compile(product->b);
  } else {
    r.body = compile(op->body);
  }
  scope_.resize(scope_.size() - op->domain.size());
  Node n;
  n.op = Op::Reduce;
  n.type = op->type.code;
  n.operand = r.body_type;
  n.aux = static_cast<int32_t>(p_.reduces.size());
  p_.reduces.push_back(std::move(r));
  return add(n);
}

int32_t ExprCompiler::compile(const Expr& e) {
  STIPPLE_INTERNAL_CHECK(e.defined(), "compiling an undefined expression");
  STIPPLE_INTERNAL_CHECK(e.type().lanes == 1, "the evaluator takes scalar expressions only");
  Node n;
  n.type = e.type().code;
  auto binary = [&](Op op, const auto* b) {
    n.op = op;
    n.operand = b->a.type().code;
    n.a = compile(b->a);
    n.b = compile(b->b);
    return fold(add(n));
  };
  switch (e.node_type()) {
    case IRNodeType::IntImm: return add(constant_node(n.type, int_value(e.as<IntImm>()->value)));
    case IRNodeType::FloatImm:
      return add(constant_node(n.type, value_from_double(n.type, e.as<FloatImm>()->value)));
    case IRNodeType::Cast:
      n.op = Op::Cast;
      n.operand = e.as<Cast>()->value.type().code;
      n.a = compile(e.as<Cast>()->value);
      return fold(add(n));
    case IRNodeType::Variable: {
      const std::string& name = e.as<Variable>()->name;
      for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
        if (it->first == name) {
          n.op = Op::Var;
          n.aux = it->second;
          return add(n);
        }
      }
      STIPPLE_INTERNAL_CHECK(false, "unbound variable '" + name + "'");
      break;
    }
    case IRNodeType::Param: return add(constant_node(n.type, env_.param(e.as<Param>()->name)));
    case IRNodeType::InputExtent: {
      const InputExtent* op = e.as<InputExtent>();
      return add(constant_node(n.type, int_value(env_.input_extent(op->input, op->dim))));
    }
    case IRNodeType::Add: return binary(Op::Add, e.as<Add>());
    case IRNodeType::Sub: return binary(Op::Sub, e.as<Sub>());
    case IRNodeType::Mul: return binary(Op::Mul, e.as<Mul>());
    case IRNodeType::Div: return binary(Op::Div, e.as<Div>());
    case IRNodeType::Mod: return binary(Op::Mod, e.as<Mod>());
    case IRNodeType::Min: return binary(Op::Min, e.as<Min>());
    case IRNodeType::Max: return binary(Op::Max, e.as<Max>());
    case IRNodeType::EQ: return binary(Op::EQ, e.as<EQ>());
    case IRNodeType::NE: return binary(Op::NE, e.as<NE>());
    case IRNodeType::LT: return binary(Op::LT, e.as<LT>());
    case IRNodeType::LE: return binary(Op::LE, e.as<LE>());
    case IRNodeType::GT: return binary(Op::GT, e.as<GT>());
    case IRNodeType::GE: return binary(Op::GE, e.as<GE>());
    case IRNodeType::And: return binary(Op::And, e.as<And>());
    case IRNodeType::Or: return binary(Op::Or, e.as<Or>());
    case IRNodeType::Not:
      n.op = Op::Not;
      n.operand = ScalarType::Bool;
      n.a = compile(e.as<Not>()->a);
      return fold(add(n));
    case IRNodeType::Select: {
      const Select* op = e.as<Select>();
      n.op = Op::Select;
      n.a = compile(op->condition);
      n.b = compile(op->true_value);
      n.c = compile(op->false_value);
      return fold(add(n));
    }
    case IRNodeType::Call: return compile_call(e.as<Call>());
    case IRNodeType::Reduce: return compile_reduce(e.as<Reduce>());
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      n.op = Op::Let;
      n.a = compile(op->value);
      n.aux = bind(op->name);
      n.b = compile(op->body);
      scope_.pop_back();
      return add(n);
    }
    case IRNodeType::LetStmt:
    case IRNodeType::For:
    case IRNodeType::Provide:
    case IRNodeType::Allocate:
    case IRNodeType::Block:
    case IRNodeType::IfThenElse:
    case IRNodeType::Evaluate: break;
  }
  STIPPLE_INTERNAL_CHECK(false, std::string("cannot evaluate a ") + node_type_name(e.node_type()));
  return -1;
}

}  // namespace stipple::interp
