// The schedule text form: golden parses and prints, accumulation of lines, syntax errors
// at exact locations, and hostile input (long chains, deep nesting, garbage).
#include "compiler_core/schedule/schedule_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple {
namespace {

TEST(ScheduleParser, DesignExampleParsesIntoTheModel) {
  Schedule s = parse_schedule(
      "# the example of the design\n"
      "out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo).vectorize(xi, 8)\n"
      "A.compute_at(out, yi).store_at(out, yo).vectorize(x, 8)      # sliding window\n"
      "hist.update(0).parallel(y)\n"
      "B.compute_root()\n"
      "C.compute_inline()\n"
      "D.compute_at(hist.update(1), x).store_root()\n",
      "s.sched");
  EXPECT_EQ(s.file_name, "s.sched");
  ASSERT_EQ(s.funcs.size(), 6u);
  const FuncSchedule& out = s.funcs.at("out");
  EXPECT_FALSE(out.compute);
  ASSERT_EQ(out.stages.size(), 1u);
  const std::vector<Directive>& d = out.stages.at(0).directives;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].name, "tile");
  ASSERT_EQ(d[0].args.size(), 8u);
  EXPECT_EQ(d[0].var(4), "xi");
  EXPECT_EQ(d[0].integer(6), 256);
  EXPECT_EQ(d[0].integer(7), 32);
  EXPECT_EQ(d[0].loc.line, 2);
  EXPECT_EQ(d[0].loc.col, 5);
  EXPECT_EQ(d[2].args[1].loc.col, 68);
  const FuncSchedule& a = s.funcs.at("A");
  EXPECT_EQ(*a.compute, LoopLevel::at("out", 0, "yi"));
  EXPECT_EQ(*a.store, LoopLevel::at("out", 0, "yo"));
  EXPECT_EQ(a.compute->loc.line, 3);
  EXPECT_EQ(a.compute->loc.col, 3);
  EXPECT_EQ(s.funcs.at("hist").stages.at(1).directives[0].name, "parallel");
  EXPECT_EQ(*s.funcs.at("B").compute, LoopLevel::root());
  EXPECT_EQ(*s.funcs.at("C").compute, LoopLevel::inlined());
  EXPECT_EQ(*s.funcs.at("D").compute, LoopLevel::at("hist", 2, "x"));
  EXPECT_EQ(*s.funcs.at("D").store, LoopLevel::root());
}

TEST(ScheduleParser, PrintsCanonically) {
  Schedule s = parse_schedule(
      "out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo)\n"
      "hist.update(1).unroll(x, 2)\n"
      "A.vectorize(x, 8)   # the store level comes after the compute level when printed\n"
      "A.store_at(out, yo).compute_at(out, yi)\n"
      "out.vectorize(xi, 8)\n"
      "hist.update(0).parallel(y)\n"
      "hist.split(i, io, ii, 16, guard_with_if)\n"
      "hist.compute_root()\n"
      "D.compute_at(hist.update(1), x)\n",
      "s");
  EXPECT_EQ(print_schedule(s),
            "A.compute_at(out, yi).store_at(out, yo).vectorize(x, 8)\n"
            "D.compute_at(hist.update(1), x)\n"
            "hist.compute_root().split(i, io, ii, 16, guard_with_if)\n"
            "hist.update(0).parallel(y)\n"
            "hist.update(1).unroll(x, 2)\n"
            "out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo).vectorize(xi, 8)\n");
  Schedule back = parse_schedule(print_schedule(s), "again");
  EXPECT_EQ(back, s);
  EXPECT_EQ(print_schedule(back), print_schedule(s));
}

TEST(ScheduleParser, PrintsInPipelineOrder) {
  Pipeline p = compile_pipeline(
      "pipeline p\ninput in : f32[x, y]\nfunc b(x, y) = in(x, y)\nfunc a(x, y) = b(x, y)\n"
      "output a\n",
      "p.stp");
  Schedule s = parse_schedule("zz.compute_root()\na.parallel(y)\nb.compute_root()\n", "s");
  EXPECT_EQ(print_schedule(s, p), "b.compute_root()\na.parallel(y)\nzz.compute_root()\n");
}

