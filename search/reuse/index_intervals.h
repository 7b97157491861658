// Interval arithmetic over the index expressions of a pipeline, for the reuse model's
// analysis: which part of a producer a consumer reads, given the ranges of the
// consumer's variables (Sioutas et al., "Schedule Synthesis for Halide Pipelines through
// Reuse Analysis", §3: the footprints whose sizes are equations 1-13).
//
// The arithmetic is the evaluator's (compiler_core/bounds/interval.h), so a footprint
// contains every index the evaluator can read. What is the reuse model's own is the
// constants: params take their default values and input extents an estimate (the model
// schedules for output extents, not for given images), so every constant is a point;
// and a name outside the scope is unbounded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler_core/bounds/interval.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple::search::reuse {

using Interval = bounds::Interval;
using IntervalScope = bounds::IntervalScope;
using bounds::interval_of;
using bounds::reduction_range;

/// The constants of one analysis: the pipeline (params at their defaults) and the
/// estimated extents of its inputs.
struct IndexConstants : bounds::IntervalConstants {
  const Pipeline* pipeline = nullptr;
  std::map<std::string, std::vector<int64_t>> input_extents;

  /// The estimated extent of dimension `dim` of an input (1 beyond its dimensions).
  int64_t estimated_extent(const std::string& input, int dim) const;

  Interval param(const std::string& name, Type t) const override;
  Interval input_extent(const std::string& input, int dim) const override;
  Interval free_variable(const std::string& name) const override;
};

/// Input extents for a pipeline computed over `output_extents`: an output extent that is
/// written as an input's extent (`size(in.width, in.height, 3)`, or the checker's
/// default) gives that input's extent; other input dimensions take the output's extent
/// in the same dimension, or 4 beyond the output's dimensions.
IndexConstants make_index_constants(const Pipeline& p, const std::vector<int64_t>& output_extents);

/// Whether `e` reads a func or an input (a data-dependent index).
bool reads_data(const Expr& e);
/// Whether `e` mentions a param or an input extent (a window whose size is not a
/// compile-time constant, which the lowering cannot fold).
bool mentions_runtime_constants(const Expr& e);
/// Whether the lowering's sliding-window analysis follows `e` as a function of the loop
/// variable (compiler_core/lowering/README.md): sums, products and quotients by
/// constants, min and max; not %, select, abs, a non-constant divisor or a load.
bool is_slidable_index(const Expr& e);
/// The pure variables (VarKind::Pure) `e` mentions.
std::vector<std::string> pure_variables(const Expr& e);

/// Arithmetic cost of evaluating `e` once, in units of an add, with calls counted apart:
/// add, sub, mul, min, max, comparisons, select, casts: 1; fma (a contracted multiply-add):
/// 2; div and mod: 4; sqrt: 4; exp, log, pow, sin, cos: 20; a reduction multiplies its
/// body by its domain's size.
struct OpCount {
  double ops = 0;    // arithmetic
  double loads = 0;  // calls to funcs and inputs
  /// Calls by func or input name, each weighted by the sizes of the reductions around it.
  std::map<std::string, double> calls;
};
OpCount count_ops(const Expr& e, IntervalScope& scope, const IndexConstants& k);

}  // namespace stipple::search::reuse
