// exit_guard_of (compiler_core/codegen/exit_guard.h): which guards end their loop. Each
// case is the loop a split's tail makes, or one a rule must refuse: a refusal that is
// wrong only costs speed, an acceptance that is wrong skips iterations, so the refusals
// are checked as carefully as the acceptances; and the accepted guards are checked by
// running the loop both ways over every extent and bound.
#include "compiler_core/codegen/exit_guard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/ir_printer.h"

namespace stipple::codegen {
namespace {

Expr v(const std::string& n) { return Variable::make(n); }
Expr k(int64_t c) { return IntImm::make(Int32(), c); }

// for (yr = 0; yr < 8; ++yr) { let y = base + yr; if (COND) out(y) = 1 }
Stmt tail_loop(const Expr& cond, bool with_else = false) {
  Stmt store = Provide::make("out", k(1), {v("y")});
  Stmt guarded = with_else ? IfThenElse::make(cond, store, Evaluate::make(k(0)))
                           : IfThenElse::make(cond, store);
  Stmt body = LetStmt::make("y", Add::make(v("base"), v("yr")), guarded);
  return For::make("yr", k(0), k(8), ForType::Serial, body);
}

bool ends_loop(const Expr& cond) {
  Stmt loop = tail_loop(cond);
  return exit_guard_of(loop.as<For>()) != nullptr;
}

TEST(ExitGuard, ATailGuardOnAGrowingCoordinateEndsTheLoop) {
  EXPECT_TRUE(ends_loop(LE::make(v("y"), v("hi"))));
  EXPECT_TRUE(ends_loop(LT::make(v("y"), v("hi"))));
  EXPECT_TRUE(ends_loop(GE::make(v("hi"), v("y"))));
  EXPECT_TRUE(ends_loop(GT::make(v("hi"), v("y"))));
  // The guards a tile makes: conjunctions with terms that do not depend on the loop.
  EXPECT_TRUE(ends_loop(And::make(LE::make(v("x"), v("hi_x")), LE::make(v("y"), v("hi")))));
  // Sums, non-negative multiples, mins and maxes of growing values grow.
  EXPECT_TRUE(ends_loop(LE::make(Mul::make(k(4), Add::make(v("y"), v("yr"))), v("hi"))));
  EXPECT_TRUE(ends_loop(LE::make(Min::make(v("y"), v("cap")), v("hi"))));
  EXPECT_TRUE(ends_loop(LE::make(Max::make(v("y"), Sub::make(v("yr"), k(3))), v("hi"))));
  // A condition that does not depend on the loop is false at every iteration or none.
  EXPECT_TRUE(ends_loop(LT::make(v("a"), v("b"))));
}

TEST(ExitGuard, GuardsThatCanTurnTrueAgainDoNotEndTheLoop) {
  // Shrinking or non-monotonic left sides.
  EXPECT_FALSE(ends_loop(LE::make(Sub::make(v("hi"), v("y")), v("lo"))));
  EXPECT_FALSE(ends_loop(LE::make(Mul::make(k(-1), v("y")), v("hi"))));
  EXPECT_FALSE(ends_loop(LE::make(Mod::make(v("y"), k(4)), k(1))));
  EXPECT_FALSE(ends_loop(LE::make(Div::make(k(64), Add::make(v("yr"), k(1))), v("hi"))));
  // A lower bound on a growing value turns true, not false.
  EXPECT_FALSE(ends_loop(GE::make(v("y"), v("lo"))));
  EXPECT_FALSE(ends_loop(LE::make(v("lo"), v("y"))));
  // A bound that moves with the loop, an Or, a Not, an equality.
  EXPECT_FALSE(ends_loop(LE::make(v("y"), Add::make(v("hi"), v("yr")))));
  EXPECT_FALSE(ends_loop(Or::make(LE::make(v("y"), v("hi")), LT::make(v("a"), v("b")))));
  EXPECT_FALSE(ends_loop(Not::make(LE::make(v("y"), v("hi")))));
  EXPECT_FALSE(ends_loop(EQ::make(v("y"), v("hi"))));
  // An else branch runs on the iterations the guard skips.
  Stmt with_else = tail_loop(LE::make(v("y"), v("hi")), true);
  EXPECT_EQ(exit_guard_of(with_else.as<For>()), nullptr);
  // Anything after the guard would run on every iteration.
  Stmt guard = IfThenElse::make(LE::make(v("yr"), v("hi")), Provide::make("out", k(1), {v("yr")}));
  Stmt two = For::make("yr", k(0), k(8), ForType::Serial,
                       Block::make(guard, Provide::make("out", k(2), {v("yr")})));
  EXPECT_EQ(exit_guard_of(two.as<For>()), nullptr);
}

// Every accepted guard, run both ways (skip the iteration; leave the loop) over small
// values of its free names, stores the same points.
TEST(ExitGuard, BreakingAtAnAcceptedGuardRunsTheSameIterations) {
  const std::vector<Expr> accepted = {
      LE::make(v("y"), v("hi")),
      And::make(LE::make(v("x"), v("hi_x")), LT::make(v("y"), v("hi"))),
      LE::make(Min::make(Add::make(v("y"), v("yr")), v("cap")), v("hi")),
  };
  for (const Expr& cond : accepted) {
    ASSERT_TRUE(ends_loop(cond));
    for (int base = -3; base <= 3; ++base) {
      for (int hi = -4; hi <= 12; ++hi) {
        for (int cap = -2; cap <= 10; cap += 3) {
          for (int x = 0; x <= 2; ++x) {
            std::map<std::string, int> env = {
                {"base", base}, {"hi", hi}, {"hi_x", 1}, {"cap", cap}, {"x", x}};
            std::function<int(const Expr&)> eval = [&](const Expr& e) -> int {
              if (const IntImm* i = e.as<IntImm>()) return static_cast<int>(i->value);
              if (const Variable* var = e.as<Variable>()) return env.at(var->name);
              if (const Add* o = e.as<Add>()) return eval(o->a) + eval(o->b);
              if (const Min* o = e.as<Min>()) return std::min(eval(o->a), eval(o->b));
              if (const LE* o = e.as<LE>()) return eval(o->a) <= eval(o->b);
              if (const LT* o = e.as<LT>()) return eval(o->a) < eval(o->b);
              if (const And* o = e.as<And>()) return eval(o->a) && eval(o->b);
              ADD_FAILURE() << "unexpected node";
              return 0;
            };
            std::vector<int> skipped, broken;
            for (int yr = 0; yr < 8; ++yr) {
              env["yr"] = yr;
              env["y"] = base + yr;
              if (eval(cond)) skipped.push_back(yr);
            }
            for (int yr = 0; yr < 8; ++yr) {
              env["yr"] = yr;
              env["y"] = base + yr;
              if (!eval(cond)) break;
              broken.push_back(yr);
            }
            EXPECT_EQ(skipped, broken) << cond << " base " << base << " hi " << hi;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace stipple::codegen
