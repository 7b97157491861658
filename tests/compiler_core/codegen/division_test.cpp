// Division by a function-invariant divisor (codegen_division.cpp): `x / p` and `x % p`
// with p a param become a multiply and shifts by numbers computed once per call. The
// multiplier is exact only by the argument in that file's header, so every divisor class
// is run here, scalar and vectorised, against floor division and Euclidean modulo computed
// in 64 bits in this test (and, for a few, the reference evaluator): 0, +-1, powers of two
// and their neighbours, the i32 extremes, random divisors, on dividends that include the
// extremes and the multiples of the divisor and their neighbours.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "tests/compiler_core/codegen/jit_vs_evaluator.h"

namespace stipple {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

/// ir.h's integer `/` (floor; x / 0 == 0; INT_MIN / -1 wraps) and `%` (Euclidean;
/// x % 0 == 0), computed in 64 bits.
int32_t floor_div(int32_t x, int32_t d) {
  if (d == 0) return 0;
  int64_t q = int64_t{x} / d;
  if (int64_t{x} % d != 0 && ((x < 0) != (d < 0))) --q;
  return static_cast<int32_t>(static_cast<uint32_t>(q));  // wraps 2^31 to INT_MIN
}
int32_t euclid_mod(int32_t x, int32_t d) {
  if (d == 0) return 0;
  const int64_t a = d < 0 ? -int64_t{d} : d;
  const int64_t r = int64_t{x} % a;
  return static_cast<int32_t>(r < 0 ? r + a : r);
}

std::vector<int32_t> divisors() {
  std::vector<int32_t> d = {0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 13, -13, 100, 255, 641, 1000, 65535};
  for (int k = 2; k <= 30; k += 4) {
    d.push_back(int32_t{1} << k);
    d.push_back((int32_t{1} << k) + 1);
    d.push_back(-((int32_t{1} << k) - 1));
  }
  for (int32_t e : {kMax, kMax - 1, kMin, kMin + 1, int32_t{1} << 30, (int32_t{1} << 30) + 1}) {
    d.push_back(e);
  }
  std::mt19937 rng(26);
  for (int i = 0; i < 12; ++i) d.push_back(static_cast<int32_t>(rng()));
  for (int i = 0; i < 12; ++i) d.push_back(static_cast<int32_t>(rng() % 4096) - 2048);
  return d;
}

/// Dividends for divisor d: the extremes, small values, multiples of d and their neighbours
/// (where a multiplier off by one shows first), and random values.
std::vector<int32_t> dividends(int32_t d, std::mt19937& rng) {
  std::vector<int32_t> v = {kMin, kMin + 1, kMin + 2, -2, -1, 0, 1, 2, kMax - 1, kMax};
  const int64_t a = d < 0 ? -int64_t{d} : (d == 0 ? 1 : d);
  for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{3}, (int64_t{kMax} / a) - 1, int64_t{kMax} / a,
                    int64_t{kMax} / a + 1}) {
    for (int64_t s : {int64_t{-1}, int64_t{1}}) {
      for (int64_t off : {int64_t{-1}, int64_t{0}, int64_t{1}}) {
        const int64_t x = s * k * a + off;
        if (x >= kMin && x <= kMax) v.push_back(static_cast<int32_t>(x));
      }
    }
  }
  for (int i = 0; i < 40; ++i) v.push_back(static_cast<int32_t>(rng()));
  return v;
}

