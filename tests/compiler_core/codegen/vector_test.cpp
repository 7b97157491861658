// Vector code (codegen_vector.cpp) on what the random-expression property test reaches
// only by chance: medians as sorting networks over inputs full of NaN, signed zeros and
// infinities, for every element type; dense, strided and gathered accesses; guarded
// tails of every length. Each case is compiled from .stp text under a vectorising
// schedule and compared bit for bit with the reference evaluator, and the LLVM IR is
// checked to contain the vector operations (so a silent fallback to scalar code fails).
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>

#include "compiler_core/codegen/codegen_llvm.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/codegen/target_machine.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/runtime/median_order.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "tests/compiler_core/codegen/jit_vs_evaluator.h"

namespace stipple {
namespace {

using jit_test::expect_same;
using jit_test::Result;
using jit_test::run_both;
using jit_test::same_bits;

/// A width x height image of `type` whose values come from a small set with many ties,
/// NaNs of both signs, -0, +0 and infinities (floats), or the type's extremes (integers).
Buffer nasty_image(ScalarType type, int64_t width, int64_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> pool;
  if (type == ScalarType::Float32 || type == ScalarType::Float64) {
    pool = {nan, -nan, -0.0, 0.0, inf, -inf, 1.0, -1.0, 0.5, 0.5, 2.0, -0.0, 0.0};
  } else if (type == ScalarType::UInt8) {
    pool = {0, 255, 1, 128, 127, 7, 7};
  } else if (type == ScalarType::UInt16) {
    pool = {0, 65535, 1, 32768, 32767, 300, 300};
  } else {
    pool = {-2147483648.0, 2147483647.0, -1, 0, 1, 5, 5};
  }
  Buffer b(type, {width, height});
  for (int64_t i = 0; i < b.element_count(); ++i) {
    double v = pool[rng() % pool.size()];
    if (rng() % 4 == 0 && type == ScalarType::Float32) v = static_cast<float>(rng() % 1000) / 7;
    b.set_flat(i, v);
  }
  return b;
}

TEST(MedianOrder, IsIeeeTotalOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // -NaN < -inf < -1 < -denormal < -0 < +0 < denormal < 1 < +inf < +NaN.
  const std::vector<double> ascending = {-nan, -inf,     -1.0, -4.9e-324, -0.0,
                                         0.0,  4.9e-324, 1.0,  inf,       nan};
  for (size_t i = 0; i < ascending.size(); ++i) {
    for (size_t j = 0; j < ascending.size(); ++j) {
      EXPECT_EQ(median_less(ascending[i], ascending[j]), i < j) << i << " " << j;
    }
  }
  // An f32 keeps its place among the others once converted to f64 (the evaluator's).
  EXPECT_TRUE(median_less(static_cast<double>(-std::numeric_limits<float>::quiet_NaN()),
                          static_cast<double>(-std::numeric_limits<float>::infinity())));
}

TEST(VectorMedian, EvaluatorPicksByTheTotalOrder) {
  // Two points: the lower median is the smaller in IEEE totalOrder (-0 before +0, -NaN
  // before everything, +NaN after).
  Pipeline p = compile_pipeline(
      "pipeline m\ninput in : f32[x, y]\nfunc out(x, y) = median(i in 0..1 : in(x + i, y))\n"
      "output out\n",
      "m.stp");
  Buffer in(ScalarType::Float32, {5, 1});
  in.set_flat(0, 0.0);
  in.set_flat(1, -0.0);
  in.set_flat(2, std::numeric_limits<double>::quiet_NaN());
  in.set_flat(3, -std::numeric_limits<double>::quiet_NaN());
  in.set_flat(4, -std::numeric_limits<double>::infinity());
  Buffer out = evaluate_pipeline_region(p, {{"in", in}}, {}, {0, 0}, {4, 1});
  EXPECT_TRUE(std::signbit(out.get_flat(0)));  // median(+0, -0) = -0
  EXPECT_TRUE(std::signbit(out.get_flat(1)));  // median(-0, NaN) = -0
  EXPECT_TRUE(std::isnan(out.get_flat(2)) && std::signbit(out.get_flat(2)));  // (NaN, -NaN)
  EXPECT_TRUE(std::isnan(out.get_flat(3)) && std::signbit(out.get_flat(3)));  // (-NaN, -inf)
}

TEST(VectorMedian, EveryTypeMatchesTheEvaluatorOnTiesNaNAndSignedZeros) {
  const char* types[] = {"f32", "f64", "u8", "u16", "i32"};
  const ScalarType codes[] = {ScalarType::Float32, ScalarType::Float64, ScalarType::UInt8,
                              ScalarType::UInt16, ScalarType::Int32};
  for (int k = 0; k < 5; ++k) {
    for (int lanes : {4, 8, 16}) {
      // 5x3 = 15 points (padded to a 16-input network) and 2x2 = 4 (an even count).
      for (const char* window : {"i in -2..2, j in -1..1", "i in 0..1, j in 0..1"}) {
        std::string src = std::string("pipeline m\ninput in : ") + types[k] +
                          "[x, y]\nfunc out(x, y) = median(" + window +
                          " : in(x + i, y + j))\noutput out\n";
        std::string sched = "out.vectorize(x, " + std::to_string(lanes) + ")";
        Buffer in = nasty_image(codes[k], 37, 6, 17 + k);
        Result r = run_both(src, sched, {{"in", in}}, {37, 6});
        expect_same(r, std::string(types[k]) + " " + window + " lanes " + std::to_string(lanes));
        // The network's comparators are vector min/max on keys: no scalar fallback.
        const bool is_unsigned = k == 2 || k == 3;
        EXPECT_NE(r.ir.find(is_unsigned ? "@llvm.umin.v" : "@llvm.smin.v"), std::string::npos)
            << types[k] << " median was not vectorised";
      }
    }
  }
}

/// A width x height image of ordinary values (no NaN, no zero) with, where `specials`,
/// some pixels made NaN (either sign, other payloads) and a patch of signed zeros, so
/// that some windows' float median is a zero of either sign among ties and some hold a
/// single NaN among ordinary values.
Buffer mostly_ordinary_image(ScalarType type, int64_t width, int64_t height, bool specials,
                             uint32_t seed) {
  std::mt19937 rng(seed);
  Buffer b(type, {width, height});
  for (int64_t i = 0; i < b.element_count(); ++i) {
    const double magnitude = 0.25 + static_cast<double>(rng() % 1000) / 64;
    b.set_flat(i, rng() % 2 ? magnitude : -magnitude);
  }
  if (!specials) return b;
  const bool is_f32 = type == ScalarType::Float32;
  auto nan_bits = [&](bool negative, uint64_t payload) {
    if (is_f32) {
      const uint32_t bits =
          (negative ? 0x80000000u : 0u) | 0x7fc00000u | static_cast<uint32_t>(payload & 0x3fffff);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return static_cast<double>(f);  // a quiet NaN's payload survives the widening
    }
    const uint64_t bits = (negative ? uint64_t{1} << 63 : 0) | 0x7ff8000000000000ull | payload;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  };
  for (int k = 0; k < 6; ++k) {  // lone NaNs in ordinary windows
    const int64_t x = static_cast<int64_t>(rng() % width), y = static_cast<int64_t>(rng() % height);
    b.set_flat(y * width + x, nan_bits(k % 2 == 1, 1 + k * 977));
  }
  // A patch of zeros of random sign: windows over it have a zero median, and which zero
  // totalOrder picks depends on how many are negative.
  for (int64_t y = 2; y < std::min<int64_t>(height, 9); ++y) {
    for (int64_t x = 10; x < std::min<int64_t>(width, 26); ++x) {
      b.set_flat(y * width + x, rng() % 3 == 0 ? -0.0 : 0.0);
    }
  }
  return b;
}

TEST(VectorMedian, FloatsCompareAsFloatsWhereThatIsTheTotalOrder) {
  // A float median first runs the network on the values compared as floats and takes the
  // key network only for vectors that hold a NaN or whose float median is a zero
  // (emit_vector_median). Windows of ordinary values, lone NaNs, ties of -0 and +0: the
  // evaluator's bits throughout, and the IR has both networks.
  for (const char* type : {"f32", "f64"}) {
    const ScalarType code = std::string(type) == "f32" ? ScalarType::Float32 : ScalarType::Float64;
    // The window read from the input, or from a func (as the hand schedule reads its edge
    // copy: addresses through element_pointer, reloaded by the exact path).
    const std::string src = std::string("pipeline m\ninput in : ") + type +
                            "[x, y]\nfunc edge(x, y) = in(x, y)\n"
                            "func out(x, y) = median(i in -2..2, j in -2..2 : "
                            "edge(x + i, y + j))\noutput out\n";
    for (int lanes : {8, 16}) {
      const std::string sched = std::string(lanes == 16 ? "edge.compute_root()\n" : "") +
                                "out.vectorize(x, " + std::to_string(lanes) + ")";
      for (bool specials : {false, true}) {
        for (uint32_t seed : {3u, 4u}) {
          Buffer in = mostly_ordinary_image(code, 45, 12, specials, seed);
          Result r = run_both(src, sched, {{"in", in}}, {45, 12});
          const std::string what = std::string(type) + " lanes " + std::to_string(lanes) +
                                   (specials ? " with NaN and signed zeros" : " ordinary");
          expect_same(r, what);
          EXPECT_NE(r.ir.find("median.float"), std::string::npos) << what;
          EXPECT_NE(r.ir.find("median.exact"), std::string::npos) << what;
          EXPECT_TRUE(std::regex_search(
              r.ir, std::regex("fcmp olt <" + std::to_string(lanes) + " x (float|double)>")))
              << what;
        }
      }
    }
  }
  // Only where a float compare and select is one min or max instruction (x86).
  for (const char* name : {"x86-64", "aarch64"}) {
    Pipeline p = compile_pipeline(
        "pipeline m\ninput in : f32[x, y]\nfunc out(x, y) = median(i in -1..1 : in(x + i, y))\n"
        "output out\n",
        "m.stp");
    LoweredFunction f = lower(p, compile_schedule("out.vectorize(x, 8)", "m.sched", p));
    llvm::LLVMContext ctx;
    auto tm = codegen::create_target_machine(codegen::named_target(name),
                                             codegen::TargetUse::AheadOfTime);
    std::string ir;
    llvm::raw_string_ostream os(ir);
    codegen::generate_module(f, "m", ctx, codegen::codegen_target(*tm))->print(os, nullptr);
    EXPECT_EQ(os.str().find("median.float") != std::string::npos, std::string(name) == "x86-64")
        << name;
  }
  // Integers have no float network.
  Result r = run_both(
      "pipeline m\ninput in : i32[x, y]\nfunc out(x, y) = median(i in -1..1 : in(x + i, y))\n"
      "output out\n",
      "out.vectorize(x, 8)", {{"in", nasty_image(ScalarType::Int32, 21, 3, 9)}}, {21, 3});
  expect_same(r, "i32");
  EXPECT_EQ(r.ir.find("median.float"), std::string::npos);
}

TEST(VectorMedian, ParamBoundsFallBackToTheScalarSelection) {
  std::string src =
      "pipeline m\ninput in : f32[x, y]\nparam r : i32 = 1\n"
      "func out(x, y) = median(i in -r..r : in(x + i, y))\noutput out\n";
  Buffer in = nasty_image(ScalarType::Float32, 21, 3, 5);
  Result r = run_both(src, "out.vectorize(x, 8)", {{"in", in}}, {21, 3});
  expect_same(r, "param bounds");
  EXPECT_NE(r.ir.find("stipple_median_f64"), std::string::npos);
}

TEST(VectorCast, FloatToIntegerSaturatesAndMapsNanToZeroInVectorInstructions) {
  // Float to integer conversions truncate towards zero, saturate and take NaN to 0 (the
  // evaluator's rule). Vector code clamps and converts with the plain instruction rather
  // than the saturating intrinsic, which LLVM scalarises: every integer type, from f32 and
  // f64, on values at and around each type's limits, both infinities and NaN.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values = {
      nan,          -nan,     inf,           -inf,          0.0,          -0.0,
      0.5,          -0.5,     -0.99,         1.99,          127.5,        128.0,
      -128.5,       -129.0,   255.9,         256.0,         32767.5,      32768.0,
      -32768.9,     -32769.0, 65535.9,       65536.0,       2147483520.0, 2147483647.0,
      2147483648.0, 3e9,      -2147483648.0, -2147483904.0, 4294967040.0, 4294967295.0,
      4294967296.0, 1e30,     -1e30,         7.25};
  for (const char* from : {"f32", "f64"}) {
    Buffer in(std::string(from) == "f32" ? ScalarType::Float32 : ScalarType::Float64,
              {static_cast<int64_t>(values.size()), 1});
    for (size_t i = 0; i < values.size(); ++i) in.set_flat(static_cast<int64_t>(i), values[i]);
    for (const char* to : {"i8", "i16", "i32", "u8", "u16", "u32"}) {
      const std::string src = std::string("pipeline c\ninput in : ") + from +
                              "[x, y]\nfunc out(x, y) = " + to + "(in(x, y))\noutput out\n";
      for (const char* sched : {"out.vectorize(x, 16)", "out.vectorize(x, 4)"}) {
        Result r = run_both(src, sched, {{"in", in}}, {static_cast<int64_t>(values.size()), 1});
        expect_same(r, std::string(from) + " to " + to + " under " + sched);
        EXPECT_TRUE(r.ir.find("fptosi <") != std::string::npos ||
                    r.ir.find("fptoui <") != std::string::npos)
            << "the vector conversion is the plain instruction";
        EXPECT_EQ(r.ir.find(".sat.v"), std::string::npos)
            << from << " to " << to << ": a saturating vector intrinsic is scalarised";
      }
    }
  }
}

TEST(VectorAccess, BothSidesOfAPerLaneSelectLoadWithoutMasks) {
  // A select whose condition differs between lanes runs both sides for every active lane:
  // bounds inference gives g the hull of both sides' reads, so neither side needs its
  // loads masked, and an upsampling's select(x % 2 == 0, g(x / 2), ...) keeps its window
  // loads (the guarded tail's masked copy still gathers). Values against the evaluator.
  const std::string src =
      "pipeline s\ninput in : f32[x, y]\nfunc g(x, y) = in(x, y) * 3.0 - f32(x)\n"
      "func f(x, y) = select(x % 2 == 0, g(x / 2, y), 0.25 * g((x + 1) / 2, y)"
      " + 0.75 * g(x / 2, y)) + select(x < 5, g(x + 7, y), g(x - 3, y) * 0.5)\n"
      "func out(x, y) = f(x, y)\noutput out\n";
  for (int64_t width : {8, 9, 13, 16, 40}) {
    Buffer in(ScalarType::Float32, {width + 12, 3});
    for (int64_t i = 0; i < in.element_count(); ++i) {
      in.set_flat(i, static_cast<double>((i * 29) % 97) / 8);
    }
    Result r = run_both(src, "g.compute_root()\nf.compute_root().vectorize(x, 8)", {{"in", in}},
                        {width, 3});
    expect_same(r, "width " + std::to_string(width));
    EXPECT_NE(r.ir.find("window.phase"), std::string::npos) << "width " << width;
  }
}

TEST(VectorAccess, AUniformReadUnderAMaskIsOneLoadAndTheReadsItIndexesStayDense) {
  // lut(y) is the same for every lane: under the tail's mask it is one scalar load (when
  // some lane is active), so g(x + lut(y), y) stays a dense masked load. As a gather of
  // one address per lane it made every read it indexed a gather too. The right side of
  // the && runs under the lanes that still need it, which may be none: then the read
  // must not touch memory, and the outputs show it does not.
  const std::string src =
      "pipeline u\ninput in : f32[x, y]\nfunc lut(y) = (y * 7) % 3\n"
      "func g(x, y) = in(x, y) * 2.0 - f32(x)\n"
      "func out(x, y) = select(x > 2 && g(x + clamp(lut(y), 0, 2), y) > 3.0,"
      " g(x + clamp(lut(y), 0, 2), y),"
      " f32(lut(y + 1)))\noutput out\n";
  for (int64_t width = 1; width <= 17; ++width) {
    Buffer in(ScalarType::Float32, {width + 3, 4});
    for (int64_t i = 0; i < in.element_count(); ++i) {
      in.set_flat(i, static_cast<double>((i * 29) % 97) / 8);
    }
    Result r = run_both(src, "lut.compute_root()\ng.compute_root()\nout.vectorize(x, 8)",
                        {{"in", in}}, {width, 3});
    expect_same(r, "width " + std::to_string(width));
    EXPECT_EQ(r.ir.find("masked.gather"), std::string::npos) << "width " << width;
    EXPECT_NE(r.ir.find("llvm.masked.load"), std::string::npos) << "width " << width;
  }
}

TEST(VectorAccess, DenseStridedAndGatheredReadsWithEveryTail) {
  // x + 1 is dense, 2 * x strided, x / 3 and the data-dependent read gathered; the
  // output widths cover every tail length of 8-lane vectors.
  std::string src =
      "pipeline a\ninput in : u8[x, y] mirror\ninput lut : f32[i] constant(-1)\n"
      "func f(x, y) = f32(in(x + 1, y)) + f32(in(2 * x, y)) * 0.5 + f32(in(x / 3, y - 1))\n"
      "func out(x, y) = f(x, y) + lut(i32(in(x, y)) - 100)\noutput out\n";
  Buffer lut(ScalarType::Float32, {64});
  for (int64_t i = 0; i < 64; ++i) lut.set_flat(i, 0.25 * static_cast<double>(i) - 3);
  for (int64_t width = 1; width <= 17; ++width) {
    Buffer in = nasty_image(ScalarType::UInt8, width, 4, static_cast<uint32_t>(width));
    for (const char* sched :
         {"out.vectorize(x, 8)", "f.compute_root().vectorize(x, 8)\nout.vectorize(x, 4)",
          "f.compute_at(out, y).vectorize(x, 16)\nout.vectorize(x, 8)"}) {
      Result r = run_both(src, sched, {{"in", in}, {"lut", lut}}, {width, 3});
      expect_same(r, "width " + std::to_string(width) + " under " + sched);
      EXPECT_NE(r.ir.find("masked.gather"), std::string::npos);
    }
  }
}

TEST(VectorAccess, GathersFromAFuncTakeI32OffsetsFromAUniformBase) {
  // A table t(i, c) read at a data-dependent i and a uniform c: c goes into a scalar base
  // pointer and i's offsets are i32 (one 16-lane gather), t's buffer starting at i = -7 so
  // that its min is subtracted. A gather from the input keeps i64 offsets (the caller's
  // buffers may exceed 2^31 elements).
  const std::string src =
      "pipeline g\ninput in : f32[x, y] mirror\n"
      "func t(i, c) = f32(i * 3 + c) * 0.5\n"
      "func out(x, y) = t(clamp(i32(in(x, y) * 40.0) - 12, -7, 24), y % 2)"
      " + in(i32(in(x, y) * 9.0), y)\noutput out\n";
  const std::regex narrow("getelementptr float, float\\* %[^,]+, <16 x i32>");
  const std::regex wide("getelementptr float, float\\* %[^,]+, <16 x i64>");
  for (int64_t width : {1, 13, 16, 37}) {
    Buffer in(ScalarType::Float32, {width, 3});
    for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, (i * 37 % 101) / 101.0);
    Result r = run_both(src, "t.compute_root()\nout.vectorize(x, 16)", {{"in", in}}, {width, 3});
    expect_same(r, "width " + std::to_string(width));
    EXPECT_TRUE(std::regex_search(r.ir, narrow)) << r.ir;
    EXPECT_TRUE(std::regex_search(r.ir, wide)) << "the input's gather";
  }
}

