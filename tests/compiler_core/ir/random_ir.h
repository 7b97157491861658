// Random well-typed IR for property tests (printer, equality, hashing, proto codec), and
// an independent deep copy that shares no nodes with its source.
#pragma once

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"

namespace stipple::testing {

class RandomIR {
 public:
  explicit RandomIR(uint64_t seed) : rng_(seed) {}

  /// A random expression of type `t` at most `depth` levels deep, using every node kind.
  Expr expr(Type t, int depth) {
    if (depth <= 1) return leaf(t);
    if (t.is_bool()) return bool_expr(depth);
    if (t.is_f16()) return f16_expr(depth);
    int choice = pick(12);
    switch (choice) {
      case 0: return leaf(t);
      case 1: {
        Type from = pick(5) ? numeric_type() : Float16();
        return Cast::make(t, expr(from, depth - 1));
      }
      case 2: return Add::make(expr(t, depth - 1), expr(t, depth - 1));
      case 3: return Sub::make(expr(t, depth - 1), expr(t, depth - 1));
      case 4: return Mul::make(expr(t, depth - 1), expr(t, depth - 1));
      case 5:
        return pick(2) ? Div::make(expr(t, depth - 1), expr(t, depth - 1))
                       : Mod::make(expr(t, depth - 1), expr(t, depth - 1));
      case 6:
        return pick(2) ? Min::make(expr(t, depth - 1), expr(t, depth - 1))
                       : Max::make(expr(t, depth - 1), expr(t, depth - 1));
      case 7: return Select::make(expr(Bool(), depth - 1), expr(t, depth - 1), expr(t, depth - 1));
      case 8: {
        std::vector<Expr> args;
        int n = pick(4);
        for (int i = 0; i < n; i++) args.push_back(expr(Int32(), depth - 1));
        return Call::make(t, pick(2) ? "f" + type_tag(t) : "in_" + type_tag(t), std::move(args),
                          pick(2) ? CallType::Func : CallType::Input);
      }
      case 9: {
        if (t.is_float()) {
          static const Intrinsic kOps[] = {
              Intrinsic::Abs, Intrinsic::Floor, Intrinsic::Ceil,  Intrinsic::Round, Intrinsic::Sqrt,
              Intrinsic::Exp, Intrinsic::Log,   Intrinsic::Pow,   Intrinsic::Sin,   Intrinsic::Cos,
              Intrinsic::Tan, Intrinsic::Atan2, Intrinsic::Hypot, Intrinsic::Tanh,  Intrinsic::Fma};
          Intrinsic op = kOps[pick(static_cast<int>(std::size(kOps)))];
          std::vector<Expr> args;
          for (size_t i = 0; i < intrinsic_arity(op); ++i) args.push_back(expr(t, depth - 1));
          return Call::make_intrinsic(op, std::move(args));
        }
        return Call::make_intrinsic(Intrinsic::Abs, {expr(t, depth - 1)});
      }
      case 10: {
        static const ReduceOp kOps[] = {ReduceOp::Sum,     ReduceOp::Prod,   ReduceOp::Minimum,
                                        ReduceOp::Maximum, ReduceOp::Median, ReduceOp::ArgMin};
        ReduceOp op = kOps[pick(t == Int32() ? 6 : 5)];
        std::vector<ReductionVariable> domain;
        int n = 1 + pick(2);
        for (int i = 0; i < n; i++) {
          domain.push_back({"r" + std::to_string(i), expr(Int32(), 2), expr(Int32(), 2)});
        }
        if (op == ReduceOp::Sum && t.is_float() && pick(2) == 0) {
          return Reduce::make(ReduceOp::FusedSum, std::move(domain),
                              Mul::make(expr(t, depth - 1), expr(t, depth - 1)));
        }
        return Reduce::make(op, std::move(domain), expr(t, depth - 1));
      }
      default: {
        // A Let whose body may use its variable (of the value's type).
        std::string name = "t" + std::to_string(pick(3));
        Expr value = expr(numeric_type(), depth - 1);
        Expr body = expr(t, depth - 1);
        if (value.type() == t && pick(2)) body = Add::make(body, Variable::make_typed(t, name));
        return Let::make(name, value, body);
      }
    }
  }

  /// f16 only where the IR allows it: no arithmetic, min, max, intrinsic or reduction.
  Expr f16_expr(int depth) {
    const Type t = Float16();
    switch (pick(5)) {
      case 0: return leaf(t);
      case 1: return Cast::make(t, expr(numeric_type(), depth - 1));
      case 2: return Select::make(expr(Bool(), depth - 1), expr(t, depth - 1), expr(t, depth - 1));
      case 3: {
        std::vector<Expr> args;
        for (int i = 0, n = pick(3); i < n; i++) args.push_back(expr(Int32(), depth - 1));
        return Call::make(t, pick(2) ? "f" + type_tag(t) : "in_" + type_tag(t), std::move(args),
                          pick(2) ? CallType::Func : CallType::Input);
      }
      default: return Let::make("t0", expr(numeric_type(), depth - 1), expr(t, depth - 1));
    }
  }

