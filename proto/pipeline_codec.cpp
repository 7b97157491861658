// Pipeline IR <-> stipple.proto.Pipeline. The Encoder writes every field; the Decoder
// checks every precondition of the IR's make() functions before calling them (they throw
// InternalError, which must never escape from reading untrusted bytes) and, for whole
// pipelines, that calls, params and input extents refer to declarations of the right
// type and arity.
#include "proto/pipeline_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <cmath>
#include <map>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_printer.h"

namespace stipple {

namespace {

[[noreturn]] void fail(const std::string& message) {
  throw UserError("invalid pipeline proto: " + message);
}

// Counts nesting on the way down so that both directions refuse the same trees.
class DepthGuard {
 public:
  explicit DepthGuard(int* depth) : depth_(depth) {
    if (++*depth_ > kMaxProtoIrDepth) {
      fail("ir nested deeper than " + std::to_string(kMaxProtoIrDepth) + " levels");
    }
  }
  ~DepthGuard() { --*depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int* depth_;
};

// ---------------------------------------------------------------------------------------
// Enums, both ways. Decoding switches have a default: proto3 enums are open, so any int
// can arrive.

proto::ScalarType encode(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return proto::SCALAR_TYPE_BOOL;
    case ScalarType::UInt8: return proto::SCALAR_TYPE_UINT8;
    case ScalarType::UInt16: return proto::SCALAR_TYPE_UINT16;
    case ScalarType::Int32: return proto::SCALAR_TYPE_INT32;
    case ScalarType::Float32: return proto::SCALAR_TYPE_FLOAT32;
    case ScalarType::Float64: return proto::SCALAR_TYPE_FLOAT64;
    case ScalarType::Int8: return proto::SCALAR_TYPE_INT8;
    case ScalarType::Int16: return proto::SCALAR_TYPE_INT16;
    case ScalarType::UInt32: return proto::SCALAR_TYPE_UINT32;
    case ScalarType::Float16: return proto::SCALAR_TYPE_FLOAT16;
  }
  return proto::SCALAR_TYPE_UNSPECIFIED;
}

ScalarType decode(proto::ScalarType t) {
  switch (t) {
    case proto::SCALAR_TYPE_BOOL: return ScalarType::Bool;
    case proto::SCALAR_TYPE_UINT8: return ScalarType::UInt8;
    case proto::SCALAR_TYPE_UINT16: return ScalarType::UInt16;
    case proto::SCALAR_TYPE_INT32: return ScalarType::Int32;
    case proto::SCALAR_TYPE_FLOAT32: return ScalarType::Float32;
    case proto::SCALAR_TYPE_FLOAT64: return ScalarType::Float64;
    case proto::SCALAR_TYPE_INT8: return ScalarType::Int8;
    case proto::SCALAR_TYPE_INT16: return ScalarType::Int16;
    case proto::SCALAR_TYPE_UINT32: return ScalarType::UInt32;
    case proto::SCALAR_TYPE_FLOAT16: return ScalarType::Float16;
    default: fail("unknown scalar type " + std::to_string(static_cast<int>(t)));
  }
}

proto::VarKind encode(VarKind k) {
  switch (k) {
    case VarKind::Pure: return proto::VAR_KIND_PURE;
    case VarKind::Reduction: return proto::VAR_KIND_REDUCTION;
    case VarKind::Let: return proto::VAR_KIND_LET;
  }
  return proto::VAR_KIND_UNSPECIFIED;
}

VarKind decode(proto::VarKind k) {
  switch (k) {
    case proto::VAR_KIND_PURE: return VarKind::Pure;
    case proto::VAR_KIND_REDUCTION: return VarKind::Reduction;
    case proto::VAR_KIND_LET: return VarKind::Let;
    default: fail("unknown variable kind " + std::to_string(static_cast<int>(k)));
  }
}

proto::CallType encode(CallType c) {
  switch (c) {
    case CallType::Func: return proto::CALL_TYPE_FUNC;
    case CallType::Input: return proto::CALL_TYPE_INPUT;
    case CallType::Intrinsic: return proto::CALL_TYPE_INTRINSIC;
  }
  return proto::CALL_TYPE_UNSPECIFIED;
}

CallType decode(proto::CallType c) {
  switch (c) {
    case proto::CALL_TYPE_FUNC: return CallType::Func;
    case proto::CALL_TYPE_INPUT: return CallType::Input;
    case proto::CALL_TYPE_INTRINSIC: return CallType::Intrinsic;
    default: fail("unknown call type " + std::to_string(static_cast<int>(c)));
  }
}

proto::Intrinsic encode(Intrinsic op) {
  switch (op) {
    case Intrinsic::None: return proto::INTRINSIC_NONE;
    case Intrinsic::Abs: return proto::INTRINSIC_ABS;
    case Intrinsic::Floor: return proto::INTRINSIC_FLOOR;
    case Intrinsic::Ceil: return proto::INTRINSIC_CEIL;
    case Intrinsic::Round: return proto::INTRINSIC_ROUND;
    case Intrinsic::Sqrt: return proto::INTRINSIC_SQRT;
    case Intrinsic::Exp: return proto::INTRINSIC_EXP;
    case Intrinsic::Log: return proto::INTRINSIC_LOG;
    case Intrinsic::Pow: return proto::INTRINSIC_POW;
    case Intrinsic::Sin: return proto::INTRINSIC_SIN;
    case Intrinsic::Cos: return proto::INTRINSIC_COS;
    case Intrinsic::Tan: return proto::INTRINSIC_TAN;
    case Intrinsic::Atan2: return proto::INTRINSIC_ATAN2;
    case Intrinsic::Hypot: return proto::INTRINSIC_HYPOT;
    case Intrinsic::Tanh: return proto::INTRINSIC_TANH;
    case Intrinsic::Fma: return proto::INTRINSIC_FMA;
  }
  return proto::INTRINSIC_NONE;
}

Intrinsic decode(proto::Intrinsic op) {
  switch (op) {
    case proto::INTRINSIC_NONE: return Intrinsic::None;
    case proto::INTRINSIC_ABS: return Intrinsic::Abs;
    case proto::INTRINSIC_FLOOR: return Intrinsic::Floor;
    case proto::INTRINSIC_CEIL: return Intrinsic::Ceil;
    case proto::INTRINSIC_ROUND: return Intrinsic::Round;
    case proto::INTRINSIC_SQRT: return Intrinsic::Sqrt;
    case proto::INTRINSIC_EXP: return Intrinsic::Exp;
    case proto::INTRINSIC_LOG: return Intrinsic::Log;
    case proto::INTRINSIC_POW: return Intrinsic::Pow;
    case proto::INTRINSIC_SIN: return Intrinsic::Sin;
    case proto::INTRINSIC_COS: return Intrinsic::Cos;
    case proto::INTRINSIC_TAN: return Intrinsic::Tan;
    case proto::INTRINSIC_ATAN2: return Intrinsic::Atan2;
    case proto::INTRINSIC_HYPOT: return Intrinsic::Hypot;
    case proto::INTRINSIC_TANH: return Intrinsic::Tanh;
    case proto::INTRINSIC_FMA: return Intrinsic::Fma;
    default: fail("unknown intrinsic " + std::to_string(static_cast<int>(op)));
  }
}

proto::ReduceOp encode(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return proto::REDUCE_OP_SUM;
    case ReduceOp::Prod: return proto::REDUCE_OP_PROD;
    case ReduceOp::Minimum: return proto::REDUCE_OP_MINIMUM;
    case ReduceOp::Maximum: return proto::REDUCE_OP_MAXIMUM;
    case ReduceOp::Median: return proto::REDUCE_OP_MEDIAN;
    case ReduceOp::ArgMin: return proto::REDUCE_OP_ARGMIN;
    case ReduceOp::FusedSum: return proto::REDUCE_OP_FUSED_SUM;
  }
  return proto::REDUCE_OP_UNSPECIFIED;
}

ReduceOp decode(proto::ReduceOp op) {
  switch (op) {
    case proto::REDUCE_OP_SUM: return ReduceOp::Sum;
    case proto::REDUCE_OP_PROD: return ReduceOp::Prod;
    case proto::REDUCE_OP_MINIMUM: return ReduceOp::Minimum;
    case proto::REDUCE_OP_MAXIMUM: return ReduceOp::Maximum;
    case proto::REDUCE_OP_MEDIAN: return ReduceOp::Median;
    case proto::REDUCE_OP_ARGMIN: return ReduceOp::ArgMin;
    case proto::REDUCE_OP_FUSED_SUM: return ReduceOp::FusedSum;
    default: fail("unknown reduction " + std::to_string(static_cast<int>(op)));
  }
}

proto::ForType encode(ForType t) {
  switch (t) {
    case ForType::Serial: return proto::FOR_TYPE_SERIAL;
    case ForType::Parallel: return proto::FOR_TYPE_PARALLEL;
    case ForType::Vectorized: return proto::FOR_TYPE_VECTORIZED;
    case ForType::Unrolled: return proto::FOR_TYPE_UNROLLED;
    case ForType::GpuBlock: return proto::FOR_TYPE_GPU_BLOCK;
    case ForType::GpuThread: return proto::FOR_TYPE_GPU_THREAD;
  }
  return proto::FOR_TYPE_UNSPECIFIED;
}

ForType decode(proto::ForType t) {
  switch (t) {
    case proto::FOR_TYPE_SERIAL: return ForType::Serial;
    case proto::FOR_TYPE_PARALLEL: return ForType::Parallel;
    case proto::FOR_TYPE_VECTORIZED: return ForType::Vectorized;
    case proto::FOR_TYPE_UNROLLED: return ForType::Unrolled;
    case proto::FOR_TYPE_GPU_BLOCK: return ForType::GpuBlock;
    case proto::FOR_TYPE_GPU_THREAD: return ForType::GpuThread;
    default: fail("unknown loop type " + std::to_string(static_cast<int>(t)));
  }
}

proto::BoundaryKind encode(BoundaryKind b) {
  switch (b) {
    case BoundaryKind::Clamp: return proto::BOUNDARY_KIND_CLAMP;
    case BoundaryKind::Mirror: return proto::BOUNDARY_KIND_MIRROR;
    case BoundaryKind::Constant: return proto::BOUNDARY_KIND_CONSTANT;
  }
  return proto::BOUNDARY_KIND_UNSPECIFIED;
}

BoundaryKind decode(proto::BoundaryKind b) {
  switch (b) {
    case proto::BOUNDARY_KIND_CLAMP: return BoundaryKind::Clamp;
    case proto::BOUNDARY_KIND_MIRROR: return BoundaryKind::Mirror;
    case proto::BOUNDARY_KIND_CONSTANT: return BoundaryKind::Constant;
    default: fail("unknown boundary kind " + std::to_string(static_cast<int>(b)));
  }
}

proto::ErrorMetric encode(ErrorMetric m) {
  switch (m) {
    case ErrorMetric::Lab: return proto::ERROR_METRIC_LAB;
    case ErrorMetric::Rmse: return proto::ERROR_METRIC_RMSE;
  }
  return proto::ERROR_METRIC_UNSPECIFIED;
}

ErrorMetric decode(proto::ErrorMetric m) {
  switch (m) {
    case proto::ERROR_METRIC_LAB: return ErrorMetric::Lab;
    case proto::ERROR_METRIC_RMSE: return ErrorMetric::Rmse;
    default: fail("unknown error metric " + std::to_string(static_cast<int>(m)));
  }
}

void encode_type(Type t, proto::Type* out) {
  out->set_code(encode(t.code));
  out->set_lanes(static_cast<uint32_t>(t.lanes));
}

// The widest vector the IR is meant to carry; anything wider is corruption.
constexpr uint32_t kMaxLanes = 1024;

Type decode_type(bool present, const proto::Type& t, const std::string& what) {
  if (!present) fail(what + " has no type");
  if (t.lanes() < 1 || t.lanes() > kMaxLanes) {
    fail(what + " has " + std::to_string(t.lanes()) + " lanes");
  }
  return Type(decode(t.code()), static_cast<int>(t.lanes()));
}

// ---------------------------------------------------------------------------------------
// Encoding

class Encoder {
 public:
  void expr(const Expr& e, proto::Expr* out) {
    STIPPLE_INTERNAL_CHECK(e.defined(), "encoding an undefined expression");
    DepthGuard guard(&depth_);
    switch (e.node_type()) {
      case IRNodeType::IntImm: {
        proto::IntImm* m = out->mutable_int_imm();
        encode_type(e.type(), m->mutable_type());
        m->set_value(e.as<IntImm>()->value);
        return;
      }
      case IRNodeType::FloatImm: {
        proto::FloatImm* m = out->mutable_float_imm();
        encode_type(e.type(), m->mutable_type());
        m->set_value(e.as<FloatImm>()->value);
        return;
      }
      case IRNodeType::Cast: {
        proto::Cast* m = out->mutable_cast();
        encode_type(e.type(), m->mutable_type());
        expr(e.as<Cast>()->value, m->mutable_value());
        return;
      }
      case IRNodeType::Variable: {
        proto::Variable* m = out->mutable_variable();
        m->set_name(e.as<Variable>()->name);
        m->set_kind(encode(e.as<Variable>()->kind));
        if (e.type() != Int32()) encode_type(e.type(), m->mutable_type());
        return;
      }
      case IRNodeType::Param: {
        proto::Param* m = out->mutable_param();
        encode_type(e.type(), m->mutable_type());
        m->set_name(e.as<Param>()->name);
        return;
      }
      case IRNodeType::InputExtent: {
        proto::InputExtent* m = out->mutable_input_extent();
        m->set_input(e.as<InputExtent>()->input);
        m->set_dim(e.as<InputExtent>()->dim);
        return;
      }
      case IRNodeType::Add: return binary<Add>(e, out->mutable_add());
      case IRNodeType::Sub: return binary<Sub>(e, out->mutable_sub());
      case IRNodeType::Mul: return binary<Mul>(e, out->mutable_mul());
      case IRNodeType::Div: return binary<Div>(e, out->mutable_div());
      case IRNodeType::Mod: return binary<Mod>(e, out->mutable_mod());
      case IRNodeType::Min: return binary<Min>(e, out->mutable_min());
      case IRNodeType::Max: return binary<Max>(e, out->mutable_max());
      case IRNodeType::EQ: return binary<EQ>(e, out->mutable_eq());
      case IRNodeType::NE: return binary<NE>(e, out->mutable_ne());
      case IRNodeType::LT: return binary<LT>(e, out->mutable_lt());
      case IRNodeType::LE: return binary<LE>(e, out->mutable_le());
      case IRNodeType::GT: return binary<GT>(e, out->mutable_gt());
      case IRNodeType::GE: return binary<GE>(e, out->mutable_ge());
      case IRNodeType::And: return binary<And>(e, out->mutable_logical_and());
      case IRNodeType::Or: return binary<Or>(e, out->mutable_logical_or());
      case IRNodeType::Not: expr(e.as<Not>()->a, out->mutable_logical_not()->mutable_a()); return;
      case IRNodeType::Select: {
        const Select* op = e.as<Select>();
        proto::Select* m = out->mutable_select();
        expr(op->condition, m->mutable_condition());
        expr(op->true_value, m->mutable_true_value());
        expr(op->false_value, m->mutable_false_value());
        return;
      }
      case IRNodeType::Call: {
        const Call* op = e.as<Call>();
        proto::Call* m = out->mutable_call();
        encode_type(e.type(), m->mutable_type());
        m->set_name(op->name);
        m->set_call_type(encode(op->call_type));
        m->set_intrinsic(encode(op->intrinsic));
        for (const Expr& a : op->args) expr(a, m->add_args());
        return;
      }
      case IRNodeType::Reduce: {
        const Reduce* op = e.as<Reduce>();
        proto::Reduce* m = out->mutable_reduce();
        m->set_op(encode(op->op));
        for (const ReductionVariable& rv : op->domain) rvar(rv, m->add_domain());
        expr(op->body, m->mutable_body());
        return;
      }
      case IRNodeType::Let: {
        const Let* op = e.as<Let>();
        proto::Let* m = out->mutable_let();
        m->set_name(op->name);
        expr(op->value, m->mutable_value());
        expr(op->body, m->mutable_body());
        return;
      }
#define IR_STMT_CASE(N) case IRNodeType::N:
        IR_STMT_NODES(IR_STMT_CASE)
#undef IR_STMT_CASE
        break;
    }
    STIPPLE_INTERNAL_CHECK(false, "statement node inside an expression");
  }

