#include "compiler_core/ir/ir.h"

#include <cmath>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple {

void throw_internal_error(const char* file, int line, const std::string& message) {
  throw InternalError(std::string("internal error at ") + file + ":" + std::to_string(line) + ": " +
                      message);
}

const char* node_type_name(IRNodeType t) {
  switch (t) {
#define IR_NAME(N) \
  case IRNodeType::N: return #N;
    IR_EXPR_NODES(IR_NAME) IR_STMT_NODES(IR_NAME)
#undef IR_NAME
  }
  return "?";
}

#define IR_ACCEPT_EXPR(N)                             \
  template <>                                         \
  void ExprNode<N>::accept(IRVisitor* v) const {      \
    v->visit(static_cast<const N*>(this));            \
  }                                                   \
  template <>                                         \
  Expr ExprNode<N>::mutate_with(IRMutator* m) const { \
    return m->visit(static_cast<const N*>(this));     \
  }
IR_EXPR_NODES(IR_ACCEPT_EXPR)
#undef IR_ACCEPT_EXPR

#define IR_ACCEPT_STMT(N)                             \
  template <>                                         \
  void StmtNode<N>::accept(IRVisitor* v) const {      \
    v->visit(static_cast<const N*>(this));            \
  }                                                   \
  template <>                                         \
  Stmt StmtNode<N>::mutate_with(IRMutator* m) const { \
    return m->visit(static_cast<const N*>(this));     \
  }
IR_STMT_NODES(IR_ACCEPT_STMT)
#undef IR_ACCEPT_STMT