TEST(VectorAccess, GathersOfBytesAndHalvesFromAFuncReadWords) {
  // u8 and u16 tables (a camera_pipe curve) read at data-dependent indices up to their last
  // element: one i32 word gathered per lane and truncated, reading past the last element
  // into the allocation's padding, never past it (the values check the truncation, the
  // allocations' sizes the padding). Tables on the stack (small) and the heap (large).
  for (const char* type : {"u8", "u16"}) {
    for (int64_t entries : {int64_t{37}, int64_t{70000}}) {
      const std::string n = std::to_string(entries);
      const std::string src = std::string("pipeline g\ninput in : f32[x, y] mirror\n") +
                              "func t(i) = " + type + "(i * 7 + 3)\n" +
                              "func out(x, y) = f32(t(clamp(i32(in(x, y) * " + n + ".0), 0, " +
                              std::to_string(entries - 1) + ")))\noutput out\n";
      Buffer in(ScalarType::Float32, {37, 2});
      for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, (i * 37 % 101) / 100.0);
      in.set_flat(0, 1.0);  // the last entry
      Result r = run_both(src, "t.compute_root()\nout.vectorize(x, 16)", {{"in", in}}, {37, 2});
      expect_same(r, std::string(type) + " table of " + n);
      // Neither table is whole 64-byte vectors, so no host looks it up by byte permutes
      // (byte_table_test.cpp): the word gather, everywhere.
      EXPECT_EQ(r.ir.find("@llvm.x86.avx512.vpermi2var.qi.512"), std::string::npos)
          << type << " " << n;
      EXPECT_NE(r.ir.find("call <16 x i32> @llvm.masked.gather.v16i32"), std::string::npos)
          << type << " " << n;
      // The room past the last element (4 bytes: 4 u8 or 2 u16 elements), which the values
      // cannot show: a word read past an allocation's end reads whatever lies there.
      const int64_t bytes = std::string(type) == "u8" ? 1 : 2;
      const int64_t room = 4 / bytes;
      const std::string allocation =
          entries == 37
              ? "alloca i" + std::to_string(8 * bytes) + ", i32 " + std::to_string(entries + room)
              : "@stipple_malloc(i64 " + std::to_string((entries + room) * bytes) + ")";
      EXPECT_NE(r.ir.find(allocation), std::string::npos) << allocation << "\n" << r.ir;
    }
  }
}

