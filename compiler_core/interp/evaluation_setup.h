// What the evaluator decides before computing a single pixel: the validated inputs and
// params (as the concrete constants every later stage folds in) and the order in which
// funcs are realised (callees before callers).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple::interp {

/// The concrete values a pipeline's constants take in one evaluation.
struct ConstantEnv {
  const Pipeline* pipeline = nullptr;
  std::map<std::string, Value> params;  // every declared param, in its own type
  std::map<std::string, const Buffer*> inputs;

  Value param(const std::string& name) const;
  /// Extent of dimension `dim` of an input, 1 beyond its dimensions.
  int64_t input_extent(const std::string& input, int dim) const;
};

/// Checks the inputs and params against the pipeline's declarations (UserError on a
/// mismatch) and resolves every param to its value. The env points into `inputs`.
ConstantEnv make_constant_env(const Pipeline& pipeline, const InputImages& inputs,
                              const ParamValues& params);

/// The funcs reachable from `root`, each after every func it calls (a func's updates may
/// call the func itself). A cycle between funcs is an InternalError (the checker rejects
/// them), as is a call to an undeclared func or input.
std::vector<const Func*> order_funcs(const Pipeline& pipeline, const std::string& root);

}  // namespace stipple::interp
