// Every f32 input of `exp` (label `slow`: 2^32 inputs, both cores):
// - vector generated code gives stipple::exp_f32's bits, which the evaluator computes
//   (the random-input test in vector_test.cpp cannot see a difference on a few inputs);
// - exp_f32 is within 1 ulp of the correctly rounded e^x wherever that is a finite
//   nonzero float, and +inf or +0 exactly where e^x rounds to them (up to one ulp at
//   the two edges). The reference is the C library's double exp, accurate to well
//   under 2^-29 of an f32 ulp.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/runtime/exp_f32.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple {
namespace {

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// |got - exact| in units of the f32 spacing at `exact` (denormal spacing below 2^-126).
double ulp_error(float got, double exact) {
  int e = std::ilogb(exact);
  double ulp = std::ldexp(1.0, std::max(e, -126) - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

struct Tally {
  int64_t bit_differences = 0;
  double max_ulp = 0;
  int64_t wrong_special = 0;
};

TEST(VectorExpExhaustive, EveryFloatMatchesExpF32AndIsWithinOneUlp) {
  Pipeline p = compile_pipeline(
      "pipeline e\ninput in : f32[x]\nfunc out(x) = exp(in(x))\noutput out\n", "e.stp");
  LoweredFunction f = lower(p, compile_schedule("out.vectorize(x, 16)", "e.sched", p));
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  constexpr int64_t kChunk = int64_t{1} << 24;
  Buffer in(ScalarType::Float32, {kChunk});
  Buffer out(ScalarType::Float32, {kChunk});
  Tally total;
  for (uint64_t start = 0; start < (uint64_t{1} << 32); start += kChunk) {
    auto* src = in.data_as<float>();
    for (int64_t i = 0; i < kChunk; ++i) {
      src[i] = from_bits(static_cast<uint32_t>(start + static_cast<uint64_t>(i)));
    }
    codegen::BufferDescriptor d[2] = {codegen::describe(in), codegen::describe(out)};
    ASSERT_EQ((*fn)(d, nullptr), 0);
    const auto* got = out.data_as<float>();
    // Checked on two threads (the double exp is most of the time).
    Tally part[2];
    auto check = [&](int t) {
      Tally& r = part[t];
      for (int64_t i = t; i < kChunk; i += 2) {
        const float x = src[i], v = got[i], want = exp_f32(x);
        if (std::isnan(x)) {
          if (!std::isnan(v) || !std::isnan(want)) ++r.wrong_special;
          continue;
        }
        if (std::memcmp(&want, &v, sizeof v) != 0) ++r.bit_differences;
        if (std::fabs(x) > 104.0f) {  // e^104 overflows, e^-104 rounds to 0 (no exp needed)
          if (want != (x > 0 ? HUGE_VALF : 0.0f)) ++r.wrong_special;
          continue;
        }
        if (std::fabs(x) < 0x1p-26f) {  // e^x = 1 + x + ... rounds to 1
          if (want != 1.0f) ++r.wrong_special;
          continue;
        }
        const double exact = std::exp(static_cast<double>(x));
        const float rounded = static_cast<float>(exact);
        if (std::isinf(rounded) || rounded == 0.0f || std::isinf(want) || want == 0.0f) {
          // At the edges: +inf for +inf, 0 for 0, or one step from the right float.
          float below = std::nextafter(rounded, 0.0f), above = std::nextafter(rounded, HUGE_VALF);
          if (!(want == rounded || want == below || want == above)) ++r.wrong_special;
          continue;
        }
        r.max_ulp = std::max(r.max_ulp, ulp_error(want, exact));
      }
    };
    std::thread other(check, 1);
    check(0);
    other.join();
    for (const Tally& r : part) {
      total.bit_differences += r.bit_differences;
      total.wrong_special += r.wrong_special;
      total.max_ulp = std::max(total.max_ulp, r.max_ulp);
    }
  }
  EXPECT_EQ(total.bit_differences, 0) << "vector code and exp_f32 differ";
  EXPECT_EQ(total.wrong_special, 0) << "NaN, overflow or underflow handled wrongly";
  EXPECT_LE(total.max_ulp, 1.0);
  std::printf("exp_f32: max error %.4f ulp over every finite f32 with a nonzero finite result\n",
              total.max_ulp);
}

}  // namespace
}  // namespace stipple
