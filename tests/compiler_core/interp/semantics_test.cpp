// The scalar semantics of compiler_core/ir/ir.h as the evaluator implements them: golden
// values for wrapping, floor division, Euclidean modulo, saturating casts, rounding, f32
// precision, short-circuiting, every reduction (ties, even counts, empty domains) and
// params; i8, i16 and u32 wrapping, division, comparison and casts, and f16 rounding on
// store (ties to even, overflow to infinity, subnormals, f64 rounded once).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "compiler_core/interp/expr_program.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/runtime/exp_f32.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;

constexpr double kI32Min = -2147483648.0;
constexpr double kI32Max = 2147483647.0;

TEST(InterpSemantics, IntegersWrapPerType) {
  EXPECT_EQ(eval_scalar(u8(200) + u8(100)), 44);
  EXPECT_EQ(eval_scalar(u8(10) - u8(20)), 246);
  EXPECT_EQ(eval_scalar(u8(16) * u8(17)), 16);  // 272 mod 256
  EXPECT_EQ(eval_scalar(u16(65535) + u16(2)), 1);
  EXPECT_EQ(eval_scalar(i32(2147483647) + i32(1)), kI32Min);
  EXPECT_EQ(eval_scalar(i32(-2147483647) - i32(2)), kI32Max);
  EXPECT_EQ(eval_scalar(i32(65536) * i32(65536)), 0);
  EXPECT_EQ(eval_scalar(i32(65537) * i32(65537)), 131073);  // 2^32 + 2^17 + 1 wraps
  EXPECT_EQ(eval_scalar(cast(UInt8(), i32(300))), 44);
  EXPECT_EQ(eval_scalar(cast(UInt8(), i32(-1))), 255);
  EXPECT_EQ(eval_scalar(cast(UInt16(), i32(-2))), 65534);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Abs, i32(-2147483647) - i32(1))), kI32Min);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Abs, i32(-5))), 5);
}

TEST(InterpSemantics, FloorDivisionAndEuclideanModulo) {
  EXPECT_EQ(eval_scalar(i32(-7) / i32(2)), -4);
  EXPECT_EQ(eval_scalar(i32(7) / i32(-2)), -4);
  EXPECT_EQ(eval_scalar(i32(-7) / i32(-2)), 3);
  EXPECT_EQ(eval_scalar(i32(7) / i32(2)), 3);
  EXPECT_EQ(eval_scalar(i32(-8) / i32(2)), -4);
  EXPECT_EQ(eval_scalar(i32(-7) % i32(2)), 1);
  EXPECT_EQ(eval_scalar(i32(7) % i32(-2)), 1);
  EXPECT_EQ(eval_scalar(i32(-7) % i32(-3)), 2);
  EXPECT_EQ(eval_scalar(i32(-9) % i32(3)), 0);
  EXPECT_EQ(eval_scalar(i32(5) / i32(0)), 0);
  EXPECT_EQ(eval_scalar(i32(-5) % i32(0)), 0);
  EXPECT_EQ(eval_scalar(u8(200) / u8(0)), 0);
  EXPECT_EQ(eval_scalar(u8(200) % u8(7)), 4);
  // i32 min / -1 is 2^31, which wraps back to i32 min.
  EXPECT_EQ(eval_scalar((i32(-2147483647) - i32(1)) / i32(-1)), kI32Min);
}

TEST(InterpSemantics, FloatToIntegerCastsSaturateAndTruncate) {
  EXPECT_EQ(eval_scalar(cast(UInt8(), f32(300.7))), 255);
  EXPECT_EQ(eval_scalar(cast(UInt8(), f32(-5.0))), 0);
  EXPECT_EQ(eval_scalar(cast(UInt8(), f32(0) / f32(0))), 0);  // NaN
  EXPECT_EQ(eval_scalar(cast(Int32(), f32(0) / f32(0))), 0);
  EXPECT_EQ(eval_scalar(cast(UInt16(), f64(70000.0))), 65535);
  EXPECT_EQ(eval_scalar(cast(Int32(), f32(1e10))), kI32Max);
  EXPECT_EQ(eval_scalar(cast(Int32(), f32(-1e10))), kI32Min);
  EXPECT_EQ(eval_scalar(cast(Int32(), f32(1) / f32(0))), kI32Max);
  EXPECT_EQ(eval_scalar(cast(Int32(), f32(2.9))), 2);
  EXPECT_EQ(eval_scalar(cast(Int32(), f32(-2.9))), -2);
  EXPECT_EQ(eval_scalar(cast(UInt8(), f64(254.99))), 254);
  EXPECT_EQ(eval_scalar(cast(Float32(), i32(16777217))), 16777216);  // rounds to nearest
}