TEST(ScheduleParser, ChainsMaySpanLinesAndLinesAccumulate) {
  Schedule one = parse_schedule("out.split(x, xo, xi, 8).parallel(xo).vectorize(xi, 4)\n", "s");
  Schedule two =
      parse_schedule("out.split(x, xo, xi, 8)\n  .parallel(xo)\nout.vectorize(xi, 4)", "s");
  EXPECT_EQ(one, two);
  Schedule other = parse_schedule("out.split(x, xo, xi, 8).vectorize(xi, 4).parallel(xo)\n", "s");
  EXPECT_FALSE(one == other);  // order of directives matters
  EXPECT_EQ(parse_schedule("", "s"), Schedule{});
  EXPECT_EQ(parse_schedule("# only a comment\n\n", "s"), Schedule{});
}

TEST(ScheduleParser, EqualityIgnoresLocations) {
  Schedule a = parse_schedule("A.compute_root().vectorize(x, 8)", "a");
  Schedule b = parse_schedule("\n\n   A  .  compute_root ( ) . vectorize ( x ,8 )", "b");
  EXPECT_EQ(a, b);
  EXPECT_NE(a.funcs.at("A").loc.line, b.funcs.at("A").loc.line);
  Schedule c = parse_schedule("A.compute_root().vectorize(x, 16)", "a");
  EXPECT_FALSE(a == c);
  Schedule d = parse_schedule("A.compute_inline().vectorize(x, 8)", "a");
  EXPECT_FALSE(a == d);
}

struct SyntaxCase {
  const char* name;
  const char* text;
  int line, col;
  const char* message;
};

const SyntaxCase kSyntaxCases[] = {
    {"not_a_func", "(out).split(x)", 1, 1, "expected a func name at the start of a schedule line"},
    {"no_directive", "out", 1, 4, "expected '.' and a directive after 'out', found the end"},
    {"no_directive_update", "out.update(0)\n", 2, 1,
     "expected '.' and a directive after 'out.update(0)'"},
    {"unknown_directive", "out.parallel(y)\nout.frobnicate(x)", 2, 5,
     "unknown directive 'frobnicate'; the directives are compute_root, compute_inline, "
     "compute_at, store_root, store_at, split, tile, reorder, vectorize, parallel, unroll"},
    {"missing_paren", "out.split(x, xo, xi 8)", 1, 21,
     "expected ')' to close the arguments of 'split' at 1:5, found the number 8"},
    {"missing_lparen", "out.parallel y", 1, 14, "expected '(' after 'parallel', found 'y'"},
    {"arity", "out.split(x, xo, xi)", 1, 5,
     "split takes 4 or 5 arguments, found 3: split(loop, outer, inner, factor[, tail])"},
    {"arity_exact", "out.vectorize(x)", 1, 5, "vectorize takes 2 arguments, found 1"},
    {"arity_reorder", "out.reorder(x)", 1, 5, "reorder takes at least 2 arguments, found 1"},
    {"arity_none", "out.compute_root(x)", 1, 5, "compute_root takes 0 arguments, found 1"},
    {"int_expected", "out.split(x, xo, xi, y)", 1, 22,
     "the fourth argument of split must be an integer"},
    {"name_expected", "out.parallel(3)", 1, 14,
     "the first argument of parallel must be a loop name"},
    {"call_as_name", "out.split(grid(4, 1), xo, xi, 4)", 1, 11,
     "the first argument of split must be a loop name"},
    {"level_expected", "A.compute_at(3, x)", 1, 14,
     "the first argument of compute_at must be a func name or func.update(k)"},
    {"float_as_int", "out.vectorize(x, 8.0)", 1, 18, "must be an integer"},
    {"update_late", "out.parallel(y).update(0)", 1, 17,
     "update(k) must come right after the func's name"},
    {"update_twice", "out.update(0).update(1)", 1, 15, "a line schedules one stage"},
    {"update_index", "hist.update(x).parallel(y)", 1, 13,
     "update takes the index of an update definition, as in f.update(0); found 'x'"},
    {"update_negative", "hist.update(-1).parallel(y)", 1, 13, "update takes the index"},
    {"update_huge", "hist.update(2000000).parallel(y)", 1, 13, "update index 2000000 is too large"},
    {"compute_twice", "out.compute_root()\nA.parallel(x)\nout.compute_root()", 3, 5,
     "the compute level of 'out' is already set at 1:5; set it once"},
    {"store_twice", "A.store_root().store_at(out, y)", 1, 16,
     "the store level of 'A' is already set at 1:3"},
    {"level_on_update", "hist.update(0).compute_root()", 1, 16,
     "compute_root applies to the whole func; put it on a line without update(...)"},
    {"bound_on_update", "hist.update(0).bound(i, 0, 4)", 1, 16,
     "bound applies to the whole func; put it on a line without update(...)"},
    {"bad_char", "out.vectorize(x, $)", 1, 18, "unexpected character '$'"},
    {"dangling_minus", "out.split(x, -, xi, 4)", 1, 15, "expected a number after '-', found ','"},
    {"bad_method", "A.compute_at(out.foo(1), x)", 1, 18,
     "expected 'update' after 'out.', as in out.update(0), found 'foo'"},
    {"stray_dot", "out..parallel(x)", 1, 4, "expected '.' and a directive after 'out', found '..'"},
    {"no_name_after_dot", "out.(x)", 1, 5, "expected a directive name after '.', found '('"},
    {"unclosed_call", "out.split(g(1, 2, xo, xi, 4)", 1, 29,
     "expected ')' to close the arguments of 'split' at 1:5"},
    {"huge_int", "out.vectorize(x, 99999999999)", 1, 18, "does not fit in 32 bits"},
};

