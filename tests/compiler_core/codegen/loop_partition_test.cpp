// Loop partitioning of input reads (codegen_loop_partition.cpp): a serial loop runs the
// iterations where every read it can analyse lies inside the image with those reads
// unchecked. An interior one iteration too wide reads past the edge without the boundary
// condition, which a constant boundary (a value no pixel has) or a mirror shows at once,
// so every case runs images from one pixel wide to a few vectors wide, under each boundary
// kind, scalar and vectorised, and compares bit for bit with the reference evaluator.
// Also here: the largest split factor the checker allows, whose inner loop is far wider than
// the image, so that its loop count and the partition's interval meet the 32-bit edge.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "compiler_core/schedule/schedule_loops.h"
#include "tests/compiler_core/codegen/jit_vs_evaluator.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using jit_test::expect_same;
using jit_test::Result;
using jit_test::run_both;

/// Finite values with few ties, so that sums stay exact and a wrong pixel shows.
Buffer ramp(int64_t width, int64_t height) {
  Buffer b(ScalarType::Float32, {width, height});
  for (int64_t i = 0; i < b.element_count(); ++i) {
    b.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
  }
  return b;
}

std::string source(const std::string& boundary, const std::string& body) {
  return "pipeline lp\ninput in : f32[x, y]" + boundary +
         "\nparam p : i32 = 0\nfunc out(x, y) = " + body + "\noutput out\n";
}

TEST(LoopPartition, AffineReadsMatchTheEvaluatorAtEverySizeBoundaryAndSchedule) {
  // A window (positive coefficients, reduction variables), a stride of two, reflections
  // (coefficients -1 with an extent term and -2 with a constant that puts both ends of the
  // interior inside the loop), the outer loop's variable scaled (-3 * y), a read that is
  // not affine (left checked) and a param offset.
  const std::string body =
      "sum(i in -2..2, j in -1..1 : in(x + i, y + j) * f32(i + 4)) + in(2 * x + 1, y) + "
      "in(in.width - 1 - x, y - 1) + in(20 - 2 * x, y) + in(x - 3 * y, y) + in(x * x % 7, y + 1) + "
      "in(x + p, y)";
  const char* schedules[] = {"", "out.vectorize(x, 8)", "out.split(x, xo, xi, 16).vectorize(xi, 4)",
                             "out.unroll(x, 4)"};
  for (const char* boundary : {"", " clamp", " mirror", " constant(-3)"}) {
    for (int64_t width : {1, 2, 7, 13, 33}) {
      for (int64_t height : {1, 4}) {
        Buffer in = ramp(width, height);
        for (const char* sched : schedules) {
          Result r = run_both(source(boundary, body), sched, {{"in", in}}, {width, height});
          expect_same(r, std::string("boundary '") + boundary + "' " + std::to_string(width) + "x" +
                             std::to_string(height) + " under '" + sched + "'");
        }
      }
    }
  }
}

TEST(LoopPartition, OffsetsNearTheI32LimitsMatchTheEvaluator) {
  // x + p wraps in i32 for p near INT32_MAX; p + p wraps to an offset of -2, inside the
  // image. The interior is computed in i64 from the i32 values of the invariant terms, so it
  // must be empty (or exactly right) in every case.
  const std::string body = "in(x + p, y) + in(x + p + p, y) * 2 + in(x - p, y) * 4";
  for (double p : {0.0, 3.0, -5.0, 2147483647.0, -2147483648.0, 2147483646.0, 1073741824.0}) {
    for (const char* boundary : {" mirror", " constant(-3)"}) {
      for (const char* sched : {"", "out.vectorize(x, 8)"}) {
        Buffer in = ramp(21, 3);
        Result r = run_both(source(boundary, body), sched, {{"in", in}}, {21, 3}, {{"p", p}});
        expect_same(
            r, "p " + std::to_string(p) + " boundary '" + boundary + "' under '" + sched + "'");
      }
    }
  }
}