TEST(InterpSemantics, RoundHalfToEvenFloorCeil) {
  auto round = [](double v) { return eval_scalar(intrinsic(Intrinsic::Round, f32(v))); };
  EXPECT_EQ(round(0.5), 0);
  EXPECT_EQ(round(1.5), 2);
  EXPECT_EQ(round(2.5), 2);
  EXPECT_EQ(round(-0.5), 0);
  EXPECT_EQ(round(-1.5), -2);
  EXPECT_EQ(round(-2.5), -2);
  EXPECT_EQ(round(2.6), 3);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Round, f64(3.5))), 4);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Floor, f32(-1.25))), -2);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Ceil, f32(-1.25))), -1);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Ceil, f64(1.25))), 2);
}

TEST(InterpSemantics, F32IsComputedInSinglePrecision) {
  // 2^24 + 1 is not an f32: single precision loses the 1, double would keep it.
  EXPECT_EQ(eval_scalar(f32(16777216.0) + f32(1.0)), 16777216.0);
  EXPECT_EQ(eval_scalar(f64(16777216.0) + f64(1.0)), 16777217.0);
  float expected = 0.1f;
  expected = expected * 3.0f;
  EXPECT_EQ(eval_scalar(f32(0.1) * f32(3.0)), static_cast<double>(expected));
  // f32 exp is Stipple's own (runtime/exp_f32.h), within an ulp of e^0.3 = 1.3498588...
  float e = exp_f32(0.3f);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Exp, f32(0.3))), static_cast<double>(e));
  EXPECT_NEAR(e, 1.3498588075760032, 1.2e-7);
  float q = 1.0f;
  q = q / 3.0f;
  EXPECT_EQ(eval_scalar(f32(1.0) / f32(3.0)), static_cast<double>(q));
  // Float modulo is a - b * floor(a / b): never negative for a positive b.
  EXPECT_EQ(eval_scalar(f32(-1.0) % f32(4.0)), 3.0);
}

TEST(InterpSemantics, LetAndMinMax) {
  Expr e = Let::make("t", i32(6) * i32(7), var("t") - i32(2));
  EXPECT_EQ(eval_scalar(e), 40);
  EXPECT_EQ(eval_scalar(min(i32(-3), i32(2))), -3);
  EXPECT_EQ(eval_scalar(max(u8(3), u8(200))), 200);
  EXPECT_EQ(eval_scalar(select(f32(1.5) < f32(2.5), i32(1), i32(2))), 1);
}

// --- Reductions ------------------------------------------------------------------------

// values[i] for i in 0..n-1, as a 1-D f32 input read by a reduction.
double reduce_over(ReduceOp op, const std::vector<double>& values, int64_t lo, int64_t hi,
                   Type t = Float32()) {
  Buffer in = zeros(t.code, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) in.set_flat(static_cast<int64_t>(i), values[i]);
  Expr body = input(t, "v", {rvar("i")});
  return eval_scalar(reduce(op, {rv("i", lo, hi)}, body), {{"v", in}}, {make_input("v", t, {"x"})});
}

TEST(InterpSemantics, SumAndProd) {
  EXPECT_EQ(reduce_over(ReduceOp::Sum, {1, 2, 3, 4.5}, 0, 3), 10.5);
  EXPECT_EQ(reduce_over(ReduceOp::Prod, {1, 2, 3, 4.5}, 0, 3), 27);
  // A u8 sum wraps in u8.
  EXPECT_EQ(reduce_over(ReduceOp::Sum, {200, 100, 1}, 0, 2, UInt8()), 45);
  EXPECT_EQ(reduce_over(ReduceOp::Prod, {16, 17}, 0, 1, UInt8()), 16);
  // f32 sums accumulate in single precision, in iteration order.
  EXPECT_EQ(reduce_over(ReduceOp::Sum, {16777216, 1, 1}, 0, 2), 16777216);
}

TEST(InterpSemantics, MinimumMaximumMedian) {
  EXPECT_EQ(reduce_over(ReduceOp::Minimum, {5, -2, 7, -2}, 0, 3), -2);
  EXPECT_EQ(reduce_over(ReduceOp::Maximum, {5, -2, 7, -2}, 0, 3), 7);
  EXPECT_EQ(reduce_over(ReduceOp::Median, {9, 1, 5}, 0, 2), 5);
  // The lower median of an even count: sorted 1 3 8 9 -> 3.
  EXPECT_EQ(reduce_over(ReduceOp::Median, {9, 1, 8, 3}, 0, 3), 3);
  EXPECT_EQ(reduce_over(ReduceOp::Median, {4, 2}, 0, 1, UInt8()), 2);
  EXPECT_EQ(reduce_over(ReduceOp::Median, {7}, 0, 0), 7);
}

