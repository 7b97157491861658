// Algorithms 1 and 2 (Schedule Synthesis through Reuse Analysis §4.1) on small pipelines whose
// expected (compute, store) levels are written by hand from the rules, one rule per stage.
#include "search/reuse/fusion_analysis.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "search/reuse/loop_order.h"
#include "search/reuse/reuse_model.h"

namespace stipple::search::reuse {
namespace {

// A pointwise stage, a stencil along y, a stencil along x, a reduction whose result every
// row reuses, and a trivial copy read as a stencil.
constexpr const char* kDag = R"(
pipeline dag
input in : f32[x, y]
func a(x, y)    = sqrt(in(x, y)) * 0.5 + 0.25
func sy(x, y)   = (a(x, y - 1) + 2 * a(x, y) + a(x, y + 1)) / 4
func sx(x, y)   = (sy(x - 1, y) + 2 * sy(x, y) + sy(x + 1, y)) / 4
func col(x)     = sum(j in 0..15 : in(x, j)) / 16
func copy(x, y) = in(x, y)
func out(x, y)  = sx(x, y) * col(x) + copy(x - 1, y) - copy(x + 1, y)
output out
)";

FusionChoice at(const std::string& compute, const std::string& store) {
  return {compute, store, ""};
}
FusionChoice inlined() { return {"inline", "", ""}; }

TEST(FusionAnalysis, Algorithm1OnASmallDag) {
  Pipeline p = compile_pipeline(kDag, "dag.stp");
  LoopOrder order = default_order({"x", "y"});  // (xi, yi, xo, yo)
  auto levels = fusion_levels(p, {512, 256}, order);
  // a: sy reads it at y-1, y, y+1, an overlap of 2 along y: c = yi (not the innermost,
  // not a full reuse), stored one loop out: (yi, xo), a sliding window.
  EXPECT_EQ(levels["a"], at("yi", "xo")) << levels["a"].rule;
  // sy: sx reads it at x-1, x, x+1, overlap along x only: c = xi = min(D_m), so the
  // compute level moves one loop out with the store level: (yi, yi).
  EXPECT_EQ(levels["sy"], at("yi", "yi")) << levels["sy"].rule;
  // sx: out reads it at (x, y) only, zero overlap (W empty): inlined.
  EXPECT_EQ(levels["sx"], inlined()) << levels["sx"].rule;
  // col: out reads col(x) for every y, the same value all along y (full reuse, the
  // paper's reduction rule) and nothing shared along x: c = yi moves out to xo: (xo, xo).
  EXPECT_EQ(levels["col"], at("xo", "xo")) << levels["col"].rule;
  // copy: out reads it at x-1 and x+1, an overlap of 2 along x: the innermost loop, so
  // (yi, yi) for Algorithm 1 ...
  EXPECT_EQ(levels["copy"], at("yi", "yi")) << levels["copy"].rule;

  // ... and Algorithm 2 inlines it: a copy has no arithmetic, one load (trivial). The
  // others keep their levels: a (a sqrt, a multiply and an add for one load), sy and the
  // reduction col are not trivial.
  auto with2 = fusion_levels(p, {512, 256}, order, /*inline_trivial=*/true);
  EXPECT_EQ(with2["copy"], inlined()) << with2["copy"].rule;
  EXPECT_EQ(with2["a"], at("yi", "xo"));
  EXPECT_EQ(with2["sy"], at("yi", "yi"));
  EXPECT_EQ(with2["sx"], inlined());
  EXPECT_EQ(with2["col"], at("xo", "xo"));
}

TEST(FusionAnalysis, Algorithm1DependsOnTheLoopOrder) {
  // Inter-tile loops swapped, (xi, yi, yo, xo): a's store level is the next loop out of
  // yi, now yo; col's compute level passes over yo (col does not depend on y) to xo.
  Pipeline p = compile_pipeline(kDag, "dag.stp");
  LoopOrder order = default_order({"x", "y"});
  std::swap(order.loops[2], order.loops[3]);
  ASSERT_EQ(order.describe(), "xi, yi, yo, xo");
  auto levels = fusion_levels(p, {512, 256}, order);
  EXPECT_EQ(levels["a"], at("yi", "yo")) << levels["a"].rule;
  EXPECT_EQ(levels["col"], at("xo", "xo")) << levels["col"].rule;
}

TEST(FusionAnalysis, Algorithm2GivesATrivialStagesPlaceToItsInlinedProducer) {
  // As in Harris: g is expensive and only read pointwise (by gg, so Algorithm 1 inlines
  // it); gg = g * g is read as a 3-tap stencil along y (Algorithm 1: (yi, xo)) but is
  // trivial (one multiply, two loads). Algorithm 2 inlines gg and computes g where gg
  // was: (yi, xo).
  constexpr const char* kHarrisLike = R"(
pipeline harris_like
input in : f32[x, y]
func g(x, y)   = exp(in(x, y)) + sqrt(in(x, y))
func gg(x, y)  = g(x, y) * g(x, y)
func out(x, y) = gg(x, y - 1) + gg(x, y) + gg(x, y + 1)
output out
)";
  Pipeline p = compile_pipeline(kHarrisLike, "h.stp");
  LoopOrder order = default_order({"x", "y"});
  auto one = fusion_levels(p, {256, 256}, order);
  EXPECT_EQ(one["g"], inlined());
  EXPECT_EQ(one["gg"], at("yi", "xo"));
  auto two = fusion_levels(p, {256, 256}, order, true);
  EXPECT_EQ(two["gg"], inlined()) << two["gg"].rule;
  EXPECT_EQ(two["g"], at("yi", "xo")) << two["g"].rule;
}