TEST(LoopPartition, OnlyLoopsWithReadsThatMoveAffinelyAreSplit) {
  Buffer in = ramp(40, 3);
  auto split = [&](const std::string& body, const std::string& sched) {
    Result r = run_both(source(" mirror", body), sched, {{"in", in}}, {40, 3});
    expect_same(r, body + " under '" + sched + "'");
    return r.ir.find(".interior") != std::string::npos;
  };
  EXPECT_TRUE(split("sum(i in -1..1 : in(x + i, y))", ""));
  EXPECT_TRUE(split("sum(i in -1..1 : in(x + i, y))", "out.vectorize(x, 16)"));
  EXPECT_TRUE(split("in(39 - x, y)", "out.vectorize(x, 8)"));
  // Not affine in x, or not changing with it: nothing to partition on.
  EXPECT_FALSE(split("in(x * x % 7, y)", ""));
  EXPECT_FALSE(split("in(0, y) + in(3, y + 1)", ""));
  // The x loop is split; the y loop around it has no read of its own.
  Result r = run_both(source(" mirror", "in(x, y - 1)"), "", {{"in", in}}, {40, 3});
  EXPECT_NE(r.ir.find("out.s0.x.interior"), std::string::npos) << r.ir;
  EXPECT_EQ(r.ir.find("out.s0.y.interior"), std::string::npos);
}

TEST(LoopPartition, TheInteriorDropsTheSplitTailGuard) {
  // out.vectorize(x, 8) guards its body with x <= x.max (the last vector may be partial);
  // its only masked access is the store, so without partitioning every vector stores under
  // the mask. In the interior every lane holds x <= x.max and the store is a plain one. An
  // interior one vector too wide stores past the row (it crashed three of the lowering
  // property tests when the guard's bound was loosened by a vector).
  for (int64_t width : {5, 8, 29, 64}) {
    Buffer in = ramp(width, 2);
    Result r = run_both(source(" mirror", "in(x - 1, y) + in(x + 1, y)"), "out.vectorize(x, 8)",
                        {{"in", in}}, {width, 2});
    expect_same(r, "width " + std::to_string(width));
    EXPECT_NE(r.ir.find("llvm.masked.store"), std::string::npos);  // the general copy
    EXPECT_NE(r.ir.find("store <8 x float>"), std::string::npos) << r.ir;
  }
  // A guard with an else branch (a stored select) stays: the interior is not limited to
  // where one of its sides runs.
  Buffer in = ramp(40, 2);
  Result r = run_both(source(" mirror", "select(x > 3, sum(i in -1..1 : in(x + i, y)), 0.0)"), "",
                      {{"in", in}}, {40, 2});
  expect_same(r, "stored select");
  EXPECT_NE(r.ir.find("out.s0.x.interior"), std::string::npos);
}

TEST(LoopPartition, AVectorLoopWithATailGuardAndNoInputReadIsSplitOnTheGuard) {
  // out reads only g (a func) and lut (a table indexed by the row): nothing to check
  // against an image, but the vector tail's guard x <= x.max. Split on it, full vectors
  // run the interior with plain loads and stores (and the table's read, the same for
  // every x, can leave the loop there), the general copy keeps the guard under a mask and
  // has no unmasked copy of its own.
  const std::string src =
      "pipeline g\ninput in : f32[x, y]\nfunc lut(y) = f32(y % 3) + 0.5\n"
      "func g(x, y) = in(x, y) * 2.0 - 1.0\n"
      "func out(x, y) = g(x, y) * lut(y) + g(x + 1, y)\noutput out\n";
  for (int64_t width : {1, 5, 8, 29, 64}) {
    Buffer in = ramp(width + 1, 3);
    Result r = run_both(src, "lut.compute_root()\ng.compute_root()\nout.vectorize(x, 8)",
                        {{"in", in}}, {width, 3});
    expect_same(r, "width " + std::to_string(width));
    EXPECT_NE(r.ir.find("out.s0.x$1.interior"), std::string::npos) << r.ir;
    EXPECT_NE(r.ir.find("llvm.masked.load"), std::string::npos);  // the general copy
    EXPECT_EQ(r.ir.find("vif.all"), std::string::npos) << "an unmasked copy in the general copy";
  }
  // A guarded body that loads no func has one masked copy, whose only masked access is
  // the store: it is not split (a second copy would cost compile time for little).
  Result r = run_both(
      "pipeline c\ninput in : f32[x, y]\nfunc out(x, y) = f32(x * y) * 0.5\n"
      "output out\n",
      "out.vectorize(x, 8)", {{"in", ramp(29, 3)}}, {29, 3});
  expect_same(r, "no func read");
  EXPECT_EQ(r.ir.find(".interior"), std::string::npos) << r.ir;
}