class SyntaxErrors : public ::testing::TestWithParam<SyntaxCase> {};

TEST_P(SyntaxErrors, ReportExactLocation) {
  const SyntaxCase& c = GetParam();
  try {
    parse_schedule(c.text, "bad.sched");
    FAIL() << "accepted: " << c.text;
  } catch (const CompileError& e) {
    EXPECT_EQ(e.file(), "bad.sched");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.col(), c.col) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
    std::string prefix =
        "bad.sched:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(All, SyntaxErrors, ::testing::ValuesIn(kSyntaxCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ScheduleParser, ErrorShowsLineAndCaret) {
  try {
    parse_schedule("out.parallel(y)\nout.split(x, xo, xi, y)\n", "f.sched");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.sched:2:22: error: the fourth argument of split must be an integer: "
              "split(loop, outer, inner, factor[, tail])\n"
              "  out.split(x, xo, xi, y)\n"
              "                       ^");
  }
}

TEST(ScheduleParser, LongChainsParseWithoutRecursion) {
  std::string text = "out";
  for (int i = 0; i < 10000; ++i) text += ".unroll(x, 2)";
  Schedule s = parse_schedule(text, "long");
  EXPECT_EQ(s.funcs.at("out").stages.at(0).directives.size(), 10000u);
  EXPECT_EQ(parse_schedule(print_schedule(s), "again"), s);
  std::string lines;
  for (int i = 0; i < 10000; ++i) lines += "f" + std::to_string(i) + ".compute_root()\n";
  EXPECT_EQ(parse_schedule(lines, "lines").funcs.size(), 10000u);
}

TEST(ScheduleParser, DeepNestingIsAnErrorNotACrash) {
  std::string text = "out.split(";
  for (int i = 0; i < 100000; ++i) text += "g(";
  try {
    parse_schedule(text, "deep");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.col(), 11 + 2 * kMaxScheduleArgDepth);
    EXPECT_NE(e.message().find("nested more than 32 deep"), std::string::npos);
  }
  std::string keywords = "out.split(";
  for (int i = 0; i < 100000; ++i) keywords += "k = ";
  EXPECT_THROW(parse_schedule(keywords, "deep"), CompileError);
}

TEST(ScheduleParser, GarbageNeverCrashes) {
  // Random token soup over the schedule alphabet: each input parses or is a CompileError.
  const std::vector<std::string> pieces = {
      "out", "A",      ".", "(",  ")", ",",     "x",    "8",        "-",          "=",
      "1.5", "update", "0", "\n", "#", "split", "tile", "parallel", "compute_at", "$"};
  std::mt19937 rng(7);
  int parsed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    int n = std::uniform_int_distribution<int>(0, 30)(rng);
    for (int i = 0; i < n; ++i) {
      text += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
      if (rng() % 2) text += " ";
    }
    try {
      Schedule s = parse_schedule(text, "garbage");
      ++parsed;
      EXPECT_EQ(parse_schedule(print_schedule(s), "again"), s) << text;
    } catch (const CompileError&) {
    }
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace stipple
