// Property test: thousands of random well-typed expressions (every operator, casts,
// select, && / ||, min/max, intrinsics, input reads under each boundary condition, params,
// reductions of every op, Let) computed by JIT-compiled loop nests and by the reference
// evaluator over a grid of variable values (negative ones included), which must agree bit
// for bit, under four loop nests: serial; x as one 7-lane vector; x split into 4-lane
// vectors with a guard for the tail (masked lanes, and the unmasked copy for full vectors);
// y as the vector lanes (gathers, scatters, and reductions whose bounds vary per lane,
// which fall back to scalar code). Only exp/log/pow/sin/cos may differ (both call libm, so they
// should not); the largest difference in ulps is printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/ir_printer.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;
using codegen::BufferDescriptor;
using codegen::ExternalBuffer;
using codegen::JitCompiler;
using codegen::LoweredFunction;

constexpr int kWidth = 7, kHeight = 5, kMinX = -3, kMinY = -2;

const Type kNumeric[] = {UInt8(), UInt16(), Int32(), Float32(), Float64()};

class ExprGen {
 public:
  explicit ExprGen(uint32_t seed) : rng_(seed) {}
  bool transcendental = false;

  Expr gen(Type t, int depth) {
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
      case 7: return Cast::make(t, gen(any_numeric(), depth - 1));
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
  Type any_numeric() { return kNumeric[pick(5)]; }

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
      case ScalarType::UInt16: {
        if (chance(0.4)) return Cast::make(t, var());
        static const int64_t special[] = {0, 1, 2, 3, 7, 128, 255};
        int64_t v = chance(0.3) ? static_cast<int64_t>(t.max_value()) : special[pick(7)];
        return IntImm::make(t, std::min<int64_t>(v, static_cast<int64_t>(t.max_value())));
      }
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
    static const Intrinsic libm[] = {Intrinsic::Exp, Intrinsic::Log, Intrinsic::Sin, Intrinsic::Cos,
                                     Intrinsic::Pow};
    if (chance(0.7)) return intrinsic(exact[pick(5)], gen(t, depth - 1));
    transcendental = true;
    Intrinsic op = libm[pick(5)];
    if (op == Intrinsic::Pow)
      return Call::make_intrinsic(op, {gen(t, depth - 1), gen(t, depth - 1)});
    return intrinsic(op, gen(t, depth - 1));
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
    Expr body = gen(body_type, depth - 1);
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

bool same_value(ScalarType t, const Buffer& a, const Buffer& b, int64_t i) {
  double x = a.get_flat(i), y = b.get_flat(i);
  if (std::isnan(x) && std::isnan(y)) return true;  // NaN sign and payload are not semantics
  if (t == ScalarType::Float32) {
    float fx = static_cast<float>(x), fy = static_cast<float>(y);
    return std::memcmp(&fx, &fy, sizeof fx) == 0;
  }
  return std::memcmp(&x, &y, sizeof x) == 0;  // -0 differs from +0
}

int64_t ulps(ScalarType t, double x, double y) {
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

/// The loops over the kWidth x kHeight grid at (kMinX, kMinY) around `body`, which reads
/// x and y: 0 serial, 1 x vectorized (7 lanes), 2 x in 4-lane vectors with a guarded tail,
/// 3 y vectorized (5 lanes) inside a serial x.
Stmt loop_nest(int variant, Stmt body) {
  switch (variant) {
    case 1:
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Serial,
                       For::make("x", i32(kMinX), i32(kWidth), ForType::Vectorized, body));
    case 2: {
      Expr x = Add::make(Add::make(i32(kMinX), Mul::make(var("xo"), i32(4))), var("xv"));
      Stmt guarded = IfThenElse::make(LT::make(var("x"), i32(kMinX + kWidth)), body);
      Stmt lanes =
          For::make("xv", i32(0), i32(4), ForType::Vectorized, LetStmt::make("x", x, guarded));
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Serial,
                       For::make("xo", i32(0), i32((kWidth + 3) / 4), ForType::Serial, lanes));
    }
    case 3:
      return For::make("x", i32(kMinX), i32(kWidth), ForType::Serial,
                       For::make("y", i32(kMinY), i32(kHeight), ForType::Vectorized, body));
    default:
      return For::make("y", i32(kMinY), i32(kHeight), ForType::Serial,
                       For::make("x", i32(kMinX), i32(kWidth), ForType::Serial, body));
  }
}

TEST(CodegenProperty, RandomExpressionsMatchTheEvaluatorBitForBit) {
  auto jit = JitCompiler::create();
  constexpr int kBatches = 80, kPerBatch = 50;
  std::mt19937 rng(20240611);
  int compared = 0, transcendental_exprs = 0, transcendental_mismatches = 0, vector_batches = 0;
  int64_t max_ulps = 0;
  double compile_ms = 0;
  for (int batch = 0; batch < kBatches; ++batch) {
    BoundaryKind kinds[3];
    for (auto& k : kinds) k = static_cast<BoundaryKind>(rng() % 3);
    std::vector<InputDecl> inputs = {make_input("img", Float32(), {"x", "y"}, kinds[0], 0.25),
                                     make_input("a", UInt8(), {"x"}, kinds[1], 9),
                                     make_input("one", UInt16(), {"x"}, kinds[2], 77)};
    std::vector<ParamDecl> params = {{"p", Float32(), 1.75}, {"k", Int32(), -3}};
    InputImages images;
    images["img"] = random_buffer(ScalarType::Float32, {5, 4}, -4, 4, rng());
    images["a"] = random_buffer(ScalarType::UInt8, {3}, 0, 255.99, rng());
    images["one"] = random_buffer(ScalarType::UInt16, {1}, 0, 65535.99, rng());
    ParamValues param_values = {{"p", 1.75}, {"k", -3}};

    LoweredFunction f;
    f.name = "batch";
    f.inputs = inputs;
    f.params = params;
    std::vector<Expr> exprs;
    std::vector<bool> uses_libm;
    std::vector<Stmt> stores;
    for (int i = 0; i < kPerBatch; ++i) {
      ExprGen g(static_cast<uint32_t>(rng()));
      Type t = kNumeric[rng() % 5];
      Expr e = g.gen(t, 4);
      std::string name = "out" + std::to_string(i);
      exprs.push_back(e);
      uses_libm.push_back(g.transcendental);
      f.buffers.push_back(ExternalBuffer{name, t, 2});
      stores.push_back(Provide::make(name, e, {var("x"), var("y")}));
    }
    // One loop nest per expression, so that one expression the vectoriser declines (a
    // median) leaves the others vectorised.
    std::vector<Stmt> nests;
    for (const Stmt& store : stores) nests.push_back(loop_nest(batch % 4, store));
    f.body = Block::make(nests);
    if (batch % 4 != 0) {
      // The vector loops really are vector code: count the nests whose lanes were emitted.
      const std::string lanes = batch % 4 == 1 ? "<7 x" : batch % 4 == 2 ? "<4 x" : "<5 x";
      const std::string ir = jit->llvm_ir(f, false);
      size_t n = 0;
      for (size_t at = ir.find(lanes); at != std::string::npos; at = ir.find(lanes, at + 1)) ++n;
      EXPECT_GT(n, 0u) << "batch " << batch << " has no " << lanes << " vectors";
      vector_batches += n > 0;
    }
    auto fn = jit->compile(f);
    compile_ms += fn->stats().total_ms;

    std::vector<Buffer> outs;
    std::vector<BufferDescriptor> descs;
    for (const InputDecl& in : inputs) descs.push_back(codegen::describe(images.at(in.name)));
    for (const ExternalBuffer& b : f.buffers) {
      outs.emplace_back(b.type.code, std::vector<int64_t>{kMinX, kMinY},
                        std::vector<int64_t>{kWidth, kHeight});
    }
    for (Buffer& b : outs) descs.push_back(codegen::describe(b));
    const double param_array[] = {1.75, -3};
    ASSERT_EQ((*fn)(descs.data(), param_array), 0);

    for (int i = 0; i < kPerBatch; ++i) {
      Pipeline p = make_pipeline(inputs, {make_func("out", {"x", "y"}, exprs[i])}, "out",
                                 {i32(kWidth), i32(kHeight)}, params);
      Buffer ref =
          evaluate_pipeline_region(p, images, param_values, {kMinX, kMinY}, {kWidth, kHeight});
      ++compared;
      if (uses_libm[i]) ++transcendental_exprs;
      ScalarType t = exprs[i].type().code;
      for (int64_t k = 0; k < ref.element_count(); ++k) {
        if (same_value(t, ref, outs[i], k)) continue;
        if (uses_libm[i]) {
          ++transcendental_mismatches;
          if (Type(t).is_float()) {
            max_ulps = std::max(max_ulps, ulps(t, ref.get_flat(k), outs[i].get_flat(k)));
          }
          continue;
        }
        ADD_FAILURE() << "batch " << batch << " expression " << i << " point " << k
                      << ": evaluator " << ref.get_flat(k) << ", jit " << outs[i].get_flat(k)
                      << "\n"
                      << nests[i];
        break;
      }
    }
  }
  std::printf(
      "compared %d expressions (%d with exp/log/pow/sin/cos) at %d points each; %d points of "
      "libm expressions differ, max %lld ulps; mean compile %.1f ms per %d-expression batch\n",
      compared, transcendental_exprs, kWidth * kHeight, transcendental_mismatches,
      static_cast<long long>(max_ulps), compile_ms / kBatches, kPerBatch);
  EXPECT_EQ(compared, kBatches * kPerBatch);
  EXPECT_EQ(vector_batches, kBatches * 3 / 4);
}

}  // namespace
}  // namespace stipple
