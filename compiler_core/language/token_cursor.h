// A cursor over the lexer's tokens with the few moves every recursive-descent parser in
// Stipple needs (the .stp parser and the schedule parser), and their error messages.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "compiler_core/language/lexer.h"

namespace stipple {

class TokenCursor {
 protected:
  TokenCursor(const SourceText& source, std::vector<Token> tokens)
      : source_(source), tokens_(std::move(tokens)) {}

  /// The token `ahead` positions on; the End token past the end.
  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  /// Consumes a token; never moves past End.
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_word(const char* w, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Identifier && peek(ahead).text == w;
  }
  bool accept(TokenKind k) {
    if (peek().kind != k) return false;
    next();
    return true;
  }
  [[noreturn]] void error(SourceLoc loc, const std::string& message) const {
    source_.error(loc, message);
  }
  /// How a token is named in messages: 'name', the number 3, ')'.
  std::string shown(const Token& t) const {
    if (t.kind == TokenKind::Identifier) return "'" + t.text + "'";
    if (t.kind == TokenKind::Int || t.kind == TokenKind::Float) return "the number " + t.text;
    return describe(t.kind);
  }
  const Token& expect(TokenKind k, const std::string& context) {
    if (peek().kind != k) {
      error(peek().loc, "expected " + describe(k) + " " + context + ", found " + shown(peek()));
    }
    return next();
  }

  const SourceText& source_;

 private:
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace stipple
