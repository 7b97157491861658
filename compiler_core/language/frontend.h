// The language front end in one call: lex, parse and check a .stp program into a
// Pipeline. Errors are CompileErrors whose message is
//   file:line:col: error: message
//   <the source line>
//   <a caret under the column>
#pragma once

#include <string>
#include <string_view>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple {

/// A bad program. what() is the full, formatted message (location, source line, caret).
class CompileError : public UserError {
 public:
  CompileError(const std::string& formatted, std::string file, int line, int col,
               std::string message)
      : UserError(formatted),
        file_(std::move(file)),
        line_(line),
        col_(col),
        message_(std::move(message)) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int col() const { return col_; }
  /// The message alone, without location or source line.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_, col_;
  std::string message_;
};

/// Parses and checks `text`; `file_name` is only used in messages.
Pipeline compile_pipeline(std::string_view text, const std::string& file_name);

/// Reads and compiles a .stp file; a missing file is a UserError.
Pipeline load_pipeline_file(const std::string& path);

}  // namespace stipple
