#include "compiler_core/language/checker.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "compiler_core/ir/scalar_ops.h"
#include "compiler_core/language/source.h"

namespace stipple {

namespace {

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = {
      "pipeline", "input",   "param",  "func",   "output", "for",        "sum",        "prod",
      "minimum",  "maximum", "median", "argmin", "select", "min",        "max",        "abs",
      "clamp",    "floor",   "ceil",   "round",  "sqrt",   "exp",        "log",        "pow",
      "sin",      "cos",     "tan",    "atan2",  "hypot",  "tanh",       "fma",        "u8",
      "u16",      "i32",     "f32",    "f64",    "bool",   "rgb_to_yuv", "yuv_to_rgb", "let"};
  return names;
}

std::optional<ReduceOp> reduce_op_from_name(const std::string& s) {
  if (s == "sum") return ReduceOp::Sum;
  if (s == "prod") return ReduceOp::Prod;
  if (s == "minimum") return ReduceOp::Minimum;
  if (s == "maximum") return ReduceOp::Maximum;
  if (s == "median") return ReduceOp::Median;
  if (s == "argmin") return ReduceOp::ArgMin;
  return std::nullopt;
}

std::optional<Intrinsic> float_intrinsic_from_name(const std::string& s) {
  if (s == "floor") return Intrinsic::Floor;
  if (s == "ceil") return Intrinsic::Ceil;
  if (s == "round") return Intrinsic::Round;
  if (s == "sqrt") return Intrinsic::Sqrt;
  if (s == "exp") return Intrinsic::Exp;
  if (s == "log") return Intrinsic::Log;
  if (s == "sin") return Intrinsic::Sin;
  if (s == "cos") return Intrinsic::Cos;
  if (s == "pow") return Intrinsic::Pow;
  if (s == "tan") return Intrinsic::Tan;
  if (s == "atan2") return Intrinsic::Atan2;
  if (s == "hypot") return Intrinsic::Hypot;
  if (s == "tanh") return Intrinsic::Tanh;
  if (s == "fma") return Intrinsic::Fma;
  return std::nullopt;
}

/// What a float intrinsic's operands are, for arity errors.
const char* intrinsic_operands(Intrinsic op) {
  switch (op) {
    case Intrinsic::Pow: return "a base and an exponent";
    case Intrinsic::Atan2: return "y and x";
    case Intrinsic::Hypot: return "two floats";
    case Intrinsic::Fma: return "a, b and c of a * b + c";
    default: return "a float";
  }
}

std::string op_spelling(TokenKind k) {
  std::string d = describe(k);
  return d;  // already quoted, e.g. "'+'"
}

/// A checked expression. Untyped literals stay literals until the context gives them a
/// type (`2 * sigma` makes the 2 an f32); `expr` then holds their default typing.
struct Typed {
  Expr expr;
  enum class Lit { None, Int, Float } lit = Lit::None;
  double value = 0;
  SourceLoc loc;
  bool is_literal() const { return lit != Lit::None; }
};

/// Which of a value's ends are known to be finite. Used to insist that the index of a
/// call to a func can be bounded, so that bounds inference never meets an unbounded read.
struct Boundedness {
  bool lo = true, hi = true;
  bool both() const { return lo && hi; }
};

/// Let-bound variables in scope (innermost last) and whether their values are bounded.
using LetBounds = std::vector<std::pair<std::string, Boundedness>>;

Boundedness boundedness(const Expr& e, LetBounds& lets);

/// The types whose every value is a small integer: bool, u8, u16, i8, i16 (an i32 or u32
/// value may be anything an i32 index can hold, or more).
bool bounded_by_type(Type t) { return t.is_bool() || (t.is_int() && t.bits() < 32); }

Boundedness both_bounded(const Expr& a, const Expr& b, LetBounds& lets) {
  bool ok = boundedness(a, lets).both() && boundedness(b, lets).both();
  return {ok, ok};
}

Boundedness boundedness(const Expr& e, LetBounds& lets) {
  switch (e.node_type()) {
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Param:
    case IRNodeType::InputExtent: return {};
    case IRNodeType::Variable: {
      // Pure and reduction variables range over bounded domains; a Let's variable is
      // as bounded as its value.
      const Variable* v = e.as<Variable>();
      if (v->kind != VarKind::Let) return {};
      for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        if (it->first == v->name) return it->second;
      }
      return {false, false};
    }
    case IRNodeType::Cast: {
      const Cast* c = e.as<Cast>();
      if (bounded_by_type(c->type)) return {};
      return boundedness(c->value, lets);
    }
    case IRNodeType::Add: return both_bounded(e.as<Add>()->a, e.as<Add>()->b, lets);
    case IRNodeType::Sub: return both_bounded(e.as<Sub>()->a, e.as<Sub>()->b, lets);
    case IRNodeType::Mul: return both_bounded(e.as<Mul>()->a, e.as<Mul>()->b, lets);
    case IRNodeType::Div: {
      const Div* d = e.as<Div>();
      // |a / b| <= |a| for integers; float division by a tiny divisor is unbounded.
      bool ok =
          boundedness(d->a, lets).both() && (d->type.is_int() || boundedness(d->b, lets).both());
      return {ok, ok};
    }
    case IRNodeType::Mod: {
      const Mod* m = e.as<Mod>();
      bool ok = boundedness(m->b, lets).both();
      return {ok, ok};
    }
    case IRNodeType::Min: {
      const Min* m = e.as<Min>();
      Boundedness a = boundedness(m->a, lets), b = boundedness(m->b, lets);
      return {a.lo && b.lo, a.hi || b.hi};
    }
    case IRNodeType::Max: {
      const Max* m = e.as<Max>();
      Boundedness a = boundedness(m->a, lets), b = boundedness(m->b, lets);
      return {a.lo || b.lo, a.hi && b.hi};
    }
    case IRNodeType::EQ:
    case IRNodeType::NE:
    case IRNodeType::LT:
    case IRNodeType::LE:
    case IRNodeType::GT:
    case IRNodeType::GE:
    case IRNodeType::And:
    case IRNodeType::Or:
    case IRNodeType::Not: return {};
    case IRNodeType::Select: {
      const Select* s = e.as<Select>();
      Boundedness a = boundedness(s->true_value, lets), b = boundedness(s->false_value, lets);
      return {a.lo && b.lo, a.hi && b.hi};
    }
    case IRNodeType::Call: {
      const Call* c = e.as<Call>();
      if (c->call_type == CallType::Intrinsic) {
        switch (c->intrinsic) {
          case Intrinsic::Sin:
          case Intrinsic::Cos:
          case Intrinsic::Tanh:
          case Intrinsic::Atan2: return {};  // in [-1, 1] or [-pi, pi], or NaN
          case Intrinsic::Tan: return {false, false};
          default: break;
        }
        Boundedness r;
        for (const Expr& a : c->args) {
          Boundedness b = boundedness(a, lets);
          r.lo = r.lo && b.lo && b.hi;
          r.hi = r.hi && b.lo && b.hi;
        }
        return r;
      }
      // A pixel or func value: bounded only by its type.
      bool ok = bounded_by_type(c->type);
      return {ok, ok};
    }
    case IRNodeType::Reduce: {
      const Reduce* r = e.as<Reduce>();
      if (r->op == ReduceOp::ArgMin) return {};
      Boundedness b = boundedness(r->body, lets);
      if (r->op == ReduceOp::Sum || r->op == ReduceOp::Prod) {
        bool ok = b.both();
        return {ok, ok};
      }
      return b;
    }
    case IRNodeType::Let: {
      const Let* l = e.as<Let>();
      lets.emplace_back(l->name, boundedness(l->value, lets));
      Boundedness b = boundedness(l->body, lets);
      lets.pop_back();
      return b;
    }
    default: return {false, false};
  }
}