TEST(Allocation, AFuncOf2To31ElementsOrMoreFailsAsOutOfMemoryBeforeAllocating) {
  // f's region is 65537 x 32769 elements, just over kMaxAllocationElements (its offsets
  // would not fit in i32): the call fails as out of memory, without allocating 2 GiB.
  static_assert(codegen::kMaxAllocationElements == int64_t{1} << 31);
  Pipeline p = compile_pipeline(
      "pipeline big\ninput in : u8[x, y]\nfunc f(x, y) = in(x, y)\n"
      "func out(x, y) = f32(f(x * 65536, y * 32768))\noutput out\n",
      "big.stp");
  LoweredFunction f = lower(p, compile_schedule("f.compute_root()", "big.sched", p));
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  Buffer in(ScalarType::UInt8, {4, 4});
  EXPECT_THROW(run_lowered(*fn, f, p, {{"in", in}}, {}, {2, 2}), std::bad_alloc);
}

TEST(VectorAccess, StridedRowsAreOneLoadAndAShuffleAtEveryEdge) {
  // Reads of an input and of a func buffer at s * x (a grid-perforated stage reading its
  // producer) for strides 2 to 8: inside the image one masked load of the span and a
  // shuffle, per-lane boundary handling across its edges, and in a versioned reduction
  // (x * 4 - i) unchecked. Widths put vectors inside, across and past each edge.
  for (const char* boundary : {"", " mirror", " constant(-3)"}) {
    std::string src = std::string("pipeline s\ninput in : f32[x, y]") + boundary +
                      "\nfunc g(x, y) = in(x, y) * 2.0 + 1.0\n"
                      "func f(x, y) = in(2 * x, y) + in(3 * x + 1, y) * 0.5 + in(8 * x - 5, y) + "
                      "g(4 * x + 2, y) * 0.25 + sum(i in -3..3 : in(x * 4 - i, y))\n"
                      "func out(x, y) = f(x, y)\noutput out\n";
    for (int64_t width : {1, 5, 9, 17, 40}) {
      Buffer in(ScalarType::Float32, {8 * width + 8, 3});
      for (int64_t i = 0; i < in.element_count(); ++i) {
        in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
      }
      for (const char* sched :
           {"out.vectorize(x, 8)", "g.compute_root()\nf.compute_root().vectorize(x, 16)",
            "g.compute_root().vectorize(x, 4)\nout.vectorize(x, 4)"}) {
        Result r = run_both(src, sched, {{"in", in}}, {width, 3});
        expect_same(r, std::string("boundary '") + boundary + "' width " + std::to_string(width) +
                           " under " + sched);
        EXPECT_NE(r.ir.find("strided.row"), std::string::npos) << sched;
      }
    }
  }
}