  void rvar(const ReductionVariable& rv, proto::ReductionVariable* out) {
    out->set_name(rv.name);
    expr(rv.min, out->mutable_min());
    expr(rv.max, out->mutable_max());
  }

  void stmt(const Stmt& s, proto::Stmt* out) {
    STIPPLE_INTERNAL_CHECK(s.defined(), "encoding an undefined statement");
    DepthGuard guard(&depth_);
    switch (s.node_type()) {
      case IRNodeType::LetStmt: {
        const LetStmt* op = s.as<LetStmt>();
        proto::LetStmt* m = out->mutable_let_stmt();
        m->set_name(op->name);
        expr(op->value, m->mutable_value());
        stmt(op->body, m->mutable_body());
        return;
      }
      case IRNodeType::For: {
        const For* op = s.as<For>();
        proto::For* m = out->mutable_for_loop();
        m->set_name(op->name);
        expr(op->min, m->mutable_min());
        expr(op->extent, m->mutable_extent());
        m->set_for_type(encode(op->for_type));
        stmt(op->body, m->mutable_body());
        return;
      }
      case IRNodeType::Provide: {
        const Provide* op = s.as<Provide>();
        proto::Provide* m = out->mutable_provide();
        m->set_name(op->name);
        expr(op->value, m->mutable_value());
        for (const Expr& a : op->args) expr(a, m->add_args());
        return;
      }
      case IRNodeType::Allocate: {
        const Allocate* op = s.as<Allocate>();
        proto::Allocate* m = out->mutable_allocate();
        m->set_name(op->name);
        encode_type(op->type, m->mutable_type());
        for (const Expr& x : op->extents) expr(x, m->add_extents());
        stmt(op->body, m->mutable_body());
        return;
      }
      case IRNodeType::Block: {
        proto::Block* m = out->mutable_block();
        Stmt cur = s;
        while (const Block* b = cur.as<Block>()) {
          stmt(b->first, m->add_stmts());
          Stmt rest = b->rest;
          cur = std::move(rest);
        }
        stmt(cur, m->add_stmts());
        return;
      }
      case IRNodeType::IfThenElse: {
        const IfThenElse* op = s.as<IfThenElse>();
        proto::IfThenElse* m = out->mutable_if_then_else();
        expr(op->condition, m->mutable_condition());
        stmt(op->then_case, m->mutable_then_case());
        if (op->else_case.defined()) stmt(op->else_case, m->mutable_else_case());
        return;
      }
      case IRNodeType::Evaluate:
        expr(s.as<Evaluate>()->value, out->mutable_evaluate()->mutable_value());
        return;
#define IR_EXPR_CASE(N) case IRNodeType::N:
        IR_EXPR_NODES(IR_EXPR_CASE)
#undef IR_EXPR_CASE
        break;
    }
    STIPPLE_INTERNAL_CHECK(false, "expression node inside a statement");
  }