TEST(InvariantDivision, EveryDivisorClassMatchesFloorDivisionAndEuclideanModulo) {
  std::mt19937 rng(7);
  for (const char* op : {"/", "%"}) {
    const std::string src = std::string("pipeline d\ninput in : i32[x]\nparam p : i32 = 1\n") +
                            "func out(x) = in(x) " + op + " p\noutput out\n";
    Pipeline pipeline = compile_pipeline(src, "d.stp");
    for (const char* sched : {"out.vectorize(x, 16)", "out.vectorize(x, 4)", ""}) {
      LoweredFunction f = lower(pipeline, compile_schedule(sched, "d.sched", pipeline));
      auto jit = codegen::JitCompiler::create();
      auto fn = jit->compile(f);
      for (int32_t d : divisors()) {
        const std::vector<int32_t> xs = dividends(d, rng);
        const int64_t n = static_cast<int64_t>(xs.size());
        Buffer in(ScalarType::Int32, {n});
        for (int64_t i = 0; i < n; ++i) in.set_flat(i, xs[static_cast<size_t>(i)]);
        Buffer out = run_lowered(*fn, f, pipeline, {{"in", in}}, {{"p", d}}, {n});
        for (int64_t i = 0; i < n; ++i) {
          const int32_t x = xs[static_cast<size_t>(i)];
          const int32_t want = *op == '/' ? floor_div(x, d) : euclid_mod(x, d);
          ASSERT_EQ(out.get_flat(i), want)
              << x << " " << op << " " << d << " under '" << sched << "'";
        }
      }
    }
  }
  // The reference evaluator agrees with the 64-bit reference above on a few of them.
  Buffer in(ScalarType::Int32, {6});
  const std::vector<int32_t> xs = {kMin, -7, -1, 0, 7, kMax};
  for (int64_t i = 0; i < 6; ++i) in.set_flat(i, xs[static_cast<size_t>(i)]);
  for (int32_t d : {-1, 3, kMin}) {
    for (const char* op : {"/", "%"}) {
      const std::string src = std::string("pipeline d\ninput in : i32[x]\nparam p : i32 = 1\n") +
                              "func out(x) = in(x) " + op + " p\noutput out\n";
      jit_test::Result r =
          jit_test::run_both(src, "out.vectorize(x, 4)", {{"in", in}}, {6}, {{"p", d}});
      jit_test::expect_same(r, std::string(op) + " " + std::to_string(d));
    }
  }
}

TEST(InvariantDivision, ADivisorOfParamsAndExtentsIsMultipliedAndOthersAreNot) {
  Buffer in(ScalarType::Int32, {37});
  for (int64_t i = 0; i < 37; ++i) in.set_flat(i, (i - 18) * 1001);
  auto ir_of = [&](const std::string& divisor, int32_t p) {
    const std::string src =
        "pipeline d\ninput in : i32[x]\nparam p : i32 = 1\nfunc out(x) = in(x) / (" + divisor +
        ") + in(x) % (" + divisor + ")\noutput out\n";
    jit_test::Result r =
        jit_test::run_both(src, "out.vectorize(x, 8)", {{"in", in}}, {37}, {{"p", p}});
    jit_test::expect_same(r, divisor);
    return r.ir;
  };
  // A param, and params with an input extent: computed once (the multiplier), and no i32
  // division is left (LLVM would divide lane by lane; the i64 divisions by constants are
  // loop partitioning's own).
  for (const char* divisor : {"p", "p * 2 + in.width"}) {
    const std::string ir = ir_of(divisor, 13);
    EXPECT_NE(ir.find("divisor.multiplier"), std::string::npos) << divisor;
    for (const char* instruction : {"sdiv i32", "sdiv <", "srem i32", "srem <"}) {
      EXPECT_EQ(ir.find(instruction), std::string::npos) << divisor << ": " << instruction;
    }
  }
  // A constant is LLVM's (it multiplies by its own magic number); a value read from memory
  // is not the same for the whole call.
  EXPECT_EQ(ir_of("7", 0).find("divisor.multiplier"), std::string::npos);
  EXPECT_EQ(ir_of("in(0) + 40000", 0).find("divisor.multiplier"), std::string::npos);
}

TEST(InvariantDivision, ParallelLoopsComputeTheirOwnMultiplier) {
  // A parallel loop's body is a function of its own (a closure): the multiplier is computed
  // in the closure's entry block from the captured param.
  const std::string src =
      "pipeline d\ninput in : i32[x, y]\nparam p : i32 = 1\n"
      "func out(x, y) = (in(x, y) + y) / p\noutput out\n";
  Buffer in(ScalarType::Int32, {40, 6});
  for (int64_t i = 0; i < 240; ++i) in.set_flat(i, (i * 7919) % 4001 - 2000);
  for (int32_t d : {3, -5, 0}) {
    jit_test::Result r = jit_test::run_both(src, "out.vectorize(x, 16).parallel(y)", {{"in", in}},
                                            {40, 6}, {{"p", d}});
    jit_test::expect_same(r, "p = " + std::to_string(d));
    EXPECT_NE(r.ir.find("divisor.multiplier"), std::string::npos);
  }
}

}  // namespace
}  // namespace stipple
