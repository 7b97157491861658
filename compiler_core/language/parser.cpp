#include "compiler_core/language/parser.h"

#include <algorithm>

#include "compiler_core/language/token_cursor.h"

namespace stipple {

namespace {

bool is_reduction_name(const std::string& s) {
  return s == "sum" || s == "prod" || s == "minimum" || s == "maximum" || s == "median" ||
         s == "argmin";
}

class Parser : private TokenCursor {
 public:
  Parser(const SourceText& source, std::vector<Token> tokens)
      : TokenCursor(source, std::move(tokens)) {}

  AstProgram parse() {
    AstProgram program;
    if (!is_word("pipeline")) {
      error(peek().loc, "a program starts with 'pipeline NAME'");
    }
    program.loc = next().loc;
    program.name = expect_name("the pipeline's name").text;
    while (peek().kind != TokenKind::End) parse_declaration(program);
    return program;
  }

 private:
  // Token access -----------------------------------------------------------------------
  const Token& expect_name(const std::string& what) {
    if (peek().kind != TokenKind::Identifier) {
      error(peek().loc, "expected " + what + ", found " + shown(peek()));
    }
    return next();
  }

  // Declarations -------------------------------------------------------------------------
  void parse_declaration(AstProgram& program) {
    const Token& t = peek();
    if (t.kind != TokenKind::Identifier) {
      error(
          t.loc,
          "expected a declaration (input, param, func, output or an update f(...) = ...), found " +
              shown(t));
    }
    bool keyword_form = peek(1).kind == TokenKind::Identifier;
    if (keyword_form && t.text == "input") return parse_input(program);
    if (keyword_form && t.text == "param") return parse_param(program);
    if (keyword_form && t.text == "func") return parse_func(program);
    if (keyword_form && t.text == "output") return parse_output(program);
    if (t.text == "pipeline") error(t.loc, "a program has one 'pipeline' line, at its start");
    if (peek(1).kind == TokenKind::LParen) return parse_update(program);
    if (t.text == "input" || t.text == "param" || t.text == "func" || t.text == "output") {
      error(peek(1).loc, "expected a name after '" + t.text + "', found " + shown(peek(1)));
    }
    error(t.loc, "expected a declaration (input, param, func, output or an update " + t.text +
                     "(...) = ...), found " + shown(t));
  }

  void parse_input(AstProgram& program) {
    next();  // input
    AstInput in;
    const Token& name = expect_name("the input's name");
    in.name = name.text;
    in.loc = name.loc;
    expect(TokenKind::Colon, "after the input's name");
    const Token& type =
        expect_name("the input's element type (u8, u16, u32, i8, i16, i32, f16, f32 or f64)");
    in.type_name = type.text;
    in.type_loc = type.loc;
    expect(TokenKind::LBracket, "before the input's dimension names, as in f32[x, y, c]");
    do {
      const Token& d = expect_name("a dimension name");
      in.dims.push_back(d.text);
      in.dim_locs.push_back(d.loc);
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RBracket, "after the input's dimension names");
    if ((is_word("clamp") || is_word("mirror")) && peek(1).kind != TokenKind::LParen) {
      in.boundary_loc = peek().loc;
      in.boundary = next().text;
    } else if (is_word("constant")) {
      in.boundary_loc = peek().loc;
      in.boundary = next().text;
      expect(TokenKind::LParen, "after 'constant'");
      in.boundary_value = parse_signed_number("the boundary value");
      expect(TokenKind::RParen, "after the boundary value");
    }
    program.inputs.push_back(std::move(in));
  }

  double parse_signed_number(const std::string& what) {
    bool negative = accept(TokenKind::Minus);
    const Token& t = peek();
    if (t.kind != TokenKind::Int && t.kind != TokenKind::Float) {
      error(t.loc, "expected a number for " + what + ", found " + shown(t));
    }
    next();
    double v = t.kind == TokenKind::Int ? static_cast<double>(t.int_value) : t.float_value;
    return negative ? -v : v;
  }

