// What lowering produces and every back end consumes: one function's loop nest and the
// buffers and params outside it that the loop nest names. An IR-level type, so that
// lowering (which makes it) and codegen (which compiles it) both depend on ir/ and
// neither on the other.
#pragma once

#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/ir/type.h"

namespace stipple {

/// A func buffer that the caller allocates (the output, or a stage lowering chose to
/// realise outside the generated function).
struct ExternalBuffer {
  std::string name;
  Type type;
  int dimensions = 0;
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
};

}  // namespace stipple