 private:
  template <typename T>
  void binary(const Expr& e, proto::BinaryOp* m) {
    expr(e.as<T>()->a, m->mutable_a());
    expr(e.as<T>()->b, m->mutable_b());
  }

  int depth_ = 0;
};

// ---------------------------------------------------------------------------------------
// Decoding

// What a pipeline declares, for checking the references inside its expressions.
struct Declarations {
  struct Signature {
    Type type;
    size_t arity = 0;
  };
  std::map<std::string, Signature> funcs, inputs;
  std::map<std::string, Type> params;
};

bool fits(Type t, int64_t v) {
  return static_cast<double>(v) >= t.min_value() && static_cast<double>(v) <= t.max_value();
}

class Decoder {
 public:
  explicit Decoder(const Declarations* decls = nullptr) : decls_(decls) {}

  /// A required operand: `present` is the has_ bit of its field.
  Expr operand(bool present, const proto::Expr& e, const std::string& what) {
    if (!present) fail("missing " + what);
    return expr(e);
  }

  Expr expr(const proto::Expr& e) {
    DepthGuard guard(&depth_);
    using K = proto::Expr::NodeCase;
    switch (e.node_case()) {
      case K::kIntImm: {
        const proto::IntImm& m = e.int_imm();
        Type t = decode_type(m.has_type(), m.type(), "integer constant");
        if (!t.is_int() && !t.is_bool()) fail("integer constant of type " + to_string(t));
        if (!fits(t, m.value())) {
          fail("integer constant " + std::to_string(m.value()) + " does not fit " + to_string(t));
        }
        return IntImm::make(t, m.value());
      }
      case K::kFloatImm: {
        const proto::FloatImm& m = e.float_imm();
        Type t = decode_type(m.has_type(), m.type(), "float constant");
        if (!t.is_float()) fail("float constant of type " + to_string(t));
        return FloatImm::make(t, m.value());
      }
      case K::kCast: {
        const proto::Cast& m = e.cast();
        Type t = decode_type(m.has_type(), m.type(), "cast");
        Expr v = operand(m.has_value(), m.value(), "operand of a cast");
        return Cast::make(t, std::move(v));
      }
      case K::kVariable: {
        const proto::Variable& m = e.variable();
        if (m.name().empty()) fail("variable without a name");
        VarKind kind = decode(m.kind());
        Type t = m.has_type() ? decode_type(true, m.type(), "variable " + m.name()) : Int32();
        if (kind == VarKind::Let) return Variable::make_typed(t, m.name());
        if (t != Int32()) fail("variable " + m.name() + " of type " + to_string(t));
        return Variable::make(m.name(), kind);
      }
      case K::kParam: {
        const proto::Param& m = e.param();
        Type t = decode_type(m.has_type(), m.type(), "param " + m.name());
        if (m.name().empty()) fail("param without a name");
        if (decls_) {
          auto it = decls_->params.find(m.name());
          if (it == decls_->params.end()) fail("use of undeclared param " + m.name());
          if (it->second != t) fail("param " + m.name() + " used with the wrong type");
        }
        return Param::make(t, m.name());
      }
      case K::kInputExtent: {
        const proto::InputExtent& m = e.input_extent();
        if (m.dim() < 0) fail("extent of input " + m.input() + " in a negative dimension");
        if (decls_) {
          auto it = decls_->inputs.find(m.input());
          if (it == decls_->inputs.end()) fail("extent of undeclared input " + m.input());
          if (static_cast<size_t>(m.dim()) >= it->second.arity) {
            fail("extent of dimension " + std::to_string(m.dim()) + " of input " + m.input() +
                 ", which has " + std::to_string(it->second.arity));
          }
        }
        return InputExtent::make(m.input(), m.dim());
      }
      case K::kAdd: return arith<Add>(e.add(), "addition");
      case K::kSub: return arith<Sub>(e.sub(), "subtraction");
      case K::kMul: return arith<Mul>(e.mul(), "multiplication");
      case K::kDiv: return arith<Div>(e.div(), "division");
      case K::kMod: return arith<Mod>(e.mod(), "modulo");
      case K::kMin: return arith<Min>(e.min(), "min");
      case K::kMax: return arith<Max>(e.max(), "max");
      case K::kEq: return compare<EQ>(e.eq(), "==");
      case K::kNe: return compare<NE>(e.ne(), "!=");
      case K::kLt: return compare<LT>(e.lt(), "<");
      case K::kLe: return compare<LE>(e.le(), "<=");
      case K::kGt: return compare<GT>(e.gt(), ">");
      case K::kGe: return compare<GE>(e.ge(), ">=");
      case K::kLogicalAnd: return logical<And>(e.logical_and(), "&&");
      case K::kLogicalOr: return logical<Or>(e.logical_or(), "||");
      case K::kLogicalNot: {
        Expr a = operand(e.logical_not().has_a(), e.logical_not().a(), "operand of !");
        if (!a.type().is_bool()) fail("! of non-bool operand of type " + to_string(a.type()));
        return Not::make(std::move(a));
      }
      case K::kSelect: {
        const proto::Select& m = e.select();
        Expr c = operand(m.has_condition(), m.condition(), "condition of a select");
        Expr t = operand(m.has_true_value(), m.true_value(), "true value of a select");
        Expr f = operand(m.has_false_value(), m.false_value(), "false value of a select");
        if (!c.type().is_bool()) fail("select with a condition of type " + to_string(c.type()));
        if (t.type() != f.type()) {
          fail("select of mismatched types " + to_string(t.type()) + " and " + to_string(f.type()));
        }
        return Select::make(std::move(c), std::move(t), std::move(f));
      }
      case K::kCall: return call(e.call());
      case K::kReduce: {
        const proto::Reduce& m = e.reduce();
        ReduceOp op = decode(m.op());
        if (m.domain().empty()) fail("reduction over no variables");
        std::vector<ReductionVariable> domain = rvars(m.domain(), "reduction");
        Expr body = operand(m.has_body(), m.body(), "body of a reduction");
        if (!body.type().is_numeric()) {
          fail("reduction of a body of type " + to_string(body.type()));
        }
        if (op == ReduceOp::FusedSum && (body.node_type() != IRNodeType::Mul ||
                                         !body.type().is_float() || body.type().is_f16())) {
          fail("fused sum of something other than a float product");
        }
        return Reduce::make(op, std::move(domain), std::move(body));
      }
      case K::kLet: {
        const proto::Let& m = e.let();
        if (m.name().empty()) fail("let without a name");
        Expr v = operand(m.has_value(), m.value(), "value of let " + m.name());
        Expr b = operand(m.has_body(), m.body(), "body of let " + m.name());
        return Let::make(m.name(), std::move(v), std::move(b));
      }
      case K::NODE_NOT_SET: break;
    }
    fail("expression with no node set");
  }

