// Schedule Synthesis through Reuse Analysis §3, the worked example: the 3x3 blur (blur_x then
// blur_y, Figure 1). Algorithm 1 picks (yi, xo) for blur_x in the loop order (xi, yi, xo,
// yo), and the model's buffer sizes, computed points and load costs are the paper's
// equations 1-13 for several tile sizes, value for value.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/language/frontend.h"
#include "search/reuse/cost_model.h"
#include "search/reuse/fusion_analysis.h"
#include "search/reuse/loop_order.h"
#include "search/reuse/pipeline_analysis.h"
#include "search/reuse/region_model.h"

namespace stipple::search::reuse {
namespace {

// Figure 1 (b), with the input called `in`.
constexpr const char* kBlur = R"(
pipeline blur
input in : f32[x, y]
func blur_x(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3
func blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3
output blur_y
)";

// B_x = B_y = 1024 as in Figure 1; tile sizes that divide them (footnote 1).
constexpr int64_t kB = 1024;

struct Blur {
  Blur() : p(compile_pipeline(kBlur, "blur.stp")), a(p, {kB, kB}) {
    blur_x = a.find("blur_x");
    in = a.find("in");
    std::vector<bool> group(a.nodes().size(), false);
    group[blur_x] = true;
    model.emplace(a, a.output(), group, std::vector<int64_t>{kB, kB});
  }

  // A cost context for `order`, tile (tx, ty) and blur_x at (compute, store), one core.
  CostContext context(const LoopOrder& order, int64_t tx, int64_t ty, int compute, int store) {
    levels.clear();
    FusionLevel l;
    l.compute = compute;
    l.store = store;
    levels[blur_x] = l;
    ops.assign(a.nodes().size(), 1.0);
    CostContext c;
    c.model = &*model;
    c.order = &order;
    c.tile = Tile{{tx, ty}};
    c.levels = &levels;
    c.ops = &ops;
    return c;
  }