namespace {

void check_defined(const Expr& e, const char* what) {
  STIPPLE_INTERNAL_CHECK(e.defined(), std::string(what) + ": undefined operand");
}

template <typename T>
Expr make_arith(Expr a, Expr b) {
  check_defined(a, node_type_name(T::kNodeType));
  check_defined(b, node_type_name(T::kNodeType));
  STIPPLE_INTERNAL_CHECK(a.type() == b.type(), std::string(node_type_name(T::kNodeType)) +
                                                   " of mismatched types " + to_string(a.type()) +
                                                   " and " + to_string(b.type()));
  STIPPLE_INTERNAL_CHECK(a.type().is_numeric() && !a.type().is_f16(),
                         std::string(node_type_name(T::kNodeType)) + " of type " +
                             to_string(a.type()) + " (f16 is widened to f32 first)");
  T* n = new T(a.type());
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

template <typename T>
Expr make_compare(Expr a, Expr b) {
  check_defined(a, node_type_name(T::kNodeType));
  check_defined(b, node_type_name(T::kNodeType));
  STIPPLE_INTERNAL_CHECK(a.type() == b.type(), std::string(node_type_name(T::kNodeType)) +
                                                   " of mismatched types " + to_string(a.type()) +
                                                   " and " + to_string(b.type()));
  T* n = new T(Bool().with_lanes(a.type().lanes));
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

template <typename T>
Expr make_logical(Expr a, Expr b) {
  check_defined(a, node_type_name(T::kNodeType));
  check_defined(b, node_type_name(T::kNodeType));
  STIPPLE_INTERNAL_CHECK(a.type().is_bool() && b.type().is_bool(),
                         std::string(node_type_name(T::kNodeType)) + " of non-bool operands");
  T* n = new T(a.type());
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

}  // namespace

Expr IntImm::make(Type t, int64_t value) {
  STIPPLE_INTERNAL_CHECK(t.is_int() || t.is_bool(), "IntImm of type " + to_string(t));
  STIPPLE_INTERNAL_CHECK(
      static_cast<double>(value) >= t.min_value() && static_cast<double>(value) <= t.max_value(),
      "IntImm value " + std::to_string(value) + " does not fit " + to_string(t));
  IntImm* n = new IntImm(t);
  n->value = value;
  return n;
}

Expr FloatImm::make(Type t, double value) {
  STIPPLE_INTERNAL_CHECK(t.is_float(), "FloatImm of type " + to_string(t));
  FloatImm* n = new FloatImm(t);
  n->value = value;
  if (t.code == ScalarType::Float32) n->value = static_cast<float>(value);
  if (t.code == ScalarType::Float16) n->value = round_to_f16(f64_to_f32_round_odd(value));
  return n;
}

Expr Cast::make(Type t, Expr value) {
  check_defined(value, "Cast");
  STIPPLE_INTERNAL_CHECK(t.is_numeric() || t.is_bool(), "Cast to " + to_string(t));
  Cast* n = new Cast(t);
  n->value = std::move(value);
  return n;
}

Expr Variable::make(const std::string& name, VarKind kind) {
  STIPPLE_INTERNAL_CHECK(!name.empty(), "Variable without a name");
  STIPPLE_INTERNAL_CHECK(kind != VarKind::Let, "a Let's variable is made by make_typed");
  Variable* n = new Variable(Int32());
  n->name = name;
  n->kind = kind;
  return n;
}

Expr Variable::make_typed(Type t, const std::string& name) {
  STIPPLE_INTERNAL_CHECK(!name.empty(), "Variable without a name");
  Variable* n = new Variable(t);
  n->name = name;
  n->kind = VarKind::Let;
  return n;
}

Expr Param::make(Type t, const std::string& name) {
  STIPPLE_INTERNAL_CHECK(!name.empty(), "Param without a name");
  Param* n = new Param(t);
  n->name = name;
  return n;
}

Expr InputExtent::make(const std::string& input, int dim) {
  STIPPLE_INTERNAL_CHECK(dim >= 0, "InputExtent of a negative dimension");
  InputExtent* n = new InputExtent(Int32());
  n->input = input;
  n->dim = dim;
  return n;
}

Expr Add::make(Expr a, Expr b) { return make_arith<Add>(std::move(a), std::move(b)); }
Expr Sub::make(Expr a, Expr b) { return make_arith<Sub>(std::move(a), std::move(b)); }
Expr Mul::make(Expr a, Expr b) { return make_arith<Mul>(std::move(a), std::move(b)); }
Expr Div::make(Expr a, Expr b) { return make_arith<Div>(std::move(a), std::move(b)); }
Expr Mod::make(Expr a, Expr b) { return make_arith<Mod>(std::move(a), std::move(b)); }
Expr Min::make(Expr a, Expr b) { return make_arith<Min>(std::move(a), std::move(b)); }
Expr Max::make(Expr a, Expr b) { return make_arith<Max>(std::move(a), std::move(b)); }
Expr EQ::make(Expr a, Expr b) { return make_compare<EQ>(std::move(a), std::move(b)); }
Expr NE::make(Expr a, Expr b) { return make_compare<NE>(std::move(a), std::move(b)); }
Expr LT::make(Expr a, Expr b) { return make_compare<LT>(std::move(a), std::move(b)); }
Expr LE::make(Expr a, Expr b) { return make_compare<LE>(std::move(a), std::move(b)); }
Expr GT::make(Expr a, Expr b) { return make_compare<GT>(std::move(a), std::move(b)); }
Expr GE::make(Expr a, Expr b) { return make_compare<GE>(std::move(a), std::move(b)); }
Expr And::make(Expr a, Expr b) { return make_logical<And>(std::move(a), std::move(b)); }
Expr Or::make(Expr a, Expr b) { return make_logical<Or>(std::move(a), std::move(b)); }

Expr Not::make(Expr a) {
  check_defined(a, "Not");
  STIPPLE_INTERNAL_CHECK(a.type().is_bool(), "Not of non-bool operand");
  Not* n = new Not(a.type());
  n->a = std::move(a);
  return n;
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
  check_defined(condition, "Select");
  check_defined(true_value, "Select");
  check_defined(false_value, "Select");
  STIPPLE_INTERNAL_CHECK(condition.type().is_bool(), "Select with a non-bool condition");
  STIPPLE_INTERNAL_CHECK(true_value.type() == false_value.type(),
                         "Select of mismatched types " + to_string(true_value.type()) + " and " +
                             to_string(false_value.type()));
  Select* n = new Select(true_value.type());
  n->condition = std::move(condition);
  n->true_value = std::move(true_value);
  n->false_value = std::move(false_value);
  return n;
}

const char* intrinsic_name(Intrinsic op) {
  switch (op) {
    case Intrinsic::None: return "";
    case Intrinsic::Abs: return "abs";
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Log: return "log";
    case Intrinsic::Pow: return "pow";
    case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos";
    case Intrinsic::Tan: return "tan";
    case Intrinsic::Atan2: return "atan2";
    case Intrinsic::Hypot: return "hypot";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Fma: return "fma";
  }
  return "?";
}

size_t intrinsic_arity(Intrinsic op) {
  switch (op) {
    case Intrinsic::None: return 0;
    case Intrinsic::Pow:
    case Intrinsic::Atan2:
    case Intrinsic::Hypot: return 2;
    case Intrinsic::Fma: return 3;
    case Intrinsic::Abs:
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round:
    case Intrinsic::Sqrt:
    case Intrinsic::Exp:
    case Intrinsic::Log:
    case Intrinsic::Sin:
    case Intrinsic::Cos:
    case Intrinsic::Tan:
    case Intrinsic::Tanh: break;
  }
  return 1;
}

Expr Call::make(Type t, const std::string& name, std::vector<Expr> args, CallType call_type) {
  STIPPLE_INTERNAL_CHECK(call_type != CallType::Intrinsic, "use Call::make_intrinsic");
  STIPPLE_INTERNAL_CHECK(!name.empty(), "Call without a name");
  for (const Expr& a : args) {
    check_defined(a, "Call");
    STIPPLE_INTERNAL_CHECK(
        a.type().element_of() == Int32(),
        "call to " + name + " with a non-i32 index of type " + to_string(a.type()));
  }
  Call* n = new Call(t);
  n->name = name;
  n->call_type = call_type;
  n->args = std::move(args);
  return n;
}

Expr Call::make_intrinsic(Intrinsic op, std::vector<Expr> args) {
  STIPPLE_INTERNAL_CHECK(op != Intrinsic::None, "intrinsic None");
  STIPPLE_INTERNAL_CHECK(args.size() == intrinsic_arity(op),
                         std::string("wrong arity for ") + intrinsic_name(op));
  for (const Expr& a : args) check_defined(a, intrinsic_name(op));
  Type t = args[0].type();
  STIPPLE_INTERNAL_CHECK(!t.is_f16(), std::string(intrinsic_name(op)) + " of f16");
  if (op == Intrinsic::Abs) {
    STIPPLE_INTERNAL_CHECK(t.is_numeric(), "abs of non-numeric");
  } else {
    STIPPLE_INTERNAL_CHECK(t.is_float(),
                           std::string(intrinsic_name(op)) + " of non-float " + to_string(t));
  }
  for (const Expr& a : args) {
    STIPPLE_INTERNAL_CHECK(a.type() == t, std::string(intrinsic_name(op)) + " of mismatched types");
  }
  Call* n = new Call(t);
  n->name = intrinsic_name(op);
  n->call_type = CallType::Intrinsic;
  n->intrinsic = op;
  n->args = std::move(args);
  return n;
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Minimum: return "minimum";
    case ReduceOp::Maximum: return "maximum";
    case ReduceOp::Median: return "median";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::FusedSum: return "sum";  // as the language writes it
  }
  return "?";
}

Expr Reduce::make(ReduceOp op, std::vector<ReductionVariable> domain, Expr body) {
  check_defined(body, "Reduce");
  STIPPLE_INTERNAL_CHECK(!domain.empty(), "Reduce over an empty list of variables");
  STIPPLE_INTERNAL_CHECK(body.type().is_numeric() && !body.type().is_f16(),
                         "Reduce of a body of type " + to_string(body.type()));
  for (const ReductionVariable& rv : domain) {
    check_defined(rv.min, "Reduce bound");
    check_defined(rv.max, "Reduce bound");
    STIPPLE_INTERNAL_CHECK(rv.min.type() == Int32() && rv.max.type() == Int32(),
                           "Reduce bounds must be i32");
  }
  STIPPLE_INTERNAL_CHECK(
      op != ReduceOp::FusedSum ||
          (body.node_type() == IRNodeType::Mul && body.type().is_float() && !body.type().is_f16()),
      "a fused sum of something other than a float product");
  Reduce* n = new Reduce(op == ReduceOp::ArgMin ? Int32() : body.type());
  n->op = op;
  n->domain = std::move(domain);
  n->body = std::move(body);
  return n;
}

const Mul* fused_product(const Reduce* op) {
  return op->op == ReduceOp::FusedSum ? op->body.as<Mul>() : nullptr;
}

Expr Let::make(const std::string& name, Expr value, Expr body) {
  check_defined(value, "Let");
  check_defined(body, "Let");
  Let* n = new Let(body.type());
  n->name = name;
  n->value = std::move(value);
  n->body = std::move(body);
  return n;
}

Stmt LetStmt::make(const std::string& name, Expr value, Stmt body) {
  check_defined(value, "LetStmt");
  STIPPLE_INTERNAL_CHECK(body.defined(), "LetStmt without a body");
  LetStmt* n = new LetStmt;
  n->name = name;
  n->value = std::move(value);
  n->body = std::move(body);
  return n;
}

const char* for_type_name(ForType t) {
  switch (t) {
    case ForType::Serial: return "for";
    case ForType::Parallel: return "parallel";
    case ForType::Vectorized: return "vectorized";
    case ForType::Unrolled: return "unrolled";
    case ForType::GpuBlock: return "gpu_block";
    case ForType::GpuThread: return "gpu_thread";
  }
  return "?";
}

Stmt For::make(const std::string& name, Expr min, Expr extent, ForType for_type, Stmt body) {
  check_defined(min, "For");
  check_defined(extent, "For");
  STIPPLE_INTERNAL_CHECK(min.type() == Int32() && extent.type() == Int32(),
                         "For bounds must be i32");
  STIPPLE_INTERNAL_CHECK(body.defined(), "For without a body");
  For* n = new For;
  n->name = name;
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_type = for_type;
  n->body = std::move(body);
  return n;
}

Stmt Provide::make(const std::string& name, Expr value, std::vector<Expr> args, bool atomic) {
  check_defined(value, "Provide");
  for (const Expr& a : args) check_defined(a, "Provide");
  Provide* n = new Provide;
  n->name = name;
  n->value = std::move(value);
  n->args = std::move(args);
  n->atomic = atomic;
  return n;
}

Stmt Allocate::make(const std::string& name, Type type, std::vector<Expr> extents, Stmt body) {
  for (const Expr& e : extents) check_defined(e, "Allocate");
  STIPPLE_INTERNAL_CHECK(body.defined(), "Allocate without a body");
  Allocate* n = new Allocate;
  n->name = name;
  n->type = type;
  n->extents = std::move(extents);
  n->body = std::move(body);
  return n;
}

Block::~Block() {
  Stmt next = std::move(rest);
  // Unlink each uniquely owned Block of the chain before it dies, so that its own
  // destructor finds an empty `rest`; a shared one is left to its other owners.
  while (const Block* b = next.as<Block>()) {
    if (b->ref_count.load(std::memory_order_acquire) != 1) break;
    Stmt after = std::move(const_cast<Block*>(b)->rest);
    next = std::move(after);
  }
}

Stmt Block::make(Stmt first, Stmt rest) {
  STIPPLE_INTERNAL_CHECK(first.defined() && rest.defined(), "Block of undefined statements");
  Block* n = new Block;
  n->first = std::move(first);
  n->rest = std::move(rest);
  return n;
}

Stmt Block::make(const std::vector<Stmt>& stmts) {
  STIPPLE_INTERNAL_CHECK(!stmts.empty(), "Block of an empty list");
  Stmt result = stmts.back();
  for (size_t i = stmts.size() - 1; i-- > 0;) result = Block::make(stmts[i], result);
  return result;
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
  check_defined(condition, "IfThenElse");
  STIPPLE_INTERNAL_CHECK(condition.type().is_bool(), "IfThenElse with a non-bool condition");
  STIPPLE_INTERNAL_CHECK(then_case.defined(), "IfThenElse without a then case");
  IfThenElse* n = new IfThenElse;
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return n;
}

Stmt Evaluate::make(Expr value) {
  check_defined(value, "Evaluate");
  Evaluate* n = new Evaluate;
  n->value = std::move(value);
  return n;
}

Expr make_const(Type t, double value) {
  if (t.is_float()) return FloatImm::make(t, value);
  return IntImm::make(t, static_cast<int64_t>(value));
}
Expr make_zero(Type t) { return make_const(t, 0); }
Expr make_one(Type t) { return make_const(t, 1); }

}  // namespace stipple