  std::vector<ReductionVariable> rvars(
      const google::protobuf::RepeatedPtrField<proto::ReductionVariable>& domain,
      const std::string& where) {
    std::vector<ReductionVariable> out;
    for (const proto::ReductionVariable& m : domain) {
      if (m.name().empty()) fail("reduction variable without a name in a " + where);
      ReductionVariable rv;
      rv.name = m.name();
      rv.min = operand(m.has_min(), m.min(), "lower bound of " + m.name());
      rv.max = operand(m.has_max(), m.max(), "upper bound of " + m.name());
      if (rv.min.type() != Int32() || rv.max.type() != Int32()) {
        fail("bounds of reduction variable " + m.name() + " are not i32");
      }
      out.push_back(std::move(rv));
    }
    return out;
  }

  std::vector<Expr> exprs(const google::protobuf::RepeatedPtrField<proto::Expr>& es) {
    std::vector<Expr> out;
    out.reserve(es.size());
    for (const proto::Expr& e : es) out.push_back(expr(e));
    return out;
  }

  /// An i32 index or extent expression.
  std::vector<Expr> indices(const google::protobuf::RepeatedPtrField<proto::Expr>& es,
                            const std::string& what) {
    std::vector<Expr> out = exprs(es);
    for (const Expr& e : out) {
      if (e.type() != Int32()) fail(what + " of type " + to_string(e.type()) + ", not i32");
    }
    return out;
  }