TEST(LoopPartition, ACallNodeSharedWithAnUnanalysedPlaceStaysChecked) {
  // Hand-built IR (lowering does not share a node between contexts this way, but nothing
  // forbids it): one Call node in(x + u) read under two Lets, u = 1 (affine: the loop
  // could be partitioned on it) and u = x * x % 7 - 3 (not affine). The interior must
  // not read the node unchecked, or the second place reads outside the image. Values are
  // checked against the constant boundary computed here.
  using namespace irb;
  Expr shared = input(Float32(), "in", {var("x") + var("u")});
  Expr value = Let::make("u", irb::i32(1), shared) +
               Let::make("u", var("x") * var("x") % irb::i32(7) - irb::i32(3), shared);
  LoweredFunction f;
  f.name = "shared";
  f.inputs = {make_input("in", Float32(), {"x"}, BoundaryKind::Constant, -3)};
  f.buffers = {ExternalBuffer{"out", Float32(), 1}};
  f.body = For::make("x", var("out.min.0"), var("out.extent.0"), ForType::Serial,
                     Provide::make("out", value, {var("x")}));
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  for (int64_t width : {1, 6, 40}) {
    Buffer in = ramp(width, 1);
    Buffer in1(ScalarType::Float32, {width});
    for (int64_t i = 0; i < width; ++i) in1.set_flat(i, in.get_flat(i));
    Buffer out(ScalarType::Float32, {width});
    codegen::BufferDescriptor descs[] = {codegen::describe(in1), codegen::describe(out)};
    ASSERT_EQ((*fn)(descs, nullptr), 0);
    auto pixel = [&](int64_t c) { return c >= 0 && c < width ? in1.get_flat(c) : -3.0; };
    for (int64_t x = 0; x < width; ++x) {
      const double expected = static_cast<float>(pixel(x + 1) + pixel(x + x * x % 7 - 3));
      ASSERT_EQ(out.get_flat(x), expected) << "width " << width << " x " << x;
    }
  }
  // With only the affine place, the same loop is partitioned.
  f.body = For::make("x", var("out.min.0"), var("out.extent.0"), ForType::Serial,
                     Provide::make("out", Let::make("u", irb::i32(1), shared), {var("x")}));
  EXPECT_NE(jit->llvm_ir(f, false).find("x.interior"), std::string::npos);
}

// Before the checker bounded split factors (issue #24), a factor of 2^31 - 1 wrapped the
// outer loop's count in 32 bits: the loop never ran and the output was never written.
// The largest factor allowed now, on its own, tiled and under a guarded tail, computes
// what the evaluator computes.
TEST(SplitFactor, TheLargestAllowedFactorMatchesTheEvaluator) {
  const std::string body = "in(x - 1, y) + in(x + 1, y) * 2.0 + in(x, y + 1)";
  const std::string f = std::to_string(kMaxSplitFactor);
  const std::string schedules[] = {"out.split(x, xo, xi, " + f + ")",
                                   "out.tile(x, y, xo, yo, xi, yi, " + f + ", " + f + ")",
                                   "out.split(y, yo, yi, " + f + ", guard_with_if)",
                                   "out.split(x, xo, xi, " + f + ").vectorize(xi, 8)"};
  for (const std::string& sched : schedules) {
    for (int64_t width : {1, 9, 40}) {
      Buffer in = ramp(width, 3);
      Result r = run_both(source(" clamp", body), sched, {{"in", in}}, {width, 3});
      expect_same(r, "width " + std::to_string(width) + " under '" + sched + "'");
    }
  }
}

}  // namespace
}  // namespace stipple
