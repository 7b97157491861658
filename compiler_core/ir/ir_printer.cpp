// The IR printer: expressions in .stp syntax, statements as loop nests, pipelines as
// programs. Literal typing follows the checker: a bare integer literal is i32 and a bare
// float literal f32, except beside a typed operand of a binary operator (or min, max,
// select, or as an update's value), where it takes the other side's type. A constant
// printed anywhere else in a non-default type is written as a cast: `u8(3)`, `f64(0.5)`.
#include "compiler_core/ir/ir_printer.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace stipple {

std::string format_float_literal(double value, bool as_f32) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[64];
  std::to_chars_result r{};
  if (as_f32) {
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value));
    // The checker reads literals as doubles and rounds to f32; the shortest f32 digits are
    // almost always exact through that double rounding, but check rather than hope.
    std::string s(buf, r.ptr);
    if (static_cast<float>(std::strtod(s.c_str(), nullptr)) != static_cast<float>(value)) {
      r = std::to_chars(buf, buf + sizeof(buf), value);
    }
  } else {
    r = std::to_chars(buf, buf + sizeof(buf), value);
  }
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

namespace {

// Precedence, loosest first, as in LANGUAGE.md; `let ... in body` binds loosest (its body
// reaches as far as the expression goes), so an operand that is a Let is parenthesised.
enum Prec : int {
  kLet = 0,
  kOr = 1,
  kAnd = 2,
  kEquality = 3,
  kCompare = 4,
  kAdd = 5,
  kMul = 6,
  kUnary = 7,
  kPrimary = 8,
};

struct Printed {
  std::string text;
  int prec = kPrimary;
  bool bare_literal = false;  // a literal whose type comes from its context
};

const char* extent_name(int dim) {
  switch (dim) {
    case 0: return "width";
    case 1: return "height";
    case 2: return "channels";
  }
  return nullptr;
}

bool is_constant(const Expr& e) {
  return e.node_type() == IRNodeType::IntImm || e.node_type() == IRNodeType::FloatImm;
}

class ExprPrinter {
 public:
  /// `literal_type` is the type a bare literal takes at this position; nullopt means the
  /// default (i32 for integers, f32 for floats).
  Printed print(const Expr& e, std::optional<Type> literal_type = std::nullopt) {
    if (!e.defined()) return {"<undefined>", kPrimary, false};
    switch (e.node_type()) {
      case IRNodeType::IntImm: return int_imm(e.as<IntImm>(), literal_type);
      case IRNodeType::FloatImm: return float_imm(e.as<FloatImm>(), literal_type);
      case IRNodeType::Cast: {
        const Cast* op = e.as<Cast>();
        // The widening of an f16 value to f32 is implicit in the language.
        if (op->type == Float32() && op->value.type().is_f16()) return print(op->value);
        return {to_string(op->type) + "(" + full(op->value) + ")"};
      }
      case IRNodeType::Variable: return {e.as<Variable>()->name};
      case IRNodeType::Param: return {e.as<Param>()->name};
      case IRNodeType::InputExtent: {
        const InputExtent* op = e.as<InputExtent>();
        const char* dim = extent_name(op->dim);
        return {op->input + "." + (dim ? std::string(dim) : "dim" + std::to_string(op->dim))};
      }
      case IRNodeType::Add: return binary(e.as<Add>(), " + ", kAdd, false);
      case IRNodeType::Sub: return binary(e.as<Sub>(), " - ", kAdd, false);
      case IRNodeType::Mul: return binary(e.as<Mul>(), " * ", kMul, false);
      case IRNodeType::Div: return binary(e.as<Div>(), " / ", kMul, false);
      case IRNodeType::Mod: return binary(e.as<Mod>(), " % ", kMul, false);
      case IRNodeType::Min: return call_like("min", {e.as<Min>()->a, e.as<Min>()->b}, true);
      case IRNodeType::Max: return call_like("max", {e.as<Max>()->a, e.as<Max>()->b}, true);
      case IRNodeType::EQ: return binary(e.as<EQ>(), " == ", kEquality, true);
      case IRNodeType::NE: return binary(e.as<NE>(), " != ", kEquality, true);
      case IRNodeType::LT: return binary(e.as<LT>(), " < ", kCompare, true);
      case IRNodeType::LE: return binary(e.as<LE>(), " <= ", kCompare, true);
      case IRNodeType::GT: return binary(e.as<GT>(), " > ", kCompare, true);
      case IRNodeType::GE: return binary(e.as<GE>(), " >= ", kCompare, true);
      case IRNodeType::And: return binary(e.as<And>(), " && ", kAnd, false);
      case IRNodeType::Or: return binary(e.as<Or>(), " || ", kOr, false);
      case IRNodeType::Not: return {"!" + at_least(e.as<Not>()->a, kUnary), kUnary};
      case IRNodeType::Select: return select(e.as<Select>());
      case IRNodeType::Call: {
        const Call* op = e.as<Call>();
        return call_like(op->name, op->args, false);
      }
      case IRNodeType::Reduce: return reduce(e.as<Reduce>());
      case IRNodeType::Let: {
        // The value is parenthesised when it is a Let itself, for the reader's sake.
        const Let* op = e.as<Let>();
        return {"let " + op->name + " = " + at_least(op->value, kOr) + " in " + full(op->body),
                kLet};
      }
#define IR_STMT_CASE(N) case IRNodeType::N:
        IR_STMT_NODES(IR_STMT_CASE)
#undef IR_STMT_CASE
        break;  // statement node types cannot be expressions
    }
    return {"<?>"};
  }