  Stmt stmt(const proto::Stmt& s) {
    DepthGuard guard(&depth_);
    using K = proto::Stmt::NodeCase;
    switch (s.node_case()) {
      case K::kLetStmt: {
        const proto::LetStmt& m = s.let_stmt();
        if (m.name().empty()) fail("let statement without a name");
        Expr v = operand(m.has_value(), m.value(), "value of let " + m.name());
        Stmt body = stmt_operand(m.has_body(), m.body(), "body of let " + m.name());
        return LetStmt::make(m.name(), std::move(v), std::move(body));
      }
      case K::kForLoop: {
        const proto::For& m = s.for_loop();
        if (m.name().empty()) fail("loop without a variable name");
        ForType type = decode(m.for_type());
        Expr min = operand(m.has_min(), m.min(), "start of loop " + m.name());
        Expr extent = operand(m.has_extent(), m.extent(), "extent of loop " + m.name());
        if (min.type() != Int32() || extent.type() != Int32()) {
          fail("bounds of loop " + m.name() + " are not i32");
        }
        Stmt body = stmt_operand(m.has_body(), m.body(), "body of loop " + m.name());
        return For::make(m.name(), std::move(min), std::move(extent), type, std::move(body));
      }
      case K::kProvide: {
        const proto::Provide& m = s.provide();
        if (m.name().empty()) fail("store without a func name");
        Expr v = operand(m.has_value(), m.value(), "value stored to " + m.name());
        return Provide::make(m.name(), std::move(v), exprs(m.args()));
      }
      case K::kAllocate: {
        const proto::Allocate& m = s.allocate();
        if (m.name().empty()) fail("allocation without a name");
        Type t = decode_type(m.has_type(), m.type(), "allocation " + m.name());
        std::vector<Expr> extents = exprs(m.extents());
        Stmt body = stmt_operand(m.has_body(), m.body(), "body of allocation " + m.name());
        return Allocate::make(m.name(), t, std::move(extents), std::move(body));
      }
      case K::kBlock: {
        const proto::Block& m = s.block();
        if (m.stmts_size() < 2) fail("block of fewer than two statements");
        std::vector<Stmt> stmts;
        for (const proto::Stmt& x : m.stmts()) stmts.push_back(stmt(x));
        return Block::make(stmts);
      }
      case K::kIfThenElse: {
        const proto::IfThenElse& m = s.if_then_else();
        Expr c = operand(m.has_condition(), m.condition(), "condition of an if");
        if (!c.type().is_bool()) fail("if with a condition of type " + to_string(c.type()));
        Stmt then_case = stmt_operand(m.has_then_case(), m.then_case(), "then case of an if");
        Stmt else_case;
        if (m.has_else_case()) else_case = stmt(m.else_case());
        return IfThenElse::make(std::move(c), std::move(then_case), std::move(else_case));
      }
      case K::kEvaluate: {
        const proto::Evaluate& m = s.evaluate();
        return Evaluate::make(operand(m.has_value(), m.value(), "value of an evaluate"));
      }
      case K::NODE_NOT_SET: break;
    }
    fail("statement with no node set");
  }

