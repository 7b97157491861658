#include "compiler_core/language/frontend.h"

#include <fstream>
#include <sstream>

#include "compiler_core/language/checker.h"
#include "compiler_core/language/parser.h"

namespace stipple {

Pipeline compile_pipeline(std::string_view text, const std::string& file_name) {
  SourceText source(text, file_name);
  AstProgram program = parse_program(source);
  return check_program(source, program);
}

Pipeline load_pipeline_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read pipeline '" + path + "': no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return compile_pipeline(text.str(), path);
}

}  // namespace stipple
