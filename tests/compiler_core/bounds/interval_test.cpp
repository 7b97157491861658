// The shared interval arithmetic (compiler_core/bounds/interval.h): each rule contains
// what the evaluator computes, in particular where the reuse model's former engine did
// not (float modulo by a negative divisor, round half to even, a minimum over a domain
// that may be empty) and where it was looser (a divisor that may be zero); and the rules
// for casts, intrinsics and reductions through both end algebras, the lowering's symbolic
// one (compiler_core/lowering/bounds_inference.h) included.
#include "compiler_core/bounds/interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/ir/substitute.h"
#include "compiler_core/lowering/bounds_inference.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;
using bounds::Interval;
using bounds::IntervalScope;

// Params are 3, input extents 100; a name outside the scope is unbounded.
class TestConstants : public bounds::IntervalConstants {
 public:
  Interval param(const std::string&, Type) const override { return Interval::point(3); }
  Interval input_extent(const std::string&, int) const override { return Interval::point(100); }
  Interval free_variable(const std::string&) const override { return Interval::everything(); }
};

Interval of(const Expr& e, IntervalScope scope = {}) {
  return bounds::interval_of(e, scope, TestConstants());
}

// Whether the evaluator's value of `e` (a closed expression) lies in its interval.
void expect_contains(const Expr& e) {
  Interval iv = of(e);
  double v = eval_scalar(e);
  if (std::isnan(v)) {
    EXPECT_TRUE(iv.may_be_nan);
  } else {
    EXPECT_LE(iv.min, v);
    EXPECT_GE(iv.max, v);
  }
}

TEST(Interval, FloatEndsPastTheLargestFiniteValueAreInfinite) {
  // The f32 product is infinite; in real numbers it is 1e60, which is no f32.
  expect_contains(f32(1e30) * f32(1e30));
  expect_contains(f32(-1e30) * f32(1e30) - f32(1));
  expect_contains(f64(1e300) * f64(1e300));
  EXPECT_EQ(of(f32(3e38) + f32(3e38)).max, std::numeric_limits<double>::infinity());
  EXPECT_LT(of(f32(1e38) + f32(1e38)).max, 2.1e38);
}

TEST(Interval, NewIntrinsicsAreSound) {
  IntervalScope scope{{"v", {-50, 50}}};
  Expr v = cast(Float32(), var("v"));
  // tanh lies in [-1, 1]; tan has no bounds.
  Interval th = of(Call::make_intrinsic(Intrinsic::Tanh, {v}), scope);
  EXPECT_EQ(th.min, -1);
  EXPECT_EQ(th.max, 1);
  EXPECT_FALSE(th.may_be_nan);
  EXPECT_FALSE(of(Call::make_intrinsic(Intrinsic::Tan, {v}), scope).is_bounded());
  // atan2 in [-pi, pi], widened: f32 pi rounds up past the real pi.
  Interval at = of(Call::make_intrinsic(Intrinsic::Atan2, {v, v}), scope);
  EXPECT_LT(at.min, -3.14159274);
  EXPECT_GT(at.max, 3.14159274);
  EXPECT_LT(at.max, 3.2);
  // hypot lies between the larger magnitude and the hypot of the largest ones.
  Interval hy =
      of(Call::make_intrinsic(Intrinsic::Hypot, {v, cast(Float32(), var("v") + i32(60))}), scope);
  EXPECT_LE(hy.min, 10);
  EXPECT_GE(hy.min, 9.99);
  EXPECT_GE(hy.max, std::hypot(50.0, 110.0));
  EXPECT_LT(hy.max, 121);
  // fma as interval arithmetic on a * b + c.
  Interval fm = of(Call::make_intrinsic(Intrinsic::Fma, {v, v, f32(1)}), scope);
  EXPECT_LE(fm.min, -2499);
  EXPECT_GE(fm.max, 2501);
  EXPECT_LT(fm.max, 2502);
  // And every rule contains what the evaluator computes, at the ends and between.
  const float values[] = {-1e30f, -3.5f, -1, -0.0f, 0, 1e-30f, 0.7f, 2, 1e30f};
  for (float a : values) {
    for (float b : values) {
      expect_contains(Call::make_intrinsic(Intrinsic::Tanh, {f32(a)}));
      expect_contains(Call::make_intrinsic(Intrinsic::Atan2, {f32(a), f32(b)}));
      expect_contains(Call::make_intrinsic(Intrinsic::Atan2, {f64(a), f64(b)}));
      expect_contains(Call::make_intrinsic(Intrinsic::Hypot, {f32(a), f32(b)}));
      expect_contains(Call::make_intrinsic(Intrinsic::Fma, {f32(a), f32(b), f32(0.1f)}));
      expect_contains(Call::make_intrinsic(Intrinsic::Fma, {f64(a), f64(b), f64(-2)}));
    }
  }
}

