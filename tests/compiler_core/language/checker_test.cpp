// Golden tests of the checker: small programs and the exact typed IR they become
// (literal typing, desugaring of clamp and +=, pure and reduction variables of updates,
// default output extents and metrics). `compile` runs the checker alone, without the
// contraction of products into sums that the front end applies next (contraction_test.cpp).
#include "compiler_core/language/checker.h"

#include <gtest/gtest.h>

#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/language/parser.h"
#include "compiler_core/language/source.h"

namespace stipple {
namespace {

Pipeline compile(const std::string& body, const std::string& inputs = "input in : f32[x, y, c]\n") {
  const std::string text = "pipeline t\n" + inputs + body;
  SourceText source(text, "t.stp");
  return check_program(source, parse_program(source));
}

const Func& func(const Pipeline& p, const std::string& name) {
  const Func* f = p.find_func(name);
  EXPECT_NE(f, nullptr) << name;
  return *f;
}

TEST(Checker, TwoPassBlurFromTheDesign) {
  Pipeline p = compile(
      "param sigma : f32 = 4.0\n"
      "param h : i32 = 8\n"
      "func k(i) = exp(-f32(i * i) / (2 * sigma * sigma))\n"
      "func norm() = sum(i in -h..h : k(i))\n"
      "func A(x, y, c) = sum(i in -h..h : k(i) * in(x - i, y, c)) / norm()\n"
      "func out(x, y, c) = sum(i in -h..h : k(i) * A(x, y - i, c)) / norm()\n"
      "output out\n");
  EXPECT_EQ(p.name, "t");
  ASSERT_EQ(p.params.size(), 2u);
  EXPECT_EQ(p.params[0].type, Float32());
  EXPECT_EQ(p.params[0].default_value, 4.0);
  EXPECT_EQ(p.params[1].type, Int32());
  EXPECT_EQ(p.params[1].default_value, 8.0);
  // The literal 2 becomes an f32 because sigma is one; -f32(...) is 0 - f32(...).
  EXPECT_EQ(to_string(func(p, "k").value), "exp((0.0 - f32(i * i)) / (2.0 * sigma * sigma))");
  EXPECT_EQ(to_string(func(p, "norm").value), "sum(i in 0 - h..h : k(i))");
  EXPECT_EQ(to_string(func(p, "A").value), "sum(i in 0 - h..h : k(i) * in(x - i, y, c)) / norm()");
  for (const Func& f : p.funcs) EXPECT_EQ(f.type, Float32()) << f.name;
  EXPECT_EQ(p.output.func, "out");
  EXPECT_EQ(p.output.metric, ErrorMetric::Lab);
  ASSERT_EQ(p.output.extents.size(), 3u);
  EXPECT_EQ(to_string(p.output.extents[2]), "in.channels");
}

TEST(Checker, LiteralsTakeTheOtherOperandsType) {
  Pipeline p = compile("func f(x, y) = in(x, y) * 2 + 255\noutput f\n", "input in : u8[x, y]\n");
  const Func& f = func(p, "f");
  EXPECT_EQ(f.type, UInt8());
  const Add* add = f.value.as<Add>();
  ASSERT_NE(add, nullptr);
  const IntImm* c = add->b.as<IntImm>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type, UInt8());
  EXPECT_EQ(c->value, 255);
  EXPECT_EQ(f.value.as<Add>()->a.as<Mul>()->b.as<IntImm>()->type, UInt8());
}

TEST(Checker, LiteralArithmeticIsFoldedBeforeTyping) {
  Pipeline p = compile(
      "param s : f32 = 1.5\nfunc f(x, y, c) = (2 * 3 + 1) * s - (7 / 2) * s + (-7 % 3) * s\noutput "
      "f\n");
  // 7, floor(7 / 2) = 3 and the Euclidean -7 % 3 = 2, each typed f32 by s.
  EXPECT_EQ(to_string(func(p, "f").value), "7.0 * s - 3.0 * s + 2.0 * s");
}

TEST(Checker, NegativeLiteralsAndNegatedNames) {
  Pipeline p =
      compile("param h : i32 = 3\nfunc f(x, y, c) = in(x - -2, y, c) + f32(-h)\noutput f\n");
  EXPECT_EQ(to_string(func(p, "f").value), "in(x - -2, y, c) + f32(0 - h)");
}

TEST(Checker, ClampIsMinOfMax) {
  Pipeline p = compile("func f(x, y, c) = clamp(in(x, y, c), 0.0, 1.0)\noutput f\n");
  const Min* mn = func(p, "f").value.as<Min>();
  ASSERT_NE(mn, nullptr);
  ASSERT_NE(mn->a.as<Max>(), nullptr);
  EXPECT_EQ(to_string(func(p, "f").value), "min(max(in(x, y, c), 0.0), 1.0)");
}

TEST(Checker, SmallUnsignedIndicesWidenToI32) {
  Pipeline p = compile("func lut(i) = f32(i) / 255.0\nfunc f(x, y) = lut(in(x, y))\noutput f\n",
                       "input in : u8[x, y]\n");
  const Call* call = func(p, "f").value.as<Call>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->call_type, CallType::Func);
  const Cast* idx = call->args[0].as<Cast>();
  ASSERT_NE(idx, nullptr);
  EXPECT_EQ(idx->type, Int32());
  EXPECT_EQ(idx->value.as<Call>()->call_type, CallType::Input);
}

