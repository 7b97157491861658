// Sliding window and storage folding (issue #3): a func stored outside the loop it is
// computed in computes each point once per run of that loop and keeps only its window.
// Checked three ways: the JIT-compiled output against the reference evaluator byte for
// byte; the work and the allocation sizes counted by running the integer skeleton of the
// lowered loop nest (loop bounds, lets, guards, allocations) with a small interpreter
// written here, against counts worked out by hand; and random schedules, which must
// include sliding and folded ones.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "tests/compiler_core/lowering/lowering_harness.h"

namespace stipple {
namespace {

const std::string kPipelines = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/";

// Runs the integer skeleton of a lowered loop nest: what each loop, let, guard and
// allocation evaluates to (values stored are not computed). Counts the stores into each
// func and records each allocation's largest extents, and checks that every store's site
// lies inside its allocation.
class SkeletonRunner {
 public:
  std::map<std::string, int64_t> stores;
  std::map<std::string, std::vector<int64_t>> extents;  // largest, per dimension
  std::vector<std::string> errors;
  std::map<std::string, int64_t> env;

  void run(const Stmt& s) {
    if (const LetStmt* op = s.as<LetStmt>()) {
      auto saved = env;
      env[op->name] = eval(op->value);
      run(op->body);
      env = saved;
    } else if (const For* op = s.as<For>()) {
      int64_t lo = eval(op->min), n = eval(op->extent);
      for (int64_t i = lo; i < lo + n; ++i) {
        env[op->name] = i;
        run(op->body);
      }
      env.erase(op->name);
    } else if (const Block* op = s.as<Block>()) {
      run(op->first);
      run(op->rest);
    } else if (const IfThenElse* op = s.as<IfThenElse>()) {
      if (eval(op->condition)) {
        run(op->then_case);
      } else if (op->else_case.defined()) {
        run(op->else_case);
      }
    } else if (const Allocate* op = s.as<Allocate>()) {
      std::vector<int64_t> now;
      for (const Expr& e : op->extents) now.push_back(std::max<int64_t>(eval(e), 0));
      std::vector<int64_t>& most = extents[op->name];
      if (most.empty()) most.assign(now.size(), 0);
      for (size_t d = 0; d < now.size(); ++d) most[d] = std::max(most[d], now[d]);
      live_[op->name] = now;
      run(op->body);
      live_.erase(op->name);
    } else if (const Provide* op = s.as<Provide>()) {
      ++stores[op->name];
      auto it = live_.find(op->name);
      if (it == live_.end()) return;  // the caller's output buffer
      for (size_t d = 0; d < op->args.size(); ++d) {
        int64_t at = eval(op->args[d]) - env.at(op->name + ".min." + std::to_string(d));
        if (at < 0 || at >= it->second[d]) {
          errors.push_back(op->name + " stored outside its allocation in dimension " +
                           std::to_string(d));
        }
      }
    }
  }

