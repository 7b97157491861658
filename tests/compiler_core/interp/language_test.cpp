// The evaluator on small programs written in the .stp language (parsed by
// stipple_language), checked against hand loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

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

TEST(InterpLanguage, LetValuesNamedLiteralsAndLetIndices) {
  Pipeline p = compile_pipeline(R"(
pipeline lets
input in : f32[x, y]
input d : f64[x, y]
func g(x, y) = in(x, y) * 3.0
func out(x, y, c) = select(c == 0, let t = in(x, y) * 2.0 in t * t + t,
                    select(c == 1, f32(let w = 0.25 in d(x, y) * w + w),
                    let i = x - 1 in g(i, y) + g(clamp(i + 2, 0, 6), y)))
output out size(7, 3, 3)
)",
                                "lets.stp");
  Buffer in = random_buffer(ScalarType::Float32, {7, 3}, -2, 2, 21);
  Buffer d = random_buffer(ScalarType::Float64, {7, 3}, -2, 2, 22);
  Buffer out = evaluate_pipeline(p, {{"in", in}, {"d", d}});
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 7; ++x) {
      auto at = [](const Buffer& b, int x, int y) {
        int64_t c[2] = {std::clamp(x, 0, 6), y};
        return b.get(c);
      };
      float t = static_cast<float>(at(in, x, y)) * 2.0f;
      // The named literal 0.25 is an f64 beside d, as the literal itself would be.
      double w = at(d, x, y) * 0.25 + 0.25;
      float g0 = static_cast<float>(at(in, x - 1, y)) * 3.0f;
      float g1 = static_cast<float>(at(in, std::clamp(x + 1, 0, 6), y)) * 3.0f;
      int64_t c0[3] = {x, y, 0}, c1[3] = {x, y, 1}, c2[3] = {x, y, 2};
      // t * t + t is contracted (LANGUAGE.md): one rounding.
      ASSERT_EQ(out.get(c0), static_cast<double>(std::fma(t, t, t))) << x << ", " << y;
      ASSERT_EQ(out.get(c1), static_cast<double>(static_cast<float>(w))) << x << ", " << y;
      ASSERT_EQ(out.get(c2), static_cast<double>(g0 + g1)) << x << ", " << y;
    }
  }
}

// Each new intrinsic against the C library (and std::fma) called here, in f32 and f64.
TEST(InterpLanguage, NewIntrinsicsAreTheCLibrarysFunctions) {
  const char* ops[] = {"tan(A)", "atan2(A, B)", "hypot(A, B)", "tanh(A)", "fma(A, B, C)"};
  auto reference = [](int op, auto a, auto b, auto c) -> decltype(a) {
    switch (op) {
      case 0: return std::tan(a);
      case 1: return std::atan2(a, b);
      case 2: return std::hypot(a, b);
      case 3: return std::tanh(a);
      default: return std::fma(a, b, c);
    }
  };
  Buffer a = random_buffer(ScalarType::Float32, {11, 2}, -20, 20, 31);
  Buffer b = random_buffer(ScalarType::Float32, {11, 2}, -20, 20, 32);
  Buffer c = random_buffer(ScalarType::Float32, {11, 2}, -20, 20, 33);
  for (int op = 0; op < 5; ++op) {
    for (bool f64 : {false, true}) {
      std::string body = ops[op];
      for (const char* name : {"A", "B", "C"}) {
        std::string read = std::string(1, static_cast<char>(name[0] + 'a' - 'A')) + "(x, y)";
        if (f64) read = "f64(" + read + ")";
        for (size_t at = body.find(name); at != std::string::npos; at = body.find(name))
          body.replace(at, 1, read);
      }
      Pipeline p = compile_pipeline(
          "pipeline p\ninput a : f32[x, y]\ninput b : f32[x, y]\ninput c : f32[x, y]\n"
          "func out(x, y) = " +
              body + "\noutput out\n",
          "ops.stp");
      ASSERT_EQ(p.funcs[0].type, f64 ? Float64() : Float32()) << body;
      Buffer out = evaluate_pipeline(p, {{"a", a}, {"b", b}, {"c", c}});
      for (int64_t i = 0; i < out.element_count(); ++i) {
        double want =
            f64 ? reference(op, a.get_flat(i), b.get_flat(i), c.get_flat(i))
                : reference(op, static_cast<float>(a.get_flat(i)),
                            static_cast<float>(b.get_flat(i)), static_cast<float>(c.get_flat(i)));
        ASSERT_EQ(out.get_flat(i), want) << body << " at " << i;
      }
    }
  }
}

// fma rounds once: (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24 exactly, where the product
// rounded to f32 first gives 0; in f64, (1 + 2^-27)^2 - (1 + 2^-26) is 2^-54.
TEST(InterpLanguage, FmaRoundsOnce) {
  Pipeline p = compile_pipeline(R"(
pipeline fused
input in : f32[x]
func out(x) = select(x == 0, f64(fma(in(x), in(x), f32(-1.0 - 0.00048828125))),
                     fma(f64(1.0) + f64(in(x)), f64(1.0) + f64(in(x)), f64(-1.0 - 1.490116119384765625e-08)))
output out
)",
                                "fma.stp");
  Buffer in(ScalarType::Float32, {2});
  in.set_flat(0, 1.0 + std::ldexp(1.0, -12));
  in.set_flat(1, std::ldexp(1.0, -27));
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  EXPECT_EQ(out.get_flat(0), std::ldexp(1.0, -24));
  EXPECT_EQ(out.get_flat(1), std::ldexp(1.0, -54));
  // The unfused computation really does give 0 (so the test tells the two apart).
  volatile float a = 1.0f + std::ldexp(1.0f, -12);
  volatile float product = a * a;
  EXPECT_EQ(product - (1.0f + std::ldexp(1.0f, -11)), 0.0f);
}

}  // namespace
}  // namespace stipple
