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
#include <functional>
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

// Integer narrowing (store_as(u16), ...): accepted where the checker proves every value
// fits, refused with the range it could prove otherwise; a chain proves itself stage by
// stage (denoised reads raw's u16 values once raw is narrowed).
TEST(StorageLowering, IntegersNarrowOnlyWhereTheValuesProvablyFit) {
  Pipeline p = compile_pipeline(R"(pipeline narrow
input in : u16[x, y]
param gain : u8 = 3
func raw(x, y) = i32(in(x, y))
func denoised(x, y) = clamp(raw(x, y), 0, max(raw(x - 1, y), raw(x + 1, y)))
func diff(x, y) = raw(x, y) - raw(x + 1, y)
func small(x, y) = clamp(raw(x, y) * 3 - 7, -100, 100)
func scaled(x, y) = small(x, y) * i32(gain)
func pair(x, y) = sum(i in 0..1 : small(x + i, y))
func f(x, y) = f32(raw(x, y))
func out(x, y) = f(x, y) + f32(denoised(x, y) + diff(x, y) + scaled(x, y) + pair(x, y))
output out
)",
                                "narrow.stp");
  // small's readers see an i8, so scaled = small * gain lies in [-128 * 255, 127 * 255].
  for (const char* ok :
       {"raw.store_as(u16)", "raw.store_as(u16)\ndenoised.store_as(u16)", "small.store_as(i8)",
        "small.store_as(i8)\nscaled.store_as(i16)", "small.store_as(i8)\npair.store_as(i16)"}) {
    EXPECT_NO_THROW(compile_schedule(ok, "ok.sched", p)) << ok;
  }
  expect_refused(
      p,
      {
          {"raw.store_as(i16)", "1:5",
           "store_as(i16) needs every value of 'raw' in [-32768, 32767], but its definition "
           "is only known to lie in [0, 65535]"},
          {"raw.store_as(u8)", "1:5",
           "in [0, 255], but its definition is only known to lie "
           "in [0, 65535]"},
          // raw still i32: its loads span i32, and so may the clamp's upper bound.
          {"denoised.store_as(u16)", "1:10", "only known to lie in [-2147483648, 2147483647]"},
          {"raw.store_as(u16)\ndiff.store_as(i16)", "2:6", "only known to lie in [-65535, 65535]"},
          {"small.store_as(i8)\nscaled.store_as(u8)", "2:8",
           "only known to lie in [-32640, 32385]"},
          // The proof covers the exact sum, not one whose terms are rescaled.
          {"small.store_as(i8)\npair.store_as(i16).perforate_reduction(i, grid(2))", "2:6",
           "store_as(i16) and perforated reductions on one func ('pair') are not supported"},
          {"f.store_as(u16)", "1:3",
           "store_as(u16) narrows an integer func wider than u16; 'f' is f32"},
          {"raw.store_as(u16)\nraw.store_as(u16)", "2:5", "the storage of 'raw' is set twice"},
          {"raw.store_as(u32)", "1:14", "store_as takes the storage type"},
      });
}

