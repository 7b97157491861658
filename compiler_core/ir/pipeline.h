// A checked pipeline: inputs, parameters, funcs with their update definitions, and the
// output. This is what the checker produces from a .stp file, what the evaluator and
// lowering consume, and what proto/pipeline.proto carries losslessly.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"

namespace stipple {

/// What a read outside an input's extent returns.
enum class BoundaryKind : uint8_t {
  Clamp,     // the nearest edge pixel (the default)
  Mirror,    // reflection about the edge pixel, not repeating it: -1 -> 1 (OpenCV's REFLECT_101)
  Constant,  // a constant value
};
/// The boundary as the language writes it: "clamp", "mirror" or "constant".
const char* boundary_kind_name(BoundaryKind b);

struct InputDecl {
  std::string name;
  Type type;                           // element type
  std::vector<std::string> dim_names;  // e.g. {"x", "y", "c"}; 1 to 4 dimensions
  BoundaryKind boundary = BoundaryKind::Clamp;
  double boundary_value = 0;  // for Constant
};

struct ParamDecl {
  std::string name;
  Type type;
  double default_value = 0;  // exact for every i32 and f32 value
};

/// One update definition: `f(args) = value for domain`. Pure variables appear in `args`
/// as bare Variables in their own position; the domain's variables are Reduction
/// Variables and may index any position. `+=` and friends are desugared into `value`.
struct UpdateDef {
  std::vector<Expr> args;
  Expr value;
  std::vector<ReductionVariable> domain;  // may be empty (a pure update)
};

struct Func {
  std::string name;
  std::vector<std::string> args;  // pure variable names, in dimension order
  Type type;
  Expr value;  // the pure definition
  std::vector<UpdateDef> updates;
};

enum class ErrorMetric : uint8_t {
  Lab,   // mean CIE76 Delta E in L*a*b* of a 3-channel sRGB output
  Rmse,  // root mean square error on the output's own scale
};

/// How fronts, progress lines and `run --compare` label an error of the metric: "dE" or
/// "RMSE".
inline const char* metric_label(ErrorMetric m) { return m == ErrorMetric::Lab ? "dE" : "RMSE"; }

struct OutputDecl {
  std::string func;
  /// The extent of each output dimension (all dimensions, starting at 0); the checker
  /// fills in the first input's extents where the program gives none.
  std::vector<Expr> extents;
  ErrorMetric metric = ErrorMetric::Rmse;
};

struct Pipeline {
  std::string name;
  std::vector<InputDecl> inputs;
  std::vector<ParamDecl> params;
  std::vector<Func> funcs;  // in definition order; callees may come after callers
  OutputDecl output;

  const Func* find_func(const std::string& name) const;
  const InputDecl* find_input(const std::string& name) const;
  const ParamDecl* find_param(const std::string& name) const;
};

/// Adds the funcs `e` calls (not inputs, not intrinsics) to `out`.
void add_called_funcs(const Expr& e, std::set<std::string>& out);

/// The funcs f's definitions call: its value, and its updates' left sides, values and
/// domain bounds (f itself too, when an update reads it).
std::set<std::string> called_funcs(const Func& f);

}  // namespace stipple
