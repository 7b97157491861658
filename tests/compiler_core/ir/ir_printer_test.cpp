// The IR printer: expected text for hand-built expressions, statements and a pipeline,
// minimal parenthesisation checked against an independent fully parenthesised printer,
// and float literals that read back exactly.
#include "compiler_core/ir/ir_printer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>

#include "tests/compiler_core/ir/random_ir.h"
#include "tests/compiler_core/ir/sample_pipeline.h"

namespace stipple {
namespace {

using namespace stipple::testing;

Expr a() { return var("a"); }
Expr b() { return var("b"); }
Expr c() { return var("c"); }

TEST(IRPrinter, Leaves) {
  EXPECT_EQ(to_string(i32(42)), "42");
  EXPECT_EQ(to_string(i32(-3)), "-3");
  EXPECT_EQ(to_string(f32(4)), "4.0");
  EXPECT_EQ(to_string(f32(0.1)), "0.1");
  EXPECT_EQ(to_string(f32(-0.0)), "-0.0");
  EXPECT_EQ(to_string(f32(1e-7)), "1e-07");
  EXPECT_EQ(to_string(f32(1e20)), "1e+20");
  EXPECT_EQ(to_string(IntImm::make(UInt8(), 3)), "u8(3)");
  EXPECT_EQ(to_string(IntImm::make(UInt16(), 65535)), "u16(65535)");
  EXPECT_EQ(to_string(FloatImm::make(Float64(), 0.5)), "f64(0.5)");
  EXPECT_EQ(to_string(FloatImm::make(Float64(), 0.1)), "f64(0.1)");
  EXPECT_EQ(to_string(IntImm::make(Bool(), 1)), "true");
  EXPECT_EQ(to_string(Cast::make(Float32(), a())), "f32(a)");
  EXPECT_EQ(to_string(Cast::make(Bool(), a())), "bool(a)");
  EXPECT_EQ(to_string(Variable::make("r", VarKind::Reduction)), "r");
  EXPECT_EQ(to_string(Param::make(Float32(), "sigma")), "sigma");
  EXPECT_EQ(to_string(InputExtent::make("in", 0)), "in.width");
  EXPECT_EQ(to_string(InputExtent::make("in", 1)), "in.height");
  EXPECT_EQ(to_string(InputExtent::make("in", 2)), "in.channels");
  EXPECT_EQ(to_string(InputExtent::make("in", 3)), "in.dim3");
  EXPECT_EQ(to_string(FloatImm::make(Float32(), std::numeric_limits<double>::infinity())), "inf");
  EXPECT_EQ(to_string(FloatImm::make(Float64(), std::nan(""))), "f64(nan)");
}

TEST(IRPrinter, Precedence) {
  EXPECT_EQ(to_string(Add::make(a(), Mul::make(b(), i32(2)))), "a + b * 2");
  EXPECT_EQ(to_string(Mul::make(Add::make(a(), b()), i32(2))), "(a + b) * 2");
  EXPECT_EQ(to_string(Sub::make(Sub::make(a(), b()), c())), "a - b - c");
  EXPECT_EQ(to_string(Sub::make(a(), Sub::make(b(), c()))), "a - (b - c)");
  EXPECT_EQ(to_string(Sub::make(a(), Add::make(b(), c()))), "a - (b + c)");
  EXPECT_EQ(to_string(Mod::make(Div::make(a(), b()), c())), "a / b % c");
  EXPECT_EQ(to_string(Div::make(a(), Mod::make(b(), c()))), "a / (b % c)");
  EXPECT_EQ(to_string(Mul::make(i32(-3), a())), "-3 * a");
  EXPECT_EQ(to_string(Sub::make(a(), i32(-3))), "a - -3");
  EXPECT_EQ(to_string(Mul::make(a(), i32(-3))), "a * -3");
  EXPECT_EQ(to_string(Div::make(f32(-0.5), Cast::make(Float32(), a()))), "-0.5 / f32(a)");
  EXPECT_EQ(to_string(EQ::make(LT::make(a(), b()), LT::make(b(), c()))), "a < b == b < c");
  Expr ab = EQ::make(a(), b());
  EXPECT_EQ(to_string(EQ::make(ab, ab)), "(a == b) == (a == b)");
  EXPECT_EQ(to_string(LT::make(Add::make(a(), b()), c())), "a + b < c");
  Expr p = LT::make(a(), b()), q = GT::make(b(), c()), r = NE::make(a(), c());
  EXPECT_EQ(to_string(Or::make(And::make(p, q), r)), "a < b && b > c || a != c");
  EXPECT_EQ(to_string(And::make(p, Or::make(q, r))), "a < b && (b > c || a != c)");
  EXPECT_EQ(to_string(And::make(And::make(p, q), r)), "a < b && b > c && a != c");
  EXPECT_EQ(to_string(And::make(p, And::make(q, r))), "a < b && (b > c && a != c)");
  EXPECT_EQ(to_string(Not::make(And::make(p, q))), "!(a < b && b > c)");
  EXPECT_EQ(to_string(Not::make(Not::make(p))), "!!(a < b)");
  EXPECT_EQ(to_string(Or::make(Not::make(p), GE::make(a(), i32(0)))), "!(a < b) || a >= 0");
  EXPECT_EQ(to_string(LE::make(a(), b())), "a <= b");
}

TEST(IRPrinter, CallsSelectReduceLet) {
  EXPECT_EQ(to_string(Min::make(a(), Max::make(b(), i32(0)))), "min(a, max(b, 0))");
  EXPECT_EQ(to_string(Select::make(LT::make(a(), b()), Add::make(a(), i32(1)), b())),
            "select(a < b, a + 1, b)");
  EXPECT_EQ(to_string(call(Float32(), "in", {Sub::make(a(), i32(1)), b()}, CallType::Input)),
            "in(a - 1, b)");
  EXPECT_EQ(to_string(call(Int32(), "norm", {})), "norm()");
  EXPECT_EQ(to_string(intrinsic(Intrinsic::Pow, {f32(2), f32(3)})), "pow(2.0, 3.0)");
  EXPECT_EQ(to_string(Reduce::make(
                ReduceOp::Sum, {{"i", i32(-2), i32(2)}, {"j", i32(0), Param::make(Int32(), "h")}},
                Mul::make(rvar("i"), rvar("j")))),
            "sum(i in -2..2, j in 0..h : i * j)");
  Expr let = Let::make("t", Add::make(a(), i32(1)), Mul::make(var("t"), var("t")));
  EXPECT_EQ(to_string(let), "let t = a + 1 in t * t");
  EXPECT_EQ(to_string(Add::make(let, i32(1))), "(let t = a + 1 in t * t) + 1");
  EXPECT_EQ(to_string(Cast::make(Float32(), let)), "f32(let t = a + 1 in t * t)");
  // A Let's value is parenthesised when it is a Let; its body never is.
  Expr u = Variable::make_typed(Int32(), "u");
  EXPECT_EQ(to_string(Let::make("u", let, Let::make("v", u, u))),
            "let u = (let t = a + 1 in t * t) in let v = u in u");
  Expr fx = Cast::make(Float32(), a());
  EXPECT_EQ(to_string(Call::make_intrinsic(Intrinsic::Fma, {fx, f32(2), f32(0.5)})),
            "fma(f32(a), 2.0, 0.5)");
  EXPECT_EQ(to_string(Call::make_intrinsic(Intrinsic::Atan2, {fx, fx})), "atan2(f32(a), f32(a))");
}

TEST(IRPrinter, LiteralsTakeTheirTypeFromContext) {
  Expr u = Cast::make(UInt8(), a());
  EXPECT_EQ(to_string(Add::make(u, IntImm::make(UInt8(), 3))), "u8(a) + 3");
  EXPECT_EQ(to_string(Add::make(IntImm::make(UInt8(), 3), u)), "3 + u8(a)");
  // Both constants: the checker folds an operator on two literals, so the second is
  // spelled as a typed expression and the first adapts to it.
  EXPECT_EQ(to_string(Add::make(IntImm::make(UInt8(), 3), IntImm::make(UInt8(), 4))), "3 + u8(4)");
  EXPECT_EQ(to_string(Div::make(f32(1), f32(3200))), "1.0 / f32(3200.0)");
  // Elsewhere two literals keep their default types (i32, f32) without folding.
  EXPECT_EQ(to_string(Select::make(LT::make(a(), b()), i32(1), i32(0))), "select(a < b, 1, 0)");
  EXPECT_EQ(to_string(Min::make(f32(1), f32(2))), "min(1.0, 2.0)");
  EXPECT_EQ(to_string(LT::make(i32(1), i32(2))), "1 < 2");
  EXPECT_EQ(to_string(Max::make(FloatImm::make(Float64(), 1), FloatImm::make(Float64(), 2))),
            "max(1.0, f64(2.0))");
  EXPECT_EQ(to_string(Sub::make(FloatImm::make(Float64(), 1), FloatImm::make(Float64(), -2))),
            "1.0 - f64(-2.0)");
  Expr d = Cast::make(Float64(), a());
  EXPECT_EQ(to_string(Mul::make(d, FloatImm::make(Float64(), 0.1))), "f64(a) * 0.1");
  EXPECT_EQ(to_string(Min::make(IntImm::make(UInt16(), 7), Cast::make(UInt16(), a()))),
            "min(7, u16(a))");
  // Outside an adapting context a non-default literal is spelled with its type.
  EXPECT_EQ(to_string(intrinsic(Intrinsic::Abs, {IntImm::make(UInt8(), 3)})), "abs(u8(3))");
  EXPECT_EQ(to_string(intrinsic(Intrinsic::Pow, {d, FloatImm::make(Float64(), 2)})),
            "pow(f64(a), f64(2.0))");
  EXPECT_EQ(to_string(Cast::make(Float32(), IntImm::make(UInt8(), 200))), "f32(u8(200))");
}

TEST(IRPrinter, Statements) {
  Expr x = var("x"), y = var("y");
  Expr w = InputExtent::make("in", 0), h = InputExtent::make("in", 1);
  Stmt store =
      Provide::make("A", Mul::make(call(Float32(), "in", {x, y}, CallType::Input), f32(2)), {x, y});
  Stmt nest = For::make("y", i32(0), h, ForType::Parallel,
                        For::make("x", i32(0), w, ForType::Serial, store));
  Stmt vec = For::make("v", i32(0), i32(8), ForType::Vectorized,
                       Evaluate::make(call(Int32(), "g", {var("v")})));
  Stmt unrolled = For::make("u", Add::make(x, i32(1)), i32(4), ForType::Unrolled,
                            IfThenElse::make(LT::make(var("u"), w), vec,
                                             LetStmt::make("k", i32(3), Evaluate::make(var("k")))));
  Stmt offset = For::make("z", x, y, ForType::Serial, IfThenElse::make(GT::make(x, y), store));
  Stmt all = Allocate::make("A", Float32(), {w, h}, Block::make({nest, unrolled, offset}));
  EXPECT_EQ(to_string(all),
            "allocate A[in.width, in.height] : f32:\n"
            "  parallel y in 0..in.height - 1:\n"
            "    for x in 0..in.width - 1:\n"
            "      A(x, y) = in(x, y) * 2.0\n"
            "  unrolled u in x + 1..x + 1 + 3:\n"
            "    if (u < in.width):\n"
            "      vectorized v in 0..7:\n"
            "        g(v)\n"
            "    else:\n"
            "      let k = 3\n"
            "      k\n"
            "  for z in x..x + y - 1:\n"
            "    if (x > y):\n"
            "      A(x, y) = in(x, y) * 2.0\n");
  std::ostringstream os;
  os << Evaluate::make(i32(1)) << "|" << Add::make(x, y);
  EXPECT_EQ(os.str(), "1\n|x + y");
}

TEST(IRPrinter, Pipeline) { EXPECT_EQ(to_string(sample_pipeline()), sample_pipeline_text()); }

TEST(IRPrinter, PipelineDeclarationLiterals) {
  Pipeline p;
  p.name = "decls";
  p.inputs = {{"a", Float32(), {"x"}, BoundaryKind::Constant, -0.25},
              {"b", UInt16(), {"x", "y", "c", "t"}, BoundaryKind::Constant, 65535}};
  p.params = {{"f", Float32(), static_cast<float>(0.1)},
              {"n", Int32(), -8},
              {"d", Float64(), 1e300},
              {"z", Float32(), 4}};
  p.funcs.push_back({"o", {"x"}, Float32(), call(Float32(), "a", {var("x")}, CallType::Input), {}});
  p.output = {"o", {InputExtent::make("a", 0)}, ErrorMetric::Rmse};
  EXPECT_EQ(to_string(p),
            "pipeline decls\n\n"
            "input a : f32[x] constant(-0.25)\n"
            "input b : u16[x, y, c, t] constant(65535)\n"
            // The default is stored as a double: printed exactly as that double.
            "param f : f32 = 0.10000000149011612\n"
            "param n : i32 = -8\n"
            "param d : f64 = 1e+300\n"
            "param z : f32 = 4.0\n\n"
            "func o(x) = a(x)\n\n"
            "output o size(a.width) metric rmse\n");
}

// Minimal parentheses must keep the tree: a tiny precedence-climbing parser, written
// from LANGUAGE.md's precedence table and independent of the printer, reads the minimal
// text back into fully parenthesised form, which must match the tree printed with every
// operator parenthesised.
struct MiniParser {
  std::vector<std::string> toks;
  size_t pos = 0;