// The checker's proof holds on values: random integer definitions over a u8 or i16 input
// and a u8 param; for each narrowing it accepts, the definition's values, computed exact
// (i32, not narrowed) on inputs and params at their types' extremes and at random, all
// lie in the narrow type's range, and the narrowed variant, compiled under a schedule
// that stores the func at root and vectorises, equals the exact output bit for bit.
TEST(StorageLowering, AcceptedNarrowingsNeverChangeAValueProperty) {
  std::mt19937 rng(2811);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::function<std::string(int)> expr = [&](int depth) -> std::string {
    if (depth == 0 || pick(4) == 0) {
      switch (pick(3)) {
        case 0: return "i32(in(x + " + std::to_string(pick(3) - 1) + ", y))";
        case 1: return std::to_string(pick(601) - 300);
        default: return "i32(k)";
      }
    }
    const std::string a = expr(depth - 1), b = expr(depth - 1);
    switch (pick(9)) {
      case 0: return "(" + a + " + " + b + ")";
      case 1: return "(" + a + " - " + b + ")";
      case 2: return "(" + a + " * " + b + ")";
      case 3: return "(" + a + " / " + std::to_string(pick(7) + 2) + ")";
      case 4: return "min(" + a + ", " + b + ")";
      case 5: return "max(" + a + ", " + b + ")";
      case 6:
        return "clamp(" + a + ", " + std::to_string(-pick(300)) + ", " + std::to_string(pick(300)) +
               ")";
      case 7: return "abs(" + a + ")";
      default: return "select(" + a + " < " + b + ", " + a + ", " + b + ")";
    }
  };
  const std::vector<std::pair<const char*, Type>> narrow = {
      {"i8", Int8()}, {"u8", UInt8()}, {"i16", Int16()}, {"u16", UInt16()}};
  auto jit = codegen::JitCompiler::create();
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const bool u8_input = trial % 2 == 0;
    const Type in_type = u8_input ? UInt8() : Int16();
    const std::string g = expr(3);
    const std::string src = std::string("pipeline p\ninput in : ") + (u8_input ? "u8" : "i16") +
                            "[x, y]\nparam k : u8 = 7\nfunc g(x, y) = " + g +
                            "\nfunc out(x, y) = g(x, y)\noutput out\n";
    SCOPED_TRACE(src);
    Pipeline p = compile_pipeline(src, "p.stp");
    // Inputs: the type's extremes, alternating, and random values.
    const int64_t w = 19, h = 3;
    std::vector<Buffer> inputs;
    for (int kind = 0; kind < 4; ++kind) {
      Buffer in(in_type.code, {w, h});
      for (int64_t i = 0; i < in.element_count(); ++i) {
        const double lo = in_type.min_value(), hi = in_type.max_value();
        const double v = kind == 0   ? lo
                         : kind == 1 ? hi
                         : kind == 2
                             ? ((i / 2 + i / w) % 2 ? hi : lo)
                             : std::floor(std::uniform_real_distribution<double>(lo, hi + 1)(rng));
        in.set_flat(i, std::min(v, hi));
      }
      inputs.push_back(std::move(in));
    }
    for (const auto& [name, t] : narrow) {
      const std::string text = std::string("g.store_as(") + name + ")";
      try {
        compile_schedule(text, "n.sched", p);
      } catch (const CompileError&) {
        ++refused;
        continue;
      }
      ++accepted;
      Schedule s = compile_schedule(text + ".compute_root().vectorize(x, 8)\nout.vectorize(x, 8)",
                                    "n.sched", p);
      // The variant does store g narrowed (an ignored store_as would pass the rest).
      const Pipeline rewritten = apply_perforation(p, s).pipeline;
      ASSERT_NE(rewritten.find_func("g"), nullptr);
      EXPECT_EQ(rewritten.find_func("g")->type, t) << name;
      LoweredFunction f = lower(p, s);
      auto fn = jit->compile(f);
      for (const Buffer& in : inputs) {
        for (double k : {0.0, 255.0, 7.0}) {
          Buffer exact = evaluate_pipeline(p, {{"in", in}}, {{"k", k}});
          for (int64_t i = 0; i < exact.element_count(); ++i) {
            const double v = exact.get_flat(i);
            ASSERT_TRUE(v >= t.min_value() && v <= t.max_value())
                << name << " accepted, but g = " << v << " at " << i << " (k = " << k << ")";
          }
          Buffer compiled = run_lowered(*fn, f, p, {{"in", in}}, {{"k", k}}, {w, h});
          ASSERT_EQ(std::memcmp(exact.data(), compiled.data(), exact.size_in_bytes()), 0) << name;
        }
      }
    }
  }
  // Teeth: both answers occur (a checker that refused everything would pass the loop).
  EXPECT_GT(accepted, 10);
  EXPECT_GT(refused, 10);
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