TEST(Checker, FuncsMayBeUsedBeforeTheyAreDefined) {
  Pipeline p =
      compile("func out(x, y, c) = g(x, y, c) * 2.0\nfunc g(x, y, c) = in(x, y, c)\noutput out\n");
  ASSERT_EQ(p.funcs.size(), 2u);
  EXPECT_EQ(p.funcs[0].name, "out");  // definition order is kept
  EXPECT_EQ(func(p, "g").type, Float32());
}

TEST(Checker, ScanUpdateHasAReductionAndAPureVariable) {
  Pipeline p = compile(
      "func f(x, y) = in(x, y, 0)\n"
      "f(x, y) = f(x, y) + 0.5 * f(x - 1, y) for x in 1..in.width-1\n"
      "output f\n");
  const Func& f = func(p, "f");
  ASSERT_EQ(f.updates.size(), 1u);
  const UpdateDef& u = f.updates[0];
  ASSERT_EQ(u.args.size(), 2u);
  EXPECT_EQ(u.args[0].as<Variable>()->kind, VarKind::Reduction);
  EXPECT_EQ(u.args[1].as<Variable>()->kind, VarKind::Pure);
  ASSERT_EQ(u.domain.size(), 1u);
  EXPECT_EQ(u.domain[0].name, "x");
  EXPECT_EQ(to_string(u.domain[0].min), "1");
  EXPECT_EQ(to_string(u.domain[0].max), "in.width - 1");
  EXPECT_EQ(to_string(u.value), "f(x, y) + 0.5 * f(x - 1, y)");
  EXPECT_EQ(p.output.metric, ErrorMetric::Rmse);  // a 2-D output
}

TEST(Checker, CompoundAssignmentsDesugar) {
  Pipeline p = compile(
      "func grid(x, y, z, c) = 0.0\n"
      "grid(x/8, y/8, clamp(i32(in(x, y, 0) * 10.0), 0, 10), 0) += in(x, y, 0) for x in in, y in "
      "in\n"
      "grid(x, y, z, c) *= 2.0\n"
      "grid(x, y, z, 1) max= 3.0\n"
      "func out(x, y, c) = grid(x, y, c, 0)\n"
      "output out\n");
  const Func& g = func(p, "grid");
  ASSERT_EQ(g.updates.size(), 3u);
  const UpdateDef& splat = g.updates[0];
  ASSERT_EQ(splat.domain.size(), 2u);
  EXPECT_EQ(to_string(splat.domain[0].max), "in.width - 1");  // x in in: the dimension named x
  EXPECT_EQ(to_string(splat.domain[1].max), "in.height - 1");
  EXPECT_EQ(to_string(splat.value),
            "grid(x / 8, y / 8, min(max(i32(in(x, y, 0) * 10.0), 0), 10), 0) + in(x, y, 0)");
  EXPECT_EQ(to_string(g.updates[1].value), "grid(x, y, z, c) * 2.0");
  for (const Expr& a : g.updates[1].args) EXPECT_EQ(a.as<Variable>()->kind, VarKind::Pure);
  EXPECT_EQ(to_string(g.updates[2].value), "max(grid(x, y, z, 1), 3.0)");
}

