// One illegal program per case, in the manner of Halide's test/error: each must fail with
// exactly one message at the right file:line:col, never crash, never be accepted.
#include <gtest/gtest.h>

#include <string>

#include "compiler_core/language/frontend.h"

namespace stipple {
namespace {

struct ErrorCase {
  const char* name;
  const char* program;
  int line, col;
  const char* message;  // a substring of the message
};

// Most cases share this preamble (lines 1-3) so that their own line is line 4.
#define PRE "pipeline p\ninput in : f32[x, y, c]\nparam k : i32 = 2\n"

const ErrorCase kCases[] = {
    // Syntax
    {"missing_pipeline", "input in : f32[x]\n", 1, 1, "a program starts with 'pipeline NAME'"},
    {"missing_operand", PRE "func f(x, y, c) = in(x, y, c) +\noutput f\n", 5, 1,
     "expected an expression, found the keyword 'output'"},
    {"unclosed_paren", PRE "func f(x, y, c) = (in(x, y, c)\noutput f\n", 5, 1,
     "expected ')' to close the '(' at 4:19"},
    {"bad_char", PRE "func f(x, y, c) = in(x, y, c) $ 2\noutput f\n", 4, 31,
     "unexpected character '$'"},
    {"single_ampersand", PRE "func f(x, y, c) = select(x > 0 & y > 0, 1.0, 0.0)\noutput f\n", 4, 32,
     "did you mean '&&'?"},
    {"number_suffix", PRE "func f(x, y, c) = 3px\noutput f\n", 4, 20,
     "unexpected 'p' after the number '3'"},
    {"huge_int", PRE "func f(x, y, c) = 99999999999\noutput f\n", 4, 19, "does not fit in 32 bits"},
    {"bad_update_op", PRE "func f(x, y, c) = 0.0\nf(x, y, c) /= 2.0\noutput f\n", 5, 12,
     "expected '=', '+=', '-=', '*=', 'min=' or 'max='"},
    {"range_without_dots", PRE "func f(x, y, c) = sum(i in 3 : in(x + i, y, c))\noutput f\n", 4, 30,
     "expected '..' in the range of 'i'"},
    {"two_outputs", PRE "func f(x, y, c) = in(x, y, c)\noutput f\noutput f\n", 6, 8,
     "a pipeline has one output"},
    {"no_output", PRE "func f(x, y, c) = in(x, y, c)\n", 5, 1, "the pipeline has no output"},
    {"param_not_number", PRE "param s : f32 = k\nfunc f(x, y, c) = in(x, y, c)\noutput f\n", 4, 17,
     "a param's default must be a number"},
    // Names
    {"unknown_name", PRE "func f(x, y, c) = in(x, y, c) * q\noutput f\n", 4, 33,
     "unknown name 'q'"},
    {"unknown_func", PRE "func f(x, y, c) = g(x, y, c)\noutput f\n", 4, 19, "unknown func 'g'"},
    {"duplicate_func", PRE "func f(x, y, c) = in(x, y, c)\nfunc f(x, y, c) = 1.0\noutput f\n", 5, 6,
     "'f' is already declared (as a func at 4:6)"},
    {"param_as_func", PRE "func f(x, y, c) = k(x)\noutput f\n", 4, 19,
     "'k' is a param, not a func"},
    {"func_without_call", PRE "func g() = 1.0\nfunc f(x, y, c) = g * in(x, y, c)\noutput f\n", 5,
     19, "'g' is a func; call it as g(...)"},
    {"builtin_as_name", PRE "func exp(x) = 1.0\noutput exp\n", 4, 6, "'exp' is a built-in name"},
    {"unknown_type", PRE "param s : float = 1.0\nfunc f(x, y, c) = in(x, y, c)\noutput f\n", 4, 11,
     "unknown type 'float'"},
    {"unknown_field", PRE "func f(x, y, c) = f32(in.depth)\noutput f\n", 4, 23,
     "unknown field 'depth'"},
    {"no_channels", "pipeline p\ninput in : f32[x, y]\nfunc f(x, y) = f32(in.channels)\noutput f\n",
     3, 20, "has 2 dimension(s), so it has no channels"},
    {"var_shadows_param", PRE "func f(k) = 1.0\noutput f size(3)\n", 4, 8,
     "variable 'k' has the name of a declared param"},
    {"unknown_output", PRE "output g\n", 4, 8, "unknown func 'g' as the output"},
    {"update_unknown_func", PRE "g(x) = 1.0\nfunc f(x, y, c) = in(x, y, c)\noutput f\n", 4, 1,
     "update of unknown func 'g'"},
    {"update_of_input", PRE "in(x, y, c) = 1.0\nfunc f(x, y, c) = in(x, y, c)\noutput f\n", 4, 1,
     "'in' is an input; only funcs can be updated"},
    {"rvar_not_a_dim", PRE "func f(x, y, c) = 0.0\nf(q, 0, 0) += 1.0 for q in in\noutput f\n", 5,
     23, "input 'in' has no dimension named 'q'"},
    // Arity
    {"input_arity", PRE "func f(x, y, c) = in(x, y)\noutput f\n", 4, 19,
     "input 'in' has 3 dimension(s), given 2 index(es)"},
    {"func_arity", PRE "func g(x) = f32(x)\nfunc f(x, y, c) = g(x, y)\noutput f\n", 5, 19,
     "func 'g' takes 1 argument(s), given 2"},
    {"builtin_arity", PRE "func f(x, y, c) = clamp(in(x, y, c), 0.0)\noutput f\n", 4, 19,
     "'clamp' takes 3 arguments"},
    {"update_arity", PRE "func f(x, y, c) = 0.0\nf(x, y) = 1.0\noutput f\n", 5, 1,
     "func 'f' has 3 dimension(s), but its update gives 2"},
    {"size_arity", PRE "func f(x, y, c) = in(x, y, c)\noutput f size(3, 3)\n", 5, 10,
     "has 3 dimension(s) but size gives 2"},
    // Types
    {"mix_f32_u8", PRE "func f(x, y, c) = in(x, y, c) + u8(3)\noutput f\n", 4, 31,
     "type mismatch: '+' of f32 and u8"},
    {"mix_i32_f32", PRE "func f(x, y, c) = x * in(x, y, c)\noutput f\n", 4, 21,
     "type mismatch: '*' of i32 and f32"},
    // i8, i16, u32 and f16 follow the same rule: two typed operands must have one type.
    {"mix_i8_u8",
     "pipeline p\ninput a : i8[x]\ninput b : u8[x]\nfunc f(x) = a(x) + b(x)\noutput f\n", 4, 18,
     "type mismatch: '+' of i8 and u8; cast one side, e.g. u8(...)"},
    {"mix_u32_i32", "pipeline p\ninput a : u32[x]\nfunc f(x) = a(x) * x\noutput f\n", 3, 18,
     "type mismatch: '*' of u32 and i32"},
    {"mix_i16_u16",
     "pipeline p\ninput a : i16[x]\ninput b : u16[x]\nfunc f(x) = a(x) < b(x)\noutput f\n", 4, 18,
     "type mismatch: '<' of i16 and u16"},
    // An f16 value is widened to f32: it mixes with f32 but not with f64.
    {"mix_f16_f64", "pipeline p\ninput a : f16[x]\nfunc f(x) = a(x) + f64(x)\noutput f\n", 3, 18,
     "type mismatch: '+' of f32 and f64"},
    {"literal_i8_overflow", "pipeline p\ninput a : i8[x]\nfunc f(x) = a(x) + 128\noutput f\n", 3,
     20, "the number 128 does not fit i8"},
    {"literal_u32_negative", "pipeline p\ninput a : u32[x]\nfunc f(x) = a(x) + -1\noutput f\n", 3,
     20, "the number -1 does not fit u32"},
    {"u32_index", "pipeline p\ninput a : u32[x]\nfunc f(x) = a(a(x))\noutput f\n", 3, 15,
     "index 1 of the call to 'a' is u32; indices are integers: use i32(...)"},
    {"f16_update_of_f64",
     "pipeline p\ninput a : f16[x]\nfunc f(x) = a(x)\nf(x) = f64(x)\noutput f\n", 4, 8,
     "the update's value is f64 but f32 is expected"},
    {"i8_boundary", "pipeline p\ninput a : i8[x] constant(200)\nfunc f(x) = a(x)\noutput f\n", 2,
     17, "the boundary value does not fit the input's type i8"},
    {"float_index", PRE "func f(x, y, c) = in(x * 0.5, y, c)\noutput f\n", 4, 26,
     "the float 0.5 cannot be used as i32"},
    {"float_index_typed", PRE "func f(x, y, c) = in(f32(x), y, c)\noutput f\n", 4, 22,
     "index 1 of the call to 'in' is f32"},
    {"literal_overflow",
     "pipeline p\ninput in : u8[x, y]\nfunc f(x, y) = in(x, y) + 300\noutput f\n", 3, 27,
     "the number 300 does not fit u8"},
    {"exp_of_int", PRE "func f(x, y, c) = exp(x)\noutput f\n", 4, 23,
     "'exp' needs a float, found i32"},
    {"bool_func", PRE "func f(x, y, c) = x > 3\noutput f\n", 4, 21,
     "would hold a condition (bool)"},
    {"select_cond", PRE "func f(x, y, c) = select(x, 1.0, 0.0)\noutput f\n", 4, 26,
     "select's condition needs a condition"},
    {"and_of_numbers", PRE "func f(x, y, c) = select(x && y, 1.0, 0.0)\noutput f\n", 4, 26,
     "'&&' needs a condition"},
    {"update_type",
     "pipeline p\ninput in : u8[x, y]\nfunc h(i) = 0\nh(i32(in(x, y))) += 1.5 for x in in, y in "
     "in\noutput h size(256)\n",
     4, 21, "the float 1.5 cannot be used as i32"},
    {"param_float_for_int", PRE "param q : i32 = 2.5\nfunc f(x, y, c) = in(x, y, c)\noutput f\n", 4,
     17, "param 'q' is i32 but its default is a float"},
    // Cycles and recursion
    {"cycle", PRE "func f(x, y, c) = g(x, y, c)\nfunc g(x, y, c) = f(x, y, c) * 2.0\noutput f\n", 5,
     19, "cycle between funcs: f -> g -> f"},
    {"cycle3", PRE "func a(x) = b(x)\nfunc b(x) = c(x)\nfunc c(x) = a(x + 1)\noutput a size(4)\n",
     6, 13, "cycle between funcs: a -> b -> c -> a"},
    {"self_pure", PRE "func f(x, y, c) = f(x - 1, y, c)\noutput f\n", 4, 19,
     "the pure definition of 'f' calls itself"},
    // Reductions
    {"reduction_without_range", PRE "func f(x, y, c) = sum(i : in(x + i, y, c))\noutput f\n", 4, 25,
     "reduction variable 'i' needs bounds"},
    {"reduction_as_call", PRE "func f(x, y, c) = sum(in(x, y, c))\noutput f\n", 4, 19,
     "'sum' is a reduction: write sum(i in LO..HI : expression)"},
    {"bound_uses_var", PRE "func f(x, y, c) = sum(i in 0..x : in(i, y, c))\noutput f\n", 4, 31,
     "'x' is a variable"},
    {"bound_reads_pixel",
     PRE "func f(x, y, c) = sum(i in 0..i32(in(0, 0, 0)) : in(i, y, c))\noutput f\n", 4, 35,
     "cannot read pixels of 'in'"},
    {"rvar_twice", PRE "func f(x, y, c) = sum(i in 0..2, i in 0..2 : in(i, y, c))\noutput f\n", 4,
     34, "'i' is used twice in this reduction"},
    {"rvar_shadows", PRE "func f(x, y, c) = sum(x in 0..2 : in(x, y, c))\noutput f\n", 4, 23,
     "'x' is already a name here"},
    // Updates
    {"pure_var_not_alone", PRE "func f(x, y, c) = 0.0\nf(x, x + 1, c) = 1.0\noutput f\n", 5, 6,
     "pure variable 'x' must appear alone"},
    {"pure_var_twice", PRE "func f(x, y, c) = 0.0\nf(x, x, c) = 1.0\noutput f\n", 5, 6,
     "pure variable 'x' appears twice"},
    // Bounds
    {"unbounded_index",
     PRE "func g(i) = f32(i)\nfunc f(x, y, c) = g(i32(in(x, y, c) * 10.0))\noutput f\n", 5, 21,
     "cannot bound index 1 of the call to 'g'"},
    // Output
    {"output_needs_size",
     "pipeline p\ninput in : f32[x, y]\nfunc f(x, y, c) = in(x, y)\noutput f\n", 4, 8,
     "give the output's extents with size(...)"},
    {"lab_needs_3d",
     "pipeline p\ninput in : f32[x, y]\nfunc f(x, y) = in(x, y)\noutput f metric lab\n", 4, 17,
     "metric lab needs an output of 3 dimensions"},
    {"unknown_metric", PRE "func f(x, y, c) = in(x, y, c)\noutput f metric ssim\n", 5, 17,
     "unknown metric 'ssim'"},
    {"size_uses_func",
     PRE "func f(x, y, c) = in(x, y, c)\noutput f size(in.width, i32(f(0, 0, 0)), 3)\n", 5, 29,
     "cannot call funcs"},
    // let
    {"let_shadows_pure_var", PRE "func f(x, y, c) = let x = 1.0 in in(x, y, c)\noutput f\n", 4, 23,
     "let 'x' would hide the variable 'x' (a pure variable)"},
    {"let_shadows_param", PRE "func f(x, y, c) = let k = 1.0 in in(x, y, c) * k\noutput f\n", 4, 23,
     "let 'k' would hide the param declared at 3:7"},
    {"let_shadows_func",
     PRE "func g(x) = 1.0\nfunc f(x, y, c) = let g = 2.0 in in(x, y, c) * g\noutput f\n", 5, 23,
     "let 'g' would hide the func declared at 4:6"},
    {"let_shadows_input", PRE "func f(x, y, c) = let in = 2.0 in in\noutput f\n", 4, 23,
     "let 'in' would hide the input declared at 2:7"},
    {"let_shadows_let",
     PRE "func f(x, y, c) = let t = in(x, y, c) in let t = t * 2.0 in t\noutput f\n", 4, 46,
     "let 't' would hide the variable 't' (bound by the let at 4:23)"},
    {"let_shadows_rvar",
     PRE "func f(x, y, c) = sum(i in 0..2 : let i = 1.0 in in(x, y, c) * i)\noutput f\n", 4, 39,
     "let 'i' would hide the variable 'i' (a reduction variable)"},
    {"let_shadows_update_pure_var",
     PRE "func f(x) = 0.0\nf(x) += let x = 1.0 in x\noutput f size(3)\n", 5, 13,
     "let 'x' would hide the variable 'x' (a pure variable)"},
    {"rvar_shadows_let",
     PRE "func f(x, y, c) = let i = 1.0 in sum(i in 0..2 : in(x, y, c) * i)\noutput f\n", 4, 38,
     "'i' is already a name here"},
    {"let_of_builtin", PRE "func f(x, y, c) = let exp = 1.0 in in(x, y, c)\noutput f\n", 4, 23,
     "'exp' is a built-in name and cannot name a let"},
    {"let_missing_in", PRE "func f(x, y, c) = let t = in(x, y, c) t\noutput f\n", 4, 39,
     "expected 'in' after the value of 'let t', found 't'"},
    {"let_missing_eq", PRE "func f(x, y, c) = let t in(x, y, c)\noutput f\n", 4, 25,
     "expected '=' after 'let t', found 'in'"},
    {"let_missing_name", PRE "func f(x, y, c) = let = 1.0 in in(x, y, c)\noutput f\n", 4, 23,
     "expected a name after 'let', found '='"},
    {"let_inside_operation", PRE "func f(x, y, c) = 1.0 + let t = in(x, y, c) in t\noutput f\n", 4,
     25, "a 'let' inside an operation needs parentheses"},
    {"let_in_bounds",
     PRE "func f(x, y, c) = sum(i in 0..let n = 2 in n : in(x + i, y, c))\noutput f\n", 4, 31,
     "bounds and sizes cannot contain 'let'"},
    {"let_unbounded_index",
     PRE "func g(x) = 1.0\nfunc f(x, y, c) = let i = i32(in(x, y, c)) in g(i)\noutput f\n", 5, 49,
     "cannot bound index 1 of the call to 'g'"},
    {"let_out_of_scope", PRE "func f(x, y, c) = (let t = in(x, y, c) in t) + t\noutput f\n", 4, 48,
     "unknown name 't'"},
    // The new intrinsics
    {"atan2_arity", PRE "func f(x, y, c) = atan2(in(x, y, c))\noutput f\n", 4, 19,
     "'atan2' takes 2 arguments (y and x), given 1"},
    {"fma_arity", PRE "func f(x, y, c) = fma(in(x, y, c), 2.0)\noutput f\n", 4, 19,
     "'fma' takes 3 arguments (a, b and c of a * b + c), given 2"},
    {"fma_mixed_types", PRE "func f(x, y, c) = fma(in(x, y, c), f64(2.0), 1.0)\noutput f\n", 4, 19,
     "'fma' needs three floats of one type, found f32 and f64"},
    {"tanh_of_int", PRE "func f(x, y, c) = tanh(x)\noutput f\n", 4, 24,
     "'tanh' needs a float, found i32"},
    {"tan_index_unbounded",
     PRE "func g(x) = 1.0\nfunc f(x, y, c) = g(i32(tan(f32(x))))\noutput f\n", 5, 21,
     "cannot bound index 1 of the call to 'g'"},
    {"hypot_as_name", PRE "func hypot(x) = 1.0\noutput hypot size(3)\n", 4, 6,
     "'hypot' is a built-in name"},
};

class LanguageError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(LanguageError, ReportsOneMessageAtTheRightPlace) {
  const ErrorCase& c = GetParam();
  try {
    compile_pipeline(c.program, "case.stp");
    FAIL() << "accepted an illegal program:\n" << c.program;
  } catch (const CompileError& e) {
    EXPECT_EQ(e.file(), "case.stp");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.col(), c.col) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos)
        << "expected the message to contain: " << c.message << "\nfull message:\n"
        << e.what();
    // The formatted message: location, source line, caret under the column.
    std::string what = e.what();
    std::string prefix =
        "case.stp:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    size_t caret_line = what.rfind('\n');
    ASSERT_NE(caret_line, std::string::npos);
    std::string caret = what.substr(caret_line + 1);
    EXPECT_EQ(caret.back(), '^');
    EXPECT_EQ(caret.size(), 2u + c.col) << what;  // two spaces of indent, col - 1 spaces, ^
  }
}