 private:
  Stmt stmt_operand(bool present, const proto::Stmt& s, const std::string& what) {
    if (!present) fail("missing " + what);
    return stmt(s);
  }

  std::pair<Expr, Expr> operands(const proto::BinaryOp& m, const char* what) {
    Expr a = operand(m.has_a(), m.a(), std::string("first operand of ") + what);
    Expr b = operand(m.has_b(), m.b(), std::string("second operand of ") + what);
    if (a.type() != b.type()) {
      fail(std::string(what) + " of mismatched types " + to_string(a.type()) + " and " +
           to_string(b.type()));
    }
    return {std::move(a), std::move(b)};
  }

  template <typename T>
  Expr arith(const proto::BinaryOp& m, const char* what) {
    auto [a, b] = operands(m, what);
    if (!a.type().is_numeric()) fail(std::string(what) + " of type " + to_string(a.type()));
    return T::make(std::move(a), std::move(b));
  }

  template <typename T>
  Expr compare(const proto::BinaryOp& m, const char* what) {
    auto [a, b] = operands(m, what);
    return T::make(std::move(a), std::move(b));
  }

  template <typename T>
  Expr logical(const proto::BinaryOp& m, const char* what) {
    auto [a, b] = operands(m, what);
    if (!a.type().is_bool()) fail(std::string(what) + " of type " + to_string(a.type()));
    return T::make(std::move(a), std::move(b));
  }