TEST(InterpSemantics, ArgMinIsTheFirstMinimumInIterationOrder) {
  EXPECT_EQ(reduce_over(ReduceOp::ArgMin, {3, 1, 4, 1, 5}, 0, 4), 1);
  EXPECT_EQ(reduce_over(ReduceOp::ArgMin, {3, 1, 4, 1, 5}, 2, 4), 1);  // positions from 0
  EXPECT_EQ(reduce_over(ReduceOp::ArgMin, {2, 2, 2}, 0, 2), 0);

  // Two variables: the first is innermost, so position = i + 3 * j.
  Buffer in = zeros(ScalarType::Int32, {3, 2});
  int vals[6] = {5, 4, 9, 7, 1, 1};  // (i, j) at i + 3 j; the minimum 1 first at (1, 1)
  for (int k = 0; k < 6; ++k) in.set_flat(k, vals[k]);
  Expr body = input(Int32(), "v", {rvar("i"), rvar("j")});
  Expr e = reduce(ReduceOp::ArgMin, {rv("i", 0, 2), rv("j", 0, 1)}, body);
  EXPECT_EQ(eval_scalar(e, {{"v", in}}, {make_input("v", Int32(), {"x", "y"})}), 4);
  // Sum visits the same points.
  Expr s = reduce(ReduceOp::Sum, {rv("i", 0, 2), rv("j", 0, 1)}, body);
  EXPECT_EQ(eval_scalar(s, {{"v", in}}, {make_input("v", Int32(), {"x", "y"})}), 27);
}

