// The hand-written schedules of the benchmark pipelines (datasets/pipelines/NAME.sched
// beside NAME.stp): every pipeline has one, each parses and passes the schedule checker,
// prints and parses back to an equal schedule, documents itself, and actually schedules
// the output for the machine (parallel and vectorised), with zero-dimension funcs
// computed once at root rather than inlined into every use.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_loops.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple {
namespace {

namespace fs = std::filesystem;

// The benchmark set of issue #3: a change in the folder should be a deliberate one.
constexpr size_t kBenchmarkPipelines = 16;

fs::path pipelines_dir() { return fs::path(STIPPLE_SOURCE_DIR) / "datasets" / "pipelines"; }

// The names of the .stp files in datasets/pipelines, sorted.
std::vector<std::string> pipeline_names() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(pipelines_dir())) {
    if (e.is_regular_file() && e.path().extension() == ".stp") names.push_back(e.path().stem());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string stp_path(const std::string& name) {
  return (pipelines_dir() / (name + ".stp")).string();
}
std::string sched_path(const std::string& name) {
  return (pipelines_dir() / (name + ".sched")).string();
}

TEST(HandSchedules, EveryBenchmarkPipelineHasOne) {
  std::vector<std::string> names = pipeline_names();
  EXPECT_EQ(names.size(), kBenchmarkPipelines);
  for (const std::string& name : names) {
    EXPECT_TRUE(fs::is_regular_file(sched_path(name)))
        << name << ".stp has no " << name << ".sched";
  }
  // And no schedule without its pipeline (a renamed .stp would leave one behind).
  for (const fs::directory_entry& e : fs::directory_iterator(pipelines_dir())) {
    if (e.path().extension() != ".sched") continue;
    EXPECT_TRUE(fs::is_regular_file(stp_path(e.path().stem())))
        << e.path().filename() << " has no pipeline beside it";
  }
}

class HandSchedule : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!fs::is_regular_file(sched_path(GetParam()))) GTEST_SKIP() << "no schedule";
    pipeline_ = load_pipeline_file(stp_path(GetParam()));
  }
  // The schedule, or a failure with the checker's message.
  /// For a target of `vector_bytes` registers (0: this host's).
  bool load(Schedule* out, int vector_bytes = 0) {
    try {
      *out =
          load_schedule_file(sched_path(GetParam()), pipeline_, ScheduleTarget::Cpu, vector_bytes);
      return true;
    } catch (const UserError& e) {
      ADD_FAILURE() << e.what();
      return false;
    }
  }
  Pipeline pipeline_;
};

TEST_P(HandSchedule, PassesTheChecker) {
  Schedule s;
  ASSERT_TRUE(load(&s));
  // Not vacuous: the output is scheduled, and so is at least one other func where the
  // pipeline has more than one (median is a single stage).
  EXPECT_NE(s.find(pipeline_.output.func), nullptr);
  EXPECT_GE(s.funcs.size(), std::min<size_t>(2, pipeline_.funcs.size()));
}

TEST_P(HandSchedule, PrintsAndParsesBackEqual) {
  Schedule s;
  ASSERT_TRUE(load(&s));
  std::string text = print_schedule(s, pipeline_);
  Schedule back = compile_schedule(text, "printed.sched", pipeline_);
  EXPECT_EQ(back, s) << text;
  EXPECT_EQ(print_schedule(back, pipeline_), text);
}

TEST_P(HandSchedule, OpensWithItsStrategy) {
  // The file explains itself: a comment block first, naming the Halide schedule it follows.
  std::string text = read_text(sched_path(GetParam()));
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text[0], '#');
  EXPECT_NE(text.find("Halide"), std::string::npos);
}

TEST_P(HandSchedule, OutputIsParallelAndVectorised) {
  Schedule s;
  ASSERT_TRUE(load(&s));
  const Func* out = pipeline_.find_func(pipeline_.output.func);
  ASSERT_NE(out, nullptr);
  SourceText source("", "hand.sched");
  StageLoopNest nest = stage_loop_nest(s, pipeline_, *out, 0, source);
  bool parallel = false, vectorized = false;
  for (const Loop& l : nest.loops) {
    parallel |= l.for_type == ForType::Parallel;
    vectorized |= l.for_type == ForType::Vectorized;
  }
  EXPECT_TRUE(parallel) << "output loops: " << nest.describe();
  EXPECT_TRUE(vectorized) << "output loops: " << nest.describe();
  // The vector lanes are the innermost loop, along the output's dimension 0 (unit stride).
  ASSERT_FALSE(nest.loops.empty());
  EXPECT_EQ(nest.loops[0].for_type, ForType::Vectorized);
  EXPECT_EQ(nest.loops[0].origin, out->args[0]);
}

TEST_P(HandSchedule, VectorsFillARegisterOfEachTarget) {
  // Widths in registers (vectors(k)): on NEON and SSE (16 bytes), AVX2 (32) and AVX-512
  // (64) alike, every vector fills at least one register of 32-bit lanes (4, 8, 16);
  // narrower widths waste the machine, and x86 widths would be 4x too wide on NEON.
  for (int bytes : {16, 32, 64}) {
    Schedule s;
    ASSERT_TRUE(load(&s, bytes));
    SourceText source("", "hand.sched");
    int vectorized_stages = 0;
    for (const Func& f : pipeline_.funcs) {
      if (effective_compute_level(s, pipeline_, f).kind == LevelKind::Inline) continue;
      for (int st = 0; st < stage_count(f); ++st) {
        StageLoopNest nest = stage_loop_nest(s, pipeline_, f, st, source);
        for (const Loop& l : nest.loops) {
          if (l.for_type != ForType::Vectorized) continue;
          ++vectorized_stages;
          EXPECT_GE(l.lanes, bytes / 4) << stage_name(f.name, st) << ", " << bytes << "-byte";
          EXPECT_LE(l.lanes, bytes) << stage_name(f.name, st) << ", " << bytes << "-byte";
        }
      }
    }
    EXPECT_GE(vectorized_stages, 1);
  }
}

TEST_P(HandSchedule, ZeroDimensionalFuncsAreComputedOnce) {
  // A func of no variables (a normalisation, a colour-matrix weight) inlined would be
  // re-evaluated at every use, often inside a per-tap loop; at root it is one value.
  Schedule s;
  ASSERT_TRUE(load(&s));
  for (const Func& f : pipeline_.funcs) {
    if (!f.args.empty()) continue;
    EXPECT_EQ(effective_compute_level(s, pipeline_, f).kind, LevelKind::Root) << f.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Benchmark, HandSchedule, ::testing::ValuesIn(pipeline_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace stipple