TEST(Checker, ReductionTypes) {
  Pipeline p = compile(
      "func m(x, y, c) = median(i in -1..1, j in -1..1 : in(x + i, y + j, c))\n"
      "func a(x, y, c) = argmin(i in 0..4 : abs(in(x + i, y, c) - 0.5))\n"
      "func out(x, y, c) = m(x, y, c) + f32(a(x, y, c))\n"
      "output out\n");
  EXPECT_EQ(func(p, "m").type, Float32());
  EXPECT_EQ(func(p, "a").type, Int32());
  const Reduce* r = func(p, "m").value.as<Reduce>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->op, ReduceOp::Median);
  EXPECT_EQ(r->domain.size(), 2u);
}

TEST(Checker, InputsBoundariesAndOutputs) {
  Pipeline p = compile_pipeline(
      "pipeline io   # comments anywhere\n"
      "input a : u16[x, y] mirror\n"
      "input b : f32[x, y, c] constant(-0.5)\n"
      "input d : u8[x,\n  y]   # a declaration may span lines\n"
      "func out(x, y, c) = f32(a(x, y)) + b(x, y, c) + f32(d(x, y))\n"
      "output out size(a.width / 2, a.height, 3) metric rmse\n",
      "io.stp");
  ASSERT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[0].boundary, BoundaryKind::Mirror);
  EXPECT_EQ(p.inputs[0].type, UInt16());
  EXPECT_EQ(p.inputs[1].boundary, BoundaryKind::Constant);
  EXPECT_EQ(p.inputs[1].boundary_value, -0.5);
  EXPECT_EQ(p.inputs[2].boundary, BoundaryKind::Clamp);
  EXPECT_EQ(p.inputs[2].dim_names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(to_string(p.output.extents[0]), "a.width / 2");
  EXPECT_EQ(to_string(p.output.extents[2]), "3");
  EXPECT_EQ(p.output.metric, ErrorMetric::Rmse);
}

TEST(Checker, TwoDimensionalOutputOfAColourInputTakesItsFirstTwoExtents) {
  Pipeline p = compile("func gray(x, y) = in(x, y, 0)\noutput gray\n");
  ASSERT_EQ(p.output.extents.size(), 2u);
  EXPECT_EQ(to_string(p.output.extents[1]), "in.height");
}

TEST(Checker, SelectShortCircuitOperatorsAndCasts) {
  Pipeline p = compile(
      "func f(x, y, c) = select(x > 0 && !(y < 2) || c == 1, u8(in(x, y, c) * 255.0), u8(7))\n"
      "output f\n");
  EXPECT_EQ(func(p, "f").type, UInt8());
  EXPECT_EQ(to_string(func(p, "f").value),
            "select(x > 0 && !(y < 2) || c == 1, u8(in(x, y, c) * 255.0), u8(7))");
}

TEST(Checker, LetBindsATypedVariable) {
  Pipeline p = compile("func out(x, y, c) = let t = in(x, y, c) * 2.0 in t * t + t\noutput out\n");
  const Func& f = func(p, "out");
  EXPECT_EQ(to_string(f.value), "let t = in(x, y, c) * 2.0 in t * t + t");
  const Let* let = f.value.as<Let>();
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(let->name, "t");
  EXPECT_EQ(let->type, Float32());
  const Variable* t = let->body.as<Add>()->b.as<Variable>();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind, VarKind::Let);
  EXPECT_EQ(t->type, Float32());
  EXPECT_EQ(f.type, Float32());
}

TEST(Checker, LetsNestAndSiblingsMayReuseAName) {
  Pipeline p = compile(
      "func out(x, y, c) = (let t = in(x, y, c) in let u = t > 0.5 in select(u, t, 0.0)) +\n"
      "                    (let t = f64(x) in f32(t * t))\noutput out\n");
  EXPECT_EQ(to_string(func(p, "out").value),
            "(let t = in(x, y, c) in let u = t > 0.5 in select(u, t, 0.0)) + "
            "(let t = f64(x) in f32(t * t))");
}