TEST(VectorAccess, WideAndMaskedStridedRowsAreShufflesNotGathers) {
  // A func read at s * x - i by vectors of 32 and 64 lanes (spans of up to 511 elements,
  // loaded in pieces) and in the tail vectors of widths that are not a multiple of the
  // lanes (loads under the lanes' mask): shuffles of row loads, never a gather, and the
  // evaluator's values, the tail's inactive lanes included (nothing is stored past it).
  const std::string src =
      "pipeline s\ninput in : f32[x, y]\nfunc g(x, y) = in(x, y) * 2.0 + 1.0\n"
      "func f(x, y) = g(8 * x + 3, y) + sum(i in -3..3 : g(x * 4 - i + 3, y) * f32(i + 5))\n"
      "func out(x, y) = f(x, y)\noutput out\n";
  for (int64_t width : {1, 17, 40, 64, 100}) {
    Buffer in(ScalarType::Float32, {8 * width + 8, 3});
    for (int64_t i = 0; i < in.element_count(); ++i) {
      in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
    }
    for (int lanes : {32, 64}) {
      const std::string sched =
          "g.compute_root()\nf.compute_root().vectorize(x, " + std::to_string(lanes) + ")";
      Result r = run_both(src, sched, {{"in", in}}, {width, 3});
      expect_same(r, "width " + std::to_string(width) + " under " + sched);
      EXPECT_NE(r.ir.find("strided.row"), std::string::npos) << sched;
      EXPECT_EQ(r.ir.find("@llvm.masked.gather"), std::string::npos) << sched;
    }
  }
}