class Checker {
 public:
  Checker(const SourceText& source, const AstProgram& program,
          std::vector<CompileWarning>* warnings)
      : src_(source), ast_(program), warnings_(warnings) {}

  Pipeline run() {
    result_.name = ast_.name;
    declare_names();
    for (const AstInput& in : ast_.inputs) result_.inputs.push_back(check_input(in));
    for (const AstParam& p : ast_.params) result_.params.push_back(check_param(p));
    group_updates();
    std::vector<const AstFunc*> order = order_funcs();
    std::map<std::string, Func> checked;
    for (const AstFunc* f : order) {
      checked[f->name] = check_func(*f);
      func_types_[f->name] = checked[f->name].type;
      check_updates(*f, checked[f->name]);
    }
    for (const AstFunc& f : ast_.funcs) result_.funcs.push_back(std::move(checked[f.name]));
    check_output();
    warn_unused_funcs();
    return std::move(result_);
  }

 private:
  [[noreturn]] void error(SourceLoc loc, const std::string& message) const {
    src_.error(loc, message);
  }

  // Names ---------------------------------------------------------------------------------
  struct Declared {
    std::string kind;
    SourceLoc loc;
  };

  void declare(const std::string& name, SourceLoc loc, const std::string& kind) {
    if (reserved_names().count(name)) {
      error(loc, "'" + name + "' is a built-in name and cannot name " +
                     (kind == "input" ? "an " : "a ") + kind);
    }
    auto it = declared_.find(name);
    if (it != declared_.end()) {
      error(loc, "'" + name + "' is already declared (as " +
                     (it->second.kind == "input" ? "an " : "a ") + it->second.kind + " at " +
                     std::to_string(it->second.loc.line) + ":" +
                     std::to_string(it->second.loc.col) + ")");
    }
    declared_[name] = {kind, loc};
  }

  void declare_names() {
    for (const AstInput& in : ast_.inputs) declare(in.name, in.loc, "input");
    for (const AstParam& p : ast_.params) declare(p.name, p.loc, "param");
    for (const AstFunc& f : ast_.funcs) {
      declare(f.name, f.loc, "func");
      funcs_[f.name] = &f;
    }
    for (const AstInput& in : ast_.inputs) inputs_[in.name] = &in;
  }

  bool is_global(const std::string& name) const { return declared_.count(name) > 0; }

  // Inputs and params --------------------------------------------------------------------
  Type check_type_name(const std::string& name, SourceLoc loc) {
    std::optional<Type> t = parse_type_name(name);
    if (!t) {
      error(loc, "unknown type '" + name +
                     "'; the types are u8, u16, u32, i8, i16, i32, f16, f32 and f64");
    }
    return *t;
  }

