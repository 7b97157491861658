// The engine's pipeline (engine.h's LoadedPipeline): a checked program, the text it came
// from, and the variants compiled from it. Seen by the engine's files only (it includes
// the compiler's IR, whose stipple::Pipeline the public header's would meet).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "stipple/buffer_view.h"

namespace stipple::embedding {

struct CompiledVariant;

struct LoadedPipeline {
  Pipeline ir;
  /// The program's text and what messages call it: its path when loaded from a file
  /// (on_disk), the caller's name for text given directly. A tuning run stores both.
  std::string source, file;
  bool on_disk = false;
  std::string name;
  std::vector<PipelineInput> inputs;
  std::vector<PipelineParam> params;
  ElementType output_type = ElementType::Float32;
  /// Variants by schedule text: compiling a schedule again while a Function of it lives
  /// costs nothing. Not owned (a variant owns its pipeline): a variant no Function holds
  /// is freed with its code.
  mutable std::mutex mu;
  mutable std::map<std::string, std::weak_ptr<CompiledVariant>> variants;
};

}  // namespace stipple::embedding