TEST(Interval, LetVariablesTakeTheirValuesInterval) {
  IntervalScope scope{{"x", {0, 10}}};
  Expr e = Let::make("t", var("x") + i32(5), Variable::make_typed(Int32(), "t") * i32(2));
  Interval r = of(e, scope);
  EXPECT_EQ(r.min, 10);
  EXPECT_EQ(r.max, 30);
}

TEST(Interval, IntegerArithmeticThatMayWrapTakesTheTypesRange) {
  IntervalScope scope{{"x", {0, 200}}};
  Interval r = of(cast(UInt8(), var("x")) + u8(100), scope);
  EXPECT_EQ(r.min, 0);
  EXPECT_EQ(r.max, 255);
  Interval n = of(var("x") + i32(1), scope);
  EXPECT_EQ(n.min, 1);
  EXPECT_EQ(n.max, 201);
}

TEST(Interval, FloatResultsAllowForSinglePrecisionRounding) {
  // 1 / 0.1f is 9.99999985 in real numbers and 10 in f32; the reuse model's former
  // engine bounded the cast by 9.
  Expr q = cast(Int32(), f32(1.0) / f32(0.1));
  expect_contains(q);
  EXPECT_EQ(of(q).max, 10);
  // floor is exact: no widening after it.
  EXPECT_EQ(of(cast(Int32(), intrinsic(Intrinsic::Floor, f32(5.78)))), Interval::point(5));
}

TEST(Interval, DivisionByARangeThatContainsZero) {
  // x / 0 == 0; over each sign of the divisor the extremes lie at its corners, so a
  // divisor in 0..4 keeps the sign of x.
  IntervalScope scope{{"x", {0, 10}}, {"d", {0, 4}}};
  Interval r = of(var("x") / var("d"), scope);
  EXPECT_EQ(r.min, 0);
  EXPECT_EQ(r.max, 10);
  expect_contains(i32(7) / i32(0));
  expect_contains(i32(-7) / i32(2));
}

TEST(Interval, IntegerDivisionWithUnboundedEnds) {
  // A free integer variable is unbounded (its ends infinite): dividing it, or dividing by
  // it, must give sound intervals, not cast an infinity to an integer (which crashed).
  IntervalScope divisors{{"d", {-3, 5}}};
  Interval r = of(var("v") / var("d"), divisors);
  EXPECT_EQ(r.min, -2147483648.0);  // the whole i32 range
  EXPECT_EQ(r.max, 2147483647.0);
  IntervalScope dividends{{"x", {-7, 9}}};
  r = of(var("x") / var("v"), dividends);
  EXPECT_LE(r.min, -7);
  EXPECT_GE(r.max, 9);
}

TEST(Interval, FloatModuloTakesTheSignOfTheDivisor) {
  expect_contains(f32(5.5) % f32(-2));
  Interval r = of(f32(5.5) % f32(-2));
  EXPECT_LE(r.min, -2);
  EXPECT_GE(r.max, 0);
}

TEST(Interval, RoundIsHalfToEven) {
  // round(2.5) is 2 in the evaluator: a lower end rounded half away from zero (3) would
  // leave it out.
  expect_contains(intrinsic(Intrinsic::Round, f32(2.5)));
  expect_contains(cast(Int32(), intrinsic(Intrinsic::Round, f32(2.5))));
  expect_contains(intrinsic(Intrinsic::Floor, f32(-0.5)));
}