  InputDecl check_input(const AstInput& in) {
    InputDecl d;
    d.name = in.name;
    d.type = check_type_name(in.type_name, in.type_loc);
    if (in.dims.size() > 4) error(in.dim_locs[4], "an input has at most 4 dimensions");
    for (size_t i = 0; i < in.dims.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (in.dims[i] == in.dims[j])
          error(in.dim_locs[i], "dimension '" + in.dims[i] + "' is named twice");
      }
    }
    d.dim_names = in.dims;
    if (in.boundary == "clamp") {
      d.boundary = BoundaryKind::Clamp;
    } else if (in.boundary == "mirror") {
      d.boundary = BoundaryKind::Mirror;
    } else {
      d.boundary = BoundaryKind::Constant;
      d.boundary_value = in.boundary_value;
      if (d.type.is_int() &&
          (in.boundary_value != std::floor(in.boundary_value) ||
           in.boundary_value < d.type.min_value() || in.boundary_value > d.type.max_value())) {
        error(in.boundary_loc,
              "the boundary value does not fit the input's type " + to_string(d.type));
      }
    }
    return d;
  }

  ParamDecl check_param(const AstParam& p) {
    ParamDecl d;
    d.name = p.name;
    d.type = check_type_name(p.type_name, p.type_loc);
    const AstExpr* e = p.value.get();
    bool negative = e->kind == AstKind::Unary;
    const AstExpr* lit = negative ? e->args[0].get() : e;
    double v =
        lit->kind == AstKind::IntLit ? static_cast<double>(lit->int_value) : lit->float_value;
    if (negative) v = -v;
    if (d.type.is_int()) {
      if (lit->kind == AstKind::FloatLit) {
        error(lit->loc,
              "param '" + p.name + "' is " + to_string(d.type) + " but its default is a float");
      }
      if (v < d.type.min_value() || v > d.type.max_value()) {
        error(lit->loc, "the default of param '" + p.name + "' does not fit " + to_string(d.type));
      }
    }
    d.default_value = to_double(d.type.code, value_from_double(d.type.code, v));
    params_[p.name] = d.type;
    return d;
  }

  // Funcs: grouping, ordering ------------------------------------------------------------
  void group_updates() {
    for (const AstUpdate& u : ast_.updates) {
      if (!funcs_.count(u.func)) {
        if (inputs_.count(u.func))
          error(u.loc, "'" + u.func + "' is an input; only funcs can be updated");
        if (params_.count(u.func))
          error(u.loc, "'" + u.func + "' is a param; only funcs can be updated");
        error(u.loc, "update of unknown func '" + u.func + "'; declare it first with 'func " +
                         u.func + "(...) = ...'");
      }
      updates_[u.func].push_back(&u);
    }
  }

  /// Calls to funcs anywhere in an expression (first location of each callee).
  void collect_calls(const AstExpr* e, std::vector<std::pair<std::string, SourceLoc>>& out) const {
    if (e->kind == AstKind::Call && funcs_.count(e->name)) out.push_back({e->name, e->loc});
    for (const AstExprPtr& a : e->args) collect_calls(a.get(), out);
    for (const AstRange& r : e->ranges) {
      if (r.lo) collect_calls(r.lo.get(), out);
      if (r.hi) collect_calls(r.hi.get(), out);
    }
  }

  /// Callees first (Kahn's algorithm, ties in definition order); a cycle is an error that
  /// names the whole cycle at the call that closes it.
  std::vector<const AstFunc*> order_funcs() {
    std::map<std::string, std::vector<std::pair<std::string, SourceLoc>>>& calls = calls_;
    for (const AstFunc& f : ast_.funcs) {
      auto& c = calls[f.name];
      std::vector<std::pair<std::string, SourceLoc>> pure;
      collect_calls(f.value.get(), pure);
      for (auto& [callee, loc] : pure) {
        if (callee == f.name) {
          error(loc, "the pure definition of '" + f.name +
                         "' calls itself; recursion needs an update definition, e.g. " + f.name +
                         "(x) = " + f.name + "(x) + ... for x in 1..N");
        }
        c.push_back({callee, loc});
      }
      for (const AstUpdate* u : updates_[f.name]) {
        std::vector<std::pair<std::string, SourceLoc>> uc;
        for (const AstExprPtr& a : u->args) collect_calls(a.get(), uc);
        collect_calls(u->value.get(), uc);
        for (const AstRange& r : u->ranges) {
          if (r.lo) collect_calls(r.lo.get(), uc);
          if (r.hi) collect_calls(r.hi.get(), uc);
        }
        for (auto& [callee, loc] : uc) {
          if (callee != f.name) c.push_back({callee, loc});
        }
      }
    }
    std::map<std::string, int> pending;  // callees not yet placed
    std::map<std::string, std::vector<std::string>> callers;
    for (const AstFunc& f : ast_.funcs) {
      std::set<std::string> distinct;
      for (auto& [callee, loc] : calls[f.name]) distinct.insert(callee);
      pending[f.name] = static_cast<int>(distinct.size());
      for (const std::string& callee : distinct) callers[callee].push_back(f.name);
    }
    std::vector<const AstFunc*> order;
    std::set<std::string> placed;
    bool progress = true;
    while (progress) {
      progress = false;
      for (const AstFunc& f : ast_.funcs) {
        if (placed.count(f.name) || pending[f.name] != 0) continue;
        placed.insert(f.name);
        order.push_back(&f);
        for (const std::string& caller : callers[f.name]) --pending[caller];
        progress = true;
      }
    }
    if (order.size() == ast_.funcs.size()) return order;
    // Walk unplaced callees from an unplaced func until a name repeats: that is a cycle.
    std::string start;
    for (const AstFunc& f : ast_.funcs) {
      if (!placed.count(f.name)) {
        start = f.name;
        break;
      }
    }
    std::vector<std::string> path = {start};
    std::vector<SourceLoc> locs;
    while (true) {
      const std::string& cur = path.back();
      for (auto& [callee, loc] : calls[cur]) {
        if (placed.count(callee)) continue;
        locs.push_back(loc);
        auto seen = std::find(path.begin(), path.end(), callee);
        if (seen != path.end()) {
          std::string cycle;
          for (auto it = seen; it != path.end(); ++it) cycle += *it + " -> ";
          cycle += callee;
          error(loc, "cycle between funcs: " + cycle);
        }
        path.push_back(callee);
        break;
      }
      STIPPLE_INTERNAL_CHECK(locs.size() == path.size() - 1, "cycle search lost its way");
    }
  }

  // Expressions ---------------------------------------------------------------------------
  struct ScopeVar {
    ScopeVar(std::string n = {}, VarKind k = VarKind::Pure, SourceLoc l = {})
        : name(std::move(n)), kind(k), loc(l) {}
    std::string name;
    VarKind kind;
    SourceLoc loc;                 // Let: where the name is bound
    Type type = Int32();           // Let: the value's type
    Boundedness bounded;           // Let: whether the value has known bounds
    std::optional<Typed> literal;  // Let of a literal: the name stands for the literal
  };
  struct Context {
    std::vector<ScopeVar> vars;
    bool bounds_only = false;  // reduction bounds and sizes: params, numbers, extents
    std::string self;          // the func being defined
    bool self_call_allowed = false;
    std::vector<std::string> lhs_pure;  // pure variables that may not appear here
  };

  const ScopeVar* find_var(const Context& ctx, const std::string& name) const {
    for (auto it = ctx.vars.rbegin(); it != ctx.vars.rend(); ++it) {
      if (it->name == name) return &*it;
    }
    return nullptr;
  }

  Typed literal_int(int64_t v, SourceLoc loc) {
    Typed t;
    t.lit = Typed::Lit::Int;
    t.value = static_cast<double>(v);
    t.loc = loc;
    return t;
  }

  /// The literal as a constant of type `want`, or an error if it cannot be one.
  Expr literal_as(const Typed& t, Type want, SourceLoc loc) {
    if (want.is_bool()) error(loc, "expected a condition (bool), found a number");
    if (want.is_float()) return FloatImm::make(want, t.value);
    if (t.lit == Typed::Lit::Float) {
      error(loc, "the float " + format_number(t.value) + " cannot be used as " + to_string(want) +
                     "; cast explicitly, e.g. " + to_string(want) + "(...)");
    }
    if (t.value < want.min_value() || t.value > want.max_value()) {
      error(loc, "the number " + format_number(t.value) + " does not fit " + to_string(want));
    }
    return IntImm::make(want, static_cast<int64_t>(t.value));
  }

  static std::string format_number(double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

  /// A standalone expression: literals take their default types (i32, f32).
  Expr materialize(const Typed& t) {
    if (!t.is_literal()) return t.expr;
    return literal_as(t, t.lit == Typed::Lit::Int ? Int32() : Float32(), t.loc);
  }

  Expr coerce(const Typed& t, Type want, SourceLoc loc, const std::string& what) {
    if (t.is_literal()) return literal_as(t, want, loc);
    if (t.expr.type() != want) {
      error(loc, what + " is " + to_string(t.expr.type()) + " but " + to_string(want) +
                     " is expected; cast with " + to_string(want) + "(...)");
    }
    return t.expr;
  }

  /// Brings two operands to one type: literals adapt; typed operands must already agree.
  std::pair<Expr, Expr> unify(const Typed& a, const Typed& b, SourceLoc op_loc,
                              const std::string& op) {
    if (a.is_literal() && b.is_literal()) {
      Type t = (a.lit == Typed::Lit::Float || b.lit == Typed::Lit::Float) ? Float32() : Int32();
      return {literal_as(a, t, a.loc), literal_as(b, t, b.loc)};
    }
    if (a.is_literal()) return {literal_as(a, b.expr.type(), a.loc), b.expr};
    if (b.is_literal()) return {a.expr, literal_as(b, a.expr.type(), b.loc)};
    if (a.expr.type() != b.expr.type()) {
      error(op_loc, "type mismatch: " + op + " of " + to_string(a.expr.type()) + " and " +
                        to_string(b.expr.type()) + "; cast one side, e.g. " +
                        to_string(b.expr.type()) + "(...)");
    }
    return {a.expr, b.expr};
  }

  Expr index_arg(const Typed& t, SourceLoc loc, size_t i, const std::string& callee) {
    if (t.is_literal()) return literal_as(t, Int32(), loc);
    Type ty = t.expr.type();
    if (ty == Int32()) return t.expr;
    if (ty.is_int() && ty.bits() < 32) return Cast::make(Int32(), t.expr);
    error(loc, "index " + std::to_string(i + 1) + " of the call to '" + callee + "' is " +
                   to_string(ty) + "; indices are integers: use i32(...)");
  }

  Expr require_numeric(const Typed& t, SourceLoc loc, const std::string& what) {
    Expr e = materialize(t);
    if (!e.type().is_numeric()) error(loc, what + " needs a number, found a condition (bool)");
    return e;
  }

  Expr require_bool(const Typed& t, SourceLoc loc, const std::string& what) {
    if (t.is_literal() || !t.expr.type().is_bool()) {
      error(loc, what + " needs a condition (a comparison or && || !), found " +
                     (t.is_literal() ? std::string("a number") : to_string(t.expr.type())));
    }
    return t.expr;
  }

  Typed typed(Expr e, SourceLoc loc) {
    Typed t;
    t.expr = std::move(e);
    t.loc = loc;
    return t;
  }

  /// An expression used as a value. An f16 value (a load of an f16 func or input, an f16
  /// cast or param) is widened to f32 here, so that arithmetic on it happens in f32.
  Typed check_expr(const AstExpr& e, Context& ctx) {
    Typed t = check_storable(e, ctx);
    if (!t.is_literal() && t.expr.type().is_f16()) t.expr = Cast::make(Float32(), t.expr);
    return t;
  }

  /// As check_expr, but an f16 value at the top stays f16: a func's pure definition,
  /// whose type is its value's.
  Typed check_storable(const AstExpr& e, Context& ctx) {
    switch (e.kind) {
      case AstKind::IntLit: return literal_int(e.int_value, e.loc);
      case AstKind::FloatLit: {
        Typed t;
        t.lit = Typed::Lit::Float;
        t.value = e.float_value;
        t.loc = e.loc;
        return t;
      }
      case AstKind::Name: return check_name(e, ctx);
      case AstKind::Field: return check_field(e);
      case AstKind::Unary: return check_unary(e, ctx);
      case AstKind::Binary: return check_binary(e, ctx);
      case AstKind::Call: return check_call(e, ctx);
      case AstKind::Reduction: return check_reduction(e, ctx);
      case AstKind::Let: return check_let(e, ctx);
    }
    STIPPLE_INTERNAL_CHECK(false, "unknown AST kind");
  }

  Typed check_name(const AstExpr& e, Context& ctx) {
    if (const ScopeVar* v = find_var(ctx, e.name)) {
      if (ctx.bounds_only) {
        error(e.loc, "bounds and sizes may only use params, numbers and input extents; '" + e.name +
                         "' is a variable");
      }
      if (v->kind == VarKind::Let) {
        if (v->literal) {
          Typed lit = *v->literal;
          lit.loc = e.loc;
          return lit;
        }
        return typed(Variable::make_typed(v->type, e.name), e.loc);
      }
      return typed(Variable::make(e.name, v->kind), e.loc);
    }
    if (std::find(ctx.lhs_pure.begin(), ctx.lhs_pure.end(), e.name) != ctx.lhs_pure.end()) {
      error(e.loc, "pure variable '" + e.name +
                       "' must appear alone in its own position on the left side");
    }
    if (auto it = params_.find(e.name); it != params_.end())
      return typed(Param::make(it->second, e.name), e.loc);
    if (funcs_.count(e.name))
      error(e.loc, "'" + e.name + "' is a func; call it as " + e.name + "(...)");
    if (inputs_.count(e.name)) {
      error(e.loc, "'" + e.name + "' is an input; read a pixel as " + e.name +
                       "(x, y, ...) or use " + e.name + ".width");
    }
    if (reserved_names().count(e.name))
      error(e.loc, "'" + e.name + "' is a built-in function; call it");
    error(e.loc, "unknown name '" + e.name + "'");
  }

  Typed check_field(const AstExpr& e) {
    auto it = inputs_.find(e.name);
    if (it == inputs_.end()) {
      error(e.loc, "'" + e.name + "' is not an input; only inputs have ." + e.field);
    }
    int dim = e.field == "width" ? 0 : e.field == "height" ? 1 : e.field == "channels" ? 2 : -1;
    if (dim < 0)
      error(e.loc, "unknown field '" + e.field + "'; inputs have width, height and channels");
    if (dim >= static_cast<int>(it->second->dims.size())) {
      error(e.loc, "input '" + e.name + "' has " + std::to_string(it->second->dims.size()) +
                       " dimension(s), so it has no " + e.field);
    }
    return typed(InputExtent::make(e.name, dim), e.loc);
  }

  Typed check_unary(const AstExpr& e, Context& ctx) {
    Typed a = check_expr(*e.args[0], ctx);
    if (e.op == TokenKind::Bang)
      return typed(Not::make(require_bool(a, e.args[0]->loc, "'!'")), e.loc);
    if (a.is_literal()) {
      a.value = -a.value;
      a.loc = e.loc;
      return a;
    }
    Expr x = require_numeric(a, e.args[0]->loc, "'-'");
    return typed(Sub::make(make_zero(x.type()), x), e.loc);
  }

  Typed fold_literals(TokenKind op, const Typed& a, const Typed& b, SourceLoc loc) {
    Typed r;
    r.loc = a.loc;
    bool is_float = a.lit == Typed::Lit::Float || b.lit == Typed::Lit::Float;
    r.lit = is_float ? Typed::Lit::Float : Typed::Lit::Int;
    double x = a.value, y = b.value;
    switch (op) {
      case TokenKind::Plus: r.value = x + y; break;
      case TokenKind::Minus: r.value = x - y; break;
      case TokenKind::Star: r.value = x * y; break;
      case TokenKind::Slash:
        if (is_float) {
          r.value = x / y;
        } else {
          r.value = y == 0 ? 0 : std::floor(x / y);
        }
        break;
      case TokenKind::Percent:
        if (is_float) {
          r.value = y == 0 ? 0 : x - y * std::floor(x / y);
        } else {
          r.value = y == 0 ? 0 : x - std::abs(y) * std::floor(x / std::abs(y));
        }
        break;
      default: STIPPLE_INTERNAL_CHECK(false, "not a foldable operator");
    }
    if (!is_float && std::abs(r.value) > 2147483648.0) {
      error(loc, "the constant " + format_number(r.value) + " does not fit in 32 bits");
    }
    if (is_float && !std::isfinite(r.value)) error(loc, "this constant is not a finite number");
    return r;
  }

  Typed check_binary(const AstExpr& e, Context& ctx) {
    Typed a = check_expr(*e.args[0], ctx);
    Typed b = check_expr(*e.args[1], ctx);
    TokenKind op = e.op;
    std::string name = op_spelling(op);
    if (op == TokenKind::AndAnd || op == TokenKind::OrOr) {
      Expr x = require_bool(a, e.args[0]->loc, name);
      Expr y = require_bool(b, e.args[1]->loc, name);
      return typed(op == TokenKind::AndAnd ? And::make(x, y) : Or::make(x, y), e.loc);
    }
    bool arithmetic = op == TokenKind::Plus || op == TokenKind::Minus || op == TokenKind::Star ||
                      op == TokenKind::Slash || op == TokenKind::Percent;
    if (arithmetic && a.is_literal() && b.is_literal()) return fold_literals(op, a, b, e.loc);
    if (!a.is_literal() && a.expr.type().is_bool())
      error(e.args[0]->loc, name + " needs a number, found a condition (bool)");
    if (!b.is_literal() && b.expr.type().is_bool())
      error(e.args[1]->loc, name + " needs a number, found a condition (bool)");
    auto [x, y] = unify(a, b, e.loc, name);
    switch (op) {
      case TokenKind::Plus: return typed(Add::make(x, y), e.loc);
      case TokenKind::Minus: return typed(Sub::make(x, y), e.loc);
      case TokenKind::Star: return typed(Mul::make(x, y), e.loc);
      case TokenKind::Slash: return typed(Div::make(x, y), e.loc);
      case TokenKind::Percent: return typed(Mod::make(x, y), e.loc);
      case TokenKind::EqEq: return typed(EQ::make(x, y), e.loc);
      case TokenKind::NotEq: return typed(NE::make(x, y), e.loc);
      case TokenKind::Less: return typed(LT::make(x, y), e.loc);
      case TokenKind::LessEq: return typed(LE::make(x, y), e.loc);
      case TokenKind::Greater: return typed(GT::make(x, y), e.loc);
      case TokenKind::GreaterEq: return typed(GE::make(x, y), e.loc);
      default: break;
    }
    throw_internal_error(__FILE__, __LINE__, "unknown binary operator");
  }

  // rgb_to_yuv(c, r, g, b) and yuv_to_rgb(c, y, u, v): channel c (0, 1, 2) of the colour
  // in the other space, for perforating the chroma of a YUV image apart (image
  // perforation §3.4). Expanded here into the 3x3 product, so the evaluator and codegen
  // see arithmetic: YUV as BT.601 defines it (Y = 0.299 R + 0.587 G + 0.114 B, U =
  // 0.492 (B - Y), V = 0.877 (R - Y)), and its exact inverse.
  Typed check_colour(const AstExpr& e, Context& ctx) {
    expect_arity(e, 4, "a channel 0, 1 or 2 and the three values");
    Typed ct = check_expr(*e.args[0], ctx);
    Expr c = ct.is_literal() ? literal_as(ct, Int32(), ct.loc) : ct.expr;
    if (c.type() != Int32()) {
      error(e.args[0]->loc, "the channel of '" + e.name + "' is " + to_string(c.type()) +
                                "; it is an i32 (0, 1 or 2)");
    }
    Typed a = check_expr(*e.args[1], ctx), b = check_expr(*e.args[2], ctx),
          d = check_expr(*e.args[3], ctx);
    auto [x, y] = unify(a, b, e.loc, e.name);
    auto [x2, z] = unify(typed(x, a.loc), d, e.loc, e.name);
    auto [x3, y2] = unify(typed(x2, a.loc), typed(y, b.loc), e.loc, e.name);
    const Type t = x3.type();
    if (!t.is_float()) {
      error(e.loc, "'" + e.name + "' needs floats (f32 or f64), found " + to_string(t) +
                       "; convert with f32(...)");
    }
    const std::array<std::array<double, 3>, 3>& m =
        e.name == "rgb_to_yuv" ? rgb_to_yuv_matrix() : yuv_to_rgb_matrix();
    // Structured bindings by init-capture: clang 14 (the fuzzer's compiler) cannot capture
    // them directly.
    auto row = [&m, t, u = x3, v = y2, w = z](int k) {
      return Add::make(Add::make(Mul::make(FloatImm::make(t, m[k][0]), u),
                                 Mul::make(FloatImm::make(t, m[k][1]), v)),
                       Mul::make(FloatImm::make(t, m[k][2]), w));
    };
    Expr value = Select::make(EQ::make(c, IntImm::make(Int32(), 0)), row(0),
                              Select::make(EQ::make(c, IntImm::make(Int32(), 1)), row(1), row(2)));
    return typed(value, e.loc);
  }

  static const std::array<std::array<double, 3>, 3>& rgb_to_yuv_matrix() {
    static const std::array<std::array<double, 3>, 3> m = [] {
      const double kr = 0.299, kg = 0.587, kb = 0.114;
      return std::array<std::array<double, 3>, 3>{{{kr, kg, kb},
                                                   {0.492 * -kr, 0.492 * -kg, 0.492 * (1 - kb)},
                                                   {0.877 * (1 - kr), 0.877 * -kg, 0.877 * -kb}}};
    }();
    return m;
  }

  static const std::array<std::array<double, 3>, 3>& yuv_to_rgb_matrix() {
    static const std::array<std::array<double, 3>, 3> inverse = [] {
      const auto& a = rgb_to_yuv_matrix();
      std::array<std::array<double, 3>, 3> r{};
      const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                         a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
          // The cofactor of a[j][i] over the determinant.
          const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
          r[i][j] = (a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0]) / det;
        }
      }
      return r;
    }();
    return inverse;
  }

  void expect_arity(const AstExpr& e, size_t n, const std::string& what) {
    if (e.args.size() != n) {
      error(e.loc, "'" + e.name + "' takes " + std::to_string(n) + " argument" +
                       (n == 1 ? "" : "s") + " (" + what + "), given " +
                       std::to_string(e.args.size()));
    }
  }

  Typed check_call(const AstExpr& e, Context& ctx) {
    const std::string& name = e.name;
    if (std::optional<Type> cast_type = parse_type_name(name)) {
      expect_arity(e, 1, "the value to convert");
      Typed a = check_expr(*e.args[0], ctx);
      if (a.is_literal()) {
        if (cast_type->is_float()) return typed(FloatImm::make(*cast_type, a.value), e.loc);
        return typed(Cast::make(*cast_type, materialize(a)), e.loc);
      }
      return typed(Cast::make(*cast_type, a.expr), e.loc);
    }
    if (reduce_op_from_name(name)) {
      error(e.loc, "'" + name + "' is a reduction: write " + name + "(i in LO..HI : expression)");
    }
    if (name == "select") {
      expect_arity(e, 3, "a condition and two values");
      Typed c = check_expr(*e.args[0], ctx);
      Expr cond = require_bool(c, e.args[0]->loc, "select's condition");
      Typed a = check_expr(*e.args[1], ctx);
      Typed b = check_expr(*e.args[2], ctx);
      if (a.is_literal() && b.is_literal()) {
        auto [x, y] = unify(a, b, e.loc, "select");
        return typed(Select::make(cond, x, y), e.loc);
      }
      auto [x, y] = unify(a, b, e.loc, "select");
      if (x.type().is_bool()) error(e.loc, "select's values must be numbers");
      return typed(Select::make(cond, x, y), e.loc);
    }
    if (name == "min" || name == "max") {
      expect_arity(e, 2, "two values");
      Typed a = check_expr(*e.args[0], ctx);
      Typed b = check_expr(*e.args[1], ctx);
      auto [x, y] = unify(a, b, e.loc, name);
      if (!x.type().is_numeric()) error(e.loc, "'" + name + "' needs numbers");
      return typed(name == "min" ? Min::make(x, y) : Max::make(x, y), e.loc);
    }
    if (name == "clamp") {
      expect_arity(e, 3, "a value, a low and a high bound");
      Typed v = check_expr(*e.args[0], ctx);
      Typed lo = check_expr(*e.args[1], ctx);
      Typed hi = check_expr(*e.args[2], ctx);
      auto [x, l] = unify(v, lo, e.loc, "clamp");
      Typed xt = typed(x, v.loc);
      auto [x2, h] = unify(xt, hi, e.loc, "clamp");
      if (!x2.type().is_numeric()) error(e.loc, "'clamp' needs numbers");
      return typed(Min::make(Max::make(x2, l), h), e.loc);
    }
    if (name == "rgb_to_yuv" || name == "yuv_to_rgb") return check_colour(e, ctx);
    if (name == "abs") {
      expect_arity(e, 1, "a value");
      Typed a = check_expr(*e.args[0], ctx);
      if (a.is_literal()) {
        a.value = std::abs(a.value);
        return a;
      }
      return typed(
          Call::make_intrinsic(Intrinsic::Abs, {require_numeric(a, e.args[0]->loc, "'abs'")}),
          e.loc);
    }
    if (std::optional<Intrinsic> op = float_intrinsic_from_name(name)) {
      const size_t n = intrinsic_arity(*op);
      expect_arity(e, n, intrinsic_operands(*op));
      std::vector<Typed> args;
      for (const AstExprPtr& a : e.args) args.push_back(check_expr(*a, ctx));
      // Literals take the type of the first typed operand (f32 when it is not a float).
      std::vector<Expr> exprs;
      for (size_t i = 0; i < n; ++i) {
        Typed x = args[i];
        for (size_t j = 0; j < n && x.is_literal(); ++j) {
          if (!args[j].is_literal()) x = typed(unify(args[i], args[j], e.loc, name).first, x.loc);
        }
        exprs.push_back(x.is_literal() ? literal_as(x, Float32(), x.loc) : x.expr);
        if (exprs[i].type().is_int() && args[i].is_literal())
          exprs[i] = literal_as(args[i], Float32(), args[i].loc);
      }
      for (size_t i = 1; i < n; ++i) {
        if (exprs[i].type() != exprs[0].type()) {
          error(e.loc, "'" + name + "' needs " + (n == 2 ? "two" : "three") +
                           " floats of one type, found " + to_string(exprs[0].type()) + " and " +
                           to_string(exprs[i].type()));
        }
      }
      for (size_t i = 0; i < exprs.size(); ++i) {
        if (!exprs[i].type().is_float()) {
          error(e.args[i]->loc, "'" + name + "' needs a float, found " +
                                    to_string(exprs[i].type()) + "; cast with f32(...)");
        }
      }
      return typed(Call::make_intrinsic(*op, exprs), e.loc);
    }
    if (auto it = inputs_.find(name); it != inputs_.end()) {
      if (ctx.bounds_only) error(e.loc, "bounds and sizes cannot read pixels of '" + name + "'");
      const AstInput& in = *it->second;
      if (e.args.size() != in.dims.size()) {
        error(e.loc, "input '" + name + "' has " + std::to_string(in.dims.size()) +
                         " dimension(s), given " + std::to_string(e.args.size()) + " index(es)");
      }
      std::vector<Expr> args;
      for (size_t i = 0; i < e.args.size(); ++i) {
        args.push_back(index_arg(check_expr(*e.args[i], ctx), e.args[i]->loc, i, name));
      }
      Type t = result_.find_input(name)->type;
      return typed(Call::make(t, name, std::move(args), CallType::Input), e.loc);
    }
    if (auto it = funcs_.find(name); it != funcs_.end()) {
      if (ctx.bounds_only) error(e.loc, "bounds and sizes cannot call funcs ('" + name + "')");
      const AstFunc& f = *it->second;
      if (name == ctx.self && !ctx.self_call_allowed) {
        error(e.loc, "the pure definition of '" + name + "' calls itself");
      }
      if (e.args.size() != f.args.size()) {
        error(e.loc, "func '" + name + "' takes " + std::to_string(f.args.size()) +
                         " argument(s), given " + std::to_string(e.args.size()));
      }
      std::vector<Expr> args;
      for (size_t i = 0; i < e.args.size(); ++i) {
        Expr a = index_arg(check_expr(*e.args[i], ctx), e.args[i]->loc, i, name);
        LetBounds lets = let_bounds(ctx);
        if (!boundedness(a, lets).both()) {
          error(
              e.args[i]->loc,
              "cannot bound index " + std::to_string(i + 1) + " of the call to '" + name +
                  "': it depends on a value with no known range; clamp it, e.g. clamp(..., 0, N)");
        }
        args.push_back(std::move(a));
      }
      auto t = func_types_.find(name);
      STIPPLE_INTERNAL_CHECK(t != func_types_.end(),
                             "func '" + name + "' used before it was typed");
      return typed(Call::make(t->second, name, std::move(args), CallType::Func), e.loc);
    }
    if (params_.count(name)) error(e.loc, "'" + name + "' is a param, not a func");
    if (find_var(ctx, name)) error(e.loc, "'" + name + "' is a variable, not a func");
    error(e.loc, "unknown func '" + name + "'");
  }

  /// Declares a reduction variable's range (bounds checked with params only).
  ReductionVariable check_range(const AstRange& r, Context& ctx) {
    if (find_var(ctx, r.var) || is_global(r.var) || reserved_names().count(r.var)) {
      error(r.loc,
            "'" + r.var + "' is already a name here; choose another reduction variable name");
    }
    ReductionVariable rv;
    rv.name = r.var;
    if (!r.lo) {
      auto it = inputs_.find(r.image);
      if (it == inputs_.end()) {
        error(r.image_loc, "'" + r.image + "' is not an input; write '" + r.var +
                               " in LO..HI' or '" + r.var + " in IMAGE'");
      }
      const auto& dims = it->second->dims;
      auto d = std::find(dims.begin(), dims.end(), r.var);
      if (d == dims.end()) {
        std::string names;
        for (const std::string& n : dims) names += (names.empty() ? "" : ", ") + n;
        error(r.loc, "input '" + r.image + "' has no dimension named '" + r.var +
                         "' (its dimensions are " + names + ")");
      }
      rv.min = IntImm::make(Int32(), 0);
      rv.max = Sub::make(InputExtent::make(r.image, static_cast<int>(d - dims.begin())),
                         IntImm::make(Int32(), 1));
      return rv;
    }
    Context bounds = ctx;  // outer variables stay visible only to be rejected by name
    bounds.bounds_only = true;
    rv.min = coerce(check_expr(*r.lo, bounds), Int32(), r.lo->loc, "the range's low bound");
    rv.max = coerce(check_expr(*r.hi, bounds), Int32(), r.hi->loc, "the range's high bound");
    return rv;
  }

  static std::string describe_var(const ScopeVar& v) {
    switch (v.kind) {
      case VarKind::Pure: return "a pure variable";
      case VarKind::Reduction: return "a reduction variable";
      case VarKind::Let:
        return "bound by the let at " + std::to_string(v.loc.line) + ":" +
               std::to_string(v.loc.col);
    }
    return "a variable";
  }

  /// `let NAME = value in body`. The name may not shadow anything: a built-in, a func,
  /// input or param, or a variable in scope (pure, reduction or another let's). A
  /// literal value is a named literal (it adapts to its context as the literal would);
  /// any other value is computed once, bound by a Let node.
  Typed check_let(const AstExpr& e, Context& ctx) {
    const std::string& name = e.name;
    if (ctx.bounds_only) error(e.loc, "bounds and sizes cannot contain 'let'");
    if (reserved_names().count(name)) {
      error(e.name_loc, "'" + name + "' is a built-in name and cannot name a let");
    }
    if (auto it = declared_.find(name); it != declared_.end()) {
      error(e.name_loc, "let '" + name + "' would hide the " + it->second.kind + " declared at " +
                            std::to_string(it->second.loc.line) + ":" +
                            std::to_string(it->second.loc.col) + "; choose another name");
    }
    if (const ScopeVar* v = find_var(ctx, name)) {
      error(e.name_loc, "let '" + name + "' would hide the variable '" + name + "' (" +
                            describe_var(*v) + "); choose another name");
    }
    if (std::find(ctx.lhs_pure.begin(), ctx.lhs_pure.end(), name) != ctx.lhs_pure.end()) {
      error(e.name_loc, "let '" + name + "' would hide the pure variable '" + name +
                            "' of this update; choose another name");
    }
    Typed value = check_expr(*e.args[0], ctx);
    ScopeVar var{name, VarKind::Let, e.name_loc};
    if (value.is_literal()) {
      var.literal = value;
    } else {
      var.type = value.expr.type();
      LetBounds lets = let_bounds(ctx);
      var.bounded = boundedness(value.expr, lets);
    }
    ctx.vars.push_back(var);
    Typed body = check_expr(*e.args[1], ctx);
    ctx.vars.pop_back();
    // A literal body cannot use the name: it stays a literal, free to adapt.
    if (value.is_literal() || body.is_literal()) return body;
    return typed(Let::make(name, value.expr, body.expr), e.loc);
  }

  /// The boundedness of the let variables in scope, for checking a func call's indices.
  static LetBounds let_bounds(const Context& ctx) {
    LetBounds lets;
    for (const ScopeVar& v : ctx.vars) {
      if (v.kind == VarKind::Let && !v.literal) lets.emplace_back(v.name, v.bounded);
    }
    return lets;
  }

  Typed check_reduction(const AstExpr& e, Context& ctx) {
    ReduceOp op = *reduce_op_from_name(e.name);
    if (ctx.bounds_only) error(e.loc, "bounds and sizes cannot contain reductions");
    std::vector<ReductionVariable> domain;
    size_t outer = ctx.vars.size();
    for (const AstRange& r : e.ranges) {
      for (const ReductionVariable& prev : domain) {
        if (prev.name == r.var) error(r.loc, "'" + r.var + "' is used twice in this reduction");
      }
      domain.push_back(check_range(r, ctx));
    }
    for (const ReductionVariable& rv : domain) ctx.vars.push_back({rv.name, VarKind::Reduction});
    Typed body = check_expr(*e.args[0], ctx);
    ctx.vars.resize(outer);
    Expr b = require_numeric(body, e.args[0]->loc, "'" + e.name + "'");
    return typed(Reduce::make(op, std::move(domain), b), e.loc);
  }

  // Funcs and updates ---------------------------------------------------------------------
  Func check_func(const AstFunc& f) {
    Func out;
    out.name = f.name;
    Context ctx;
    ctx.self = f.name;
    for (size_t i = 0; i < f.args.size(); ++i) {
      const std::string& a = f.args[i];
      if (is_global(a) || reserved_names().count(a)) {
        error(f.arg_locs[i], "variable '" + a + "' has the name of " +
                                 (reserved_names().count(a) ? std::string("a built-in")
                                                            : "a declared " + declared_[a].kind));
      }
      if (find_var(ctx, a)) error(f.arg_locs[i], "variable '" + a + "' is named twice");
      ctx.vars.push_back({a, VarKind::Pure});
    }
    out.args = f.args;
    Typed v = check_storable(*f.value, ctx);
    out.value = materialize(v);
    if (!out.value.type().is_numeric()) {
      error(f.value->loc,
            "func '" + f.name + "' would hold a condition (bool); use select(c, 1, 0) or u8(...)");
    }
    out.type = out.value.type();
    return out;
  }

  void check_updates(const AstFunc& f, Func& func) {
    for (const AstUpdate* u : updates_[f.name]) func.updates.push_back(check_update(*u, func));
  }

  UpdateDef check_update(const AstUpdate& u, const Func& func) {
    if (u.args.size() != func.args.size()) {
      error(u.loc, "func '" + func.name + "' has " + std::to_string(func.args.size()) +
                       " dimension(s), but its update gives " + std::to_string(u.args.size()));
    }
    Context ctx;
    ctx.self = func.name;
    ctx.self_call_allowed = true;
    UpdateDef def;
    for (const AstRange& r : u.ranges) {
      for (const ReductionVariable& prev : def.domain) {
        if (prev.name == r.var)
          error(r.loc, "'" + r.var + "' is used twice in this update's domain");
      }
      def.domain.push_back(check_range(r, ctx));
    }
    for (const ReductionVariable& rv : def.domain)
      ctx.vars.push_back({rv.name, VarKind::Reduction});
    // Bare names that are not reduction variables, params or other known names are the
    // update's pure variables, one per position.
    std::vector<std::string> pure(u.args.size());
    for (size_t i = 0; i < u.args.size(); ++i) {
      const AstExpr& a = *u.args[i];
      if (a.kind != AstKind::Name || find_var(ctx, a.name) || is_global(a.name)) continue;
      for (size_t j = 0; j < i; ++j) {
        if (pure[j] == a.name)
          error(a.loc, "pure variable '" + a.name + "' appears twice on the left side");
      }
      pure[i] = a.name;
    }
    Context lhs = ctx;
    for (const std::string& p : pure) {
      if (!p.empty()) lhs.lhs_pure.push_back(p);
    }
    for (size_t i = 0; i < u.args.size(); ++i) {
      if (!pure[i].empty()) {
        def.args.push_back(Variable::make(pure[i], VarKind::Pure));
        continue;
      }
      Typed t = check_expr(*u.args[i], lhs);
      def.args.push_back(index_arg(t, u.args[i]->loc, i, func.name));
    }
    for (const std::string& p : pure) {
      if (!p.empty()) ctx.vars.push_back({p, VarKind::Pure});
    }
    // An f16 func's update computes in f32 and stores the value rounded to f16.
    const Type value_type = func.type.is_f16() ? Float32() : func.type;
    Typed v = check_expr(*u.value, ctx);
    Expr value = coerce(v, value_type, u.value->loc, "the update's value");
    if (u.op != "=") {
      Expr current = Call::make(func.type, func.name, def.args, CallType::Func);
      if (func.type.is_f16()) current = Cast::make(Float32(), current);
      if (u.op == "+=") value = Add::make(current, value);
      if (u.op == "-=") value = Sub::make(current, value);
      if (u.op == "*=") value = Mul::make(current, value);
      if (u.op == "min=") value = Min::make(current, value);
      if (u.op == "max=") value = Max::make(current, value);
    }
    def.value = func.type.is_f16() ? Cast::make(Float16(), value) : value;
    return def;
  }

  // Output ---------------------------------------------------------------------------------
  void check_output() {
    if (!ast_.output) {
      SourceLoc end{1, 1};
      int line = 1;
      for (char c : src_.text()) line += c == '\n';
      end.line = line;
      error(end, "the pipeline has no output; add 'output NAME'");
    }
    const AstOutput& o = *ast_.output;
    auto it = funcs_.find(o.func);
    if (it == funcs_.end()) {
      if (inputs_.count(o.func))
        error(o.loc, "the output must be a func; '" + o.func + "' is an input");
      error(o.loc, "unknown func '" + o.func + "' as the output");
    }
    const Func* f = result_.find_func(o.func);
    size_t dims = f->args.size();
    if (dims == 0) error(o.loc, "the output func must have at least one dimension");
    OutputDecl out;
    out.func = o.func;
    if (!o.size.empty()) {
      if (o.size.size() != dims) {
        error(o.size_loc, "the output '" + o.func + "' has " + std::to_string(dims) +
                              " dimension(s) but size gives " + std::to_string(o.size.size()));
      }
      Context bounds;
      bounds.bounds_only = true;
      for (const AstExprPtr& s : o.size) {
        out.extents.push_back(coerce(check_expr(*s, bounds), Int32(), s->loc, "an output size"));
      }
    } else {
      if (result_.inputs.empty()) {
        error(o.loc,
              "the pipeline has no input to take the output's size from; give it with size(...)");
      }
      const InputDecl& first = result_.inputs[0];
      if (dims > first.dim_names.size()) {
        error(o.loc, "the output '" + o.func + "' has " + std::to_string(dims) +
                         " dimensions but input '" + first.name + "' has " +
                         std::to_string(first.dim_names.size()) +
                         "; give the output's extents with size(...)");
      }
      for (size_t d = 0; d < dims; ++d)
        out.extents.push_back(InputExtent::make(first.name, static_cast<int>(d)));
    }
    if (o.metric.empty()) {
      out.metric = dims == 3 ? ErrorMetric::Lab : ErrorMetric::Rmse;
    } else if (o.metric == "lab") {
      if (dims != 3) error(o.metric_loc, "metric lab needs an output of 3 dimensions (x, y, c)");
      out.metric = ErrorMetric::Lab;
    } else if (o.metric == "rmse") {
      out.metric = ErrorMetric::Rmse;
    } else {
      error(o.metric_loc, "unknown metric '" + o.metric + "'; the metrics are lab and rmse");
    }
    result_.output = std::move(out);
  }

  // Warnings ------------------------------------------------------------------------------
  /// A func that the output does not reach through calls (from pure definitions or
  /// updates) is computed by no schedule: most likely a mistake, but not an error.
  void warn_unused_funcs() {
    if (!warnings_) return;
    std::set<std::string> used = {ast_.output->func};
    std::vector<std::string> todo = {ast_.output->func};
    while (!todo.empty()) {
      std::string f = todo.back();
      todo.pop_back();
      for (const auto& [callee, loc] : calls_[f]) {
        if (used.insert(callee).second) todo.push_back(callee);
      }
    }
    for (const AstFunc& f : ast_.funcs) {
      if (!used.count(f.name)) {
        warnings_->push_back(
            src_.warning(f.loc, "func '" + f.name + "' is never used by the output"));
      }
    }
  }

  const SourceText& src_;
  const AstProgram& ast_;
  std::vector<CompileWarning>* warnings_;
  Pipeline result_;
  /// Each func's calls to other funcs (pure definition and updates), from order_funcs.
  std::map<std::string, std::vector<std::pair<std::string, SourceLoc>>> calls_;
  std::map<std::string, Declared> declared_;
  std::map<std::string, const AstFunc*> funcs_;
  std::map<std::string, const AstInput*> inputs_;
  std::map<std::string, Type> params_;
  std::map<std::string, Type> func_types_;
  std::map<std::string, std::vector<const AstUpdate*>> updates_;
};

}  // namespace

Pipeline check_program(const SourceText& source, const AstProgram& program,
                       std::vector<CompileWarning>* warnings) {
  return Checker(source, program, warnings).run();
}

}  // namespace stipple