  /// The whole expression, for a position that needs no parentheses: one that a ',', ')',
  /// ':', '..', the end of a declaration or `in` follows (a Let's body stops there too).
  std::string full(const Expr& e, std::optional<Type> literal_type = std::nullopt) {
    return print(e, literal_type).text;
  }

  /// `e` parenthesised unless it binds at least as tightly as `min_prec`.
  std::string at_least(const Expr& e, int min_prec,
                       std::optional<Type> literal_type = std::nullopt) {
    return wrap(print(e, literal_type), min_prec);
  }

 private:
  static std::string wrap(const Printed& p, int min_prec) {
    return p.prec < min_prec ? "(" + p.text + ")" : p.text;
  }

  // A literal of the default type prints bare anywhere; one of another type prints bare
  // only where the context gives it that type.
  static bool bare_ok(Type t, std::optional<Type> literal_type, Type default_type) {
    return literal_type ? *literal_type == t : t == default_type;
  }

  Printed int_imm(const IntImm* op, std::optional<Type> literal_type) {
    if (op->type.is_bool()) return {op->value ? "true" : "false"};
    std::string digits = std::to_string(op->value);
    if (bare_ok(op->type, literal_type, Int32())) {
      return {digits, op->value < 0 ? kUnary : kPrimary, true};
    }
    return {to_string(op->type) + "(" + digits + ")"};
  }

  Printed float_imm(const FloatImm* op, std::optional<Type> literal_type) {
    bool is_f32 = op->type.element_of() == Float32();
    std::string digits = format_float_literal(op->value, is_f32);
    if (bare_ok(op->type, literal_type, Float32())) {
      return {digits, std::signbit(op->value) ? kUnary : kPrimary, true};
    }
    return {to_string(op->type) + "(" + digits + ")"};
  }

  // Either operand may be a literal that takes the other's type. Two literals side by side
  // are folded by the checker under + - * / % and take the default type (i32 or f32)
  // elsewhere, so two constants print as literals only in the second case; otherwise the
  // second is spelled as a typed expression (`1.0 / f32(3200.0)`) and the first adapts.
  std::pair<Printed, Printed> operands(const Expr& a, const Expr& b, bool folds) {
    if (!a.defined() || !b.defined()) return {print(a), print(b)};
    if (is_constant(a) && is_constant(b)) {
      Type t = b.type();
      bool default_type = t == Int32() || t == Float32();
      if (folds || !default_type) return {print(a, t), typed_constant(b)};
      return {print(a), print(b)};
    }
    return {print(a, b.type()), print(b, a.type())};
  }

  // A constant as a typed expression rather than a literal: `f32(2.0)`, `u8(3)`.
  Printed typed_constant(const Expr& e) {
    Printed p = print(e, Type(ScalarType::Bool, 0));  // a hint no constant matches
    if (p.bare_literal) p = {to_string(e.type()) + "(" + p.text + ")"};
    return p;
  }