TEST(InterpSemantics, EmptyDomainsGiveTheDocumentedValues) {
  EXPECT_EQ(reduce_over(ReduceOp::Sum, {1, 2}, 1, 0), 0);
  EXPECT_EQ(reduce_over(ReduceOp::Prod, {1, 2}, 1, 0), 1);
  EXPECT_EQ(reduce_over(ReduceOp::Minimum, {1, 2}, 1, 0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(reduce_over(ReduceOp::Maximum, {1, 2}, 1, 0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(reduce_over(ReduceOp::Minimum, {1, 2}, 1, 0, UInt8()), 255);
  EXPECT_EQ(reduce_over(ReduceOp::Maximum, {1, 2}, 1, 0, UInt8()), 0);
  EXPECT_EQ(reduce_over(ReduceOp::Minimum, {1, 2}, 1, 0, Int32()), kI32Max);
  EXPECT_EQ(reduce_over(ReduceOp::Maximum, {1, 2}, 1, 0, Int32()), kI32Min);
  EXPECT_EQ(reduce_over(ReduceOp::Median, {1, 2}, 1, 0), 0);
  EXPECT_EQ(reduce_over(ReduceOp::ArgMin, {1, 2}, 1, 0), -1);
  // One empty variable empties the whole domain.
  Expr e = reduce(ReduceOp::Sum, {rv("i", 0, 3), rv("j", 2, 1)}, i32(1));
  EXPECT_EQ(eval_scalar(e), 0);
}

TEST(InterpSemantics, NestedMediansKeepTheirOwnValues) {
  // median over j of (median over i of (i * j)) for i, j in 0..3.
  Expr inner = reduce(ReduceOp::Median, {rv("i", 0, 3)}, rvar("i") * rvar("j") - i32(1));
  Expr outer = reduce(ReduceOp::Median, {rv("j", 0, 3)}, inner);
  // inner(j) = lower median of {-1, j-1, 2j-1, 3j-1} = j - 1 (j >= 0); outer = median
  // of {-1, 0, 1, 2} = 0.
  EXPECT_EQ(eval_scalar(outer), 0);
}

// --- Short-circuiting, tested on the machine directly: a read of f outside its box is
// an internal error, so any evaluation of the unchosen branch would throw.

class ShortCircuit : public ::testing::Test {
 protected:
  void SetUp() override {
    Buffer f = zeros(ScalarType::Int32, {4});
    for (int i = 0; i < 4; ++i) f.set_flat(i, 10 + i);
    funcs_["f"] = f;
    pipeline_ = make_pipeline({}, {}, "f", {});
    env_.pipeline = &pipeline_;
  }
  // Evaluates e with x bound to `x`.
  int64_t run(const Expr& e, int64_t x) {
    interp::ExprProgram program;
    interp::ExprCompiler compiler(env_, funcs_, "", program);
    int32_t slot = compiler.bind("x");
    int32_t root = compiler.compile(e);
    interp::Machine m(program);
    m.slot(slot) = int_value(x);
    return m.eval(root).i;
  }
  Expr f(Expr i) { return call(Int32(), "f", {std::move(i)}); }

  interp::RealisedFuncs funcs_;
  Pipeline pipeline_;
  interp::ConstantEnv env_;
};

TEST_F(ShortCircuit, SelectEvaluatesOnlyTheChosenBranch) {
  Expr e = select(var("x") < i32(4), f(var("x")), i32(-1));
  EXPECT_EQ(run(e, 2), 12);
  EXPECT_EQ(run(e, 100), -1);
  Expr g = select(var("x") >= i32(4), i32(-1), f(var("x")));
  EXPECT_EQ(run(g, 3), 13);
  EXPECT_EQ(run(g, 50), -1);
  EXPECT_THROW(run(f(var("x")), 4), InternalError);  // the read itself is checked
}

TEST_F(ShortCircuit, AndOrSkipTheirSecondOperand) {
  Expr a = (var("x") < i32(4)) && (f(var("x")) > i32(11));
  EXPECT_EQ(run(a, 2), 1);
  EXPECT_EQ(run(a, 1), 0);
  EXPECT_EQ(run(a, 9), 0);
  Expr o = (var("x") >= i32(4)) || (f(var("x")) > i32(11));
  EXPECT_EQ(run(o, 9), 1);
  EXPECT_EQ(run(o, 0), 0);
  EXPECT_EQ(run(o, 3), 1);
}

TEST_F(ShortCircuit, ConstantOutOfBoxReadsAreNotFoldedAway) {
  // A constant index outside the box sits in a branch that never runs: compiling it must
  // not fail, and the chosen branch still works.
  Expr e = select(var("x") < i32(100), f(i32(1)), f(i32(1000)));
  EXPECT_EQ(run(e, 0), 11);
  EXPECT_THROW(run(e, 200), InternalError);
}

// --- Params ----------------------------------------------------------------------------

TEST(InterpSemantics, ParamsTakeDefaultsAndConvertToTheirType) {
  std::vector<ParamDecl> params = {{"k", Int32(), 5}, {"s", Float32(), 0.5}};
  Expr value = cast(Float32(), Param::make(Int32(), "k")) * Param::make(Float32(), "s");
  Pipeline p = make_pipeline({}, {make_func("out", {}, value)}, "out", {}, params);
  EXPECT_EQ(evaluate_pipeline(p, {}).get_flat(0), 2.5);
  EXPECT_EQ(evaluate_pipeline(p, {}, {{"k", 3}}).get_flat(0), 1.5);
  // Taken exactly: an i32 param given 3.7 is an error, not 3 (work_limits_test.cpp has more).
  EXPECT_THROW(evaluate_pipeline(p, {}, {{"k", 3.7}}), UserError);
  EXPECT_EQ(evaluate_pipeline(p, {}, {{"s", 0.1}}).get_flat(0), static_cast<double>(5.0f * 0.1f));
}

TEST(InterpSemantics, NewIntegerTypesWrapModuloTheirWidth) {
  EXPECT_EQ(eval_scalar(i8(127) + i8(1)), -128);
  EXPECT_EQ(eval_scalar(i8(-128) - i8(1)), 127);
  EXPECT_EQ(eval_scalar(i8(16) * i8(16)), 0);    // 256
  EXPECT_EQ(eval_scalar(i8(-3) * i8(50)), 106);  // -150 + 256
  EXPECT_EQ(eval_scalar(i16(32767) + i16(1)), -32768);
  EXPECT_EQ(eval_scalar(i16(300) * i16(300)), 24464);  // 90000 - 65536
  EXPECT_EQ(eval_scalar(u32(4294967295) + u32(1)), 0);
  EXPECT_EQ(eval_scalar(u32(0) - u32(1)), 4294967295.0);
  // The product of two large u32 values is past int64: modulo 2^32 all the same.
  EXPECT_EQ(eval_scalar(u32(4294967295) * u32(4294967295)), 1);
  EXPECT_EQ(eval_scalar(u32(65536) * u32(65536)), 0);
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Abs, i8(-128))), -128);  // wraps to itself
  EXPECT_EQ(eval_scalar(intrinsic(Intrinsic::Abs, i16(-7))), 7);
  // Integer casts wrap; a wider target keeps the value (sign-extends a signed source).
  EXPECT_EQ(eval_scalar(cast(Int8(), i32(200))), -56);
  EXPECT_EQ(eval_scalar(cast(Int16(), i32(40000))), -25536);
  EXPECT_EQ(eval_scalar(cast(UInt32(), i32(-1))), 4294967295.0);
  EXPECT_EQ(eval_scalar(cast(Int32(), u32(4294967295))), -1);
  EXPECT_EQ(eval_scalar(cast(Int32(), i8(-5))), -5);
  EXPECT_EQ(eval_scalar(cast(UInt8(), i8(-1))), 255);
  EXPECT_EQ(eval_scalar(cast(UInt32(), i16(-2))), 4294967294.0);
}

TEST(InterpSemantics, NewIntegerTypesDivideAndCompareByTheirSignedness) {
  EXPECT_EQ(eval_scalar(i8(-7) / i8(2)), -4);
  EXPECT_EQ(eval_scalar(i8(-7) % i8(2)), 1);
  EXPECT_EQ(eval_scalar(i8(-128) / i8(-1)), -128);  // 128 wraps
  EXPECT_EQ(eval_scalar(i16(-9) / i16(4)), -3);
  // u32 is unsigned: 2^32 - 2 is large, not -2.
  EXPECT_EQ(eval_scalar(u32(4294967294) / u32(2)), 2147483647);
  EXPECT_EQ(eval_scalar(u32(4294967295) % u32(10)), 5);
  EXPECT_EQ(eval_scalar(u32(7) / u32(0)), 0);
  EXPECT_EQ(eval_scalar(u32(4294967295) > u32(1)), 1);
  EXPECT_EQ(eval_scalar(u32(2147483648) < u32(2147483647)), 0);
  EXPECT_EQ(eval_scalar(min(u32(4294967295), u32(3))), 3);
  EXPECT_EQ(eval_scalar(i8(-1) < i8(1)), 1);
  // To float: unsigned values convert as unsigned.
  EXPECT_EQ(eval_scalar(cast(Float64(), u32(4294967295))), 4294967295.0);
  EXPECT_EQ(eval_scalar(cast(Float32(), u32(4294967295))), 4294967296.0);  // rounded
}

TEST(InterpSemantics, FloatToNewIntegerTypesSaturateNaNToZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(eval_scalar(cast(Int8(), f32(300.5))), 127);
  EXPECT_EQ(eval_scalar(cast(Int8(), f32(-300.5))), -128);
  EXPECT_EQ(eval_scalar(cast(Int8(), f32(-7.9))), -7);
  EXPECT_EQ(eval_scalar(cast(Int16(), f64(1e9))), 32767);
  EXPECT_EQ(eval_scalar(cast(UInt32(), f64(1e20))), 4294967295.0);
  EXPECT_EQ(eval_scalar(cast(UInt32(), f64(-5.5))), 0);
  EXPECT_EQ(eval_scalar(cast(UInt32(), f64(4294967295.9))), 4294967295.0);
  EXPECT_EQ(eval_scalar(cast(UInt32(), f64(nan))), 0);
  EXPECT_EQ(eval_scalar(cast(Int8(), f32(nan))), 0);
}

/// The f16 bits of a value stored into an f16 func.
uint16_t stored_f16_bits(const Expr& e) {
  Pipeline p = make_pipeline({}, {make_func("out", {}, cast(Float16(), e))}, "out", {});
  Buffer b = evaluate_pipeline(p, {});
  EXPECT_EQ(b.type(), ScalarType::Float16);
  uint16_t bits;
  std::memcpy(&bits, b.data(), sizeof bits);
  return bits;
}

TEST(InterpSemantics, F16StoresRoundToNearestEven) {
  // 1/3 is 0x3555 = 0.333251953125 (the f32 1/3 and the f64 1/3 alike).
  EXPECT_EQ(stored_f16_bits(f32(1.0 / 3.0)), 0x3555);
  EXPECT_EQ(stored_f16_bits(f64(1.0 / 3.0)), 0x3555);
  EXPECT_EQ(eval_scalar(cast(Float16(), f32(1.0 / 3.0))), 0.333251953125);
  EXPECT_EQ(stored_f16_bits(f32(1.0)), 0x3c00);
  EXPECT_EQ(stored_f16_bits(f32(-2.0)), 0xc000);
  EXPECT_EQ(stored_f16_bits(f32(-0.0)), 0x8000);
  EXPECT_EQ(stored_f16_bits(f32(65504.0)), 0x7bff);  // the largest finite
  EXPECT_EQ(stored_f16_bits(f32(65519.0)), 0x7bff);  // below the midpoint
  EXPECT_EQ(stored_f16_bits(f32(65520.0)), 0x7c00);  // the midpoint rounds to even: inf
  EXPECT_EQ(stored_f16_bits(f32(-1e10)), 0xfc00);
  // Ties to even: 2049 lies halfway between 2048 and 2050 (spacing 2): 2048 (even).
  EXPECT_EQ(eval_scalar(cast(Float16(), f32(2049.0))), 2048);
  EXPECT_EQ(eval_scalar(cast(Float16(), f32(2051.0))), 2052);
  EXPECT_EQ(eval_scalar(cast(Float16(), i32(2049))), 2048);
  EXPECT_EQ(eval_scalar(cast(Float16(), i32(100000))), std::numeric_limits<double>::infinity());
  // Subnormals: the smallest is 2^-24 (0x0001); 2^-25 is a tie and rounds to 0 (even),
  // just above it rounds up; the largest subnormal is 0x03ff.
  EXPECT_EQ(stored_f16_bits(f64(std::ldexp(1.0, -24))), 0x0001);
  EXPECT_EQ(stored_f16_bits(f64(std::ldexp(1.0, -25))), 0x0000);
  EXPECT_EQ(stored_f16_bits(f64(std::ldexp(1.0, -25) * 1.0000001)), 0x0001);
  EXPECT_EQ(stored_f16_bits(f64(std::ldexp(3.0, -25))), 0x0002);  // 1.5 ulps: tie to even
  EXPECT_EQ(stored_f16_bits(f64(std::ldexp(1023.0, -24))), 0x03ff);
  EXPECT_EQ(stored_f16_bits(f32(std::ldexp(1.0, -14))), 0x0400);  // the smallest normal
  // f64 rounds once, not through f32: 1 + 2^-11 + 2^-40 is just above the tie between 1
  // and 1 + 2^-10, so it rounds up; through f32 it would become the tie and round to 1.
  EXPECT_EQ(stored_f16_bits(f64(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))), 0x3c01);
  EXPECT_EQ(stored_f16_bits(f64(1.0 + std::ldexp(1.0, -11))), 0x3c00);
  // NaN is the quiet NaN 0x7e00 (sign kept).
  EXPECT_EQ(stored_f16_bits(f32(std::numeric_limits<double>::quiet_NaN())) & 0x7fff, 0x7e00);
  // Widening is exact, and f16 to integer casts saturate like f32's.
  EXPECT_EQ(eval_scalar(cast(Float64(), cast(Float16(), f32(0.1)))), 0.0999755859375);
  EXPECT_EQ(eval_scalar(cast(Int8(), cast(Float16(), f32(1000.0)))), 127);
}