TEST(Interval, ReductionsOverADomainThatMayBeEmpty) {
  // minimum over an empty domain is the type's largest value.
  IntervalScope scope{{"n", {-1, 4}}};
  Interval m = of(reduce(ReduceOp::Minimum, {{"r", i32(0), var("n")}}, rvar("r")), scope);
  EXPECT_EQ(m.min, 0);
  EXPECT_EQ(m.max, Int32().max_value());
  expect_contains(reduce(ReduceOp::Minimum, {rv("r", 0, -1)}, rvar("r")));
  // A domain that is never empty: a sum of positive terms has no 0.
  Interval s = of(reduce(ReduceOp::Sum, {rv("r", 1, 4)}, rvar("r")));
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 16);
}

TEST(Interval, AnIndexThatIsNeverComputedIsEmpty) {
  IntervalScope scope{{"x", Interval::nothing()}};
  EXPECT_TRUE(of(var("x") * i32(0) + i32(3), scope).is_empty());
  EXPECT_EQ(of(select(var("x") > i32(0), var("x"), i32(3)), scope), Interval::point(3));
  EXPECT_EQ(Interval::nothing().extent(), 0);
  EXPECT_EQ(Interval::nothing().union_with({2, 5}), (Interval{2, 5}));
}

// A case of the two-algebra test: an expression of the loop variable x, and whether the
// concrete rule widens ends that the symbolic one leaves exact (abs and hypot).
struct RuleCase {
  const char* what;
  Expr e;
  bool concrete_widens = false;
};

std::vector<RuleCase> cast_intrinsic_and_reduce_cases() {
  Expr x = var("x"), fx = cast(Float32(), var("x")), r = rvar("r");
  auto call = [](Intrinsic f, std::vector<Expr> args) { return Call::make_intrinsic(f, args); };
  return {
      {"cast i32 to u8 (may wrap)", cast(UInt8(), x * i32(40))},
      {"cast i32 to i16", cast(Int16(), x - i32(2))},
      {"cast f32 to i32", cast(Int32(), fx * f32(0.37))},
      {"cast f32 to u8 (saturates)", cast(UInt8(), fx * f32(70))},
      {"cast of NaN to i32", cast(Int32(), f32(0) / (fx - fx))},
      {"cast to f16", cast(Float16(), fx * f32(0.1))},
      {"cast i32 to f64", cast(Float64(), x) * f64(0.5)},
      {"cast to bool", cast(Bool(), x)},
      {"abs of i32", intrinsic(Intrinsic::Abs, x - i32(3))},
      {"abs of f32", intrinsic(Intrinsic::Abs, fx - f32(2.5)), true},
      {"floor", intrinsic(Intrinsic::Floor, fx * f32(0.5))},
      {"ceil", intrinsic(Intrinsic::Ceil, fx * f32(0.5))},
      {"round", intrinsic(Intrinsic::Round, fx * f32(0.5))},
      {"sqrt (NaN below 0)", intrinsic(Intrinsic::Sqrt, fx - f32(1))},
      {"exp", intrinsic(Intrinsic::Exp, fx * f32(0.25))},
      {"log", intrinsic(Intrinsic::Log, fx * fx + f32(0.5))},
      // (Not of an argument that is always negative: the symbolic upper end, log(max), is
      // then NaN.)
      {"log (NaN below 0)", intrinsic(Intrinsic::Log, select(x > i32(0), f32(-1), f32(2)))},
      {"pow", call(Intrinsic::Pow, {fx, f32(2)})},
      {"sin", intrinsic(Intrinsic::Sin, fx)},
      {"cos", intrinsic(Intrinsic::Cos, fx)},
      {"tan", intrinsic(Intrinsic::Tan, fx)},
      {"tanh", intrinsic(Intrinsic::Tanh, fx)},
      {"atan2", call(Intrinsic::Atan2, {fx, fx - f32(1)})},
      {"hypot", call(Intrinsic::Hypot, {fx, fx + f32(2)}), true},
      {"fma", call(Intrinsic::Fma, {fx, fx - f32(1), f32(0.5)})},
      {"sum over a domain that may be empty", reduce(ReduceOp::Sum, {{"r", i32(0), x}}, r)},
      {"sum of floats", reduce(ReduceOp::Sum, {rv("r", 0, 3)}, cast(Float32(), r) * fx)},
      {"prod in [0, 1]", reduce(ReduceOp::Prod, {{"r", i32(0), x}}, cast(Float32(), r) * f32(0.1))},
      {"prod", reduce(ReduceOp::Prod, {rv("r", 1, 3)}, x + r)},
      {"minimum", reduce(ReduceOp::Minimum, {{"r", x, x + i32(2)}}, r * r)},
      {"maximum that may be empty", reduce(ReduceOp::Maximum, {{"r", i32(0), x}}, r - i32(3))},
      {"minimum of u8", reduce(ReduceOp::Minimum, {{"r", i32(0), x}}, cast(UInt8(), r))},
      {"median", reduce(ReduceOp::Median, {rv("r", -2, 2)}, cast(Float32(), x + r))},
      {"argmin", reduce(ReduceOp::ArgMin, {{"r", i32(0), x}}, (r - i32(2)) * (r - i32(2)))},
      {"argmin over a constant domain", reduce(ReduceOp::ArgMin, {rv("r", 0, 3)}, x - r)},
  };
}