INSTANTIATE_TEST_SUITE_P(All, LanguageError, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

std::string nested(const std::string& open, const std::string& middle, const std::string& close,
                   int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += open;
  s += middle;
  for (int i = 0; i < n; ++i) s += close;
  return s;
}

// 10,000-deep expressions of every shape are an error, not a stack overflow.
TEST(LanguageDepth, TenThousandDeepExpressionsAreErrors) {
  const std::string shapes[] = {
      nested("(", "x", ")", 10000),
      nested("-", "x", "", 10000),
      nested("!", "x > 0", "", 10000),
      "x" + nested("+1", "", "", 10000),
      nested("abs(", "x", ")", 10000),
      nested("sum(i in 0..1 : ", "x", ")", 10000),
      nested("in(", "x, y, c", ", y, c)", 10000),
      nested("let t = 1.0 in ", "x", "", 10000),
  };
  for (const std::string& body : shapes) {
    std::string program =
        "pipeline p\ninput in : f32[x, y, c]\nfunc f(x, y, c) = f32(" + body + ")\noutput f\n";
    try {
      compile_pipeline(program, "deep.stp");
      FAIL() << "accepted a 10,000-deep expression: " << body.substr(0, 40);
    } catch (const CompileError& e) {
      EXPECT_EQ(e.line(), 3);
      EXPECT_NE(e.message().find("deep"), std::string::npos) << e.what();
    }
  }
}

TEST(LanguageDepth, TwoHundredDeepIsFine) {
  std::string program = "pipeline p\ninput in : f32[x, y, c]\nfunc f(x, y, c) = " +
                        nested("(", "in(x, y, c)", " + 1.0)", 200) + "\noutput f\n";
  Pipeline p = compile_pipeline(program, "ok.stp");
  EXPECT_EQ(p.funcs.size(), 1u);
}

TEST(LanguageErrors, MissingFileIsAUserError) {
  EXPECT_THROW(load_pipeline_file("/nonexistent/dir/x.stp"), UserError);
}

}  // namespace
}  // namespace stipple