  void parse_param(AstProgram& program) {
    next();  // param
    AstParam p;
    const Token& name = expect_name("the param's name");
    p.name = name.text;
    p.loc = name.loc;
    expect(TokenKind::Colon, "after the param's name");
    const Token& type =
        expect_name("the param's type (u8, u16, u32, i8, i16, i32, f16, f32 or f64)");
    p.type_name = type.text;
    p.type_loc = type.loc;
    expect(TokenKind::Assign, "before the param's default value");
    SourceLoc loc = peek().loc;
    bool negative = accept(TokenKind::Minus);
    const Token& t = peek();
    if (t.kind != TokenKind::Int && t.kind != TokenKind::Float) {
      error(t.loc, "a param's default must be a number, found " + shown(t));
    }
    next();
    auto lit = std::make_unique<AstExpr>();
    lit->kind = t.kind == TokenKind::Int ? AstKind::IntLit : AstKind::FloatLit;
    lit->loc = t.loc;
    lit->int_value = t.int_value;
    lit->float_value = t.float_value;
    if (negative) {
      auto neg = std::make_unique<AstExpr>();
      neg->kind = AstKind::Unary;
      neg->op = TokenKind::Minus;
      neg->loc = loc;
      neg->depth = 2;
      neg->args.push_back(std::move(lit));
      p.value = std::move(neg);
    } else {
      p.value = std::move(lit);
    }
    program.params.push_back(std::move(p));
  }

  void parse_func(AstProgram& program) {
    next();  // func
    AstFunc f;
    const Token& name = expect_name("the func's name");
    f.name = name.text;
    f.loc = name.loc;
    expect(TokenKind::LParen, "after the func's name (a func of no variables is written f())");
    if (peek().kind != TokenKind::RParen) {
      do {
        const Token& a = expect_name("a variable name");
        f.args.push_back(a.text);
        f.arg_locs.push_back(a.loc);
      } while (accept(TokenKind::Comma));
    }
    expect(TokenKind::RParen, "after the func's variables");
    expect(TokenKind::Assign, "after func " + f.name + "(...)");
    f.value = parse_expr();
    program.funcs.push_back(std::move(f));
  }

  void parse_output(AstProgram& program) {
    next();  // output
    AstOutput out;
    const Token& name = expect_name("the output func's name");
    out.func = name.text;
    out.loc = name.loc;
    if (is_word("size") && peek(1).kind == TokenKind::LParen) {
      out.size_loc = next().loc;
      next();  // (
      do {
        out.size.push_back(parse_expr());
      } while (accept(TokenKind::Comma));
      expect(TokenKind::RParen, "after the output's size");
    }
    if (is_word("metric")) {
      next();
      const Token& m = expect_name("a metric (lab or rmse)");
      out.metric = m.text;
      out.metric_loc = m.loc;
    }
    if (program.output) {
      error(out.loc, "a pipeline has one output; the first is at line " +
                         std::to_string(program.output->loc.line));
    }
    program.output = std::move(out);
  }

  void parse_update(AstProgram& program) {
    AstUpdate u;
    const Token& name = next();
    u.func = name.text;
    u.loc = name.loc;
    next();  // (
    if (peek().kind != TokenKind::RParen) {
      do {
        u.args.push_back(parse_expr());
      } while (accept(TokenKind::Comma));
    }
    expect(TokenKind::RParen, "after the update's left-hand side");
    u.op_loc = peek().loc;
    switch (peek().kind) {
      case TokenKind::Assign: u.op = "="; break;
      case TokenKind::PlusAssign: u.op = "+="; break;
      case TokenKind::MinusAssign: u.op = "-="; break;
      case TokenKind::StarAssign: u.op = "*="; break;
      default:
        if ((is_word("min") || is_word("max")) && peek(1).kind == TokenKind::Assign) {
          u.op = peek().text + "=";
          next();
          break;
        }
        error(peek().loc, "expected '=', '+=', '-=', '*=', 'min=' or 'max=' in the update of '" +
                              u.func + "', found " + shown(peek()));
    }
    next();
    u.value = parse_expr();
    if (is_word("for")) {
      next();
      do {
        u.ranges.push_back(parse_range());
      } while (accept(TokenKind::Comma));
    }
    program.updates.push_back(std::move(u));
  }