  // Left-associative binary operators; comparisons do not chain, so an operand at the same
  // level is parenthesised on either side.
  template <typename T>
  Printed binary(const T* op, const char* symbol, int prec, bool non_associative) {
    // Comparisons do not chain, and neither they nor && || fold constants.
    auto [pa, pb] = operands(op->a, op->b, !non_associative && prec >= kAdd);
    return {wrap(pa, non_associative ? prec + 1 : prec) + symbol + wrap(pb, prec + 1), prec};
  }

  Printed call_like(const std::string& name, const std::vector<Expr>& args, bool adapt) {
    std::string s = name + "(";
    if (adapt && args.size() == 2) {
      auto [pa, pb] = operands(args[0], args[1], false);
      s += wrap(pa, kOr) + ", " + wrap(pb, kOr);
    } else {
      for (size_t i = 0; i < args.size(); i++) {
        if (i) s += ", ";
        s += full(args[i]);
      }
    }
    return {s + ")"};
  }

  Printed select(const Select* op) {
    auto [pt, pf] = operands(op->true_value, op->false_value, false);
    return {"select(" + full(op->condition) + ", " + wrap(pt, kOr) + ", " + wrap(pf, kOr) + ")"};
  }

  Printed reduce(const Reduce* op) {
    std::string s = std::string(reduce_op_name(op->op)) + "(";
    for (size_t i = 0; i < op->domain.size(); i++) {
      if (i) s += ", ";
      s += op->domain[i].name + " in " + full(op->domain[i].min) + ".." + full(op->domain[i].max);
    }
    return {s + " : " + full(op->body) + ")"};
  }
};

class StmtPrinter {
 public:
  explicit StmtPrinter(std::ostringstream& os) : os_(os) {}

  void print(const Stmt& s, int indent) {
    if (!s.defined()) {
      line(indent) << "<undefined>\n";
      return;
    }
    switch (s.node_type()) {
      case IRNodeType::LetStmt: {
        const LetStmt* op = s.as<LetStmt>();
        line(indent) << "let " << op->name << " = " << exprs_.full(op->value) << "\n";
        print(op->body, indent);
        return;
      }
      case IRNodeType::For: {
        const For* op = s.as<For>();
        line(indent) << for_type_name(op->for_type) << " " << op->name << " in "
                     << range(op->min, op->extent) << ":\n";
        print(op->body, indent + 1);
        return;
      }
      case IRNodeType::Provide: {
        const Provide* op = s.as<Provide>();
        line(indent) << op->name << "(" << list(op->args) << ")" << (op->atomic ? " atomic" : "")
                     << " = " << exprs_.full(op->value) << "\n";
        return;
      }
      case IRNodeType::Allocate: {
        const Allocate* op = s.as<Allocate>();
        line(indent) << "allocate " << op->name << "[" << list(op->extents)
                     << "] : " << to_string(op->type) << ":\n";
        print(op->body, indent + 1);
        return;
      }
      case IRNodeType::Block: {
        // Walk the right spine iteratively: long statement lists are right-nested Blocks.
        Stmt cur = s;
        while (const Block* b = cur.as<Block>()) {
          print(b->first, indent);
          cur = b->rest;
        }
        print(cur, indent);
        return;
      }
      case IRNodeType::IfThenElse: {
        const IfThenElse* op = s.as<IfThenElse>();
        line(indent) << "if (" << exprs_.full(op->condition) << "):\n";
        print(op->then_case, indent + 1);
        if (op->else_case.defined()) {
          line(indent) << "else:\n";
          print(op->else_case, indent + 1);
        }
        return;
      }
      case IRNodeType::Evaluate:
        line(indent) << exprs_.full(s.as<Evaluate>()->value) << "\n";
        return;
#define IR_EXPR_CASE(N) case IRNodeType::N:
        IR_EXPR_NODES(IR_EXPR_CASE)
#undef IR_EXPR_CASE
        break;  // expression node types cannot be statements
    }
    line(indent) << "<?>\n";
  }

 private:
  std::ostringstream& line(int indent) {
    for (int i = 0; i < indent; i++) os_ << "  ";
    return os_;
  }

  std::string list(const std::vector<Expr>& es) {
    std::string s;
    for (size_t i = 0; i < es.size(); i++) {
      if (i) s += ", ";
      s += exprs_.full(es[i]);
    }
    return s;
  }

