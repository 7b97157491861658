// The language's floating-point contraction (compiler_core/language/contraction.h): which
// products are fused into which sums, written as the IR printer prints them, and the
// values it gives where one rounding and two differ.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"

namespace stipple {
namespace {

/// The value of func `out` in a program with an f32 input `in`, i32 param `k`, an f64
/// param `d` and the funcs written in `funcs`.
std::string out_value(const std::string& funcs) {
  Pipeline p = compile_pipeline(
      "pipeline t\ninput in : f32[x, y]\nparam k : i32 = 3\nparam d : f64 = 0.5\n" + funcs +
          "\noutput out\n",
      "t.stp");
  return to_string(p.find_func("out")->value);
}

TEST(Contraction, AProductAddedIsOneFusedMultiplyAdd) {
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) * 2.5 + in(x + 1, y)"),
            "fma(in(x, y), 2.5, in(x + 1, y))");
  EXPECT_EQ(out_value("func out(x, y) = in(x + 1, y) + in(x, y) * 2.5"),
            "fma(in(x, y), 2.5, in(x + 1, y))");
  EXPECT_EQ(out_value("func out(x, y) = f64(in(x, y)) * d + d"), "fma(f64(in(x, y)), d, d)");
}

TEST(Contraction, SubtractionNegatesExactly) {
  // a * b - c: the addend negated; c - a * b: the literal factor negated, else the first
  // factor times -1.
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) * in(x, y) - 0.25"),
            "fma(in(x, y), in(x, y), -0.25)");
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) - 0.04 * in(x + 1, y)"),
            "fma(-0.04, in(x + 1, y), in(x, y))");
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) - in(x + 1, y) * 0.04"),
            "fma(in(x + 1, y), -0.04, in(x, y))");
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) - in(x + 1, y) * in(x, y + 1)"),
            "fma(in(x + 1, y) * -1.0, in(x, y + 1), in(x, y))");
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) * in(x, y) - in(x + 1, y)"),
            "fma(in(x, y), in(x, y), in(x + 1, y) * -1.0)");
}

TEST(Contraction, OfTwoProductsTheLeftIsFused) {
  // ((p0 + p1) + p2): p0 fused with p1 (LLVM's choice), then p2 with that.
  EXPECT_EQ(
      out_value("func out(x, y) = 0.25 * in(x - 1, y) + 0.5 * in(x, y) + 0.25 * in(x + 1, y)"),
      "fma(0.25, in(x + 1, y), fma(0.25, in(x - 1, y), 0.5 * in(x, y)))");
  // The subtrahend negated through its literal factor.
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) * 2.0 - in(x + 1, y) * 3.0"),
            "fma(in(x, y), 2.0, in(x + 1, y) * -3.0)");
  EXPECT_EQ(out_value("func out(x, y) = in(x, y) * in(x, y) - 3.0 * in(x + 1, y)"),
            "fma(in(x, y), in(x, y), -3.0 * in(x + 1, y))");
}

TEST(Contraction, ASumOfProductsIsFused) {
  // The IR printer writes a fused sum as the language does, `sum`: its op tells them apart.
  auto op_of = [](const std::string& funcs) {
    Pipeline p = compile_pipeline(
        "pipeline t\ninput in : f32[x, y]\nparam k : i32 = 3\n" + funcs + "\noutput out\n",
        "t.stp");
    const Reduce* r = p.find_func("out")->value.as<Reduce>();
    EXPECT_NE(r, nullptr) << funcs;
    return r ? r->op : ReduceOp::ArgMin;
  };
  EXPECT_EQ(op_of("func out(x, y) = sum(i in -1..1 : in(x + i, y) * in(x + i, y))"),
            ReduceOp::FusedSum);
  EXPECT_EQ(op_of("func out(x, y) = sum(i in -1..1 : f64(in(x + i, y)) * 0.5)"),
            ReduceOp::FusedSum);
  // A sum of anything else, or of integer products, is a sum.
  EXPECT_EQ(op_of("func out(x, y) = sum(i in -1..1 : in(x + i, y))"), ReduceOp::Sum);
  EXPECT_EQ(op_of("func out(x, y) = sum(i in -1..1 : in(x + i, y) * 2.0 + 1.0)"), ReduceOp::Sum);
  EXPECT_EQ(op_of("func out(x, y) = sum(i in -1..1 : (x + i) * k)"), ReduceOp::Sum);
}

TEST(Contraction, NamedProductsAndIntegersAreLeftAlone) {
  // A let-bound product is a value: rounded before it is added.
  EXPECT_EQ(out_value("func out(x, y) = let p = in(x, y) * 3.0 in p + 1.0"),
            "let p = in(x, y) * 3.0 in p + 1.0");
  // So is another func's.
  EXPECT_EQ(out_value("func sq(x, y) = in(x, y) * in(x, y)\nfunc out(x, y) = sq(x, y) + 1.0"),
            "sq(x, y) + 1.0");
  // Integers wrap exactly either way: no fma.
  EXPECT_EQ(out_value("func out(x, y) = f32(x * k + y)"), "f32(x * k + y)");
}

TEST(Contraction, UpdatesAreContractedToo) {
  Pipeline p = compile_pipeline(R"(
pipeline t
input in : f32[x]
func acc(x) = 0.0
acc(x) += in(x) * in(x)
output acc
)",
                                "t.stp");
  EXPECT_EQ(to_string(p.find_func("acc")->updates[0].value), "fma(in(x), in(x), acc(x))");
}

TEST(Contraction, AnUpdateWritesTheSiteItReads) {
  // `+=` reads the histogram at its left side's index: both contracted alike.
  Pipeline p = compile_pipeline(R"(
pipeline t
input in : f32[x]
param s : f32 = 2.5
func h(b) = 0
h(i32(in(r) * 4.0 + 0.5)) += 1 for r in 0..i32(s * 2.0 + 3.0)
output h size(8)
)",
                                "t.stp");
  const UpdateDef& u = p.find_func("h")->updates[0];
  EXPECT_EQ(to_string(u.args[0]), "i32(fma(in(r), 4.0, 0.5))");
  EXPECT_EQ(to_string(u.value), "h(i32(fma(in(r), 4.0, 0.5))) + 1");
  EXPECT_EQ(to_string(u.domain[0].max), "i32(fma(s, 2.0, 3.0))");
  // One node, as the checker made it: lowering's CSE computes the index once.
  const Call* read = u.value.as<Add>()->a.as<Call>();
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->args[0].same_as(u.args[0]));
}

}  // namespace
}  // namespace stipple
