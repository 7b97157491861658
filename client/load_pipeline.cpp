#include "client/load_pipeline.h"

#include <iostream>
#include <vector>

#include "compiler_core/language/frontend.h"

namespace stipple::cli {

void report_warnings(const std::vector<CompileWarning>& warnings, std::ostream& os) {
  for (const CompileWarning& w : warnings) os << w.formatted << "\n";
}

Pipeline load_pipeline_reporting(const std::string& path) {
  return load_pipeline_reporting(path, std::cerr);
}

Pipeline load_pipeline_reporting(const std::string& path, std::ostream& warnings_to) {
  std::vector<CompileWarning> warnings;
  Pipeline p = load_pipeline_file(path, &warnings);
  report_warnings(warnings, warnings_to);
  return p;
}

Pipeline compile_pipeline_reporting(std::string_view source, const std::string& file_name) {
  std::vector<CompileWarning> warnings;
  Pipeline p = compile_pipeline(source, file_name, &warnings);
  report_warnings(warnings, std::cerr);
  return p;
}

}  // namespace stipple::cli