bool contains(const Interval& iv, double v) {
  return std::isnan(v) ? iv.may_be_nan : iv.min <= v && v <= iv.max;
}

// A symbolic interval's ends evaluated where x_min and x_ext have values (undefined:
// infinite).
Interval evaluated(const lowering::SInterval& s, const std::map<std::string, Expr>& at) {
  const double inf = std::numeric_limits<double>::infinity();
  auto end = [&](const Expr& e, double none) {
    return e.defined() ? eval_scalar(substitute(e, at)) : none;
  };
  return {end(s.min, -inf), end(s.max, inf), s.may_be_nan};
}

TEST(Interval, CastIntrinsicAndReductionRulesInBothAlgebras) {
  // x is a loop from x_min, x_ext long; the lowering's bounds are Exprs of both.
  lowering::VarInfo loop;
  loop.kind = lowering::VarInfo::Kind::Loop;
  loop.min = var("x_min");
  loop.extent = var("x_ext");
  loop.path = {"x"};
  lowering::VarTable table{{"x", loop}};
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> first(-3, 6), extent(1, 5);
  for (const RuleCase& c : cast_intrinsic_and_reduce_cases()) {
    SCOPED_TRACE(c.what);
    lowering::BoundsContext ctx(table, {});
    lowering::SInterval symbolic = ctx.interval_of(c.e);
    for (int draw = 0; draw < 20; ++draw) {
      int lo = first(rng), n = extent(rng);
      SCOPED_TRACE("x in " + std::to_string(lo) + ".." + std::to_string(lo + n - 1));
      IntervalScope scope{{"x", {static_cast<double>(lo), static_cast<double>(lo + n - 1)}}};
      Interval concrete = of(c.e, scope);
      Interval sym = evaluated(symbolic, {{"x_min", i32(lo)}, {"x_ext", i32(n)}});
      // Both contain every value the evaluator computes.
      for (int v = lo; v < lo + n; ++v) {
        double value = eval_scalar(substitute(c.e, {{"x", i32(v)}}));
        EXPECT_TRUE(contains(concrete, value)) << "concrete misses " << value << " at x = " << v;
        EXPECT_TRUE(contains(sym, value)) << "symbolic misses " << value << " at x = " << v;
      }
      // The symbolic rule is the looser one, but for the concrete widening of exact ends.
      double sym_min = c.concrete_widens ? bounds::widen_float_end(sym.min, false) : sym.min;
      double sym_max = c.concrete_widens ? bounds::widen_float_end(sym.max, true) : sym.max;
      EXPECT_LE(sym_min, concrete.min);
      EXPECT_GE(sym_max, concrete.max);
      EXPECT_TRUE(sym.may_be_nan || !concrete.may_be_nan);
    }
  }
}

TEST(Interval, ConstantsComeFromTheCaller) {
  EXPECT_EQ(of(var("unknown") + i32(1)), Interval::of_type(Int32()));
  EXPECT_EQ(of(InputExtent::make("in", 0) - i32(1)), Interval::point(99));
}

}  // namespace
}  // namespace stipple