TEST(VectorAccess, MirroredLanesFarOutsideTheImageMatchTheEvaluator) {
  // Lanes past the left or right edge reflect with a Euclidean remainder by the period,
  // which vector code takes from a division in double (no vector srem: one idiv per lane).
  // Offsets up to the i32 range's ends, on images whose periods (2 * (width - 1)) range
  // from 1 to 5998, so that a quotient off by one anywhere would show.
  const std::vector<int64_t> offsets = {0,         1,          -1,          7,
                                        -13,       65537,      -1000003,    123456789,
                                        -98765431, 2147480000, -2147480000, 2147483000 - 999};
  for (int64_t width : {1, 2, 3, 17, 1000, 3000}) {
    Buffer in = nasty_image(ScalarType::Float32, width, 2, static_cast<uint32_t>(width));
    for (int64_t offset : offsets) {
      std::string off = std::to_string(offset);
      std::string src = "pipeline m\ninput in : f32[x, y] mirror\nfunc out(x, y) = in(x + " + off +
                        ", y) + in(x - (" + off + "), y) * 0.5\noutput out\n";
      for (const char* sched : {"out.vectorize(x, 8)", "out.vectorize(x, 16)"}) {
        Result r = run_both(src, sched, {{"in", in}}, {std::min<int64_t>(width, 40), 2});
        expect_same(r, "width " + std::to_string(width) + " offset " + off + " under " + sched);
        EXPECT_EQ(r.ir.find("srem <"), std::string::npos) << sched;
      }
    }
  }
}

TEST(VectorAccess, RowsOutsideTheImageAreTheBoundaryRowUnderEveryBoundary) {
  // A row read whose row or channel lies outside the image loads the row a clamp boundary
  // maps it to, or gives a constant boundary's constant, on the plain-load path (a mirror
  // boundary's rows are checked per vector); only a span crossing the left or right edge
  // takes the per-lane path. Offsets up to 7 rows and 2 channels out, on images of 1, 2
  // and 5 rows, so that vectors inside the width read rows above, below and far past the
  // image, for a float and an integer type.
  for (const char* type : {"f32", "u16"}) {
    for (const char* boundary : {"", " mirror", " constant(7)"}) {
      std::string src = std::string("pipeline r\ninput in : ") + type + "[x, y, c]" + boundary +
                        "\nfunc out(x, y, c) = f32(in(x, y - 2, c)) + f32(in(x + 1, y + 3, c)) * "
                        "0.5 + f32(in(x - 1, y, c + 1)) * 0.25 + f32(in(x, y - 7, c - 2))\n"
                        "output out\n";
      for (int64_t height : {1, 2, 5}) {
        for (int64_t width : {3, 16, 37}) {
          Buffer in(std::string(type) == "f32" ? ScalarType::Float32 : ScalarType::UInt16,
                    {width, height, 2});
          for (int64_t i = 0; i < in.element_count(); ++i) {
            in.set_flat(i, static_cast<double>((i * 29) % 97));
          }
          for (const char* sched :
               {"out.vectorize(x, 8)", "out.vectorize(x, 16)",
                "out.split(y, yo, yi, 2).reorder(x, c, yi, yo).vectorize(x, 4)"}) {
            Result r = run_both(src, sched, {{"in", in}}, {width, height, 2});
            expect_same(r, std::string(type) + " boundary '" + boundary + "' " +
                               std::to_string(width) + "x" + std::to_string(height) + " under " +
                               sched);
            // Under a clamp the rows are mapped, not checked: no unsigned compare of a
            // coordinate against an extent (row_inside's check) is left in the IR.
            if (std::string(boundary).empty()) {
              EXPECT_EQ(r.ir.find("icmp ult"), std::string::npos) << sched << "\n" << r.ir;
            }
          }
        }
      }
    }
  }
}

TEST(VectorAccess, ReadsAtXOverSAreAWindowAndAShuffleAtEveryPhase) {
  // Reads of a func buffer at x / s + k (grid samples read by a dense stage, an
  // upsampling): a masked load of the elements the lanes cover and a shuffle, one per
  // phase of lane 0's x modulo s (the splits below start vectors at every phase), for
  // powers of two and others, negative coordinates included. Full vectors gather nothing:
  // the only gathers left are in the masked copies of guarded tails.
  std::string src =
      "pipeline w\ninput in : f32[x, y]\nfunc g(x, y) = in(x, y) * 3.0 + f32(x)\n"
      "func out(x, y) = g(x / 2, y) + g(x / 4 + 1, y) * 0.5 + g((x - 3) / 3, y) + "
      "g(x / 8 - 1, y) * 0.25 + g(x / 16, y)\noutput out\n";
  for (int64_t width : {1, 7, 16, 33, 70}) {
    Buffer in(ScalarType::Float32, {width + 8, 3});
    for (int64_t i = 0; i < in.element_count(); ++i) {
      in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
    }
    for (const char* sched :
         {"g.compute_root()\nout.vectorize(x, 16)", "g.compute_root()\nout.vectorize(x, 8)",
          "g.compute_root()\nout.split(x, xo, xi, 5).vectorize(xi, 4)"}) {
      Result r = run_both(src, sched, {{"in", in}}, {width, 3});
      expect_same(r, "width " + std::to_string(width) + " under " + sched);
      // One block per phase of each divisor: 2 + 4 + 3 + 8 + 16.
      const std::regex phase("window\\.phase[0-9]*:");
      const auto phases = std::distance(std::sregex_iterator(r.ir.begin(), r.ir.end(), phase),
                                        std::sregex_iterator());
      EXPECT_GE(phases, 33) << sched;
    }
  }
}

