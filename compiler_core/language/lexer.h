// Splits .stp source into tokens. Newlines are whitespace; `#` starts a comment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/language/source.h"

namespace stipple {

enum class TokenKind : uint8_t {
  Identifier,
  Int,
  Float,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Dot,
  DotDot,
  Assign,       // =
  PlusAssign,   // +=
  MinusAssign,  // -=
  StarAssign,   // *=
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  AndAnd,
  OrOr,
  Bang,
  End,
};

/// How a token kind is shown in messages: "')'", "an identifier", "the end of the file".
std::string describe(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // the spelling, for identifiers and numbers
  SourceLoc loc;
  int64_t int_value = 0;
  double float_value = 0;
};

/// Tokenises the whole text, ending with an End token. Throws CompileError.
std::vector<Token> lex(const SourceText& source);

}  // namespace stipple
