// Precision lowering (store_as(f16), compiler_core/perforation/storage_lowering.h): the
// stored func's values are its f32 values rounded to IEEE binary16 (nearest, ties to
// even; against a conversion written here from the table of all 65536 halves), its
// readers see them widened exactly, and compiled code gives the evaluator's bits under
// schedules that store the func at root, per row and inline-vectorised; where the CPU has
// F16C the conversions are its instructions. The checker's refusals are in
// perforation_test.cpp (CheckerNamesTheArgumentAtFault).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/codegen/target_machine.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/perforation/apply_perforation.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "tests/compiler_core/perforation/schedule_errors.h"

namespace stipple::perforation {
namespace {

// The value of the half with bits h, by its definition (sign, 5-bit exponent biased by 15,
// 10-bit fraction; subnormals below exponent 1), in double.
double half_value(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
  const double magnitude =
      exponent == 0 ? std::ldexp(fraction, -24) : std::ldexp(1024 + fraction, exponent - 25);
  return sign ? -magnitude : magnitude;
}

// f rounded to the nearest half, ties to the even fraction, as bits: the nearest of the
// finite halves sorted by value, with 65536 (what the next exponent would hold) rounding to
// infinity; a NaN is 0x7e00 with its sign (the language's rule, LANGUAGE.md "Types").
uint16_t reference_half(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return sign | 0x7e00;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isinf(f) || a >= 65520.0) return sign | 0x7c00;  // 65520: halfway to 65536
  // The finite non-negative halves 0x0000..0x7bff are increasing in value.
  uint16_t lo = 0;
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    if (half_value(static_cast<uint16_t>(h + 1)) <= a) lo = static_cast<uint16_t>(h + 1);
  }
  if (lo == 0x7bff) return sign | lo;
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  const double below = a - half_value(lo), above = half_value(hi) - a;
  const uint16_t nearest = below < above ? lo : above < below ? hi : (lo & 1) ? hi : lo;
  return sign | nearest;
}

float widened(uint16_t h) {
  if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) return std::numeric_limits<float>::quiet_NaN();
  if ((h & 0x7fff) == 0x7c00)
    return (h & 0x8000) ? -std::numeric_limits<float>::infinity()
                        : std::numeric_limits<float>::infinity();
  return static_cast<float>(half_value(h));
}

constexpr const char* kProgram = R"(pipeline stored
input in : f32[x, y]
func A(x, y) = in(x, y) * 3
func out(x, y) = A(x, y) + A(x + 1, y)
output out
)";

bool same_value(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(StorageLowering, F16RoundsOnceWhereComputedAndReadersWidenExactly) {
  // The reference table search is slow: a fixed set of values, not all of f32.
  const int64_t width = 37, height = 4;
  std::mt19937 rng(28);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f / 3,
                               1e-6f,
                               -2.5e-7f,
                               3e-8f,
                               21840.0f,
                               22000,
                               70000,
                               -1e9f,
                               1e-30f,
                               0.1f,
                               1000.1f,
                               std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               5.4e-5f};
  // NaNs with payloads (one negative): a hardware narrowing keeps the payload's top bits,
  // the language makes every stored NaN 0x7e00 with its sign (codegen_f16.cpp's fix-up),
  // which the byte comparison with the evaluator below sees through the f32 sums.
  for (uint32_t bits : {0x7fc12345u, 0xffd0abcdu, 0x7f812345u}) {
    float nan;
    std::memcpy(&nan, &bits, sizeof nan);
    values.push_back(nan);
  }
  while (values.size() < static_cast<size_t>(width * height)) {
    values.push_back(std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng),
                                std::uniform_int_distribution<int>(-26, 16)(rng)));
  }
  Buffer in(ScalarType::Float32, {width, height});
  std::memcpy(in.data(), values.data(), values.size() * sizeof(float));
  // What a reader sees of A at (x, y): in(x, y) * 3 in f32, rounded to a half, widened; the
  // input is clamped at its edge (A(width, y) reads in(width - 1, y)).
  auto seen = [&](int64_t x, int64_t y) {
    const float a = values[static_cast<size_t>(y * width + std::min(x, width - 1))] * 3.0f;
    return widened(reference_half(a));
  };

  Pipeline p = compile_pipeline(kProgram, "stored.stp");
  // The host's JIT (with F16C, hardware conversions) and, on x86-64, one for the portable
  // baseline, which has no F16C: codegen_f16.cpp's integer conversions.
  std::vector<std::unique_ptr<codegen::JitCompiler>> jits;
  jits.push_back(codegen::JitCompiler::create());