  int64_t eval(const Expr& e) {
    auto two = [&](const auto* op) { return std::pair{eval(op->a), eval(op->b)}; };
    switch (e.node_type()) {
      case IRNodeType::IntImm: return e.as<IntImm>()->value;
      case IRNodeType::Variable: {
        auto it = env.find(e.as<Variable>()->name);
        if (it == env.end()) throw std::runtime_error("unbound " + e.as<Variable>()->name);
        return it->second;
      }
      case IRNodeType::Add: {
        auto [a, b] = two(e.as<Add>());
        return a + b;
      }
      case IRNodeType::Sub: {
        auto [a, b] = two(e.as<Sub>());
        return a - b;
      }
      case IRNodeType::Mul: {
        auto [a, b] = two(e.as<Mul>());
        return a * b;
      }
      case IRNodeType::Div: {
        auto [a, b] = two(e.as<Div>());
        if (b == 0) return 0;
        int64_t q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
      }
      case IRNodeType::Mod: {
        auto [a, b] = two(e.as<Mod>());
        if (b == 0) return 0;
        int64_t r = a % b;
        return r < 0 ? r + (b < 0 ? -b : b) : r;
      }
      case IRNodeType::Min: {
        auto [a, b] = two(e.as<Min>());
        return std::min(a, b);
      }
      case IRNodeType::Max: {
        auto [a, b] = two(e.as<Max>());
        return std::max(a, b);
      }
      case IRNodeType::EQ: {
        auto [a, b] = two(e.as<EQ>());
        return a == b;
      }
      case IRNodeType::LE: {
        auto [a, b] = two(e.as<LE>());
        return a <= b;
      }
      case IRNodeType::LT: {
        auto [a, b] = two(e.as<LT>());
        return a < b;
      }
      case IRNodeType::GE: {
        auto [a, b] = two(e.as<GE>());
        return a >= b;
      }
      case IRNodeType::And: {
        const And* op = e.as<And>();
        return eval(op->a) && eval(op->b);
      }
      case IRNodeType::Select: {
        const Select* op = e.as<Select>();
        return eval(op->condition) ? eval(op->true_value) : eval(op->false_value);
      }
      case IRNodeType::Call: {
        const Call* op = e.as<Call>();
        if (op->intrinsic != Intrinsic::Abs || op->type != Int32()) break;
        int64_t a = eval(op->args[0]);
        return a < 0 ? -a : a;
      }
      case IRNodeType::Let: {
        const Let* op = e.as<Let>();
        auto saved = env;
        env[op->name] = eval(op->value);
        int64_t r = eval(op->body);
        env = saved;
        return r;
      }
      default: break;
    }
    throw std::runtime_error(std::string("skeleton cannot evaluate ") +
                             node_type_name(e.node_type()));
  }

 private:
  std::map<std::string, std::vector<int64_t>> live_;
};

// Runs the skeleton of `p` under `text` for an output of the given extents (mins 0).
SkeletonRunner run_skeleton(const Pipeline& p, const std::string& text,
                            const std::vector<int64_t>& out_extents) {
  Schedule s = compile_schedule(text, "test.sched", p);
  LoweredFunction f = lower(p, s);
  SkeletonRunner r;
  for (size_t d = 0; d < out_extents.size(); ++d) {
    r.env[p.output.func + ".min." + std::to_string(d)] = 0;
    r.env[p.output.func + ".extent." + std::to_string(d)] = out_extents[d];
  }
  r.run(f.body);
  return r;
}

std::string write_pipeline(const std::string& name, const std::string& text) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("stipple_sliding_" + name + ".stp")).string();
  std::ofstream(path) << text;
  return path;
}

struct Sched {
  const char* text;
  bool slides;
};

// blur3x3's blur_x under compute_at/store_at pairs that slide, on sizes from 1x1 up,
// odd tails included: the JIT-compiled output is the evaluator's, byte for byte.
TEST(SlidingWindow, Blur3x3MatchesEvaluatorOnManySizes) {
  auto jit = codegen::JitCompiler::create();
  const Sched scheds[] = {
      {"blur_x.compute_at(blur_y, y).store_root()", true},
      {"blur_x.compute_at(blur_y, y).store_at(blur_y, c)", true},
      {"blur_x.compute_at(blur_y, yi).store_at(blur_y, yo)\n"
       "blur_y.split(y, yo, yi, 4)",
       true},
      {"blur_x.compute_at(blur_y, yi).store_at(blur_y, yo)\n"
       "blur_y.tile(x, y, xo, yo, xi, yi, 8, 5).reorder(xi, yi, xo, yo, c)",
       true},
      {"blur_x.compute_at(blur_y, yo).store_root()\n"
       "blur_y.split(y, yo, yi, 4, shift_inwards)",
       true},
      {"blur_x.compute_at(blur_y, yo).store_at(blur_y, c).vectorize(x, 4)\n"
       "blur_y.split(y, yo, yi, 3, guard_with_if).vectorize(x, 8)",
       true},
      {"blur_x.compute_at(blur_y, x).store_at(blur_y, y)", true},
      {"blur_x.compute_at(blur_y, x).store_root()", true},
      {"blur_x.compute_at(blur_y, y).store_root().split(y, yo, yi, 2, shift_inwards)", true},
      {"blur_x.compute_at(blur_y, y)", false},
  };
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 2},   {2, 1},  {3, 2},
                                               {5, 7}, {17, 13}, {64, 48}};
  for (auto [w, h] : sizes) {
    testing_lowering::Case c(kPipelines + "blur3x3.stp", w, h);
    for (const Sched& sc : scheds) {
      SCOPED_TRACE(std::string(sc.text) + " at " + std::to_string(w) + "x" + std::to_string(h));
      Schedule s = compile_schedule(sc.text, "test.sched", c.pipeline);
      EXPECT_EQ(c.check(*jit, s), "");
      std::string text = lowered_text(c.pipeline, s);
      EXPECT_EQ(text.find("blur_x.slide.") != std::string::npos, sc.slides) << text;
    }
  }
}

