#include "compiler_core/language/source.h"

#include <algorithm>

namespace stipple {

std::string_view SourceText::line_text(int line) const {
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    size_t nl = text_.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t end = text_.find('\n', start);
  std::string_view s = text_.substr(start, end == std::string_view::npos ? end : end - start);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

void SourceText::error(SourceLoc loc, const std::string& message) const {
  throw CompileError(format(loc, "error", message), file_name_, loc.line, loc.col, message);
}

CompileWarning SourceText::warning(SourceLoc loc, const std::string& message) const {
  return {file_name_, loc.line, loc.col, message, format(loc, "warning", message)};
}

std::string SourceText::format(SourceLoc loc, const char* severity,
                               const std::string& message) const {
  std::string formatted = file_name_ + ":" + std::to_string(loc.line) + ":" +
                          std::to_string(loc.col) + ": " + severity + ": " + message + "\n";
  std::string_view line = line_text(loc.line);
  // Control characters (tabs aside) would garble the terminal; show them as '?'.
  std::string shown(line);
  for (char& c : shown) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
  }
  formatted += "  " + shown + "\n  ";
  int caret_col = std::clamp(loc.col, 1, static_cast<int>(shown.size()) + 1);
  for (int i = 1; i < caret_col; ++i) formatted += shown[i - 1] == '\t' ? '\t' : ' ';
  formatted += "^";
  return formatted;
}

}  // namespace stipple
