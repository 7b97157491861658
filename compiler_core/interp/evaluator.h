// The reference evaluator: the oracle every schedule and approximation is compared with.
//
// It realises every func the output needs, callees first, each over the box its callers
// need (bounds inferred from the consumers inwards by interval arithmetic over concrete
// values), evaluating the IR point by point exactly as compiler_core/ir/ir.h defines it.
// It is plainly correct first and reasonably fast second.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"

namespace stipple {

/// Values for params by name; params not given take their defaults.
using ParamValues = std::map<std::string, double>;
/// Input buffers by input name, of the input's element type and dimension count.
using InputImages = std::map<std::string, Buffer>;

/// Evaluates the output func over [0, extent) in every dimension, with the extents of the
/// pipeline's OutputDecl. Throws UserError for a missing or mistyped input, an unknown
/// param, or bounds that cannot be inferred.
Buffer evaluate_pipeline(const Pipeline& pipeline, const InputImages& inputs,
                         const ParamValues& params = {});

/// The extents of the pipeline's output for these inputs and params (the OutputDecl's
/// extents evaluated); validates inputs and params as evaluate_pipeline does.
std::vector<int64_t> output_extents(const Pipeline& pipeline, const InputImages& inputs,
                                    const ParamValues& params = {});

/// Evaluates the output func over the box [mins, mins + extents).
Buffer evaluate_pipeline_region(const Pipeline& pipeline, const InputImages& inputs,
                                const ParamValues& params, const std::vector<int64_t>& mins,
                                const std::vector<int64_t>& extents);

/// A box with inclusive bounds per dimension: [min[d], max[d]].
struct FuncBox {
  std::vector<int64_t> min, max;
  friend bool operator==(const FuncBox&, const FuncBox&) = default;
};

/// The box over which each func reachable from the output is realised when the output is
/// evaluated over [mins, mins + extents): what bounds inference decided. For tests and
/// for explaining the reference's work; throws exactly what evaluation would.
std::map<std::string, FuncBox> infer_func_boxes(const Pipeline& pipeline, const InputImages& inputs,
                                                const ParamValues& params,
                                                const std::vector<int64_t>& mins,
                                                const std::vector<int64_t>& extents);

}  // namespace stipple