  Expr bool_expr(int depth) {
    switch (pick(6)) {
      case 0: return leaf(Bool());
      case 1: {
        Type t = numeric_type();
        Expr a = expr(t, depth - 1), b = expr(t, depth - 1);
        switch (pick(6)) {
          case 0: return EQ::make(a, b);
          case 1: return NE::make(a, b);
          case 2: return LT::make(a, b);
          case 3: return LE::make(a, b);
          case 4: return GT::make(a, b);
          default: return GE::make(a, b);
        }
      }
      case 2: return And::make(expr(Bool(), depth - 1), expr(Bool(), depth - 1));
      case 3: return Or::make(expr(Bool(), depth - 1), expr(Bool(), depth - 1));
      case 4: return Not::make(expr(Bool(), depth - 1));
      default:
        return Select::make(expr(Bool(), depth - 1), expr(Bool(), depth - 1),
                            expr(Bool(), depth - 1));
    }
  }

  Expr leaf(Type t) {
    if (t.is_bool()) {
      return pick(2) ? IntImm::make(t, pick(2)) : Cast::make(t, leaf(Int32()));
    }
    switch (pick(4)) {
      case 0: return Param::make(t, "p_" + type_tag(t));
      case 1:
        if (t == Int32()) {
          return pick(2) ? Variable::make("v" + std::to_string(pick(3)),
                                          pick(2) ? VarKind::Pure : VarKind::Reduction)
                         : InputExtent::make("in_" + std::to_string(pick(2)), pick(4));
        }
        [[fallthrough]];
      default: return constant(t);
    }
  }

  Expr constant(Type t) {
    if (t.is_float()) {
      double v;
      switch (pick(6)) {
        case 0: v = pick(2) ? 0.0 : -0.0; break;
        case 1: v = static_cast<double>(static_cast<int>(pick(200)) - 100); break;
        case 2: v = std::bit_cast<double>(rng_()); break;  // any bits, NaNs included
        case 3: v = pick(2) ? std::numeric_limits<double>::infinity() : -1e-300; break;
        default: v = std::uniform_real_distribution<double>(-10, 10)(rng_); break;
      }
      return FloatImm::make(t, v);
    }
    int64_t lo = static_cast<int64_t>(t.min_value()), hi = static_cast<int64_t>(t.max_value());
    if (pick(3) == 0) return IntImm::make(t, pick(2) ? lo : hi);
    return IntImm::make(t, std::uniform_int_distribution<int64_t>(lo, hi)(rng_));
  }

  Type numeric_type() {
    static const Type kTypes[] = {UInt8(), UInt16(), UInt32(),  Int8(),
                                  Int16(), Int32(),  Float32(), Float64()};
    return kTypes[pick(static_cast<int>(std::size(kTypes)))];
  }

  /// A random loop nest using every statement kind.
  Stmt stmt(int depth) {
    if (depth <= 1) {
      return pick(2) ? Provide::make("f", expr(Float32(), 3), {expr(Int32(), 2), leaf(Int32())})
                     : Evaluate::make(expr(Int32(), 3));
    }
    switch (pick(6)) {
      case 0:
        return LetStmt::make("l" + std::to_string(pick(3)), expr(Int32(), 3), stmt(depth - 1));
      case 1: {
        static const ForType kTypes[] = {ForType::Serial, ForType::Parallel, ForType::Vectorized,
                                         ForType::Unrolled};
        return For::make("x" + std::to_string(pick(3)), expr(Int32(), 2), expr(Int32(), 2),
                         kTypes[pick(4)], stmt(depth - 1));
      }
      case 2:
        return Allocate::make("buf", numeric_type(), {expr(Int32(), 2), expr(Int32(), 2)},
                              stmt(depth - 1));
      case 3: {
        std::vector<Stmt> stmts;
        int n = 2 + pick(3);
        for (int i = 0; i < n; i++) stmts.push_back(stmt(depth - 1));
        // Sometimes a left-nested Block, which flattening must keep apart.
        if (pick(3) == 0) return Block::make(Block::make(stmts), stmt(depth - 1));
        return Block::make(stmts);
      }
      case 4:
        return IfThenElse::make(expr(Bool(), 3), stmt(depth - 1),
                                pick(2) ? stmt(depth - 1) : Stmt());
      default: return stmt(1);
    }
  }

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

 private:
  static std::string type_tag(Type t) { return to_string(t); }

