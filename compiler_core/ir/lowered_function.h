// What lowering produces and every back end consumes: one function's loop nest and the
// buffers and params outside it that the loop nest names. An IR-level type, so that
// lowering (which makes it) and codegen (which compiles it) both depend on ir/ and
// neither on the other.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/ir/type.h"

namespace stipple {

/// A func buffer that the caller allocates (the output, or a stage lowering chose to
/// realise outside the generated function).
struct ExternalBuffer {
  /// A dimension the caller's buffer must span exactly (the schedule's bound(v, min,
  /// extent) of the output): the loop nest was built for that range, and back ends refuse
  /// a buffer that differs before running anything.
  struct FixedDim {
    int dim = 0;
    int64_t min = 0, extent = 0;
  };
  ExternalBuffer() = default;
  ExternalBuffer(std::string n, Type t, int dims, std::vector<FixedDim> f = {})
      : name(std::move(n)), type(t), dimensions(dims), fixed(std::move(f)) {}

  std::string name;
  Type type;
  int dimensions = 0;
  std::vector<FixedDim> fixed;
};

/// One function to generate: its statement and everything outside it that it names.
/// Buffer descriptors are passed inputs first (in this order), then `buffers`; param
/// values are passed as doubles in the order of `params`.
struct LoweredFunction {
  std::string name;  // for messages
  Stmt body;
  std::vector<InputDecl> inputs;
  std::vector<ExternalBuffer> buffers;
  std::vector<ParamDecl> params;
  /// The caller's buffers (inputs and `buffers`, by name) whose dimension 0 is not dense:
  /// its stride in elements, a constant the code is specialised to. An interleaved image
  /// (RGBRGB..., as OpenCV and numpy hold HxWxC) read and written in place has dimension 0
  /// (x) stride C. Rows along x are then read as every C-th element of a wider load
  /// (strided_row) and written lane by lane; a descriptor with another dim[0].stride is
  /// refused on entry, as any mismatch is. Absent: stride 1, what every other caller has.
  std::map<std::string, int64_t> inner_strides;
};

}  // namespace stipple