  static std::vector<std::string> lex(const std::string& s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
      char ch = s[i];
      if (ch == ' ') {
        i++;
        continue;
      }
      static const char* kOps[] = {"||", "&&", "==", "!=", "<=", ">=", "<", ">", "+",
                                   "-",  "*",  "/",  "%",  "!",  "(",  ")", ","};
      bool matched = false;
      for (const char* op : kOps) {
        std::string o(op);
        if (s.compare(i, o.size(), o) == 0) {
          out.push_back(o);
          i += o.size();
          matched = true;
          break;
        }
      }
      if (matched) continue;
      size_t j = i;
      while (j < s.size() &&
             (isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) {
        j++;
      }
      out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  }

  static int prec(const std::string& op) {
    if (op == "||") return 1;
    if (op == "&&") return 2;
    if (op == "==" || op == "!=") return 3;
    if (op == "<" || op == "<=" || op == ">" || op == ">=") return 4;
    if (op == "+" || op == "-") return 5;
    if (op == "*" || op == "/" || op == "%") return 6;
    return -1;
  }

  std::string primary() {
    std::string t = toks[pos++];
    if (t == "-" || t == "!") return "(" + t + primary() + ")";
    if (t == "(") {
      std::string e = expr(1);
      pos++;  // ")"
      return e;
    }
    if (t == "i32" && toks[pos] == "(") {  // a constant spelled with its type: i32(-2)
      pos++;
      std::string e = expr(1);
      pos++;
      return e;
    }
    if (pos < toks.size() && toks[pos] == "(") {  // a call: name(args)
      pos++;
      std::string s = t + "(";
      bool first = true;
      while (toks[pos] != ")") {
        if (!first) pos++;  // ","
        s += (first ? "" : ",") + expr(1);
        first = false;
      }
      pos++;
      return s + ")";
    }
    return t;
  }

  std::string expr(int min_prec) {
    std::string lhs = primary();
    while (pos < toks.size() && prec(toks[pos]) >= min_prec) {
      std::string op = toks[pos++];
      int p = prec(op);
      std::string rhs = expr(p + 1);
      lhs = "(" + lhs + op + rhs + ")";
    }
    return lhs;
  }
};

std::string fully_parenthesised(const Expr& e) {
  auto bin = [](const Expr& a, const char* op, const Expr& b) {
    return "(" + fully_parenthesised(a) + op + fully_parenthesised(b) + ")";
  };
  switch (e.node_type()) {
    case IRNodeType::Add: return bin(e.as<Add>()->a, "+", e.as<Add>()->b);
    case IRNodeType::Sub: return bin(e.as<Sub>()->a, "-", e.as<Sub>()->b);
    case IRNodeType::Mul: return bin(e.as<Mul>()->a, "*", e.as<Mul>()->b);
    case IRNodeType::Div: return bin(e.as<Div>()->a, "/", e.as<Div>()->b);
    case IRNodeType::Mod: return bin(e.as<Mod>()->a, "%", e.as<Mod>()->b);
    case IRNodeType::EQ: return bin(e.as<EQ>()->a, "==", e.as<EQ>()->b);
    case IRNodeType::NE: return bin(e.as<NE>()->a, "!=", e.as<NE>()->b);
    case IRNodeType::LT: return bin(e.as<LT>()->a, "<", e.as<LT>()->b);
    case IRNodeType::LE: return bin(e.as<LE>()->a, "<=", e.as<LE>()->b);
    case IRNodeType::GT: return bin(e.as<GT>()->a, ">", e.as<GT>()->b);
    case IRNodeType::GE: return bin(e.as<GE>()->a, ">=", e.as<GE>()->b);
    case IRNodeType::And: return bin(e.as<And>()->a, "&&", e.as<And>()->b);
    case IRNodeType::Or: return bin(e.as<Or>()->a, "||", e.as<Or>()->b);
    case IRNodeType::Not: return "(!" + fully_parenthesised(e.as<Not>()->a) + ")";
    case IRNodeType::IntImm:
      if (e.as<IntImm>()->value < 0) return "(-" + std::to_string(-e.as<IntImm>()->value) + ")";
      return std::to_string(e.as<IntImm>()->value);
    case IRNodeType::Variable: return e.as<Variable>()->name;
    case IRNodeType::Select: {
      const Select* op = e.as<Select>();
      return "select(" + fully_parenthesised(op->condition) + "," +
             fully_parenthesised(op->true_value) + "," + fully_parenthesised(op->false_value) + ")";
    }
    default: return "?";
  }
}

// Random i32/bool trees over operators, variables and (possibly negative) i32 constants.
Expr random_operator_tree(std::mt19937_64& rng, Type t, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (depth == 0) {
    if (t.is_bool()) return LT::make(var("v"), i32(pick(5) - 2));
    return pick(2) ? var(std::string(1, static_cast<char>('a' + pick(3)))) : i32(pick(7) - 3);
  }
  auto sub = [&](Type st) { return random_operator_tree(rng, st, pick(depth)); };
  if (t.is_bool()) {
    switch (pick(9)) {
      case 0: return EQ::make(sub(Int32()), sub(Int32()));
      case 1: return NE::make(sub(Bool()), sub(Bool()));
      case 2: return LT::make(sub(Int32()), sub(Int32()));
      case 3: return LE::make(sub(Int32()), sub(Int32()));
      case 4: return GT::make(sub(Int32()), sub(Int32()));
      case 5: return GE::make(sub(Int32()), sub(Int32()));
      case 6: return And::make(sub(Bool()), sub(Bool()));
      case 7: return Or::make(sub(Bool()), sub(Bool()));
      default: return Not::make(sub(Bool()));
    }
  }
  switch (pick(6)) {
    case 0: return Add::make(sub(Int32()), sub(Int32()));
    case 1: return Sub::make(sub(Int32()), sub(Int32()));
    case 2: return Mul::make(sub(Int32()), sub(Int32()));
    case 3: return Div::make(sub(Int32()), sub(Int32()));
    case 4: return Mod::make(sub(Int32()), sub(Int32()));
    default: return Select::make(sub(Bool()), sub(Int32()), sub(Int32()));
  }
}

TEST(IRPrinter, MinimalParenthesesKeepTheTree) {
  std::mt19937_64 rng(20240611);
  for (int iter = 0; iter < 3000; iter++) {
    Expr e = random_operator_tree(rng, iter % 2 ? Bool() : Int32(), 5);
    std::string text = to_string(e);
    MiniParser parser{MiniParser::lex(text)};
    std::string reparsed = parser.expr(1);
    ASSERT_EQ(parser.pos, parser.toks.size()) << text;
    ASSERT_EQ(reparsed, fully_parenthesised(e)) << text;
  }
}

TEST(IRPrinter, FloatLiteralsReadBackExactly) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 20000; iter++) {
    double d = std::bit_cast<double>(rng());
    if (!std::isfinite(d)) continue;
    std::string s = format_float_literal(d);
    ASSERT_NE(s.find_first_of(".e"), std::string::npos) << s;
    ASSERT_EQ(std::bit_cast<uint64_t>(std::strtod(s.c_str(), nullptr)), std::bit_cast<uint64_t>(d))
        << s;
    float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (!std::isfinite(f)) continue;
    std::string sf = format_float_literal(f, true);
    ASSERT_NE(sf.find_first_of(".e"), std::string::npos) << sf;
    // The checker reads the literal as a double, then FloatImm::make rounds it to f32.
    ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(std::strtod(sf.c_str(), nullptr))),
              std::bit_cast<uint32_t>(f))
        << sf;
  }
  EXPECT_EQ(format_float_literal(1.0), "1.0");
  EXPECT_EQ(format_float_literal(-2.0), "-2.0");
  EXPECT_EQ(format_float_literal(0.1, true), "0.1");
  EXPECT_EQ(format_float_literal(static_cast<float>(0.1)), "0.10000000149011612");
  EXPECT_EQ(format_float_literal(123456789.0), "123456789.0");
}

TEST(IRPrinter, EveryNodeKindPrints) {
  RandomIR gen(3);
  for (int iter = 0; iter < 500; iter++) {
    std::string s = to_string(gen.expr(gen.numeric_type(), 6));
    EXPECT_EQ(s.find("<?>"), std::string::npos) << s;
    EXPECT_EQ(s.find("<undefined>"), std::string::npos) << s;
    std::string st = to_string(gen.stmt(4));
    EXPECT_EQ(st.find("<?>"), std::string::npos) << st;
  }
}

}  // namespace
}  // namespace stipple
