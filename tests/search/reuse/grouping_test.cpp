// Algorithms 4 and 5 (Schedule Synthesis through Reuse Analysis §4.3): with a last-level
// cache too small for the fused pipeline, the generator splits it into segments computed
// at root, each tiled on its own; the schedule still passes the checker and computes
// exactly what the reference evaluator computes.
#include "search/reuse/grouping.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "search/reuse/reuse_model.h"

namespace stipple::search::reuse {
namespace {

// gray is reused by two consumers, gx and gy (Algorithm 4 heads a segment with it), and
// computed from a chain of stencils along y.
constexpr const char* kChain = R"(
pipeline chain
input in : f32[x, y, c]
func p1(x, y)   = (in(x, y - 1, 0) + in(x, y, 1) + in(x, y + 1, 2)) / 3
func p2(x, y)   = (p1(x, y - 2) + p1(x, y) + p1(x, y + 2)) / 3 + sqrt(p1(x, y))
func gray(x, y) = (p2(x, y - 1) + 2 * p2(x, y) + p2(x, y + 1)) / 4
func gx(x, y)   = (gray(x + 1, y) - gray(x - 1, y)) / 2
func gy(x, y)   = (gray(x, y + 1) - gray(x, y - 1)) / 2
func out(x, y)  = gx(x, y) * gx(x, y) + gy(x, y) * gy(x, y)
output out
)";

// Two cores, 8-lane vectors, and a last-level cache of `llc` bytes (L2 4 KiB).
MachineModel machine(int64_t llc) {
  MachineModel m;
  m.cores = 2;
  m.l2_bytes = 4 << 10;
  m.llc_bytes = llc;
  m.vector_bytes = 32;
  return m;
}

Buffer random_image(int64_t w, int64_t h, int64_t c) {
  Buffer b(ScalarType::Float32, {w, h, c});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t i = 0; i < b.element_count(); ++i) b.set_flat(i, u(rng));
  return b;
}

TEST(Grouping, FitsWithoutSplittingOnALargeCache) {
  Pipeline p = compile_pipeline(kChain, "chain.stp");
  PipelineAnalysis a(p, {256, 192});
  GroupedSchedule g = group_stages(a, machine(32 << 20));
  EXPECT_TRUE(g.fits);
  EXPECT_EQ(g.configurations, 1);
  ASSERT_EQ(g.grouping.groups.size(), 1u);
}

// A read whose index goes through a `let` is analysed as the let's value: a shifted
// stencil read (slidable, not data dependent), like the same read written out.
TEST(PipelineAnalysisLets, ReadsThroughALetSeeItsValue) {
  Pipeline p = compile_pipeline(
      "pipeline p\ninput in : f32[x, y]\nfunc a(x, y) = in(x, y) * 2.0\n"
      "func out(x, y) = let l = x - 1 in let r = l + 2 in a(l, y) + a(r, y)\noutput out\n",
      "lets.stp");
  PipelineAnalysis a(p, {256, 192});
  const Node* out = nullptr;
  for (const Node& n : a.nodes()) {
    if (n.name == "out") out = &n;
  }
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->reads.size(), 2u);
  EXPECT_EQ(to_string(out->reads[0].args[0]), "x - 1");
  EXPECT_EQ(to_string(out->reads[1].args[0]), "x - 1 + 2");
  for (const ReadSite& r : out->reads) {
    EXPECT_FALSE(r.data_dependent[0]);
    EXPECT_TRUE(r.slidable[0]);
    ASSERT_EQ(r.loop_dims[0].size(), 1u);
    EXPECT_EQ(r.loop_dims[0][0], 0);
  }
}

// Lowers and runs `s` on a random image and compares with the reference evaluator.
void expect_exact(const Pipeline& p, const Schedule& s) {
  InputImages inputs{{"in", random_image(256, 192, 3)}};
  Buffer expected = evaluate_pipeline(p, inputs);
  LoweredFunction f = lower(p, s);
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  Buffer got = run_lowered(*fn, f, p, inputs, {}, {256, 192});
  ASSERT_EQ(got.size_in_bytes(), expected.size_in_bytes());
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size_in_bytes()), 0)
      << print_schedule(s, p);
}

TEST(Grouping, Algorithm4SplitsAtAStageWithTwoReusingConsumers) {
  // 2 KiB: the fused pipeline needs about 2.4 KiB (its folded windows, both threads);
  // gray, reused by gx and gy, becomes the output of a segment with p1 and p2, which
  // fits, and the final segment (out with gx and gy inlined) stores nothing.
  Pipeline p = compile_pipeline(kChain, "chain.stp");
  PipelineAnalysis a(p, {256, 192});
  GroupedSchedule g = group_stages(a, machine(2 << 10));
  EXPECT_TRUE(g.fits) << g.notes;
  EXPECT_TRUE(g.grouping.root[a.find("gray")]);
  EXPECT_FALSE(g.grouping.root[a.find("p1")]);
  EXPECT_FALSE(g.grouping.root[a.find("p2")]);
  EXPECT_EQ(g.grouping.groups.size(), 2u);

  ReuseModelResult r = reuse_model_schedule(p, machine(2 << 10), {256, 192});
  EXPECT_NO_THROW(check_schedule(r.schedule, p)) << print_schedule(r.schedule, p);
  EXPECT_EQ(r.degraded, 0) << r.explanation;
  ASSERT_NE(r.schedule.find("gray"), nullptr);
  EXPECT_EQ(r.schedule.find("gray")->compute, LoopLevel::root());
  // p1 and p2 are computed inside gray's tiles.
  ASSERT_NE(r.schedule.find("p2"), nullptr);
  ASSERT_TRUE(r.schedule.find("p2")->compute.has_value());
  EXPECT_EQ(r.schedule.find("p2")->compute->func, "gray");
  expect_exact(p, r.schedule);
}

TEST(Grouping, Algorithm5SplitsASegmentThatStillDoesNotFit) {
  // 1 KiB: gray's segment does not fit either; Algorithm 5 makes its first stage, p1, a
  // segment of its own, after which everything fits.
  Pipeline p = compile_pipeline(kChain, "chain.stp");
  PipelineAnalysis a(p, {256, 192});
  GroupedSchedule g = group_stages(a, machine(1 << 10));
  EXPECT_TRUE(g.fits) << g.notes;
  EXPECT_GE(g.configurations, 3);
  EXPECT_TRUE(g.grouping.root[a.find("gray")]);
  EXPECT_TRUE(g.grouping.root[a.find("p1")]);
  EXPECT_EQ(g.grouping.groups.size(), 3u);
  ReuseModelResult r = reuse_model_schedule(p, machine(1 << 10), {256, 192});
  EXPECT_NO_THROW(check_schedule(r.schedule, p)) << print_schedule(r.schedule, p);
  expect_exact(p, r.schedule);

  // With almost no cache every stage is a segment, and the schedule is still exact.
  ReuseModelResult all = reuse_model_schedule(p, machine(128), {256, 192});
  EXPECT_NO_THROW(check_schedule(all.schedule, p));
  expect_exact(p, all.schedule);
}

}  // namespace
}  // namespace stipple::search::reuse