// Work: with store_root and compute_at(blur_y, y), each run of the y loop (one per
// channel) computes H + 2 rows of blur_x, not 3 per output row; the buffer keeps 4 rows.
TEST(SlidingWindow, StoreRootComputesEachRowOnceAndFoldsToFourRows) {
  Pipeline p = load_pipeline_file(kPipelines + "blur3x3.stp");
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {5, 2}, {9, 7}, {16, 30}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    SkeletonRunner slid = run_skeleton(p, "blur_x.compute_at(blur_y, y).store_root()", {w, h, 3});
    EXPECT_TRUE(slid.errors.empty()) << slid.errors[0];
    EXPECT_EQ(slid.stores["blur_x"], 3 * w * (h + 2));
    EXPECT_EQ(slid.stores["blur_y"], 3 * w * h);
    // x, then rows: min(hull, 4) (the window of 3 rounded up), then all three channels.
    EXPECT_EQ(slid.extents["blur_x"], (std::vector<int64_t>{w, std::min<int64_t>(h + 2, 4), 3}));
    // Stored where it is computed: three rows per output row, as before.
    SkeletonRunner same = run_skeleton(p, "blur_x.compute_at(blur_y, y)", {w, h, 3});
    EXPECT_EQ(same.stores["blur_x"], 3 * w * 3 * h);
    EXPECT_EQ(same.extents["blur_x"], (std::vector<int64_t>{w, 3, 1}));
  }
}

// Sliding inside tiles of rows: each tile computes its rows plus the two-row apron once.
TEST(SlidingWindow, SlidingInsideTilesComputesTheApronOncePerTile) {
  Pipeline p = load_pipeline_file(kPipelines + "blur3x3.stp");
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {4, 4}, {7, 9}, {10, 13}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    SkeletonRunner r = run_skeleton(p,
                                    "blur_x.compute_at(blur_y, yi).store_at(blur_y, yo)\n"
                                    "blur_y.split(y, yo, yi, 4)",
                                    {w, h, 3});
    EXPECT_TRUE(r.errors.empty()) << r.errors[0];
    int64_t tiles = (h + 3) / 4;
    EXPECT_EQ(r.stores["blur_x"], 3 * w * (h + 2 * tiles));
    EXPECT_EQ(r.extents["blur_x"][1], std::min<int64_t>(std::min<int64_t>(h, 4) + 2, 4));
  }
}

