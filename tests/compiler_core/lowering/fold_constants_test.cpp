// Constant folding (compiler_core/lowering/fold_constants.h): constant i32 Lets are
// substituted, arithmetic on two constants is folded with the language's rules, loops that
// run once become Lets, and names bound to something else hide a constant of the same name.
// Then the case it exists for: a bounded output's channel loop, split by an unroll, runs
// once, and its vector loop is partitioned (no longer every vector under a mask), with the
// evaluator's values.
#include "compiler_core/lowering/fold_constants.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "tests/compiler_core/codegen/jit_vs_evaluator.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using irb::operator+;
using irb::operator-;
using irb::operator*;
using irb::var;
Expr imm(int64_t v) { return irb::i32(v); }

/// `e` after the pass, inside `let a = 7` and `let b = INT32_MAX`.
std::string folded(const Expr& e) {
  Stmt s = LetStmt::make(
      "a", imm(7), LetStmt::make("b", imm(std::numeric_limits<int32_t>::max()), Evaluate::make(e)));
  Stmt r = lowering::fold_constants(s);
  const auto* a = r.as<LetStmt>();
  const auto* b = a ? a->body.as<LetStmt>() : nullptr;
  const auto* ev = b ? b->body.as<Evaluate>() : nullptr;
  EXPECT_NE(ev, nullptr) << to_string(r);  // the bindings stay
  return ev ? to_string(ev->value) : "";
}

TEST(FoldConstants, ArithmeticOnConstantsFollowsTheLanguage) {
  EXPECT_EQ(folded(var("a") * imm(3) + imm(1)), "22");
  EXPECT_EQ(folded(var("b") + imm(1)), "-2147483648");  // wraps
  EXPECT_EQ(folded(Div::make(imm(-7), imm(2))), "-4");  // floor
  EXPECT_EQ(folded(Mod::make(imm(-7), imm(2))), "1");   // Euclidean
  EXPECT_EQ(folded(Div::make(var("a"), imm(0))), "0");
  EXPECT_EQ(folded(Mod::make(var("a"), imm(0))), "0");
  EXPECT_EQ(folded(Min::make(var("a"), Max::make(imm(-3), imm(9)))), "7");
  // What is not constant stays, with its constant parts folded.
  EXPECT_EQ(folded(var("x") + (var("a") - imm(2))), "x + 5");
  EXPECT_EQ(folded(Mul::make(var("x"), var("a"))), "x * 7");
}

TEST(FoldConstants, InnerBindingsHideOuterConstants) {
  // A Let of a non-constant, a loop variable and a reduction variable named `a` each hide
  // the constant a = 7 in their bodies.
  EXPECT_EQ(folded(Let::make("a", var("x"), var("a") + imm(1))), "let a = x in a + 1");
  Expr sum = Reduce::make(ReduceOp::Sum, {{"a", imm(0), var("a")}}, var("a") * imm(2));
  EXPECT_EQ(folded(sum), "sum(a in 0..7 : a * 2)");
  Stmt loop = LetStmt::make(
      "a", imm(7), For::make("a", imm(0), var("x"), ForType::Serial, Evaluate::make(var("a"))));
  EXPECT_EQ(to_string(lowering::fold_constants(loop)), "let a = 7\nfor a in 0..x - 1:\n  a\n");
}

TEST(FoldConstants, ALoopThatRunsOnceBecomesALet) {
  // (3 - 0 + 1 + 3) / 4 == 1 iteration: a Let of the variable, folded on through.
  Stmt loop = LetStmt::make("n", imm(3),
                            For::make("c", imm(2), Div::make(var("n") + imm(4), imm(4)),
                                      ForType::Unrolled, Evaluate::make(var("c") * imm(10))));
  EXPECT_EQ(to_string(lowering::fold_constants(loop)), "let n = 3\nlet c = 2\n20\n");
  // Parallel and vector loops stay loops.
  for (ForType t : {ForType::Parallel, ForType::Vectorized}) {
    Stmt once = For::make("c", imm(0), imm(1), t, Evaluate::make(var("c")));
    EXPECT_NE(lowering::fold_constants(once).as<For>(), nullptr);
  }
}

TEST(FoldConstants, ABoundChannelLoopRunsOnceAndItsVectorLoopIsPartitioned) {
  // g's channels inside x, unrolled by 4, computed per row of out with out's channels
  // inside its rows, under out.bound(c, 0, 3): g's channel range is the constant 0..3, so
  // the split channel loop runs once. Folded into a Let, it no
  // longer hides the vector loop's body from loop partitioning: full vectors run unmasked.
  const std::string src =
      "pipeline b\ninput in : f32[x, y, c]\n"
      "func g(x, y, c) = in(x, y, 0) * f32(c + 1) + in(x + 1, y, 2)\n"
      "func out(x, y, c) = g(x, y, c) / g(x, y, 3)\noutput out\n";
  const std::string sched =
      "g.compute_at(out, y).vectorize(x, 8).reorder(c, x, y).unroll(c, 4)\n"
      "out.bound(c, 0, 3).reorder(x, c, y).vectorize(x, 8)";
  Buffer in(ScalarType::Float32, {21, 3, 3});
  for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, (i * 37 % 101) / 10.0 + 1);
  jit_test::Result r = jit_test::run_both(src, sched, {{"in", in}}, {21, 3, 3});
  jit_test::expect_same(r, sched);
  Pipeline p = compile_pipeline(src, "b.stp");
  const std::string lowered = lowered_text(p, compile_schedule(sched, "b.sched", p));
  EXPECT_NE(lowered.find("let g.s0.c$1 = 0\n"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("for g.s0.c$1"), std::string::npos);
  EXPECT_NE(r.ir.find("g.s0.x$1.interior"), std::string::npos) << "no unmasked interior";
}

}  // namespace
}  // namespace stipple