// A whole pipeline in .stp: f16 input and output, and each new integer type.
TEST(InterpSemantics, NewTypesThroughTheLanguage) {
  Pipeline p = compile_pipeline(
      "pipeline p\n"
      "input in : f16[x]\n"
      "func third(x) = f16(in(x) / 3.0)\n"
      "func bytes(x) = i8(x * 50)\n"
      "func big(x) = u32(x) * u32(-1)\n"
      "func out(x) = f16(third(x) + f32(bytes(x)) + f32(big(x) % u32(7)) + f32(i16(x) * i16(-1)))\n"
      "output out size(4)\n",
      "p.stp");
  Buffer in(ScalarType::Float16, {4});
  for (int i = 0; i < 4; ++i) in.set_flat(i, 1.0 + i);
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  ASSERT_EQ(out.type(), ScalarType::Float16);
  // x = 3: third = f16(4/3) = 1.3330078125; bytes = i8(150) = -106;
  // big = 3 * (2^32 - 1) mod 2^32 = 2^32 - 3, and 4294967293 % 7 = 1; i16 -3.
  // 1.3330078125 - 106 + 1 - 3 = -106.6669921875, rounded to f16 (spacing 1/16): -106.6875.
  EXPECT_EQ(out.get_flat(3), -106.6875);
  // x = 0: third = f16(1/3); bytes 0; big 0; 0.
  EXPECT_EQ(out.get_flat(0), 0.333251953125);
}

}  // namespace
}  // namespace stipple
