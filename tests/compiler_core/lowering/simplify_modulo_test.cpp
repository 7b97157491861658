// Modulo simplification (compiler_core/lowering/simplify_modulo.h): `e % c` for a
// power-of-two c drops the terms of e that are multiples of c, looking through Lets.
// Checked on the split-variable case it exists for, on what it must leave alone, and by a
// property test: random sums of variables (some bound by Lets), with random coefficients
// and random moduli, evaluated before and after the pass by an evaluator written here
// (wrapping i32 arithmetic, Euclidean `%`), at random values that include ones that wrap.
#include "compiler_core/lowering/simplify_modulo.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple {
namespace {

Expr var(const std::string& name) { return Variable::make(name); }
Expr imm(int64_t v) { return IntImm::make(Int32(), v); }

// The expression of `Evaluate(e)` after the pass.
Expr simplified(const Expr& e) {
  Stmt s = lowering::simplify_modulo(Evaluate::make(e));
  const auto* ev = s.as<Evaluate>();
  EXPECT_NE(ev, nullptr);
  return ev ? ev->value : Expr();
}

// i32 arithmetic as the language defines it: wrapping, Euclidean remainder.
int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

int32_t eval(const Expr& e, std::map<std::string, int32_t>& env) {
  if (const auto* i = e.as<IntImm>()) return wrap32(i->value);
  if (const auto* v = e.as<Variable>()) {
    auto it = env.find(v->name);
    EXPECT_NE(it, env.end()) << "unbound " << v->name;
    return it == env.end() ? 0 : it->second;
  }
  if (const auto* a = e.as<Add>()) return wrap32(int64_t{eval(a->a, env)} + eval(a->b, env));
  if (const auto* s = e.as<Sub>()) return wrap32(int64_t{eval(s->a, env)} - eval(s->b, env));
  if (const auto* m = e.as<Mul>()) return wrap32(int64_t{eval(m->a, env)} * eval(m->b, env));
  if (const auto* m = e.as<Mod>()) {
    int64_t a = eval(m->a, env), b = eval(m->b, env);
    if (b == 0) return 0;
    int64_t r = a % b;
    if (r < 0) r += b < 0 ? -b : b;
    return wrap32(r);
  }
  if (const auto* l = e.as<Let>()) {
    auto saved = env;
    env[l->name] = eval(l->value, env);
    int32_t r = eval(l->body, env);
    env = saved;
    return r;
  }
  ADD_FAILURE() << "unexpected node in " << to_string(e);
  return 0;
}

TEST(SimplifyModulo, ASplitVariableLosesItsOuterLoopInAParityTest) {
  // let x = x.min + x.outer * 32 + x.vector in (x + 1) % 2
  Expr x_value =
      Add::make(Add::make(var("x.min"), Mul::make(var("x.outer"), imm(32))), var("x.vector"));
  Expr e = Let::make("x", x_value, Mod::make(Add::make(var("x"), imm(1)), imm(2)));
  EXPECT_EQ(to_string(simplified(e)),
            to_string(Let::make(
                "x", x_value,
                Mod::make(Add::make(Add::make(var("x.min"), var("x.vector")), imm(1)), imm(2)))));
}

TEST(SimplifyModulo, LetStatementsAreLookedThroughAndUnneededVariablesKept) {
  // let t = a + b; let x = t + o * 8; store (x - 16) % 4: t is not expanded (nothing in it
  // is dropped), o * 8 and -16 are.
  Expr t_value = Add::make(var("a"), var("b"));
  Expr x_value = Add::make(var("t"), Mul::make(var("o"), imm(8)));
  Stmt body = Provide::make("f", Mod::make(Sub::make(var("x"), imm(16)), imm(4)), {var("t")});
  Stmt s = LetStmt::make("t", t_value, LetStmt::make("x", x_value, body));
  Stmt out = lowering::simplify_modulo(s);
  const auto* provide = out.as<LetStmt>()->body.as<LetStmt>()->body.as<Provide>();
  ASSERT_NE(provide, nullptr);
  EXPECT_EQ(to_string(provide->value), to_string(Mod::make(var("t"), imm(4))));
}

TEST(SimplifyModulo, LeavesOtherModuliAndNonMultiplesAlone) {
  Expr x_value = Add::make(var("m"), Mul::make(var("o"), imm(6)));
  for (int64_t c : {3, 6, 12, 0, -2}) {  // not a positive power of two: unchanged
    Expr e = Let::make("x", x_value, Mod::make(var("x"), imm(c)));
    EXPECT_TRUE(simplified(e).same_as(e)) << c;
  }
  Expr e = Let::make("x", x_value, Mod::make(var("x"), imm(4)));  // 6 is not a multiple of 4
  EXPECT_TRUE(simplified(e).same_as(e));
  Expr q = Mod::make(Mul::make(var("o"), imm(8)), Div::make(var("n"), imm(2)));
  EXPECT_TRUE(simplified(q).same_as(q));  // the modulus is not a constant
}

TEST(SimplifyModulo, ALoopVariableHidesALetOfTheSameName) {
  // let x = o * 2 + v; for x in ...: x % 2 is the loop's x, not the Let's.
  Stmt loop = For::make("x", imm(0), imm(4), ForType::Serial,
                        Provide::make("f", Mod::make(var("x"), imm(2)), {var("x")}));
  Stmt s = LetStmt::make("x", Add::make(Mul::make(var("o"), imm(2)), var("v")), loop);
  EXPECT_TRUE(lowering::simplify_modulo(s).same_as(s));
}

TEST(SimplifyModulo, AReductionVariableHidesALetOfTheSameName) {
  // let i = o * 2 + v in sum(i in 0..3 : i % 2): the reduction's i, not the Let's.
  Expr sum = Reduce::make(ReduceOp::Sum, {{"i", imm(0), imm(3)}}, Mod::make(var("i"), imm(2)));
  Expr i_value = Add::make(Mul::make(var("o"), imm(2)), var("v"));
  Expr e = Let::make("i", i_value, sum);
  EXPECT_TRUE(simplified(e).same_as(e));
  // Outside the reduction the Let's i is seen again.
  Expr after = Let::make("i", i_value, Add::make(sum, Mod::make(var("i"), imm(2))));
  EXPECT_EQ(to_string(simplified(after)),
            to_string(Let::make("i", i_value, Add::make(sum, Mod::make(var("v"), imm(2))))));
}

TEST(SimplifyModulo, RandomSumsKeepTheirRemainder) {
  std::mt19937 rng(20261124);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  const std::vector<int64_t> coefficients = {1, -1, 2, 3, 4, 8, 16, 32, -64, 256, 1 << 20, 6};
  int simplified_count = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto random_sum = [&](int terms, int variables) {
      Expr sum;
      for (int k = 0; k < terms; ++k) {
        Expr term;
        switch (pick(3)) {
          case 0: term = var(names[pick(variables)]); break;
          case 1: term = imm(coefficients[pick(12)] * (pick(2) ? 3 : 1)); break;
          default:
            term = pick(2) ? Mul::make(var(names[pick(variables)]), imm(coefficients[pick(12)]))
                           : Mul::make(imm(coefficients[pick(12)]), var(names[pick(variables)]));
        }
        sum = !sum.defined() ? term : pick(2) ? Add::make(sum, term) : Sub::make(sum, term);
      }
      return sum;
    };
    const int64_t modulus = std::vector<int64_t>{1, 2, 4, 8, 16, 64, 3, 12}[pick(8)];
    // "d" is a Let over a, b and c; the sum under the modulo may use it.
    Expr e = Let::make("d", random_sum(1 + pick(4), 3),
                       Mod::make(random_sum(1 + pick(5), 4), imm(modulus)));
    Expr after = simplified(e);
    if (!after.same_as(e)) ++simplified_count;
    for (int point = 0; point < 20; ++point) {
      std::map<std::string, int32_t> env;
      for (const char* n : {"a", "b", "c"}) {
        env[n] = pick(4) == 0 ? static_cast<int32_t>(rng()) : pick(200) - 100;
      }
      std::map<std::string, int32_t> env2 = env;
      ASSERT_EQ(eval(e, env), eval(after, env2))
          << to_string(e) << "\nbecame " << to_string(after) << "\nat a=" << env["a"]
          << " b=" << env["b"] << " c=" << env["c"];
    }
  }
  EXPECT_GT(simplified_count, 500);  // the property is not vacuous
}

// The pass as lowering runs it: demosaic's Bayer parity tests no longer depend on the
// tile loops of its hand schedule (lowering_test checks its output against the evaluator).
TEST(SimplifyModulo, DemosaicsParityTestsLoseTheTileLoops) {
  const std::string dir = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/";
  Pipeline p = load_pipeline_file(dir + "demosaic.stp");
  Schedule s = load_schedule_file(dir + "demosaic.sched", p);
  std::string text = to_string(lower(p, s).body);
  EXPECT_NE(text.find("(blue_x.cmin.0 + blue_x.s0.x.vector) % 2"), std::string::npos) << text;
  EXPECT_NE(text.find("(out.cmin.1 + out.s0.yi) % 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("blue_x.s0.x % 2"), std::string::npos) << text;
}

}  // namespace
}  // namespace stipple