TEST(Checker, ALetOfALiteralIsANamedLiteral) {
  // w adapts as the literal 0.25 would: an f64 beside an f64 input; no Let node.
  Pipeline p = compile("func out(x, y) = let w = 0.25 in in(x, y) * w + w\noutput out\n",
                       "input in : f64[x, y]\n");
  const Func& f = func(p, "out");
  EXPECT_EQ(f.type, Float64());
  EXPECT_EQ(f.value.as<Let>(), nullptr);
  EXPECT_EQ(f.value.as<Add>()->b.as<FloatImm>()->type, Float64());
  EXPECT_EQ(to_string(f.value), "in(x, y) * 0.25 + 0.25");
}

TEST(Checker, LetBoundIndicesKeepTheirBounds) {
  Pipeline p = compile(
      "func g(x) = f32(x)\n"
      "func out(x, y, c) = let i = x - 1 in let j = clamp(i32(in(x, y, c) * 8.0), 0, 8) in "
      "g(i) + g(j)\noutput out\n");
  EXPECT_EQ(to_string(func(p, "out").value),
            "let i = x - 1 in let j = min(max(i32(in(x, y, c) * 8.0), 0), 8) in g(i) + g(j)");
}

TEST(Checker, NewIntrinsicsTypesAndLiterals) {
  Pipeline p = compile(
      "func out(x, y) = f32(atan2(in(x, y), 1) + hypot(3, in(x, y)) + tanh(in(x, y)) +\n"
      "                 tan(in(x, y)) + fma(2, in(x, y), 0.5))\noutput out\n",
      "input in : f64[x, y]\n");
  const Func& f = func(p, "out");
  EXPECT_EQ(to_string(f.value),
            "f32(atan2(in(x, y), f64(1.0)) + hypot(f64(3.0), in(x, y)) + tanh(in(x, y)) + "
            "tan(in(x, y)) + fma(f64(2.0), in(x, y), f64(0.5)))");
  // The literals are f64, as the operand beside them.
  const Call* fma = f.value.as<Cast>()->value.as<Add>()->b.as<Call>();
  ASSERT_NE(fma, nullptr);
  EXPECT_EQ(fma->intrinsic, Intrinsic::Fma);
  ASSERT_EQ(fma->args.size(), 3u);
  for (const Expr& a : fma->args) EXPECT_EQ(a.type(), Float64());
  // A call index through tanh or atan2 is bounded; through tan it is not (error_test.cpp).
  compile(
      "func g(x) = 1.0\nfunc out(x, y) = g(i32(tanh(in(x, y)) * 4.0)) + "
      "g(i32(atan2(in(x, y), 1.0)))\noutput out\n",
      "input in : f32[x, y]\n");
}

TEST(Checker, UnusedFuncsAreWarnedAboutAtTheirName) {
  const std::string program =
      "pipeline blur\n"
      "input in : f32[x, y]\n"
      "func used(x, y) = in(x, y) * 2.0\n"
      "func tmp(x, y) = in(x, y) + 1.0\n"
      "func only_by_tmp(x) = 1.0\n"
      "func by_update(x) = f32(x)\n"
      "func out(x, y) = used(x, y)\n"
      "out(x, 0) += by_update(x) for x in in\n"
      "func tmp2(x, y) = tmp(x, y) + only_by_tmp(x)\n"
      "output out\n";
  std::vector<CompileWarning> warnings;
  Pipeline p = compile_pipeline(program, "blur.stp", &warnings);
  EXPECT_EQ(p.funcs.size(), 6u);  // a warning, not an error: every func is still there
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0].formatted,
            "blur.stp:4:6: warning: func 'tmp' is never used by the output\n"
            "  func tmp(x, y) = in(x, y) + 1.0\n"
            "       ^");
  EXPECT_EQ(warnings[0].file, "blur.stp");
  EXPECT_EQ(warnings[0].line, 4);
  EXPECT_EQ(warnings[0].col, 6);
  EXPECT_EQ(warnings[0].message, "func 'tmp' is never used by the output");
  EXPECT_EQ(warnings[1].message, "func 'only_by_tmp' is never used by the output");
  EXPECT_EQ(warnings[1].line, 5);
  EXPECT_EQ(warnings[2].message, "func 'tmp2' is never used by the output");
  EXPECT_EQ(warnings[2].line, 9);
  // Callers that do not ask for warnings get the same pipeline.
  EXPECT_EQ(compile_pipeline(program, "blur.stp").funcs.size(), 6u);
  // A program whose funcs all reach the output has none.
  warnings.clear();
  compile_pipeline("pipeline p\ninput in : f32[x]\nfunc a(x) = in(x)\nfunc b(x) = a(x)\noutput b\n",
                   "ok.stp", &warnings);
  EXPECT_TRUE(warnings.empty());
}