TEST(VectorAccess, WindowPhasesOfPowersOfTwoKeepOnlyTheTermsThatMove) {
  // For s a power of two, a window's phase is the low bits of lane 0's numerator with the
  // terms that are multiples of s dropped (the loop's x.outer * 16, and 4 * y here), so
  // it no longer changes in the loop: no srem is emitted (the divisor 3 of
  // ReadsAtXOverSAreAWindowAndAShuffleAtEveryPhase keeps its own). Values at every phase
  // (the split by 5 starts vectors at every phase), with terms that stay (3 * y) and
  // negative numerators.
  const std::string src =
      "pipeline p\ninput in : f32[x, y]\nfunc g(x, y) = in(x, y) * 3.0 + f32(x)\n"
      "func out(x, y) = g(x / 2, y) + g((x + 1) / 2, y) * 0.5 + g((x + 4 * y + 1) / 4 - y, y) "
      "+ g((x + 3 * y - 5) / 8 + 1, y) * 0.25\noutput out\n";
  for (int64_t width : {7, 33, 70}) {
    Buffer in(ScalarType::Float32, {width + 8, 4});
    for (int64_t i = 0; i < in.element_count(); ++i) {
      in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
    }
    for (const char* sched : {"g.compute_root()\nout.vectorize(x, 16)",
                              "g.compute_root()\nout.split(x, xo, xi, 5).vectorize(xi, 4)"}) {
      const std::string what = "width " + std::to_string(width) + " under " + sched;
      Result r = run_both(src, sched, {{"in", in}}, {width, 4});
      expect_same(r, what);
      EXPECT_NE(r.ir.find("window.phase"), std::string::npos) << what;
      EXPECT_FALSE(std::regex_search(r.ir, std::regex("srem i32 %[^,]+, [248]\\b"))) << what << "\n"
                                                                                     << r.ir;
    }
  }
}

TEST(VectorDivMod, PowersOfTwoMatchTheEvaluatorOnNegativeAndExtremeValues) {
  // Floor division and Euclidean modulo by 1, 2, 4 and 2^30 become a shift and a mask;
  // -7 / 2 == -4 and -7 % 2 == 1 must still hold, and the extremes must not overflow.
  std::vector<int32_t> values = {INT32_MIN, INT32_MIN + 1, -1073741825, -8, -7, -2, -1, 0, 1, 2,
                                 7,         1073741824,    INT32_MAX};
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) values.push_back(static_cast<int32_t>(rng()));
  const int64_t n = static_cast<int64_t>(values.size());
  Buffer in(ScalarType::Int32, {n});
  for (int64_t i = 0; i < n; ++i) in.set_flat(i, values[static_cast<size_t>(i)]);
  for (const char* d : {"1", "2", "4", "1073741824"}) {
    for (const char* op : {"/", "%"}) {
      std::string src = std::string("pipeline d\ninput in : i32[x]\nfunc out(x) = in(x) ") + op +
                        " " + d + "\noutput out\n";
      for (const char* sched : {"out.vectorize(x, 16)", "out.vectorize(x, 4)", ""}) {
        Result r = run_both(src, sched, {{"in", in}}, {n});
        expect_same(r, std::string("in ") + op + " " + d + " under '" + sched + "'");
      }
    }
  }
  // The evaluator's own values, independently: -7 / 2 == -4, -7 % 2 == 1.
  Buffer seven(ScalarType::Int32, {1});
  seven.set_flat(0, -7);
  for (auto [op, want] : {std::pair{"/", -4}, std::pair{"%", 1}}) {
    std::string src = std::string("pipeline d\ninput in : i32[x]\nfunc out(x) = in(x) ") + op +
                      " 2\noutput out\n";
    Result r = run_both(src, "out.vectorize(x, 4)", {{"in", seven}}, {1});
    EXPECT_EQ(r.jit.get_flat(0), want) << op;
    EXPECT_EQ(r.reference.get_flat(0), want) << op;
  }
}

TEST(StreamingStores, LargeOutputsAreWrittenCompletelyWithAndWithoutAlignedRows) {
  // Outputs above kStreamingStoreBytes take non-temporal stores where a vector covers
  // whole aligned cache lines. 4352 columns keep every row 64-byte aligned; 4353 leave
  // most rows misaligned, so both kinds of store run. Every element is checked against
  // the formula, computed here (the evaluator would take minutes at this size).
  for (int64_t width : {int64_t{4352}, int64_t{4353}}) {
    const int64_t height = codegen::kStreamingStoreBytes / 4 / width + 2;
    Pipeline p = compile_pipeline(
        "pipeline s\ninput in : f32[x, y]\nfunc out(x, y) = in(x, y) * 2 + 1\noutput out\n",
        "s.stp");
    Buffer in(ScalarType::Float32, {width, height});
    float* src = in.data_as<float>();
    for (int64_t i = 0; i < width * height; ++i) src[i] = static_cast<float>(i % 1021) * 0.25f;
    for (const char* sched : {"out.vectorize(x, 16)", "out.vectorize(x, 64).parallel(y)"}) {
      LoweredFunction f = lower(p, compile_schedule(sched, "s.sched", p));
      auto jit = codegen::JitCompiler::create();
      auto fn = jit->compile(f);
      const std::string ir = jit->llvm_ir(f, false);
      EXPECT_NE(ir.find("!nontemporal"), std::string::npos) << sched;
      // Taken at run time only above the threshold, and fenced before returning.
      EXPECT_NE(ir.find(std::to_string(codegen::kStreamingStoreBytes)), std::string::npos);
      EXPECT_NE(ir.find("fence seq_cst"), std::string::npos) << sched;
      Buffer out = run_lowered(*fn, f, p, {{"in", in}}, {}, {width, height});
      const float* got = out.data_as<float>();
      int64_t wrong = 0;
      for (int64_t i = 0; i < width * height; ++i) {
        if (got[i] != src[i] * 2.0f + 1.0f && ++wrong <= 3) {
          ADD_FAILURE() << sched << " width " << width << ": element " << i << " is " << got[i];
        }
      }
      EXPECT_EQ(wrong, 0);
    }
  }
  // Vectors narrower than a cache line never stream: no such store and no fence to pay.
  Pipeline p = compile_pipeline(
      "pipeline s\ninput in : f32[x, y]\nfunc out(x, y) = in(x, y) * 2\noutput out\n", "s.stp");
  LoweredFunction f = lower(p, compile_schedule("out.vectorize(x, 4)", "s.sched", p));
  const std::string ir = codegen::JitCompiler::create()->llvm_ir(f, false);
  EXPECT_EQ(ir.find("!nontemporal"), std::string::npos);
  EXPECT_EQ(ir.find("fence"), std::string::npos);
}

