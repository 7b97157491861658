// Congruence proofs with Z3 and exact quotients (compiler_core/perforation/congruence.h).
#include "compiler_core/perforation/congruence.h"

#include <gtest/gtest.h>

#include <random>

#include "compiler_core/ir/ir_printer.h"

namespace stipple::perforation {
namespace {

Expr x() { return Variable::make("x"); }
Expr y() { return Variable::make("y"); }
Expr i() { return Variable::make("i", VarKind::Reduction); }
Expr k(int64_t v) { return IntImm::make(Int32(), v); }

TEST(Congruence, ProvesAffineResidues) {
  CongruenceProver prover;
  EXPECT_EQ(prover.residue(Mul::make(x(), k(4)), 4), 0);
  EXPECT_EQ(prover.residue(Add::make(Mul::make(x(), k(4)), k(2)), 4), 2);
  EXPECT_EQ(prover.residue(Sub::make(Mul::make(x(), k(4)), k(1)), 4), 3);
  EXPECT_EQ(prover.residue(Add::make(Mul::make(x(), k(8)), Mul::make(y(), k(12))), 4), 0);
  EXPECT_EQ(prover.residue(Add::make(Mul::make(x(), k(4)), k(6)), 4), 2);
  // Modulo 1 everything is 0, without the solver.
  EXPECT_EQ(prover.residue(x(), 1), 0);
}

TEST(Congruence, RefusesWhatDependsOnAVariable) {
  CongruenceProver prover;
  EXPECT_EQ(prover.residue(x(), 4), std::nullopt);
  EXPECT_EQ(prover.residue(Sub::make(Mul::make(x(), k(4)), i()), 4), std::nullopt);
  EXPECT_EQ(prover.residue(Add::make(Mul::make(x(), k(2)), k(1)), 4), std::nullopt);
  // A read of an image is an unknown integer.
  Expr pixel = Cast::make(Int32(), Call::make(Float32(), "in", {x(), y()}, CallType::Input));
  EXPECT_EQ(prover.residue(Add::make(Mul::make(x(), k(4)), pixel), 4), std::nullopt);
  // ...but the same unknown twice cancels.
  EXPECT_EQ(prover.residue(Sub::make(Add::make(Mul::make(x(), k(4)), pixel), pixel), 4), 0);
}

TEST(Congruence, ProvesThroughNonAffineStructure) {
  CongruenceProver prover;
  // (x * 4 + 2) / 2 * 2 = x * 4 + 2: the division is exact.
  Expr e = Mul::make(Div::make(Add::make(Mul::make(x(), k(4)), k(2)), k(2)), k(2));
  EXPECT_EQ(prover.residue(e, 4), 2);
  // Both arms of a select, min and max are multiples of 4.
  Expr a = Mul::make(x(), k(4)), b = Add::make(Mul::make(y(), k(8)), k(4));
  EXPECT_EQ(prover.residue(Select::make(LT::make(x(), y()), a, b), 4), 0);
  EXPECT_EQ(prover.residue(Min::make(a, b), 4), 0);
  EXPECT_EQ(prover.residue(Add::make(Max::make(a, b), k(1)), 4), 1);
  // x % 4 + x - x % 4 ... is x; (x - x % 4) is a multiple of 4.
  EXPECT_EQ(prover.residue(Sub::make(x(), Mod::make(x(), k(4))), 4), 0);
  // A Let-bound index.
  Expr let = Let::make("t", Mul::make(x(), k(4)), Add::make(Variable::make("t"), k(3)));
  EXPECT_EQ(prover.residue(let, 4), 3);
}

TEST(Congruence, UsesKnownCongruencesOfLoopVariables) {
  CongruenceProver prover;
  KnownCongruences known{{"x", {4, 0}}};
  // The paper's §3.3.3 example: x ≡ 0 (mod 4), so x and x + 2 are congruent to 0 and 2.
  EXPECT_EQ(prover.residue(x(), 4, known), 0);
  EXPECT_EQ(prover.residue(Add::make(x(), k(2)), 4, known), 2);
  EXPECT_EQ(prover.residue(Add::make(x(), k(2)), 2, known), 0);
  EXPECT_EQ(prover.residue(Add::make(x(), y()), 4, known), std::nullopt);
  EXPECT_EQ(prover.residue(x(), 8, known), std::nullopt);
}

TEST(Congruence, CachesEachQuery) {
  CongruenceProver prover;
  Expr e = Add::make(Mul::make(x(), k(4)), k(2));
  EXPECT_EQ(prover.residue(e, 4), 2);
  EXPECT_EQ(prover.solver_calls(), 1);
  // A structurally equal expression built again is a cache hit.
  EXPECT_EQ(prover.residue(Add::make(Mul::make(x(), k(4)), k(2)), 4), 2);
  EXPECT_EQ(prover.solver_calls(), 1);
  EXPECT_EQ(prover.cache_hits(), 1);
  // Another modulus or other known facts are another query.
  EXPECT_EQ(prover.residue(e, 2), 0);
  EXPECT_EQ(prover.residue(e, 4, {{"x", {2, 1}}}), 2);
  EXPECT_EQ(prover.solver_calls(), 3);
}

TEST(Congruence, AgreesWithEvaluationOnRandomAffineIndices) {
  // Property: whenever the prover names a residue, every sampled assignment has it; and
  // for c0 * x + c1 * y + c2 it names one exactly when the coefficients are multiples.
  std::mt19937 rng(7);
  CongruenceProver prover;
  std::uniform_int_distribution<int> coef(-9, 9), mod(2, 8), val(-1000, 1000);
  for (int n = 0; n < 150; ++n) {
    int64_t c0 = coef(rng), c1 = coef(rng), c2 = coef(rng), m = mod(rng);
    Expr e = Add::make(Add::make(Mul::make(x(), k(c0)), Mul::make(y(), k(c1))), k(c2));
    std::optional<int64_t> r = prover.residue(e, m);
    bool constant = c0 % m == 0 && c1 % m == 0;
    ASSERT_EQ(r.has_value(), constant) << to_string(e) << " mod " << m;
    if (!r) continue;
    for (int t = 0; t < 20; ++t) {
      int64_t xv = val(rng), yv = val(rng);
      int64_t v = c0 * xv + c1 * yv + c2;
      ASSERT_EQ(((v % m) + m) % m, *r) << to_string(e) << " mod " << m;
    }
  }
}

TEST(ExactQuotient, DividesAffineExpressions) {
  EXPECT_EQ(to_string(exact_quotient(Mul::make(x(), k(4)), 0, 4)), "x");
  EXPECT_EQ(to_string(exact_quotient(Add::make(Mul::make(x(), k(4)), k(2)), 2, 4)), "x");
  EXPECT_EQ(to_string(exact_quotient(Add::make(Mul::make(x(), k(4)), k(6)), 2, 4)), "x + 1");
  EXPECT_EQ(to_string(exact_quotient(Sub::make(Mul::make(x(), k(8)), Mul::make(y(), k(4))), 0, 4)),
            "x * 2 - y");
  EXPECT_EQ(to_string(exact_quotient(Sub::make(Mul::make(x(), k(4)), k(5)), 3, 4)), "x - 2");
  // Not affine with divisible coefficients: the floor division, exact where it is used.
  EXPECT_EQ(to_string(exact_quotient(Mul::make(Div::make(x(), k(2)), k(8)), 0, 4)), "x / 2 * 2");
  EXPECT_EQ(to_string(exact_quotient(Add::make(x(), Mul::make(y(), k(3))), 1, 4)),
            "(x + y * 3 - 1) / 4");
}

}  // namespace
}  // namespace stipple::perforation
