#include "compiler_core/language/lexer.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace stipple {

std::string describe(TokenKind kind) {
  switch (kind) {
    case TokenKind::Identifier: return "a name";
    case TokenKind::Int: return "an integer";
    case TokenKind::Float: return "a number";
    case TokenKind::LParen: return "'('";
    case TokenKind::RParen: return "')'";
    case TokenKind::LBracket: return "'['";
    case TokenKind::RBracket: return "']'";
    case TokenKind::Comma: return "','";
    case TokenKind::Colon: return "':'";
    case TokenKind::Dot: return "'.'";
    case TokenKind::DotDot: return "'..'";
    case TokenKind::Assign: return "'='";
    case TokenKind::PlusAssign: return "'+='";
    case TokenKind::MinusAssign: return "'-='";
    case TokenKind::StarAssign: return "'*='";
    case TokenKind::Plus: return "'+'";
    case TokenKind::Minus: return "'-'";
    case TokenKind::Star: return "'*'";
    case TokenKind::Slash: return "'/'";
    case TokenKind::Percent: return "'%'";
    case TokenKind::EqEq: return "'=='";
    case TokenKind::NotEq: return "'!='";
    case TokenKind::Less: return "'<'";
    case TokenKind::LessEq: return "'<='";
    case TokenKind::Greater: return "'>'";
    case TokenKind::GreaterEq: return "'>='";
    case TokenKind::AndAnd: return "'&&'";
    case TokenKind::OrOr: return "'||'";
    case TokenKind::Bang: return "'!'";
    case TokenKind::End: return "the end of the file";
  }
  return "?";
}

namespace {

class Lexer {
 public:
  explicit Lexer(const SourceText& source) : source_(source), text_(source.text()) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      Token t;
      t.loc = {line_, col_};
      if (pos_ >= text_.size()) {
        t.kind = TokenKind::End;
        tokens.push_back(t);
        return tokens;
      }
      char c = text_[pos_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
          advance();
        }
        t.kind = TokenKind::Identifier;
        t.text = std::string(text_.substr(start, pos_ - start));
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && pos_ + 1 < text_.size() &&
                  std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
        lex_number(t);
      } else {
        lex_punctuation(t);
      }
      tokens.push_back(std::move(t));
    }
  }

 private:
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else {
        return;
      }
    }
  }

  bool is_digit_at(size_t p) const {
    return p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]));
  }

  void lex_number(Token& t) {
    size_t start = pos_;
    bool is_float = false;
    while (is_digit_at(pos_)) advance();
    // A '.' followed by another '.' is a range, not a decimal point: 1..5.
    if (pos_ < text_.size() && text_[pos_] == '.' &&
        !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '.')) {
      is_float = true;
      advance();
      while (is_digit_at(pos_)) advance();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (is_digit_at(p)) {
        is_float = true;
        while (pos_ < p) advance();
        while (is_digit_at(pos_)) advance();
      }
    }
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      source_.error({line_, col_}, "unexpected '" + std::string(1, text_[pos_]) +
                                       "' after the number '" +
                                       std::string(text_.substr(start, pos_ - start)) + "'");
    }
    t.text = std::string(text_.substr(start, pos_ - start));
    if (is_float) {
      t.kind = TokenKind::Float;
      // strtod handles every spelling we accept (".5", "1.", "2e-3").
      t.float_value = std::strtod(t.text.c_str(), nullptr);
      if (!std::isfinite(t.float_value))
        source_.error(t.loc, "the number '" + t.text + "' is too large");
    } else {
      t.kind = TokenKind::Int;
      auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.int_value);
      if (ec != std::errc() || t.int_value > 2147483648LL) {
        source_.error(t.loc, "the integer '" + t.text + "' does not fit in 32 bits");
      }
    }
  }

  void lex_punctuation(Token& t) {
    char c = text_[pos_];
    char n = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    auto two = [&](TokenKind k) {
      t.kind = k;
      advance();
      advance();
    };
    auto one = [&](TokenKind k) {
      t.kind = k;
      advance();
    };
    switch (c) {
      case '(': return one(TokenKind::LParen);
      case ')': return one(TokenKind::RParen);
      case '[': return one(TokenKind::LBracket);
      case ']': return one(TokenKind::RBracket);
      case ',': return one(TokenKind::Comma);
      case ':': return one(TokenKind::Colon);
      case '.': return n == '.' ? two(TokenKind::DotDot) : one(TokenKind::Dot);
      case '=': return n == '=' ? two(TokenKind::EqEq) : one(TokenKind::Assign);
      case '+': return n == '=' ? two(TokenKind::PlusAssign) : one(TokenKind::Plus);
      case '-': return n == '=' ? two(TokenKind::MinusAssign) : one(TokenKind::Minus);
      case '*': return n == '=' ? two(TokenKind::StarAssign) : one(TokenKind::Star);
      case '/': return one(TokenKind::Slash);
      case '%': return one(TokenKind::Percent);
      case '!': return n == '=' ? two(TokenKind::NotEq) : one(TokenKind::Bang);
      case '<': return n == '=' ? two(TokenKind::LessEq) : one(TokenKind::Less);
      case '>': return n == '=' ? two(TokenKind::GreaterEq) : one(TokenKind::Greater);
      case '&':
        if (n == '&') return two(TokenKind::AndAnd);
        break;
      case '|':
        if (n == '|') return two(TokenKind::OrOr);
        break;
      default: break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", u);
      source_.error({line_, col_}, std::string("unexpected byte ") + hex + " in the program");
    }
    if (c == '&' || c == '|') {
      source_.error({line_, col_},
                    std::string("unexpected '") + c + "'; did you mean '" + c + c + "'?");
    }
    source_.error({line_, col_}, std::string("unexpected character '") + c + "'");
  }

  const SourceText& source_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

std::vector<Token> lex(const SourceText& source) { return Lexer(source).run(); }

}  // namespace stipple