TEST(VectorReduction, VersionedInputRowsMatchTheEvaluatorAtEveryEdge) {
  // Sums whose input reads are affine in the reduction variables get a copy with unchecked
  // row loads, taken when every corner of the domain reads inside the image
  // (codegen_input_rows.cpp). Widths and heights around the vector width put vectors inside,
  // across and outside each edge, for every boundary kind, with a scaled variable (2 * i), a
  // param bound, a read that is not affine (i * i, checked per read) and a nested reduction.
  // g, computed inside the loop over vectors, puts a loop in its body, so that loop is not
  // partitioned (codegen_loop_partition.cpp), which would leave these reads unversioned.
  for (const char* boundary : {"", " mirror", " constant(-3)"}) {
    std::string src = std::string("pipeline r\ninput in : f32[x, y]") + boundary +
                      "\nparam h : i32 = 2\nfunc g(x, y) = in(x, y) + 1\n"
                      "func out(x, y) = sum(i in -h..h, j in -1..1 : in(x - 2 * i, y + j) * "
                      "f32(i + 3) + in(x + i * i, y)) + maximum(k in 0..2 : in(x + k, y - k) + "
                      "sum(m in 0..1 : in(x - m, y + k))) + g(x, y)\noutput out\n";
    for (int64_t width : {3, 8, 13, 30}) {
      Buffer in = nasty_image(ScalarType::Float32, width, 5, static_cast<uint32_t>(width));
      for (int64_t i = 0; i < in.element_count(); ++i) {
        in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);  // finite: sums stay exact
      }
      for (const char* sched :
           {"g.compute_at(out, x)\nout.vectorize(x, 8)",
            "g.compute_at(out, xi)\nout.split(x, xo, xi, 16).vectorize(xi, 4)"}) {
        Result r = run_both(src, sched, {{"in", in}}, {width, 5});
        expect_same(r, std::string("boundary '") + boundary + "' width " + std::to_string(width) +
                           " under " + sched);
        EXPECT_NE(r.ir.find("rows.inside"), std::string::npos) << "no versioned copy";
      }
    }
  }
}

TEST(VectorReduction, ReadsThroughAnInlinedFuncWithAffineArgumentsAreVersioned) {
  // edge(x - 2 * i, y + j) inlined: its arguments are substituted, not bound by Lets, so
  // the input read stays visibly affine in i and j and the reduction gets a copy with
  // plain row loads (with Lets it had only per-read checks: a 17-tap blur 1.5x slower).
  // That copy is now the interior of the partitioned loop over vectors, whose analysis also
  // looks through Lets (codegen_loop_partition.cpp).
  std::string src =
      "pipeline r\ninput in : f32[x, y]\nfunc edge(x, y) = in(x, y) * 2\n"
      "func out(x, y) = sum(i in -2..2, j in -1..1 : edge(x - 2 * i, y + j))\noutput out\n";
  Buffer in(ScalarType::Float32, {40, 6});
  for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, static_cast<double>(i % 13));
  Result r = run_both(src, "out.vectorize(x, 8)", {{"in", in}}, {40, 6});
  expect_same(r, "inlined edge");
  EXPECT_NE(r.ir.find(".interior"), std::string::npos) << "no partitioned loop";
  Pipeline p = compile_pipeline(src, "r.stp");
  const std::string nest = lowered_text(p, compile_schedule("", "r.sched", p));
  EXPECT_EQ(nest.find("let edge."), std::string::npos) << nest;
}

TEST(InputPrefetch, RowReadsPrefetchTheNextRowAndWindowTapsDoNot) {
  // A vector read of an input row also prefetches the same columns one row below
  // (prefetch_next_row); taps inside a reduction do not. On the last row that address is
  // past the image: a prefetch must not fault, and the values stay the evaluator's.
  const std::string direct =
      "pipeline d\ninput in : f32[x, y]\nfunc out(x, y) = in(x, y) * 2.0 + in(x + 1, y)\n"
      "output out\n";
  const std::string window =
      "pipeline w\ninput in : f32[x, y]\nfunc out(x, y) = sum(i in -1..1 : in(x + i, y))\n"
      "output out\n";
  for (int64_t height : {1, 2, 5}) {
    Buffer in(ScalarType::Float32, {37, height});
    for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, static_cast<double>(i % 11));
    Result d = run_both(direct, "out.vectorize(x, 8)", {{"in", in}}, {37, height});
    expect_same(d, "direct reads, height " + std::to_string(height));
    EXPECT_NE(d.ir.find("llvm.prefetch"), std::string::npos);
    // One prefetch per row read (on the two reads' plain-load paths, not per lane on the
    // edge paths), each of an address computed as the next row's; the loop over vectors is
    // partitioned (codegen_loop_partition.cpp), so its body and both reads are there twice.
    const auto count = [&](const std::regex& re) {
      return std::distance(std::sregex_iterator(d.ir.begin(), d.ir.end(), re),
                           std::sregex_iterator());
    };
    EXPECT_NE(d.ir.find(".interior"), std::string::npos);
    EXPECT_EQ(count(std::regex("call void @llvm\\.prefetch")), 4) << d.ir;
    EXPECT_EQ(count(std::regex("%next\\.row[0-9]* = getelementptr")), 4) << d.ir;
    Result w = run_both(window, "out.vectorize(x, 8)", {{"in", in}}, {37, height});
    expect_same(w, "window taps, height " + std::to_string(height));
    EXPECT_EQ(w.ir.find("llvm.prefetch"), std::string::npos);
  }
}

