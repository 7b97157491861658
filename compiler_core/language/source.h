// Source text and locations, and the one place that formats a compile error or warning:
//   file:line:col: error: message      (or: warning: message)
//   <the source line>
//   <spaces>^
#pragma once

#include <string>
#include <string_view>

#include "compiler_core/language/frontend.h"

namespace stipple {

struct SourceLoc {
  int line = 1;  // 1-based
  int col = 1;   // 1-based, in bytes
};

class SourceText {
 public:
  SourceText(std::string_view text, std::string file_name)
      : text_(text), file_name_(std::move(file_name)) {}
  std::string_view text() const { return text_; }
  const std::string& file_name() const { return file_name_; }
  /// The text of a 1-based line, without its newline.
  std::string_view line_text(int line) const;
  /// Throws the CompileError for a message at `loc`.
  [[noreturn]] void error(SourceLoc loc, const std::string& message) const;
  /// The CompileWarning for a message at `loc`.
  CompileWarning warning(SourceLoc loc, const std::string& message) const;

 private:
  /// `file:line:col: <severity>: message`, the source line and a caret.
  std::string format(SourceLoc loc, const char* severity, const std::string& message) const;

  std::string_view text_;
  std::string file_name_;
};

}  // namespace stipple