// Computed once per tile of 4 rows (compute_at(yo), shift_inwards), the window is 6 rows
// (folded to 8) and, across tiles, every row of blur_x is computed exactly once.
TEST(SlidingWindow, SlidingOverTilesOfRowsFoldsToEightRows) {
  Pipeline p = load_pipeline_file(kPipelines + "blur3x3.stp");
  const char* text =
      "blur_x.compute_at(blur_y, yo).store_root()\n"
      "blur_y.split(y, yo, yi, 4, shift_inwards)";
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {5, 4}, {6, 11}, {8, 40}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    SkeletonRunner r = run_skeleton(p, text, {w, h, 3});
    EXPECT_TRUE(r.errors.empty()) << r.errors[0];
    EXPECT_EQ(r.stores["blur_x"], 3 * w * (h + 2));
    EXPECT_EQ(r.extents["blur_x"][1], std::min<int64_t>(h + 2, 8));
  }
  std::string lowered = lowered_text(p, compile_schedule(text, "s", p));
  EXPECT_NE(lowered.find("let blur_x.slide.min.1 = select(blur_y.s0.yo == 0, blur_x.cmin.1, "
                         "max(blur_x.cmin.1, blur_x.cmax.1$prev + 1))"),
            std::string::npos)
      << lowered;
  EXPECT_NE(lowered.find("for blur_x.s0.y in blur_x.slide.min.1.."), std::string::npos);
  EXPECT_NE(lowered.find("blur_x.min.1 + (blur_x.s0.y - blur_x.min.1) % 8"), std::string::npos);
}

// A chain of two slid funcs (both stored at root, computed per output row): each
// computes its rows once; the producer slides on the consumer's unslid region.
TEST(SlidingWindow, ChainOfSlidFuncsComputesEachRowOnce) {
  const std::string path = write_pipeline("chain",
                                          "pipeline chain\n"
                                          "input in : f32[x, y]\n"
                                          "func a(x, y) = in(x, y) * 2\n"
                                          "func b(x, y) = a(x, y - 1) + a(x, y + 1)\n"
                                          "func out(x, y) = b(x, y) + b(x, y + 2)\n"
                                          "output out\n");
  const char* text =
      "a.compute_at(out, y).store_root()\n"
      "b.compute_at(out, y).store_root()";
  auto jit = codegen::JitCompiler::create();
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 2}, {7, 11}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    testing_lowering::Case c(path, w, h);
    EXPECT_EQ(c.check(*jit, compile_schedule(text, "s", c.pipeline)), "");
    SkeletonRunner r = run_skeleton(c.pipeline, text, {w, h});
    EXPECT_TRUE(r.errors.empty()) << r.errors[0];
    EXPECT_EQ(r.stores["b"], w * (h + 2));  // rows 0..h+1
    EXPECT_EQ(r.stores["a"], w * (h + 4));  // rows -1..h+2
    // Windows of 3 and 5 rows, folded to 4 and 8 (fewer while the whole hull, which
    // interval arithmetic over-estimates by a row or two, is smaller).
    EXPECT_LE(r.extents["b"][1], 4);
    EXPECT_LE(r.extents["a"][1], 8);
    if (h > 8) {
      EXPECT_EQ(r.extents["b"][1], 4);
      EXPECT_EQ(r.extents["a"][1], 8);
    }
  }
  // A producer computed in the same loop but stored there computes only what the slid
  // consumer's new row reads: rows y+1..y+3 of a after the first output row, not 5 rows.
  const char* same = "a.compute_at(out, y)\nb.compute_at(out, y).store_root()";
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {4, 9}}) {
    testing_lowering::Case c(path, w, h);
    EXPECT_EQ(c.check(*jit, compile_schedule(same, "s", c.pipeline)), "");
    SkeletonRunner r = run_skeleton(c.pipeline, same, {w, h});
    EXPECT_EQ(r.stores["b"], w * (h + 2));
    EXPECT_EQ(r.stores["a"], w * (5 + 3 * (h - 1)));
  }
}