TEST(InputPrefetch, UpsamplingWindowsPrefetchTheNextRowOfTheirLevel) {
  // A window load (g(x / 2, y / 2), an upsampling's read of its coarse level) prefetches
  // the same columns one row below, as an input row read does: the level was computed at
  // root, so its rows come from memory (interpolate 0.83x at one thread). g is computed by
  // scalar code, which prefetches nothing, so every prefetch is a window's: at least one
  // per window load (two) for the upsampling, none for taps inside a reduction (mostly
  // cached). On g's last row the address is past its allocation: a prefetch must not
  // fault, and the values stay the evaluator's.
  const std::string g = "input in : f32[x, y]\nfunc g(x, y) = in(x, y) * 3.0 + f32(x)\n";
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"pipeline u\n" + g +
           "func out(x, y) = g(x / 2, y / 2) + g((x + 1) / 2, (y + 1) / 2) * 0.5\noutput out\n",
       2},
      {"pipeline t\n" + g + "func out(x, y) = sum(j in 0..1 : g(x / 2, y / 2 + j))\noutput out\n",
       0}};
  const std::regex prefetch("call void @llvm\\.prefetch");
  for (int64_t height : {1, 2, 5}) {
    Buffer in(ScalarType::Float32, {40, height + 2});
    for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, static_cast<double>(i % 11));
    for (const auto& [src, least] : cases) {
      for (int lanes : {8, 16}) {
        const std::string sched =
            "g.compute_root()\nout.vectorize(x, " + std::to_string(lanes) + ")";
        const std::string what = src + sched + ", height " + std::to_string(height);
        Result r = run_both(src, sched, {{"in", in}}, {37, height});
        expect_same(r, what);
        EXPECT_NE(r.ir.find("window.phase"), std::string::npos) << what;
        const auto n = std::distance(std::sregex_iterator(r.ir.begin(), r.ir.end(), prefetch),
                                     std::sregex_iterator());
        EXPECT_TRUE(least ? n >= least : n == 0) << what << ": " << n << " prefetches";
      }
    }
  }
}

TEST(FusedReductions, SiblingsOverOneDomainShareALoopAndKeepTheirValues) {
  // Three folds over one domain (two sums sharing an exp, as the bilateral filter's, one of
  // them in an inlined func whose variable arguments are substituted, not let-bound, and a
  // maximum) run in one loop nest (codegen_reductions.cpp); the prod over another domain
  // and the sum guarded by a select run alone. Values bit for bit the evaluator's, in
  // scalar and vector code, with a param bound and edges on every side.
  std::string src =
      "pipeline f\ninput in : f32[x, y]\nparam r : i32 = 2\n"
      "func w(x, y, i, j) = exp(-(in(x, y) - in(x + i, y + j)) * (in(x, y) - in(x + i, y + j)) "
      "* 10)\n"
      "func norm(x, y) = sum(i in -r..r, j in -1..1 : w(x, y, i, j))\n"
      "func out(x, y) = sum(i in -r..r, j in -1..1 : w(x, y, i, j) * in(x + i, y + j)) / "
      "norm(x, y) + maximum(i in -r..r, j in -1..1 : "
      "in(x + i, y + j)) - prod(k in 0..1 : in(x, y + k) + 1) + select(x > 2, sum(i in -r..r, "
      "j in -1..1 : in(x + i, y)), 0.0)\noutput out\n";
  auto count = [](const std::string& ir, const std::string& label) {
    size_t n = 0;
    for (size_t at = ir.find("\n" + label); at != std::string::npos;
         at = ir.find("\n" + label, at + 1)) {
      const size_t end = ir.find(':', at);
      if (end != std::string::npos &&
          ir.find_first_not_of("0123456789", at + 1 + label.size()) == end) {
        ++n;
      }
    }
    return n;
  };
  Buffer in(ScalarType::Float32, {29, 7});
  for (int64_t i = 0; i < in.element_count(); ++i) {
    in.set_flat(i, static_cast<double>((i * 53) % 97) / 97);
  }
  for (const char* sched :
       {"", "out.vectorize(x, 8)", "out.split(x, xo, xi, 16).vectorize(xi, 16)"}) {
    Result r = run_both(src, sched, {{"in", in}}, {29, 7});
    expect_same(r, std::string("under '") + sched + "'");
    if (std::string(sched).empty()) {
      // The fused nest, the prod and the guarded sum: three, not five, in each of the two
      // copies of the partitioned x loop (codegen_loop_partition.cpp).
      EXPECT_NE(r.ir.find("out.s0.x.interior"), std::string::npos);
      EXPECT_EQ(count(r.ir, "reduce"), 6u) << "the sibling reductions were not fused";
    }
  }
}

TEST(VectorExp, MatchesTheEvaluatorOnRandomBitsAndEveryEdge) {
  // Random bit patterns (every exponent, NaNs, infinities, denormals), the edges of the
  // special cases (+-104), of overflow (ln FLT_MAX = 88.72284) and of denormal and zero
  // results (-87.33655, -103.27893, -103.97208), and dense runs near 0; 16 lanes, so a
  // vector mixes special and ordinary lanes. Scalar code (no vectorize) and vector code
  // must both give stipple::exp_f32's bits, which the evaluator computes.
  std::mt19937 rng(7);
  std::vector<float> values = {0.0f,        -0.0f,      88.0f,      -88.0f,      88.72283f,
                               88.72284f,   88.722839f, -87.33655f, -87.336548f, -103.27893f,
                               -103.97208f, -104.0f,    104.0f,     -104.00001f, 104.00001f,
                               1e-30f,      -1e-30f,    0.5f,       -0.5f};
  values.push_back(std::numeric_limits<float>::infinity());
  values.push_back(-std::numeric_limits<float>::infinity());
  values.push_back(std::numeric_limits<float>::quiet_NaN());
  values.push_back(-std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < 60000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    values.push_back(i % 2 ? f : std::ldexp(static_cast<float>(rng() % 2000000) - 1e6f, -14));
  }
  const int64_t n = static_cast<int64_t>(values.size());
  Buffer in(ScalarType::Float32, {n});
  for (int64_t i = 0; i < n; ++i) in.set_flat(i, values[static_cast<size_t>(i)]);
  std::string src = "pipeline e\ninput in : f32[x]\nfunc out(x) = exp(in(x))\noutput out\n";
  for (const char* sched : {"out.vectorize(x, 16)", "out.vectorize(x, 4)", ""}) {
    Result r = run_both(src, sched, {{"in", in}}, {n});
    expect_same(r, std::string("exp with '") + sched + "'");
    // Computed in line, not by a library call per lane or per vector.
    EXPECT_EQ(r.ir.find("stipple_libm_lanes"), std::string::npos) << sched;
    EXPECT_EQ(r.ir.find("@expf"), std::string::npos) << sched;
  }
}

}  // namespace
}  // namespace stipple