// A multiply-add, which the language contracts into fma (LANGUAGE.md, "Contraction"), costs
// a multiply and an add: gg = g * g + g (two ops, three loads) is still trivial.
TEST(FusionAnalysis, AContractedMultiplyAddIsAsCheapAsItsOperations) {
  constexpr const char* kHarrisLike = R"(
pipeline harris_like
input in : f32[x, y]
func g(x, y)   = exp(in(x, y)) + sqrt(in(x, y))
func gg(x, y)  = g(x, y) * g(x, y) + g(x, y)
func out(x, y) = gg(x, y - 1) + gg(x, y) + gg(x, y + 1)
output out
)";
  Pipeline p = compile_pipeline(kHarrisLike, "h.stp");
  ASSERT_EQ(p.find_func("gg")->value.as<Call>()->intrinsic, Intrinsic::Fma);
  auto two = fusion_levels(p, {256, 256}, default_order({"x", "y"}), true);
  EXPECT_EQ(two["gg"], inlined()) << two["gg"].rule;
  EXPECT_EQ(two["g"], at("yi", "xo")) << two["g"].rule;
}

TEST(FusionAnalysis, TheWholeGeneratorOnTheDagPassesTheChecker) {
  Pipeline p = compile_pipeline(kDag, "dag.stp");
  MachineModel m;
  m.cores = 2;
  ReuseModelResult r = reuse_model_schedule(p, m, {512, 256});
  EXPECT_NO_THROW(check_schedule(r.schedule, p)) << print_schedule(r.schedule, p);
  EXPECT_EQ(r.degraded, 0) << r.explanation;
  // The copy is inlined, sx too; a, sy and col are computed inside the output's tiles.
  EXPECT_EQ(r.schedule.find("copy"), nullptr);
  EXPECT_EQ(r.schedule.find("sx"), nullptr);
  for (const char* f : {"a", "sy", "col"}) {
    ASSERT_NE(r.schedule.find(f), nullptr) << f;
    ASSERT_TRUE(r.schedule.find(f)->compute.has_value()) << f;
    EXPECT_EQ(r.schedule.find(f)->compute->kind, LevelKind::At) << f;
  }
}

}  // namespace
}  // namespace stipple::search::reuse
