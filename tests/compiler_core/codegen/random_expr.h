// Random well-typed expressions for the code generators' property tests (property_test.cpp
// against the evaluator, cpp_source_test.cpp against the JIT): every operator, casts,
// select, && / ||, min/max, intrinsics, input reads of the inputs "img" (f32, x and y),
// "a" (u8, x) and "one" (u16, x), the params "p" (f32) and "k" (i32), reductions of every
// op, Let; over the variables x and y; every element type, f16 only where the IR allows it
// (casts to and from it, select, its constants). And the comparison of values they use.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/runtime/buffer.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple::testing_codegen {

using namespace irb;

/// The types arithmetic happens in.
inline const Type kNumeric[] = {UInt8(), UInt16(), UInt32(),  Int8(),
                                Int16(), Int32(),  Float32(), Float64()};
/// The types a func can hold: those and the storage type f16.
inline const Type kStored[] = {UInt8(), UInt16(),  UInt32(),  Int8(),   Int16(),
                               Int32(), Float16(), Float32(), Float64()};

class ExprGen {
 public:
  explicit ExprGen(uint32_t seed) : rng_(seed) {}
  bool transcendental = false;

  Expr gen(Type t, int depth) {
    if (t.is_f16()) return f16_of(depth);
    if (depth <= 0 || chance(0.2)) return leaf(t);
    if (t.is_bool()) return gen_bool(depth);
    switch (pick(14)) {
      case 0: return Add::make(gen(t, depth - 1), gen(t, depth - 1));
      case 1: return Sub::make(gen(t, depth - 1), gen(t, depth - 1));
      case 2: return Mul::make(gen(t, depth - 1), gen(t, depth - 1));
      case 3: return Div::make(gen(t, depth - 1), gen(t, depth - 1));
      case 4: return Mod::make(gen(t, depth - 1), gen(t, depth - 1));
      case 5:
        return chance(0.5) ? Min::make(gen(t, depth - 1), gen(t, depth - 1))
                           : Max::make(gen(t, depth - 1), gen(t, depth - 1));
      case 6: return Select::make(gen(Bool(), depth - 1), gen(t, depth - 1), gen(t, depth - 1));
      case 7:
        // Sometimes through f16: a rounding, then the widening back.
        return Cast::make(t, chance(0.2) ? f16_of(depth - 1) : gen(any_numeric(), depth - 1));
      case 8: return intrinsic_of(t, depth);
      case 9: return let_of(t, depth);
      case 10: return reduce_of(t, depth);
      case 11: return input_read(t, depth);
      case 12: return Cast::make(t, gen(Bool(), depth - 1));
      default: return gen(t, depth - 1);
    }
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Type any_numeric() { return kNumeric[pick(static_cast<int>(std::size(kNumeric)))]; }

  // An f16 value: a rounding cast, a select of two, or a constant (no arithmetic is f16).
  Expr f16_of(int depth) {
    static const double special[] = {0.0, -0.0, 0.333251953125, 65504.0, 6e-8, -2.5, 1e5};
    if (depth <= 0 || chance(0.2)) return FloatImm::make(Float16(), special[pick(7)]);
    if (chance(0.2))
      return Select::make(gen(Bool(), depth - 1), f16_of(depth - 1), f16_of(depth - 1));
    return Cast::make(Float16(), gen(any_numeric(), depth - 1));
  }

  Expr var() {
    auto& [name, kind] = scope_[pick(static_cast<int>(scope_.size()))];
    return Variable::make(name, kind);
  }

  Expr leaf(Type t) {
    switch (t.code) {
      case ScalarType::Bool: return LT::make(var(), IntImm::make(Int32(), pick(5) - 2));
      case ScalarType::Int32: {
        static const int64_t special[] = {0, 1, -1, 2, 3, 7, -5, 100, INT32_MIN, INT32_MAX};
        int k = pick(14);
        if (k < 5) return var();
        if (k < 7) return Param::make(Int32(), "k");
        if (k < 8) return InputExtent::make("img", pick(3));
        return IntImm::make(Int32(), special[pick(10)]);
      }
      case ScalarType::UInt8:
      case ScalarType::UInt16:
      case ScalarType::UInt32:
      case ScalarType::Int8:
      case ScalarType::Int16: {
        if (chance(0.4)) return Cast::make(t, var());
        static const int64_t special[] = {0, 1, 2, 3, 7, 128, 255, -1, -100};
        int64_t v = special[pick(9)];
        if (chance(0.3)) v = static_cast<int64_t>(chance(0.5) ? t.max_value() : t.min_value());
        v = std::clamp(v, static_cast<int64_t>(t.min_value()), static_cast<int64_t>(t.max_value()));
        return IntImm::make(t, v);
      }
      case ScalarType::Float16: return f16_of(0);
      case ScalarType::Float32:
      case ScalarType::Float64: {
        static const double special[] = {0.0, -0.0, 0.5, -1.5, 2.5, 3.0, 1e30, -7.25, 0.1};
        int k = pick(10);
        if (k < 3) return Cast::make(t, var());
        if (k < 4) return Cast::make(t, Param::make(Float32(), "p"));
        if (k < 6) {
          return FloatImm::make(t, std::uniform_real_distribution<double>(-10, 10)(rng_));
        }
        return FloatImm::make(t, special[pick(9)]);
      }
    }
    return Expr();
  }

  Expr gen_bool(int depth) {
    switch (pick(6)) {
      case 0: {
        Type u = any_numeric();
        Expr a = gen(u, depth - 1), b = gen(u, depth - 1);
        switch (pick(6)) {
          case 0: return EQ::make(a, b);
          case 1: return NE::make(a, b);
          case 2: return LT::make(a, b);
          case 3: return LE::make(a, b);
          case 4: return GT::make(a, b);
          default: return GE::make(a, b);
        }
      }
      case 1: return And::make(gen(Bool(), depth - 1), gen(Bool(), depth - 1));
      case 2: return Or::make(gen(Bool(), depth - 1), gen(Bool(), depth - 1));
      case 3: return Not::make(gen(Bool(), depth - 1));
      case 4: return Cast::make(Bool(), gen(any_numeric(), depth - 1));
      default:
        return Select::make(gen(Bool(), depth - 1), gen(Bool(), depth - 1), gen(Bool(), depth - 1));
    }
  }

  Expr intrinsic_of(Type t, int depth) {
    if (!t.is_float() || chance(0.2)) return intrinsic(Intrinsic::Abs, gen(t, depth - 1));
    static const Intrinsic exact[] = {Intrinsic::Floor, Intrinsic::Ceil, Intrinsic::Round,
                                      Intrinsic::Sqrt, Intrinsic::Abs};
    static const Intrinsic libm[] = {Intrinsic::Exp,   Intrinsic::Log,   Intrinsic::Sin,
                                     Intrinsic::Cos,   Intrinsic::Pow,   Intrinsic::Tan,
                                     Intrinsic::Atan2, Intrinsic::Hypot, Intrinsic::Tanh};
    if (chance(0.1)) {  // fused: exact, like the operators
      return Call::make_intrinsic(Intrinsic::Fma,
                                  {gen(t, depth - 1), gen(t, depth - 1), gen(t, depth - 1)});
    }
    if (chance(0.7)) return intrinsic(exact[pick(5)], gen(t, depth - 1));
    transcendental = true;
    Intrinsic op = libm[pick(static_cast<int>(std::size(libm)))];
    std::vector<Expr> args;
    for (size_t i = 0; i < intrinsic_arity(op); ++i) args.push_back(gen(t, depth - 1));
    return Call::make_intrinsic(op, std::move(args));
  }

  Expr let_of(Type t, int depth) {
    std::string name = "t" + std::to_string(fresh_++);
    Expr value = gen(Int32(), depth - 1);
    scope_.emplace_back(name, VarKind::Pure);
    Expr body = gen(t, depth - 1);
    scope_.pop_back();
    return Let::make(name, value, body);
  }

  Expr reduce_of(Type t, int depth) {
    ReduceOp op = static_cast<ReduceOp>(pick(6));
    Type body_type = t;
    if (op == ReduceOp::ArgMin) {
      if (t != Int32())
        op = ReduceOp::Sum;
      else
        body_type = any_numeric();
    }
    std::vector<ReductionVariable> domain;
    int n = 1 + pick(2);
    for (int i = 0; i < n; ++i) {
      std::string name = "r" + std::to_string(fresh_++);
      int64_t lo = pick(4) - 2;
      Expr min = IntImm::make(Int32(), lo);
      // Mostly small constant ranges, sometimes empty, sometimes dependent on y.
      Expr max = chance(0.2) ? Variable::make("y") : IntImm::make(Int32(), lo + pick(5) - 1);
      domain.push_back({name, min, max});
    }
    for (auto& rv : domain) scope_.emplace_back(rv.name, VarKind::Reduction);
    Expr body;
    if (op == ReduceOp::Sum && body_type.is_float() && chance(0.5)) {
      // The language's sum of a float product: each point is fma(a, b, acc).
      op = ReduceOp::FusedSum;
      body = Mul::make(gen(body_type, depth - 1), gen(body_type, depth - 1));
    } else {
      body = gen(body_type, depth - 1);
    }
    for (size_t i = 0; i < domain.size(); ++i) scope_.pop_back();
    return Reduce::make(op, domain, body);
  }

  Expr input_read(Type t, int depth) {
    if (t == Float32()) return input(Float32(), "img", {gen(Int32(), depth - 1), var()});
    if (t == UInt8()) return input(UInt8(), "a", {gen(Int32(), depth - 1)});
    if (t == UInt16()) return input(UInt16(), "one", {gen(Int32(), depth - 1)});
    return gen(t, depth - 1);
  }

  std::mt19937 rng_;
  int fresh_ = 0;
  std::vector<std::pair<std::string, VarKind>> scope_ = {{"x", VarKind::Pure},
                                                         {"y", VarKind::Pure}};
};

inline bool same_value(ScalarType t, const Buffer& a, const Buffer& b, int64_t i) {
  double x = a.get_flat(i), y = b.get_flat(i);
  if (std::isnan(x) && std::isnan(y)) return true;  // NaN sign and payload are not semantics
  if (t == ScalarType::Float32) {
    float fx = static_cast<float>(x), fy = static_cast<float>(y);
    return std::memcmp(&fx, &fy, sizeof fx) == 0;
  }
  return std::memcmp(&x, &y, sizeof x) == 0;  // -0 differs from +0
}

inline int64_t ulps(ScalarType t, double x, double y) {
  if (!std::isfinite(x) || !std::isfinite(y)) return x == y ? 0 : INT64_MAX;
  auto ordered = [](int64_t bits, int64_t sign_bit) { return bits < 0 ? sign_bit - bits : bits; };
  if (t == ScalarType::Float32) {
    float fx = static_cast<float>(x), fy = static_cast<float>(y);
    int32_t bx, by;
    std::memcpy(&bx, &fx, 4);
    std::memcpy(&by, &fy, 4);
    return std::llabs(ordered(bx, INT32_MIN) - ordered(by, INT32_MIN));
  }
  int64_t bx, by;
  std::memcpy(&bx, &x, 8);
  std::memcpy(&by, &y, 8);
  return std::llabs(ordered(bx, INT64_MIN) - ordered(by, INT64_MIN));
}

/// The grid random expressions are evaluated over: kWidth x kHeight at (kMinX, kMinY), so
/// that x and y take negative values too.
constexpr int kWidth = 7, kHeight = 5, kMinX = -3, kMinY = -2;

/// How the loops over the grid are built around a body that reads x and y.
enum class GridLoops {
  Serial,         // y, then x, both serial
  VectorX,        // x vectorized (7 lanes)
  VectorXTail,    // x in 4-lane vectors with a guarded tail
  VectorYInside,  // y vectorized (5 lanes) inside a serial x
  ParallelY,      // y parallel, x serial
};

inline Stmt grid_loops(GridLoops loops, Stmt body) {
  switch (loops) {
    case GridLoops::VectorX:
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Serial,
                       For::make("x", i32(kMinX), i32(kWidth), ForType::Vectorized, body));
    case GridLoops::VectorXTail: {
      Expr x = Add::make(Add::make(i32(kMinX), Mul::make(var("xo"), i32(4))), var("xv"));
      Stmt guarded = IfThenElse::make(LT::make(var("x"), i32(kMinX + kWidth)), body);
      Stmt lanes =
          For::make("xv", i32(0), i32(4), ForType::Vectorized, LetStmt::make("x", x, guarded));
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Serial,
                       For::make("xo", i32(0), i32((kWidth + 3) / 4), ForType::Serial, lanes));
    }
    case GridLoops::VectorYInside:
      return For::make("x", i32(kMinX), i32(kWidth), ForType::Serial,
                       For::make("y", i32(kMinY), i32(kHeight), ForType::Vectorized, body));
    case GridLoops::ParallelY:
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Parallel,
                       For::make("x", i32(kMinX), i32(kWidth), ForType::Serial, body));
    case GridLoops::Serial:
    default:
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Serial,
                       For::make("x", i32(kMinX), i32(kWidth), ForType::Serial, body));
  }
}

}  // namespace stipple::testing_codegen