// i8, i16 and u32 are typed like u8, u16 and i32: literals take the other operand's type,
// typed operands must agree, a cast converts (u32(-1) is 4294967295: integer literals stop
// at 2^31).
TEST(Checker, NewIntegerTypesTypeLikeTheOldOnes) {
  Pipeline p = compile(
      "func a(x) = in(x) + 1\n"
      "func b(x) = i16(in(x)) * -300\n"
      "func c(x) = u32(-1) + u32(b(x))\n"
      "func d(x) = select(c(x) > 7, i8(-128), i8(127))\n"
      "func e(x) = a(b(x) % 4)\n"
      "output e size(8)\n",
      "input in : i8[x]\n");
  EXPECT_EQ(func(p, "a").type, Int8());
  EXPECT_EQ(to_string(func(p, "a").value), "in(x) + 1");
  EXPECT_EQ(func(p, "b").type, Int16());
  EXPECT_EQ(to_string(func(p, "b").value), "i16(in(x)) * -300");
  EXPECT_EQ(func(p, "c").type, UInt32());
  EXPECT_EQ(to_string(func(p, "c").value), "u32(-1) + u32(b(x))");
  EXPECT_EQ(func(p, "d").type, Int8());
  // An i16 index widens to i32 (it is bounded by its type), as u8 and u16 do.
  const Call* call = func(p, "e").value.as<Call>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->args[0].type(), Int32());
  EXPECT_EQ(call->args[0].as<Cast>()->value.type(), Int16());
  // A parameter of each type keeps its default.
  Pipeline q = compile(
      "param k : u32 = 2147483648\nparam j : i16 = -32768\nfunc f(x) = in(x)\n"
      "output f size(4)\n",
      "input in : u8[x]\n");
  EXPECT_EQ(q.params[0].default_value, 2147483648.0);
  EXPECT_EQ(q.params[1].default_value, -32768.0);
}

// f16 is a storage type: a read of an f16 input or func is widened to f32, a func whose
// value is f16 (an f16 cast, or a copy of an f16 read) is stored as f16, and its updates
// compute in f32 and are rounded on store.
TEST(Checker, F16ValuesAreWidenedAndStoredRounded) {
  Pipeline p = compile(
      "param s : f16 = 0.1\n"
      "func h(x) = f16(in(x) * 0.5)\n"
      "h(x) += s\n"
      "func w(x) = h(x) + in(x)\n"
      "func c(x) = in(x)\n"
      "func k(x) = f16(1.0 / 3.0)\n"
      "output w size(4)\n",
      "input in : f16[x]\n");
  EXPECT_EQ(p.params[0].type, Float16());
  EXPECT_EQ(p.params[0].default_value, 0.0999755859375);  // 0.1 rounded to f16
  const Func& h = func(p, "h");
  EXPECT_EQ(h.type, Float16());
  const Cast* round = h.value.as<Cast>();
  ASSERT_NE(round, nullptr);
  EXPECT_EQ(round->type, Float16());
  EXPECT_EQ(round->value.type(), Float32());
  EXPECT_EQ(to_string(h.value), "f16(in(x) * 0.5)");
  // The update: f32 arithmetic on the widened value, rounded to f16 by a cast.
  ASSERT_EQ(h.updates.size(), 1u);
  EXPECT_EQ(h.updates[0].value.type(), Float16());
  EXPECT_EQ(h.updates[0].value.as<Cast>()->value.type(), Float32());
  EXPECT_EQ(to_string(h.updates[0].value), "f16(h(x) + s)");
  const Func& w = func(p, "w");
  EXPECT_EQ(w.type, Float32());
  const Add* add = w.value.as<Add>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->a.as<Cast>()->value.type(), Float16());  // h(x) widened
  EXPECT_EQ(func(p, "c").type, Float16());                // a copy stays f16
  EXPECT_EQ(func(p, "k").value.as<FloatImm>()->value, 0.333251953125);
  // Printed and parsed again, the pipeline is the same.
  EXPECT_EQ(to_string(compile_pipeline(to_string(p), "again.stp")), to_string(p));
}

}  // namespace
}  // namespace stipple