  AstRange parse_range() {
    AstRange r;
    const Token& v = expect_name("a reduction variable");
    r.var = v.text;
    r.loc = v.loc;
    if (!is_word("in")) {
      error(peek().loc, "reduction variable '" + r.var + "' needs bounds: write '" + r.var +
                            " in LO..HI' or '" + r.var + " in IMAGE'");
    }
    next();
    AstExprPtr lo = parse_expr();
    if (accept(TokenKind::DotDot)) {
      r.lo = std::move(lo);
      r.hi = parse_expr();
      return r;
    }
    if (lo->kind == AstKind::Name) {
      r.image = lo->name;
      r.image_loc = lo->loc;
      return r;
    }
    error(peek().loc, "expected '..' in the range of '" + r.var + "', found " + shown(peek()));
  }

  // Expressions --------------------------------------------------------------------------
  struct NestingGuard {
    Parser* p;
    explicit NestingGuard(Parser* parser) : p(parser) {
      if (++p->nesting_ > kMaxExpressionDepth) {
        p->error(p->peek().loc, "expression nested too deeply (more than " +
                                    std::to_string(kMaxExpressionDepth) + " levels)");
      }
    }
    ~NestingGuard() { --p->nesting_; }
  };

  AstExprPtr make_binary(TokenKind op, SourceLoc loc, AstExprPtr a, AstExprPtr b) {
    auto e = std::make_unique<AstExpr>();
    e->kind = AstKind::Binary;
    e->op = op;
    e->loc = loc;
    e->depth = std::max(a->depth, b->depth) + 1;
    if (e->depth > kMaxExpressionDepth) {
      error(loc, "expression too deep (more than " + std::to_string(kMaxExpressionDepth) +
                     " levels); split it into several funcs");
    }
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  AstExprPtr parse_expr() {
    NestingGuard guard(this);
    if (is_word("let")) return parse_let();
    return parse_binary(0);
  }

  /// `let NAME = EXPR in EXPR`: the body reaches as far as an expression can.
  AstExprPtr parse_let() {
    auto e = std::make_unique<AstExpr>();
    e->kind = AstKind::Let;
    e->loc = next().loc;  // let
    const Token& name = expect_name("a name after 'let'");
    e->name = name.text;
    e->name_loc = name.loc;
    expect(TokenKind::Assign, "after 'let " + e->name + "'");
    e->args.push_back(parse_expr());
    if (!is_word("in")) {
      error(peek().loc,
            "expected 'in' after the value of 'let " + e->name + "', found " + shown(peek()));
    }
    next();
    e->args.push_back(parse_expr());
    e->depth = std::max(e->args[0]->depth, e->args[1]->depth) + 1;
    if (e->depth > kMaxExpressionDepth) error(e->loc, "expression too deep");
    return e;
  }

  // Binary operators by precedence level, loosest first.
  static int precedence(TokenKind k) {
    switch (k) {
      case TokenKind::OrOr: return 1;
      case TokenKind::AndAnd: return 2;
      case TokenKind::EqEq:
      case TokenKind::NotEq: return 3;
      case TokenKind::Less:
      case TokenKind::LessEq:
      case TokenKind::Greater:
      case TokenKind::GreaterEq: return 4;
      case TokenKind::Plus:
      case TokenKind::Minus: return 5;
      case TokenKind::Star:
      case TokenKind::Slash:
      case TokenKind::Percent: return 6;
      default: return 0;
    }
  }

  /// Precedence climbing: parses operators of precedence above `min_prec`, left-assoc.
  AstExprPtr parse_binary(int min_prec) {
    AstExprPtr lhs = parse_unary();
    while (true) {
      TokenKind op = peek().kind;
      int prec = precedence(op);
      if (prec <= min_prec) return lhs;
      SourceLoc loc = next().loc;
      AstExprPtr rhs;
      {
        NestingGuard guard(this);
        rhs = parse_binary(prec);
      }
      lhs = make_binary(op, loc, std::move(lhs), std::move(rhs));
    }
  }

  AstExprPtr parse_unary() {
    if (peek().kind == TokenKind::Minus || peek().kind == TokenKind::Bang) {
      NestingGuard guard(this);
      const Token& t = next();
      auto e = std::make_unique<AstExpr>();
      e->kind = AstKind::Unary;
      e->op = t.kind;
      e->loc = t.loc;
      AstExprPtr a = parse_unary();
      e->depth = a->depth + 1;
      if (e->depth > kMaxExpressionDepth) error(t.loc, "expression too deep");
      e->args.push_back(std::move(a));
      return e;
    }
    return parse_primary();
  }

  AstExprPtr parse_primary() {
    const Token& t = peek();
    auto e = std::make_unique<AstExpr>();
    e->loc = t.loc;
    switch (t.kind) {
      case TokenKind::Int:
        e->kind = AstKind::IntLit;
        e->int_value = next().int_value;
        return e;
      case TokenKind::Float:
        e->kind = AstKind::FloatLit;
        e->float_value = next().float_value;
        return e;
      case TokenKind::LParen: {
        next();
        AstExprPtr inner = parse_expr();
        expect(TokenKind::RParen, "to close the '(' at " + std::to_string(t.loc.line) + ":" +
                                      std::to_string(t.loc.col));
        return inner;
      }
      case TokenKind::Identifier:
        if (t.text == "pipeline" || t.text == "input" || t.text == "param" || t.text == "func" ||
            t.text == "output" || t.text == "for") {
          error(t.loc, "expected an expression, found the keyword '" + t.text + "'");
        }
        if (t.text == "let") {
          error(t.loc,
                "a 'let' inside an operation needs parentheses: (let NAME = ... in ...), "
                "since its body reaches as far as the expression goes");
        }
        break;
      default: error(t.loc, "expected an expression, found " + shown(t));
    }
    std::string name = next().text;
    e->name = name;
    if (accept(TokenKind::Dot)) {
      e->kind = AstKind::Field;
      e->field = expect_name("a field name (width, height or channels) after '" + name + ".'").text;
      return e;
    }
    if (peek().kind != TokenKind::LParen) {
      e->kind = AstKind::Name;
      return e;
    }
    next();  // (
    if (is_reduction_name(name) && peek().kind == TokenKind::Identifier &&
        (is_word("in", 1) || peek(1).kind == TokenKind::Colon)) {
      return parse_reduction(std::move(e));
    }
    e->kind = AstKind::Call;
    if (peek().kind != TokenKind::RParen) {
      do {
        e->args.push_back(parse_expr());
        e->depth = std::max(e->depth, e->args.back()->depth + 1);
      } while (accept(TokenKind::Comma));
    }
    expect(TokenKind::RParen, "to close the call to '" + name + "'");
    if (e->depth > kMaxExpressionDepth) error(e->loc, "expression too deep");
    return e;
  }

  AstExprPtr parse_reduction(AstExprPtr e) {
    e->kind = AstKind::Reduction;
    do {
      e->ranges.push_back(parse_range());
    } while (accept(TokenKind::Comma));
    expect(TokenKind::Colon, "between the ranges of '" + e->name + "' and its expression");
    e->args.push_back(parse_expr());
    expect(TokenKind::RParen, "to close '" + e->name + "('");
    int depth = e->args[0]->depth;
    for (const AstRange& r : e->ranges) {
      if (r.lo) depth = std::max({depth, r.lo->depth, r.hi->depth});
    }
    e->depth = depth + 1;
    if (e->depth > kMaxExpressionDepth) error(e->loc, "expression too deep");
    return e;
  }

  int nesting_ = 0;
};

}  // namespace

AstProgram parse_program(const SourceText& source) { return Parser(source, lex(source)).parse(); }

}  // namespace stipple
