#include "compiler_core/language/frontend.h"

#include <fstream>
#include <sstream>

#include "compiler_core/language/checker.h"
#include "compiler_core/language/contraction.h"
#include "compiler_core/language/parser.h"
#include "compiler_core/support/files.h"

namespace stipple {

Pipeline compile_pipeline(std::string_view text, const std::string& file_name,
                          std::vector<CompileWarning>* warnings) {
  SourceText source(text, file_name);
  AstProgram program = parse_program(source);
  return contract_products(check_program(source, program, warnings));
}

Pipeline load_pipeline_file(const std::string& path, std::vector<CompileWarning>* warnings) {
  return compile_pipeline(read_text_file(path, "pipeline"), path, warnings);
}

}  // namespace stipple