  Pipeline p;
  PipelineAnalysis a;
  int blur_x = -1, in = -1;
  std::optional<RegionModel> model;
  FusionLevels levels;
  std::vector<double> ops;
};

const std::vector<std::pair<int64_t, int64_t>> kTiles = {{256, 32}, {64, 8}, {128, 16}, {512, 4}};

TEST(PaperExample, Algorithm1ChoosesYiXoForBlurX) {
  Pipeline p = compile_pipeline(kBlur, "blur.stp");
  LoopOrder order = default_order({"x", "y"});
  ASSERT_EQ(order.describe(), "xi, yi, xo, yo");
  auto levels = fusion_levels(p, {kB, kB}, order);
  ASSERT_TRUE(levels.count("blur_x"));
  EXPECT_EQ(levels["blur_x"].compute, "yi") << levels["blur_x"].rule;
  EXPECT_EQ(levels["blur_x"].store, "xo") << levels["blur_x"].rule;
  // The overlap behind it: blur_y reuses 2 rows of blur_x from one y to the next, and
  // nothing along x.
  PipelineAnalysis a(p, {kB, kB});
  const std::vector<Reuse>& w = a.reuse(a.find("blur_x"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(a.node(w[0].consumer).name, "blur_y");
  EXPECT_EQ(a.node(w[0].consumer).dims[w[0].var], "y");
  EXPECT_FALSE(w[0].full);
  EXPECT_EQ(w[0].amount, (std::vector<double>{-1, 2}));
}

TEST(PaperExample, BufferSizesAreEquations8To11) {
  Blur b;
  LoopOrder order = default_order({"x", "y"});  // xi 0, yi 1, xo 2, yo 3
  const int yi = 1, xo = 2, yo = 3, root = 4;
  for (auto [tx, ty] : kTiles) {
    SCOPED_TRACE(std::to_string(tx) + " x " + std::to_string(ty));
    // (xo, xo), overlapping tiles: equation 8 (= 1) for blur_x, equation 10 (= 7) for the
    // input it reads.
    CostContext c = b.context(order, tx, ty, xo, xo);
    EXPECT_EQ(buffer_elements(c, b.blur_x, xo, xo), double(tx * (ty + 2)));
    EXPECT_EQ(footprint_elements(c, b.blur_x, b.in, xo, xo), double((tx + 2) * (ty + 2)));
    EXPECT_FALSE(slides(c, b.blur_x, xo, xo));
    // (yi, xo), a sliding window stored per tile: folded to 3 rows, equations 9 and 11.
    c = b.context(order, tx, ty, yi, xo);
    EXPECT_TRUE(slides(c, b.blur_x, yi, xo));
    EXPECT_TRUE(folded(c, b.blur_x, yi, xo));
    EXPECT_EQ(buffer_elements(c, b.blur_x, yi, xo), double(3 * tx));
    EXPECT_EQ(footprint_elements(c, b.blur_x, b.in, yi, xo), double(3 * (tx + 2)));
    // (yi, yi): the same three rows, recomputed every row (the schedule (yi, xo)
    // dominates: the same buffer with more reuse, §3).
    c = b.context(order, tx, ty, yi, yi);
    EXPECT_EQ(buffer_elements(c, b.blur_x, yi, yi), double(3 * tx));
    // (xo, yo): a window sliding along x over a row of tiles, folded to one tile.
    c = b.context(order, tx, ty, xo, yo);
    EXPECT_EQ(buffer_elements(c, b.blur_x, xo, yo), double(tx * (ty + 2)));
    // (root, root), Figure 2 (a): blurx[By + 2][Bx].
    c = b.context(order, tx, ty, root, root);
    EXPECT_EQ(buffer_elements(c, b.blur_x, root, root), double(kB * (kB + 2)));
  }
}

TEST(PaperExample, MaximumFoldingIsEquation12) {
  // Loops (yi, xi, yo, xo), innermost first: blur_x computed at yi and stored at xi
  // folds to the overlap along y plus one: 3 values.
  Blur b;
  LoopOrder order = default_order({"x", "y"});
  order.loops = {order.loops[1], order.loops[0], order.loops[3], order.loops[2]};
  ASSERT_EQ(order.describe(), "yi, xi, yo, xo");
  for (auto [tx, ty] : kTiles) {
    CostContext c = b.context(order, tx, ty, 0, 1);
    EXPECT_EQ(buffer_elements(c, b.blur_x, 0, 1), 3.0);
  }
}

TEST(PaperExample, ComputeAndLoadCostsAreEquations3To6And13) {
  Blur b;
  LoopOrder order = default_order({"x", "y"});
  const int yi = 1, xo = 2;
  for (auto [tx, ty] : kTiles) {
    SCOPED_TRACE(std::to_string(tx) + " x " + std::to_string(ty));
    const double tiles = double(kB / tx) * double(kB / ty);
    CostContext c = b.context(order, tx, ty, xo, xo);
    // Equation 3: T_x (T_y + 2) B_x/T_x B_y/T_y; equation 4: B_x (B_y + 2).
    EXPECT_EQ(compute_points(c, b.blur_x), double(tx * (ty + 2)) * tiles);
    EXPECT_EQ(root_points(c, b.blur_x), double(kB * (kB + 2)));
    // Equation 6: with a streaming prefetcher each of the T_y + 2 input rows of a tile
    // costs one load: (T_y + 2) B_x/T_x B_y/T_y.
    EXPECT_EQ(load_cost(c, b.blur_x), double(ty + 2) * tiles);
    // (yi, xo): "all of the other costs will be the same as in schedule 2(b)".
    CostContext s = b.context(order, tx, ty, yi, xo);
    EXPECT_EQ(compute_points(s, b.blur_x), compute_points(c, b.blur_x));
    EXPECT_EQ(load_cost(s, b.blur_x), load_cost(c, b.blur_x));
    // Equation 2's recomputation is the difference: 2 B_x B_y / T_y - 2 B_x.
    EXPECT_EQ(compute_points(c, b.blur_x) - root_points(c, b.blur_x),
              2.0 * kB * kB / double(ty) - 2.0 * kB);
  }
  // Equation 13: loops (yi, xi, yo, xo), blur_x at (yi, xi): the input is read three
  // values at a time down a column, so no line is streamed: 3 (T_y + 2) B_x B_y / T_y.
  LoopOrder column = order;
  column.loops = {order.loops[1], order.loops[0], order.loops[3], order.loops[2]};
  for (auto [tx, ty] : kTiles) {
    CostContext c = b.context(column, tx, ty, 0, 1);
    EXPECT_EQ(load_cost(c, b.blur_x), 3.0 * double(ty + 2) * double(kB) * double(kB / ty));
  }
}

TEST(PaperExample, InputFootprintIsEquation5WithoutPrefetching) {
  // Equation 5 counts every element, (T_x + 2)(T_y + 2) per tile: the footprint the
  // (xo, xo) tile reads, B_input of equation 7.
  Blur b;
  LoopOrder order = default_order({"x", "y"});
  for (auto [tx, ty] : kTiles) {
    CostContext c = b.context(order, tx, ty, 2, 2);
    const double tiles = double(kB / tx) * double(kB / ty);
    EXPECT_EQ(footprint_elements(c, b.blur_x, b.in, 2, 2) * tiles,
              double((tx + 2) * (ty + 2)) * tiles);
  }
}

}  // namespace
}  // namespace stipple::search::reuse