// A region moving towards smaller indices slides too (slide.max), and folds.
TEST(SlidingWindow, DecreasingRegionSlidesDownwards) {
  const std::string path = write_pipeline("flip",
                                          "pipeline flip\n"
                                          "input in : f32[x, y]\n"
                                          "func f(x, y) = in(x, y) + 1\n"
                                          "func out(x, y) = f(x, 20 - y) * f(x, 21 - y)\n"
                                          "output out\n");
  const char* text = "f.compute_at(out, y).store_root()";
  auto jit = codegen::JitCompiler::create();
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {4, 6}, {9, 30}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    testing_lowering::Case c(path, w, h);
    Schedule s = compile_schedule(text, "s", c.pipeline);
    EXPECT_EQ(c.check(*jit, s), "");
    EXPECT_NE(lowered_text(c.pipeline, s).find("f.slide.max.1"), std::string::npos);
    SkeletonRunner r = run_skeleton(c.pipeline, text, {w, h});
    EXPECT_TRUE(r.errors.empty()) << r.errors[0];
    EXPECT_EQ(r.stores["f"], w * (h + 1));
    EXPECT_EQ(r.extents["f"][1], std::min<int64_t>(h + 1, 2));
  }
}

// Fallbacks, still exact: a region that moves non-monotonically (|y - 6|) is recomputed
// whole each iteration; one that does not move at all is computed on the first
// iteration only and never folded.
TEST(SlidingWindow, NonMonotonicRegionIsRecomputedAndFixedRegionComputedOnce) {
  const std::string path = write_pipeline("fallback",
                                          "pipeline fallback\n"
                                          "input in : f32[x, y]\n"
                                          "func f(x, y) = in(x, y) * 3\n"
                                          "func g(x, y) = in(x, y) - 1\n"
                                          "func out(x, y) = f(x, abs(y - 6)) + f(x, abs(y - 6) + 1)"
                                          " + g(x, 2) + g(x, 3)\n"
                                          "output out\n");
  const char* text = "f.compute_at(out, y).store_root()\ng.compute_at(out, y).store_root()";
  auto jit = codegen::JitCompiler::create();
  for (auto [w, h] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 8}, {6, 13}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    testing_lowering::Case c(path, w, h);
    Schedule s = compile_schedule(text, "s", c.pipeline);
    EXPECT_EQ(c.check(*jit, s), "");
    std::string lowered = lowered_text(c.pipeline, s);
    EXPECT_EQ(lowered.find("f.slide."), std::string::npos) << lowered;
    SkeletonRunner r = run_skeleton(c.pipeline, text, {w, h});
    EXPECT_TRUE(r.errors.empty()) << r.errors[0];
    EXPECT_EQ(r.stores["g"], w * 2);  // rows 2..3, on the first row of out only
    EXPECT_EQ(r.stores["f"], w * 2 * h);
    EXPECT_EQ(r.extents["g"][1], 2);
  }
}

// Random legal schedules (the generator draws store levels outside compute levels) of
// pipelines with stencils: exact, and some of them slide and fold.
TEST(SlidingWindow, RandomSchedulesSlideFoldAndMatchEvaluator) {
  auto jit = codegen::JitCompiler::create();
  int slid = 0, folded = 0, total = 0;
  const std::regex kFolded(R"(\.min\.\d \+ \([^\n]*\) % \d+)");
  for (const char* name : {"blur3x3", "unsharp", "two_pass_blur"}) {
    testing_lowering::Case c(kPipelines + name + ".stp", 19, 14);
    std::mt19937_64 rng(77);
    for (int i = 0; i < 20; ++i) {
      Schedule s = random_schedule(c.pipeline, rng);
      SCOPED_TRACE(print_schedule(s, c.pipeline));
      EXPECT_EQ(c.check(*jit, s), "");
      std::string text = lowered_text(c.pipeline, s);
      slid += text.find(".slide.") != std::string::npos;
      folded += std::regex_search(text, kFolded);
      ++total;
    }
  }
  std::printf("%d random schedules: %d slide, %d fold\n", total, slid, folded);
  EXPECT_GE(slid, 5);
  EXPECT_GE(folded, 3);
}

}  // namespace
}  // namespace stipple