  std::mt19937_64 rng_;
};

/// A copy of `e` built node by node through the make() functions, sharing nothing.
inline Expr deep_copy(const Expr& e) {
  auto copies = [](const std::vector<Expr>& es) {
    std::vector<Expr> out;
    for (const Expr& x : es) out.push_back(deep_copy(x));
    return out;
  };
  switch (e.node_type()) {
    case IRNodeType::IntImm: return IntImm::make(e.type(), e.as<IntImm>()->value);
    case IRNodeType::FloatImm: return FloatImm::make(e.type(), e.as<FloatImm>()->value);
    case IRNodeType::Cast: return Cast::make(e.type(), deep_copy(e.as<Cast>()->value));
    case IRNodeType::Variable: {
      const Variable* v = e.as<Variable>();
      if (v->kind == VarKind::Let) return Variable::make_typed(v->type, std::string(v->name));
      return Variable::make(std::string(v->name), v->kind);
    }
    case IRNodeType::Param: return Param::make(e.type(), std::string(e.as<Param>()->name));
    case IRNodeType::InputExtent:
      return InputExtent::make(std::string(e.as<InputExtent>()->input), e.as<InputExtent>()->dim);
#define COPY_BINARY(N) \
  case IRNodeType::N: return N::make(deep_copy(e.as<N>()->a), deep_copy(e.as<N>()->b));
      // clang-format off: one case per line (clang-format cannot see the macro's case)
      COPY_BINARY(Add)
      COPY_BINARY(Sub)
      COPY_BINARY(Mul)
      COPY_BINARY(Div)
      COPY_BINARY(Mod)
      COPY_BINARY(Min)
      COPY_BINARY(Max)
      COPY_BINARY(EQ)
      COPY_BINARY(NE)
      COPY_BINARY(LT)
      COPY_BINARY(LE)
      COPY_BINARY(GT)
      COPY_BINARY(GE)
      COPY_BINARY(And)
      COPY_BINARY(Or)
      // clang-format on
#undef COPY_BINARY
    case IRNodeType::Not: return Not::make(deep_copy(e.as<Not>()->a));
    case IRNodeType::Select: {
      const Select* op = e.as<Select>();
      return Select::make(deep_copy(op->condition), deep_copy(op->true_value),
                          deep_copy(op->false_value));
    }
    case IRNodeType::Call: {
      const Call* op = e.as<Call>();
      if (op->call_type == CallType::Intrinsic) {
        return Call::make_intrinsic(op->intrinsic, copies(op->args));
      }
      return Call::make(op->type, std::string(op->name), copies(op->args), op->call_type);
    }
    case IRNodeType::Reduce: {
      const Reduce* op = e.as<Reduce>();
      std::vector<ReductionVariable> domain;
      for (const ReductionVariable& rv : op->domain) {
        domain.push_back({rv.name, deep_copy(rv.min), deep_copy(rv.max)});
      }
      return Reduce::make(op->op, std::move(domain), deep_copy(op->body));
    }
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      return Let::make(op->name, deep_copy(op->value), deep_copy(op->body));
    }
    default: break;
  }
  return Expr();
}

inline Stmt deep_copy(const Stmt& s) {
  if (!s.defined()) return Stmt();
  auto copies = [](const std::vector<Expr>& es) {
    std::vector<Expr> out;
    for (const Expr& x : es) out.push_back(deep_copy(x));
    return out;
  };
  switch (s.node_type()) {
    case IRNodeType::LetStmt: {
      const LetStmt* op = s.as<LetStmt>();
      return LetStmt::make(op->name, deep_copy(op->value), deep_copy(op->body));
    }
    case IRNodeType::For: {
      const For* op = s.as<For>();
      return For::make(op->name, deep_copy(op->min), deep_copy(op->extent), op->for_type,
                       deep_copy(op->body));
    }
    case IRNodeType::Provide: {
      const Provide* op = s.as<Provide>();
      return Provide::make(op->name, deep_copy(op->value), copies(op->args));
    }
    case IRNodeType::Allocate: {
      const Allocate* op = s.as<Allocate>();
      return Allocate::make(op->name, op->type, copies(op->extents), deep_copy(op->body));
    }
    case IRNodeType::Block:
      return Block::make(deep_copy(s.as<Block>()->first), deep_copy(s.as<Block>()->rest));
    case IRNodeType::IfThenElse: {
      const IfThenElse* op = s.as<IfThenElse>();
      return IfThenElse::make(deep_copy(op->condition), deep_copy(op->then_case),
                              deep_copy(op->else_case));
    }
    case IRNodeType::Evaluate: return Evaluate::make(deep_copy(s.as<Evaluate>()->value));
    default: break;
  }
  return Stmt();
}

}  // namespace stipple::testing