  // `min..max` with both bounds inclusive, folding constants so loops read naturally.
  std::string range(const Expr& min, const Expr& extent) {
    const IntImm* lo = min.as<IntImm>();
    const IntImm* n = extent.as<IntImm>();
    if (lo && n) return std::to_string(lo->value) + ".." + std::to_string(lo->value + n->value - 1);
    std::string first = exprs_.full(min);
    std::string last;
    if (lo && lo->value == 0) {
      last = exprs_.at_least(extent, kAdd) + " - 1";
    } else if (n) {
      last = exprs_.at_least(min, kAdd) + " + " + std::to_string(n->value - 1);
    } else {
      last = exprs_.at_least(min, kAdd) + " + " + exprs_.at_least(extent, kMul) + " - 1";
    }
    return first + ".." + last;
  }

  std::ostringstream& os_;
  ExprPrinter exprs_;
};

const char* metric_text(ErrorMetric m) {
  switch (m) {
    case ErrorMetric::Lab: return "lab";
    case ErrorMetric::Rmse: return "rmse";
  }
  return "?";
}

// A declaration literal (param default, boundary constant) of type `t`: integers as
// integers, floats exactly as the double they are stored as.
std::string decl_literal(Type t, double v) {
  if (!t.is_float() && std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.007e15) {
    return std::to_string(static_cast<int64_t>(v));
  }
  return format_float_literal(v);
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); i++) {
    if (i) s += ", ";
    s += names[i];
  }
  return s;
}

std::string domain_text(const std::vector<ReductionVariable>& domain, ExprPrinter& printer) {
  std::string s;
  for (size_t i = 0; i < domain.size(); i++) {
    s += i ? ", " : " for ";
    s += domain[i].name + " in " + printer.full(domain[i].min) + ".." + printer.full(domain[i].max);
  }
  return s;
}

}  // namespace

std::string to_string(const Expr& e) { return ExprPrinter().print(e).text; }

std::string to_string(const Stmt& s) {
  std::ostringstream os;
  StmtPrinter(os).print(s, 0);
  return os.str();
}

std::string to_string(const Pipeline& p) {
  ExprPrinter printer;
  std::ostringstream os;
  os << "pipeline " << p.name << "\n\n";
  for (const InputDecl& in : p.inputs) {
    os << "input " << in.name << " : " << to_string(in.type) << "[" << join(in.dim_names) << "]";
    if (in.boundary == BoundaryKind::Constant) {
      os << " constant(" << decl_literal(in.type, in.boundary_value) << ")";
    } else if (in.boundary != BoundaryKind::Clamp) {
      os << " " << boundary_kind_name(in.boundary);
    }
    os << "\n";
  }
  for (const ParamDecl& param : p.params) {
    os << "param " << param.name << " : " << to_string(param.type) << " = "
       << decl_literal(param.type, param.default_value) << "\n";
  }
  if (!p.inputs.empty() || !p.params.empty()) os << "\n";
  for (const Func& f : p.funcs) {
    os << "func " << f.name << "(" << join(f.args) << ") = " << printer.full(f.value) << "\n";
    for (const UpdateDef& u : f.updates) {
      os << f.name << "(";
      for (size_t i = 0; i < u.args.size(); i++) os << (i ? ", " : "") << printer.full(u.args[i]);
      // The checker gives integer literals in an update's value the func's type; an f16
      // func's updates compute in f32 and the checker adds the rounding to f16.
      Expr value = u.value;
      Type literal_type = f.type;
      if (f.type.is_f16() && value.node_type() == IRNodeType::Cast) {
        value = value.as<Cast>()->value;
        literal_type = Float32();
      }
      os << ") = " << printer.full(value, literal_type) << domain_text(u.domain, printer) << "\n";
    }
  }
  if (!p.funcs.empty()) os << "\n";
  os << "output " << p.output.func;
  if (!p.output.extents.empty()) {
    os << " size(";
    for (size_t i = 0; i < p.output.extents.size(); i++) {
      os << (i ? ", " : "") << printer.full(p.output.extents[i]);
    }
    os << ")";
  }
  os << " metric " << metric_text(p.output.metric) << "\n";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }

}  // namespace stipple