  Expr call(const proto::Call& m) {
    CallType call_type = decode(m.call_type());
    Intrinsic op = decode(m.intrinsic());
    Type t = decode_type(m.has_type(), m.type(), "call to " + m.name());
    std::vector<Expr> args = exprs(m.args());
    if (call_type == CallType::Intrinsic) {
      if (op == Intrinsic::None) fail("intrinsic call without an intrinsic");
      const char* name = intrinsic_name(op);
      if (m.name() != name) fail("intrinsic " + std::string(name) + " named " + m.name());
      size_t arity = intrinsic_arity(op);
      if (args.size() != arity) {
        fail(std::string(name) + " with " + std::to_string(args.size()) + " arguments");
      }
      Type at = args[0].type();
      if (op == Intrinsic::Abs ? !at.is_numeric() : !at.is_float()) {
        fail(std::string(name) + " of type " + to_string(at));
      }
      for (const Expr& a : args) {
        if (a.type() != at) fail(std::string(name) + " of mismatched types");
      }
      if (t != at) fail(std::string(name) + " of type " + to_string(t) + " on " + to_string(at));
      return Call::make_intrinsic(op, std::move(args));
    }
    if (op != Intrinsic::None) fail("call to " + m.name() + " marked as an intrinsic");
    if (m.name().empty()) fail("call without a name");
    for (const Expr& a : args) {
      if (a.type().element_of() != Int32()) {
        fail("call to " + m.name() + " with an index of type " + to_string(a.type()));
      }
    }
    if (decls_) {
      const auto& table = call_type == CallType::Func ? decls_->funcs : decls_->inputs;
      const char* kind = call_type == CallType::Func ? "func" : "input";
      auto it = table.find(m.name());
      if (it == table.end()) fail(std::string("call to undeclared ") + kind + " " + m.name());
      if (it->second.arity != args.size()) {
        fail(std::string("call to ") + kind + " " + m.name() + " with " +
             std::to_string(args.size()) + " arguments, not " + std::to_string(it->second.arity));
      }
      if (it->second.type != t) {
        fail(std::string("call to ") + kind + " " + m.name() + " of type " + to_string(t) +
             ", not " + to_string(it->second.type));
      }
    }
    return Call::make(t, m.name(), std::move(args), call_type);
  }

  const Declarations* decls_;
  int depth_ = 0;
};

/// Element types of inputs, params and funcs: a numeric scalar.
Type decode_value_type(bool present, const proto::Type& t, const std::string& what) {
  Type type = decode_type(present, t, what);
  if (!type.is_numeric() || type.lanes != 1) fail(what + " of type " + to_string(type));
  return type;
}

Declarations declarations(const proto::Pipeline& p) {
  Declarations d;
  std::set<std::string> names;
  auto declare = [&](const std::string& name, const char* kind) {
    if (name.empty()) fail(std::string(kind) + " without a name");
    if (!names.insert(name).second) fail("name " + name + " declared twice");
  };
  for (const proto::InputDecl& in : p.inputs()) {
    declare(in.name(), "input");
    Type t = decode_value_type(in.has_type(), in.type(), "input " + in.name());
    d.inputs[in.name()] = {t, static_cast<size_t>(in.dim_names_size())};
  }
  for (const proto::ParamDecl& param : p.params()) {
    declare(param.name(), "param");
    d.params[param.name()] =
        decode_value_type(param.has_type(), param.type(), "param " + param.name());
  }
  for (const proto::Func& f : p.funcs()) {
    declare(f.name(), "func");
    Type t = decode_value_type(f.has_type(), f.type(), "func " + f.name());
    d.funcs[f.name()] = {t, static_cast<size_t>(f.args_size())};
  }
  return d;
}

InputDecl decode_input(const proto::InputDecl& m, const Declarations& d) {
  InputDecl in;
  in.name = m.name();
  in.type = d.inputs.at(m.name()).type;
  if (m.dim_names_size() < 1 || m.dim_names_size() > 4) {
    fail("input " + m.name() + " with " + std::to_string(m.dim_names_size()) + " dimensions");
  }
  for (const std::string& dim : m.dim_names()) {
    if (dim.empty()) fail("input " + m.name() + " with an unnamed dimension");
    in.dim_names.push_back(dim);
  }
  in.boundary = decode(m.boundary());
  in.boundary_value = m.boundary_value();
  return in;
}

ParamDecl decode_param(const proto::ParamDecl& m, const Declarations& d) {
  ParamDecl param;
  param.name = m.name();
  param.type = d.params.at(m.name());
  param.default_value = m.default_value();
  if (param.type.is_int() && (!(param.default_value == std::trunc(param.default_value)) ||
                              param.default_value < param.type.min_value() ||
                              param.default_value > param.type.max_value())) {
    fail("param " + m.name() + " has default " + format_float_literal(param.default_value) +
         ", which " + to_string(param.type) + " cannot hold");
  }
  return param;
}

Func decode_func(const proto::Func& m, const Declarations& d) {
  Decoder decoder(&d);
  Func f;
  f.name = m.name();
  f.type = d.funcs.at(m.name()).type;
  std::set<std::string> seen;
  for (const std::string& a : m.args()) {
    if (a.empty()) fail("func " + m.name() + " with an unnamed variable");
    if (!seen.insert(a).second) fail("func " + m.name() + " has variable " + a + " twice");
    f.args.push_back(a);
  }
  f.value = decoder.operand(m.has_value(), m.value(), "definition of func " + m.name());
  if (f.value.type() != f.type) {
    fail("func " + m.name() + " of type " + to_string(f.type) + " defined by a value of type " +
         to_string(f.value.type()));
  }
  for (const proto::UpdateDef& u : m.updates()) {
    UpdateDef update;
    std::string what = "update of func " + m.name();
    update.args = decoder.indices(u.args(), "index in an " + what);
    if (update.args.size() != f.args.size()) {
      fail(what + " with " + std::to_string(update.args.size()) + " indices, not " +
           std::to_string(f.args.size()));
    }
    update.value = decoder.operand(u.has_value(), u.value(), "value of an " + what);
    if (update.value.type() != f.type) {
      fail(what + " with a value of type " + to_string(update.value.type()));
    }
    update.domain = decoder.rvars(u.domain(), what);
    f.updates.push_back(std::move(update));
  }
  return f;
}

OutputDecl decode_output(const proto::Pipeline& p, const Declarations& d) {
  if (!p.has_output()) fail("pipeline without an output");
  const proto::OutputDecl& m = p.output();
  auto it = d.funcs.find(m.func());
  if (it == d.funcs.end()) fail("output of undeclared func " + m.func());
  OutputDecl out;
  out.func = m.func();
  Decoder decoder(&d);
  out.extents = decoder.indices(m.extents(), "output extent");
  if (out.extents.size() != it->second.arity) {
    fail("output with " + std::to_string(out.extents.size()) + " extents for func " + m.func() +
         " of " + std::to_string(it->second.arity) + " dimensions");
  }
  out.metric = decode(m.metric());
  return out;
}

}  // namespace

