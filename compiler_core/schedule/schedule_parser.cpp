// Recursive descent over the language lexer's tokens; see schedule_parser.h for the
// grammar. Only arguments recurse (bounded by kMaxScheduleArgDepth).
#include "compiler_core/schedule/schedule_parser.h"

#include <algorithm>

#include "compiler_core/language/token_cursor.h"

namespace stipple {

namespace {

std::string loc_text(SourceLoc loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

class ScheduleParser : private TokenCursor {
 public:
  ScheduleParser(const SourceText& source, std::vector<Token> tokens)
      : TokenCursor(source, std::move(tokens)) {}

  Schedule parse() {
    Schedule s;
    s.file_name = source_.file_name();
    while (peek().kind != TokenKind::End) parse_line(s);
    return s;
  }

 private:
  // `update(k)` after a '.': returns k.
  int64_t parse_update_index() {
    next();  // update
    expect(TokenKind::LParen, "after 'update'");
    const Token& k = peek();
    if (k.kind != TokenKind::Int) {
      error(k.loc,
            "update takes the index of an update definition, as in f.update(0); found " + shown(k));
    }
    next();
    if (k.int_value > kMaxUpdateIndex) {
      error(k.loc, "update index " + k.text + " is too large");
    }
    expect(TokenKind::RParen, "after the update index");
    return k.int_value;
  }

  void parse_line(Schedule& s) {
    const Token& name = peek();
    if (name.kind != TokenKind::Identifier) {
      error(name.loc, "expected a func name at the start of a schedule line, found " + shown(name));
    }
    next();
    bool first_mention = s.funcs.find(name.text) == s.funcs.end();
    FuncSchedule& fs = s.funcs[name.text];
    if (first_mention) fs.loc = name.loc;
    int stage = 0;
    SourceLoc stage_loc = name.loc;
    if (peek().kind == TokenKind::Dot && is_word("update", 1)) {
      next();  // .
      stage = static_cast<int>(parse_update_index()) + 1;
    }
    if (peek().kind != TokenKind::Dot) {
      error(peek().loc, "expected '.' and a directive after '" + stage_name(name.text, stage) +
                            "', found " + shown(peek()));
    }
    while (accept(TokenKind::Dot)) {
      Directive d = parse_directive(name.text, stage);
      add_directive(fs, name.text, stage, stage_loc, std::move(d));
    }
  }

  Directive parse_directive(const std::string& func, int stage) {
    const Token& name = peek();
    if (name.kind != TokenKind::Identifier) {
      error(name.loc, "expected a directive name after '.', found " + shown(name));
    }
    if (name.text == "update") {
      error(name.loc, "update(k) must come right after the func's name, as in " + func +
                          ".update(0).parallel(y)" +
                          (stage > 0 ? "; a line schedules one stage" : ""));
    }
    next();
    Directive d;
    d.name = name.text;
    d.loc = name.loc;
    if (!find_directive_spec(d.name)) {
      error(name.loc,
            "unknown directive '" + d.name + "'; the directives are " + known_directive_names());
    }
    expect(TokenKind::LParen, "after '" + d.name + "'");
    if (peek().kind != TokenKind::RParen) {
      do {
        d.args.push_back(parse_arg(0));
      } while (accept(TokenKind::Comma));
    }
    expect(TokenKind::RParen, "to close the arguments of '" + d.name + "' at " + loc_text(d.loc));
    int bad = -1;
    std::string problem = directive_shape_error(d, &bad);
    if (!problem.empty()) error(bad >= 0 ? d.args[bad].loc : d.loc, problem);
    return d;
  }

  ScheduleArg parse_arg(int depth) {
    const Token& t = peek();
    if (depth >= kMaxScheduleArgDepth) {
      error(t.loc, "arguments nested more than " + std::to_string(kMaxScheduleArgDepth) + " deep");
    }
    ScheduleArg a;
    a.loc = t.loc;
    if (t.kind == TokenKind::Minus || t.kind == TokenKind::Int || t.kind == TokenKind::Float) {
      bool negative = accept(TokenKind::Minus);
      const Token& n = peek();
      if (n.kind == TokenKind::Int) {
        a.kind = ScheduleArgKind::Int;
        a.int_value = negative ? -n.int_value : n.int_value;
      } else if (n.kind == TokenKind::Float) {
        a.kind = ScheduleArgKind::Float;
        a.float_value = negative ? -n.float_value : n.float_value;
      } else {
        error(n.loc, "expected a number after '-', found " + shown(n));
      }
      next();
      return a;
    }
    if (t.kind != TokenKind::Identifier) {
      error(t.loc, "expected an argument (a name, a number, name(...) or name = value), found " +
                       shown(t));
    }
    next();
    a.name = t.text;
    if (peek().kind == TokenKind::Dot) {
      if (!is_word("update", 1)) {
        error(peek(1).loc, "expected 'update' after '" + t.text + ".', as in " + t.text +
                               ".update(0), found " + shown(peek(1)));
      }
      next();  // .
      a.kind = ScheduleArgKind::Stage;
      a.int_value = parse_update_index();
      return a;
    }
    if (accept(TokenKind::Assign)) {
      a.kind = ScheduleArgKind::Keyword;
      a.args.push_back(parse_arg(depth + 1));
      return a;
    }
    if (accept(TokenKind::LParen)) {
      a.kind = ScheduleArgKind::Call;
      if (peek().kind != TokenKind::RParen) {
        do {
          a.args.push_back(parse_arg(depth + 1));
        } while (accept(TokenKind::Comma));
      }
      expect(TokenKind::RParen, "to close the arguments of '" + a.name + "' at " + loc_text(a.loc));
      return a;
    }
    a.kind = ScheduleArgKind::Name;
    return a;
  }

  static LoopLevel level_from(const Directive& d) {
    const ScheduleArg& f = d.args[0];
    int stage = f.kind == ScheduleArgKind::Stage ? static_cast<int>(f.int_value) + 1 : 0;
    return LoopLevel::at(f.name, stage, d.args[1].name, d.loc);
  }

  void set_level(std::optional<LoopLevel>& slot, LoopLevel level, const std::string& func,
                 const char* what) {
    if (slot) {
      error(level.loc, std::string("the ") + what + " level of '" + func + "' is already set at " +
                           loc_text(slot->loc) + "; set it once");
    }
    slot = std::move(level);
  }

  void add_directive(FuncSchedule& fs, const std::string& func, int stage, SourceLoc stage_loc,
                     Directive d) {
    const DirectiveSpec* spec = find_directive_spec(d.name);
    if (spec->scope == DirectiveScope::Func) {
      if (stage > 0) {
        error(d.loc, d.name + " applies to the whole func; put it on a line without update(...)");
      }
      if (d.name == "compute_root")
        return set_level(fs.compute, LoopLevel::root(d.loc), func, "compute");
      if (d.name == "compute_inline") {
        return set_level(fs.compute, LoopLevel::inlined(d.loc), func, "compute");
      }
      if (d.name == "compute_at") return set_level(fs.compute, level_from(d), func, "compute");
      if (d.name == "store_root") return set_level(fs.store, LoopLevel::root(d.loc), func, "store");
      if (d.name == "store_at") return set_level(fs.store, level_from(d), func, "store");
      STIPPLE_INTERNAL_CHECK(false, "func directive " + d.name + " not handled by the parser");
    }
    if (whole_func_directive(spec->scope, d.name) && stage > 0) {
      error(d.loc, d.name + " applies to the whole func; put it on a line without update(...)");
    }
    StageSchedule& st = fs.stages[stage];
    if (st.directives.empty()) st.loc = stage_loc;
    st.directives.push_back(std::move(d));
  }
};

}  // namespace

Schedule parse_schedule(std::string_view text, const std::string& file_name) {
  SourceText source(text, file_name);
  return ScheduleParser(source, lex(source)).parse();
}

}  // namespace stipple
