// The language front end in one call: lex, parse and check a .stp program into a
// Pipeline, and contract its products into multiply-adds (contraction.h). Errors are
// CompileErrors whose message is
//   file:line:col: error: message
//   <the source line>
//   <a caret under the column>
// Warnings (a program that compiles but has something the author likely did not mean,
// such as a func the output never uses) are collected for the caller to show, formatted
// the same way with `warning:`; they never stop compilation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

/// A warning about a program that compiles.
struct CompileWarning {
  std::string file;
  int line = 0, col = 0;
  std::string message;    // alone, without location or source line
  std::string formatted;  // file:line:col: warning: message, the source line and a caret
};

/// Parses and checks `text`; `file_name` is only used in messages. Warnings, in source
/// order, are appended to `warnings` when it is given, and dropped otherwise.
Pipeline compile_pipeline(std::string_view text, const std::string& file_name,
                          std::vector<CompileWarning>* warnings = nullptr);

/// Reads and compiles a .stp file; a missing file is a UserError.
Pipeline load_pipeline_file(const std::string& path,
                            std::vector<CompileWarning>* warnings = nullptr);

}  // namespace stipple
