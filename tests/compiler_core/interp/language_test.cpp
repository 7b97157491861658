// The evaluator on small programs written in the .stp language (parsed by
// stipple_language), checked against hand loops.
#include <gtest/gtest.h>

#include "compiler_core/language/frontend.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;

TEST(InterpLanguage, BlurWithAReductionMatchesAHandLoop) {
  Pipeline p = compile_pipeline(R"(
pipeline blur
input in : f32[x, y] mirror
param h : i32 = 2
func out(x, y) = sum(i in -h..h : in(x + i, y) * 0.5) / f32(2 * h + 1)
output out
)",
                                "blur.stp");
  Buffer in = random_buffer(ScalarType::Float32, {9, 4}, 0, 1, 3);
  Buffer out = evaluate_pipeline(p, {{"in", in}}, {{"h", 3}});
  auto mirror = [](int c, int w) {
    while (c < 0 || c >= w) c = c < 0 ? -c : 2 * (w - 1) - c;
    return c;
  };
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 9; ++x) {
      float s = 0;
      for (int i = -3; i <= 3; ++i) {
        int64_t c[2] = {mirror(x + i, 9), y};
        s += static_cast<float>(in.get(c)) * 0.5f;
      }
      int64_t c[2] = {x, y};
      ASSERT_EQ(out.get(c), static_cast<double>(s / 7.0f)) << x << ", " << y;
    }
  }
}

TEST(InterpLanguage, HistogramUpdateFromText) {
  Pipeline p = compile_pipeline(R"(
pipeline hist
input in : u8[x, y]
func hist(b) = 0
hist(i32(in(x, y))) += 1 for x in in, y in in
output hist size(256)
)",
                                "hist.stp");
  Buffer in = random_buffer(ScalarType::UInt8, {31, 17}, 0, 256, 8);
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  std::vector<int> ref(256, 0);
  for (int64_t i = 0; i < in.element_count(); ++i) ref[static_cast<int>(in.get_flat(i))]++;
  ASSERT_EQ(out.extent(0), 256);
  for (int b = 0; b < 256; ++b) ASSERT_EQ(out.get_flat(b), ref[b]) << b;
}

// The design's own scatter: the bin index i32(in * 10) has no bounds the checker or
// bounds inference can see, so the grid is realised over what its consumer reads
// (bins 0..4 here) and stores to other bins are skipped. Checked against a hand loop.
TEST(InterpLanguage, UnboundedScatterStoresOnlyWhereTheGridIsRead) {
  Pipeline p = compile_pipeline(R"(
pipeline grid
input in : f32[x, y]
func grid(x, y, z) = 0.0
grid(x/4, y/4, i32(in(x, y) * 10)) += in(x, y) for x in in, y in in
func out(x, y) = sum(z in 0..4 : grid(x / 4, y / 4, z))
output out
)",
                                "grid.stp");
  Buffer in = random_buffer(ScalarType::Float32, {8, 8}, 0, 1, 11);
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  // Cell (cx, cy) sums the pixels of its 4x4 block whose bin i32(v * 10) is in 0..4,
  // in the update's order (x innermost).
  float cell[2][2] = {};
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      int64_t c[2] = {x, y};
      float v = static_cast<float>(in.get(c));
      int bin = static_cast<int>(v * 10.0f);
      if (bin <= 4) cell[y / 4][x / 4] += v;
    }
  }
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      int64_t c[2] = {x, y};
      EXPECT_NEAR(out.get(c), cell[y / 4][x / 4], 1e-6) << x << ", " << y;
    }
  }
}

}  // namespace
}  // namespace stipple
