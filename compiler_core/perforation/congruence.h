// Congruence simplification (Image Perforation §3.3.3): proving with Z3 that an i32
// index expression is congruent to a constant modulo a grid spacing, for every value of
// its variables. A read of a grid-perforated func at such an index needs no run-time
// interpolation weights: residue 0 is a plain read of one sample, residue r a blend with
// the constant weights (1 - r/s, r/s).
//
//   CongruenceProver prover;
//   prover.residue(x * 4 + 2, 4)       // 2
//   prover.residue(x * 4 - i, 4)       // nullopt: depends on i
//   prover.residue(x, 4, {{"x", {4, 0}}})   // 0: x is known to be a multiple of 4
//
// The variables' known congruences (from loops that step by a spacing) go to the solver
// as assertions. Integers are mathematical in the solver while i32 wraps; for the
// power-of-two spacings a wrap does not change a residue, and image coordinates do not
// wrap. What the translation does not model (floats, casts, reads of funcs and images,
// division by a non-constant) becomes an unknown integer, so a proof never depends on it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compiler_core/ir/ir.h"

namespace stipple::perforation {

/// v ≡ residue (mod modulus).
struct Congruence {
  int64_t modulus = 1;
  int64_t residue = 0;
};
using KnownCongruences = std::map<std::string, Congruence>;

class CongruenceProver {
 public:
  CongruenceProver();
  ~CongruenceProver();
  CongruenceProver(const CongruenceProver&) = delete;
  CongruenceProver& operator=(const CongruenceProver&) = delete;

  /// The r in [0, modulus) with e ≡ r (mod modulus) for all values of e's variables
  /// satisfying `known`, or nullopt when there is none (or the solver cannot tell).
  /// Results are cached per (e, modulus, known).
  std::optional<int64_t> residue(const Expr& e, int64_t modulus,
                                 const KnownCongruences& known = {});

  int64_t solver_calls() const { return solver_calls_; }
  int64_t cache_hits() const { return cache_hits_; }

 private:
  struct Solver;
  std::unique_ptr<Solver> solver_;
  std::map<std::string, std::optional<int64_t>> cache_;
  int64_t solver_calls_ = 0;
  int64_t cache_hits_ = 0;
};

/// (e - residue) / modulus for an e known to be congruent to residue: an affine e
/// (variables, params and other atoms under +, - and * by constants) whose coefficients
/// divide by the modulus gives the affine quotient (`x * 4 + 2`, 2, 4 gives `x`);
/// anything else the floor division, which is exact there.
Expr exact_quotient(const Expr& e, int64_t residue, int64_t modulus);

}  // namespace stipple::perforation
