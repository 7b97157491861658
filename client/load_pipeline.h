// Loading a pipeline from the command line: the front end's warnings (a func the output
// never uses, ...) go to standard error, each as `file:line:col: warning: message` with
// the source line and a caret, and the pipeline is returned as the front end gives it.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/frontend.h"

namespace stipple::cli {

/// load_pipeline_file, with its warnings written to `warnings_to` (standard error).
Pipeline load_pipeline_reporting(const std::string& path);
Pipeline load_pipeline_reporting(const std::string& path, std::ostream& warnings_to);

/// compile_pipeline of a source read by the caller, with its warnings written likewise.
Pipeline compile_pipeline_reporting(std::string_view source, const std::string& file_name);

/// Writes warnings the front end gave as the functions above do, one after another.
void report_warnings(const std::vector<CompileWarning>& warnings, std::ostream& os);

}  // namespace stipple::cli