#if defined(__x86_64__)
  jits.push_back(codegen::JitCompiler::create(codegen::named_target("x86-64")));
#endif
  Buffer exact = evaluate_pipeline(p, {{"in", in}});
  for (const char* text : {"A.store_as(f16)", "A.store_as(f16).compute_root()",
                           "A.store_as(f16).compute_root().vectorize(x, 8)\nout.vectorize(x, 8)",
                           "A.store_as(f16).compute_at(out, y).vectorize(x, 16)\n"
                           "out.vectorize(x, 16).parallel(y)",
                           "A.compute_inline().store_as(f16)\nout.vectorize(x, 4)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "stored.sched", p);
    Buffer evaluated = evaluate_pipeline(apply_perforation(p, s).pipeline, {{"in", in}});
    LoweredFunction f = lower(p, s);
    for (const auto& jit : jits) {
      Buffer compiled = run_lowered(*jit->compile(f), f, p, {{"in", in}}, {}, {width, height});
      int changed = 0;
      for (int64_t y = 0; y < height; ++y) {
        for (int64_t x = 0; x < width; ++x) {
          const float want = seen(x, y) + seen(x + 1, y);
          const float got = compiled.data_as<float>()[y * width + x];
          ASSERT_TRUE(same_value(got, want)) << x << "," << y << ": " << got << " want " << want;
          ASSERT_TRUE(same_value(evaluated.data_as<float>()[y * width + x], got)) << x << "," << y;
          changed += !same_value(exact.data_as<float>()[y * width + x], want);
        }
      }
      // The test has teeth: most sums differ from the f32 pipeline's.
      EXPECT_GT(changed, width * height / 2);
      EXPECT_EQ(std::memcmp(evaluated.data(), compiled.data(), compiled.size_in_bytes()), 0);
    }
  }
}

// What the checker refuses beyond perforation_test.cpp's cases: a func that is not f32,
// and one with update definitions (its updates would read and write halves), at the
// directive, with file:line:col.
TEST(StorageLowering, OnlyF32FuncsWithoutUpdatesAreStored) {
  Pipeline p = compile_pipeline(R"(pipeline kinds
input in : f32[x, y]
func n(x, y) = i32(in(x, y) * 4)
func h(x) = 0.0
h(x) = h(x) + in(x, r) for r in 0..3
func out(x, y) = f32(n(x, y)) + h(x)
output out
)",
                                "kinds.stp");
  expect_refused(
      p, {
             {"n.store_as(f16)", "1:3", "store_as(f16) stores an f32 func as f16; 'n' is i32"},
             {"h.compute_root()\nh.store_as(f16)", "2:3",
              "store_as applies to funcs without update definitions; 'h' has 1"},
         });
}

#if defined(__x86_64__)
// With F16C, the stored func's vectors convert in one instruction each way (vcvtph2ps,
// vcvtps2ph): LLVM's fpext and fptrunc of half vectors; without F16C (CodeGenTarget::
// f16_conversions false), the integer steps of codegen_f16.cpp, which have neither.
TEST(StorageLowering, F16CConvertsTheStoredFuncsVectors) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "this CPU has no F16C";
  Pipeline p = compile_pipeline(kProgram, "stored.stp");
  Schedule s = compile_schedule(
      "A.store_as(f16).compute_root().vectorize(x, 8)\nout.vectorize(x, 8)", "s.sched", p);
  const std::string ir = codegen::JitCompiler::create()->llvm_ir(lower(p, s), false);
  EXPECT_NE(ir.find("fptrunc <8 x float>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("fpext <8 x half>"), std::string::npos) << ir;
  // The portable baseline's JIT (the other half of the value test above) has no F16C.
  const std::string portable =
      codegen::JitCompiler::create(codegen::named_target("x86-64"))->llvm_ir(lower(p, s), false);
  EXPECT_EQ(portable.find("half>"), std::string::npos) << portable;
}
#endif

}  // namespace
}  // namespace stipple::perforation
