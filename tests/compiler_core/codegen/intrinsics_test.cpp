// The math intrinsics tan, atan2, hypot, tanh and fma, and `let` expressions, compiled by
// the JIT and run by the reference evaluator on random inputs (with NaNs, infinities, -0
// and large values among them), under a serial and a vectorised schedule: bit for bit,
// NaN payloads aside. The libm ones are one C library call on each side (scalar: a direct
// call; vector: stipple_libm_lanes), fma is a real fused multiply-add on both.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "tests/compiler_core/codegen/jit_vs_evaluator.h"

namespace stipple {
namespace {

using jit_test::expect_same;
using jit_test::Result;
using jit_test::run_both;

/// Random floats over many magnitudes, signs and special values.
Buffer wide_image(int64_t width, int64_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double specials[] = {nan, -nan, -0.0, 0.0, inf, -inf, 1.0, -1.0, 1e30, -1e-30, 3.0e38};
  Buffer b(ScalarType::Float32, {width, height});
  for (int64_t i = 0; i < b.element_count(); ++i) {
    double v = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                          std::uniform_int_distribution<int>(-30, 30)(rng));
    if (rng() % 8 == 0) v = specials[rng() % std::size(specials)];
    b.set_flat(i, v);
  }
  return b;
}

/// `out(x, y) = BODY` over two f32 inputs a and b (and c), in f32 or (cast) in f64.
std::string program(const std::string& body) {
  return "pipeline p\ninput a : f32[x, y]\ninput b : f32[x, y]\ninput c : f32[x, y]\n"
         "func out(x, y) = " +
         body + "\noutput out\n";
}

TEST(Intrinsics, NewIntrinsicsMatchTheEvaluatorBitForBit) {
  const std::string f32_bodies[] = {
      "tan(a(x, y))",  "atan2(a(x, y), b(x, y))",        "hypot(a(x, y), b(x, y))",
      "tanh(a(x, y))", "fma(a(x, y), b(x, y), c(x, y))", "fma(a(x, y), 3.0, 0.5)"};
  const std::map<std::string, Buffer> inputs = {
      {"a", wide_image(37, 5, 1)}, {"b", wide_image(37, 5, 2)}, {"c", wide_image(37, 5, 3)}};
  for (const std::string& body : f32_bodies) {
    // The same operation in f64: the inputs cast to f64 (an f64 output).
    std::string f64_body = body;
    for (const char* in : {"a(x, y)", "b(x, y)", "c(x, y)"}) {
      for (size_t at = f64_body.find(in); at != std::string::npos; at = f64_body.find(in, at + 9)) {
        f64_body.replace(at, 7, "f64(" + std::string(in) + ")");
      }
    }
    for (const std::string& b : {body, f64_body}) {
      for (const char* sched : {"", "out.vectorize(x, 8)"}) {
        Result r = run_both(program(b), sched, inputs, {37, 5});
        expect_same(r, b + " under '" + sched + "'");
        const std::string op = b.substr(0, b.find('('));
        if (op == "fma") {
          EXPECT_NE(r.ir.find("@llvm.fma."), std::string::npos) << b;
        } else if (*sched) {
          EXPECT_NE(r.ir.find("@stipple_libm_lanes("), std::string::npos) << b;
        } else {
          // The C library's function itself: tanf for f32, tan for f64.
          const std::string fn = "@" + op + (b == body ? "f(" : "(");
          EXPECT_NE(r.ir.find(fn), std::string::npos) << fn << " in\n" << r.ir;
        }
      }
    }
  }
}

// 1 + 2^-12 squared is 1 + 2^-11 + 2^-24, which f32 rounds to 1 + 2^-11: a * b + c with
// c = -(1 + 2^-11) is 0 when the product is rounded first, 2^-24 when fused.
TEST(Intrinsics, FmaRoundsOnceInTheJitAsInTheEvaluator) {
  Buffer one(ScalarType::Float32, {16, 1});
  for (int64_t i = 0; i < 16; ++i) one.set_flat(i, 1.0 + std::ldexp(1.0, -12));
  const std::string src =
      "pipeline p\ninput a : f32[x, y]\n"
      "func out(x, y) = fma(a(x, y), a(x, y), f32(-1.0 - 0.00048828125))\noutput out\n";
  for (const char* sched : {"", "out.vectorize(x, 8)"}) {
    Result r = run_both(src, sched, {{"a", one}}, {16, 1});
    for (int64_t i = 0; i < 16; ++i) {
      ASSERT_EQ(r.reference.get_flat(i), std::ldexp(1.0, -24)) << i;
      ASSERT_EQ(r.jit.get_flat(i), std::ldexp(1.0, -24)) << sched << " " << i;
    }
  }
  // And in f64: (1 + 2^-27)^2 = 1 + 2^-26 + 2^-54.
  const std::string src64 =
      "pipeline p\ninput a : f32[x, y]\n"
      "func out(x, y) = let v = f64(1.0) + f64(a(x, y)) in "
      "f32(fma(v, v, f64(-1.0 - 1.490116119384765625e-08)) * f64(18014398509481984.0))\n"
      "output out\n";
  Buffer tiny(ScalarType::Float32, {16, 1});
  for (int64_t i = 0; i < 16; ++i) tiny.set_flat(i, std::ldexp(1.0, -27));
  for (const char* sched : {"", "out.vectorize(x, 4)"}) {
    Result r = run_both(src64, sched, {{"a", tiny}}, {16, 1});
    for (int64_t i = 0; i < 16; ++i) {
      ASSERT_EQ(r.reference.get_flat(i), 1.0) << i;  // 2^-54 * 2^54
      ASSERT_EQ(r.jit.get_flat(i), 1.0) << sched << " " << i;
    }
  }
}

// The language's contraction (LANGUAGE.md): the same operands written as a * b + c, as a
// sum of products, and as a product named by a let, which is rounded first.
TEST(Intrinsics, ContractedProductsRoundOnceInTheJitAsInTheEvaluator) {
  const double a = 1.0 + std::ldexp(1.0, -12), c = -(1.0 + std::ldexp(1.0, -11));
  Buffer x(ScalarType::Float32, {16, 2}), w(ScalarType::Float32, {16, 2});
  for (int64_t i = 0; i < 16; ++i) {
    x.set_flat(i, 1.0);  // row 0: 1 * c
    w.set_flat(i, c);
    x.set_flat(16 + i, a);  // row 1: a * a
    w.set_flat(16 + i, a);
  }
  const struct {
    const char* value;
    double expected;
  } cases[] = {
      {"a(x, 1) * b(x, 1) - f32(1.00048828125)", std::ldexp(1.0, -24)},
      {"f32(-1.00048828125) + a(x, 1) * b(x, 1)", std::ldexp(1.0, -24)},
      {"sum(j in 0..1 : a(x, j) * b(x, j))", std::ldexp(1.0, -24)},
      {"let p = a(x, 1) * b(x, 1) in p - f32(1.00048828125)", 0.0},
  };
  for (const auto& k : cases) {
    const std::string src = "pipeline p\ninput a : f32[x, y]\ninput b : f32[x, y]\nfunc out(x) = " +
                            std::string(k.value) + "\noutput out size(16)\n";
    for (const char* sched : {"", "out.vectorize(x, 8)"}) {
      Result r = run_both(src, sched, {{"a", x}, {"b", w}}, {16});
      for (int64_t i = 0; i < 16; ++i) {
        ASSERT_EQ(r.reference.get_flat(i), k.expected) << k.value << " " << i;
        ASSERT_EQ(r.jit.get_flat(i), k.expected) << k.value << " under '" << sched << "' " << i;
      }
    }
  }
}

TEST(Intrinsics, LetsMatchTheEvaluatorBitForBit) {
  const std::map<std::string, Buffer> inputs = {
      {"a", wide_image(37, 5, 4)}, {"b", wide_image(37, 5, 5)}, {"c", wide_image(37, 5, 6)}};
  const std::string bodies[] = {
      "let t = a(x, y) * 2.0 in t * t + t",
      // Nested, f64 and bool values, and a let inside a reduction's body.
      "let s = f64(a(x, y)) in let u = s * s - f64(b(x, y)) in f32(u / (s + f64(0.5)))",
      "let big = a(x, y) > b(x, y) in select(big, a(x, y), c(x, y))",
      "sum(i in -2..2 : let w = f32(i * i) in a(x + i, y) * w)",
      // The inner reduction depends on a let of the outer one's body: not hoistable; the
      // one over b is, and is hoisted out of the let.
      "sum(j in 0..2 : let t = a(x + j, y) in sum(i in 0..3 : f32(i) * t) + "
      "sum(i in 0..1 : b(x + i, y)))",
      "(let t = a(x, y) in t * 0.5) + (let t = b(x, y) in t - 1.0)",
      // Fused sums (products) whose factors are hoistable reductions: the factor alone, and
      // both, which are hoisted apart so that the body stays a product.
      "sum(j in 0..2 : sum(i in 0..1 : b(x + i, y)) * a(x + j, y))",
      "sum(j in 0..2 : sum(i in 0..1 : b(x + i, y)) * sum(i in 0..3 : c(x + i, y)))",
      // An index through a let: a shifted read of a func realised on its own.
      "let i = x - 1 in g(i, y) + g(clamp(i + 2, 0, 36), y)",
      // Indices bounded only by the ranges of tanh ([-1, 1]) and atan2 ([-pi, pi]): the
      // lowering's and the evaluator's bounds of g come from those rules.
      "g(i32(tanh(a(x, y)) * 4.0) + 4, y) + g(i32(atan2(a(x, y), b(x, y))) + 4, y)",
  };
  for (const std::string& body : bodies) {
    std::string src = program(body);
    const bool uses_g = body.find("g(") != std::string::npos;
    if (uses_g) src.insert(src.find("func out"), "func g(x, y) = a(x, y) * b(x, y)\n");
    for (const char* sched : {"", "out.vectorize(x, 8)", "g.compute_root()\nout.vectorize(x, 4)"}) {
      if (!uses_g && std::string(sched).find("g.") != std::string::npos) continue;
      Result r = run_both(src, sched, inputs, {37, 5});
      expect_same(r, body + " under '" + sched + "'");
    }
  }
}

}  // namespace
}  // namespace stipple
