// Linear analysis of the i32 region expressions that lowering makes (a func's
// `f.rmin.d` ... `f.cmax.d` lets): each expression is rewritten into a linear combination
// of atoms (variables not defined to the analyzer, and min/max/div nodes), and a min/max
// atom is split by moving the rest of the sum into its operands, where terms cancel. That
// proves the direction in which an expression moves as a loop variable grows (the sliding
// window) and bounds a difference such as an extent by a constant (storage folding, and
// allocations inside GPU kernels).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir.h"

namespace stipple::lowering {

// How an expression changes as v grows: not at all, never down, never up, or unknown.
enum class Dir { Const, Inc, Dec, Unknown };

/// The direction of a sum of two expressions moving as a and b do.
Dir combine(Dir a, Dir b);

// sum(k * atom) + c; atoms are compared structurally and merged, zero terms dropped.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t c = 0;
};

// Monotonicity and difference bounds of i32 region expressions in a loop variable v.
// Names defined to it (the lets bound inside the loop, and Let nodes met on the way) are
// expanded into their definitions; every other name is fixed while the loop runs.
class RegionAnalyzer {
 public:
  explicit RegionAnalyzer(std::string v = "") : v_(std::move(v)) {}

  void define(const std::string& name, const Expr& value) { defs_[name] = value; }

  /// How `e` changes as the loop variable grows.
  Dir direction(const Expr& e);

  /// A constant no smaller than `e` wherever the names defined to the analyzer hold.
  std::optional<int64_t> upper_bound(const Expr& e);

  /// Whether `e` (or the name) changes with the loop variable, through the definitions.
  bool depends(const Expr& e);
  bool depends_on(const std::string& name);

 private:
  // Splitting min/max atoms is exponential in the worst case; past the budget the
  // answer is "unknown", which only means no sliding.
  static constexpr int kBudget = 20000;

  Linear linear(const Expr& e);
  Dir atom_dir(const Expr& e, int& budget);
  Dir dir(const Linear& l, int& budget);
  std::optional<int64_t> ub(const Linear& l, int& budget);

  std::string v_;
  std::map<std::string, Expr> defs_;
  std::map<std::string, Linear> linear_memo_;
  std::map<std::string, bool> depends_memo_;
};

}  // namespace stipple::lowering