proto::Pipeline to_proto(const Pipeline& p) {
  Encoder enc;
  proto::Pipeline m;
  m.set_format_version(kPipelineFormatVersion);
  m.set_name(p.name);
  for (const InputDecl& in : p.inputs) {
    proto::InputDecl* x = m.add_inputs();
    x->set_name(in.name);
    encode_type(in.type, x->mutable_type());
    for (const std::string& dim : in.dim_names) x->add_dim_names(dim);
    x->set_boundary(encode(in.boundary));
    x->set_boundary_value(in.boundary_value);
  }
  for (const ParamDecl& param : p.params) {
    proto::ParamDecl* x = m.add_params();
    x->set_name(param.name);
    encode_type(param.type, x->mutable_type());
    x->set_default_value(param.default_value);
  }
  for (const Func& f : p.funcs) {
    proto::Func* x = m.add_funcs();
    x->set_name(f.name);
    for (const std::string& a : f.args) x->add_args(a);
    encode_type(f.type, x->mutable_type());
    enc.expr(f.value, x->mutable_value());
    for (const UpdateDef& u : f.updates) {
      proto::UpdateDef* y = x->add_updates();
      for (const Expr& a : u.args) enc.expr(a, y->add_args());
      enc.expr(u.value, y->mutable_value());
      for (const ReductionVariable& rv : u.domain) enc.rvar(rv, y->add_domain());
    }
  }
  proto::OutputDecl* out = m.mutable_output();
  out->set_func(p.output.func);
  for (const Expr& e : p.output.extents) enc.expr(e, out->add_extents());
  out->set_metric(encode(p.output.metric));
  return m;
}

proto::Expr to_proto(const Expr& e) {
  proto::Expr m;
  Encoder().expr(e, &m);
  return m;
}

proto::Stmt to_proto(const Stmt& s) {
  proto::Stmt m;
  Encoder().stmt(s, &m);
  return m;
}

Pipeline from_proto(const proto::Pipeline& m) {
  if (m.format_version() != kPipelineFormatVersion) {
    fail("format version " + std::to_string(m.format_version()) + " (this build reads version " +
         std::to_string(kPipelineFormatVersion) + ")");
  }
  if (m.name().empty()) fail("pipeline without a name");
  Declarations d = declarations(m);
  Pipeline p;
  p.name = m.name();
  for (const proto::InputDecl& in : m.inputs()) p.inputs.push_back(decode_input(in, d));
  for (const proto::ParamDecl& param : m.params()) p.params.push_back(decode_param(param, d));
  for (const proto::Func& f : m.funcs()) p.funcs.push_back(decode_func(f, d));
  p.output = decode_output(m, d);
  return p;
}

Expr from_proto(const proto::Expr& e) { return Decoder().expr(e); }

Stmt from_proto(const proto::Stmt& s) { return Decoder().stmt(s); }

std::string serialize_pipeline(const Pipeline& p) {
  std::string bytes;
  STIPPLE_INTERNAL_CHECK(to_proto(p).SerializeToString(&bytes), "pipeline failed to serialise");
  return bytes;
}

Pipeline parse_pipeline_bytes(std::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) fail("message larger than 2 GiB");
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  // The default limit of 100 nested messages is too few for expressions 256 deep.
  in.SetRecursionLimit(kProtoRecursionLimit);
  proto::Pipeline m;
  // Bad bytes become a UserError below; protobuf's own log lines about them (invalid
  // UTF-8 in a name, say) would only be noise from hostile or corrupt input.
  google::protobuf::LogSilencer quiet;
  if (!m.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    fail("bytes do not parse as a stipple.proto.Pipeline");
  }
  return from_proto(m);
}

}  // namespace stipple
