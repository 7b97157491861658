// Whole pipelines through the evaluator, each compared with a straightforward C++ loop
// written here: blurs under every boundary condition, a separable blur through an
// intermediate func, a histogram (data-dependent scatter), a causal scan, regions, the
// boxes bounds inference chooses, and the user errors for bad inputs, params and bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "compiler_core/ir/error.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;
using ::testing::HasSubstr;

Expr in_w(const std::string& in = "in") { return InputExtent::make(in, 0); }
Expr in_h(const std::string& in = "in") { return InputExtent::make(in, 1); }

// Independent boundary handling for the references: reflection by repeated folding.
int64_t ref_mirror(int64_t c, int64_t w) {
  if (w == 1) return 0;
  while (c < 0 || c >= w) {
    if (c < 0) c = -c;
    if (c >= w) c = 2 * (w - 1) - c;
  }
  return c;
}

double ref_read(const Buffer& in, BoundaryKind k, double constant, int64_t x, int64_t y) {
  int64_t w = in.extent(0), h = in.extent(1);
  if (k == BoundaryKind::Constant && (x < 0 || x >= w || y < 0 || y >= h)) return constant;
  if (k == BoundaryKind::Mirror) {
    x = ref_mirror(x, w);
    y = ref_mirror(y, h);
  } else {
    x = std::clamp<int64_t>(x, 0, w - 1);
    y = std::clamp<int64_t>(y, 0, h - 1);
  }
  int64_t c[2] = {x, y};
  return in.get(c);
}

// 3x3 box blur in f32: the sum of nine reads (in the order dx fastest) divided by 9.
class BoxBlur : public ::testing::TestWithParam<BoundaryKind> {};

TEST_P(BoxBlur, MatchesAHandLoop) {
  BoundaryKind kind = GetParam();
  const double constant = 0.25;
  Buffer in = random_buffer(ScalarType::Float32, {13, 7}, 0, 1, 7);
  Expr read = input(Float32(), "in", {var("x") + rvar("i"), var("y") + rvar("j")});
  Expr value = reduce(ReduceOp::Sum, {rv("i", -1, 1), rv("j", -1, 1)}, read) / f32(9);
  Pipeline p = make_pipeline({make_input("in", Float32(), {"x", "y"}, kind, constant)},
                             {make_func("blur", {"x", "y"}, value)}, "blur", {in_w(), in_h()});
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  ASSERT_EQ(out.dimensions(), 2);
  ASSERT_EQ(out.extent(0), 13);
  ASSERT_EQ(out.extent(1), 7);
  for (int64_t y = 0; y < 7; ++y) {
    for (int64_t x = 0; x < 13; ++x) {
      float sum = 0;
      for (int j = -1; j <= 1; ++j) {
        for (int i = -1; i <= 1; ++i) {
          sum += static_cast<float>(ref_read(in, kind, constant, x + i, y + j));
        }
      }
      int64_t c[2] = {x, y};
      ASSERT_EQ(out.get(c), static_cast<double>(sum / 9.0f)) << "at " << x << ", " << y;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllBoundaries, BoxBlur,
                         ::testing::Values(BoundaryKind::Clamp, BoundaryKind::Mirror,
                                           BoundaryKind::Constant));

TEST(InterpBoundary, MirrorFarOutAndOfExtentOne) {
  // out(x) = in(x) for x far outside, against the folding reference.
  Buffer in = random_buffer(ScalarType::UInt8, {5, 1}, 0, 255, 3);
  Pipeline p = make_pipeline(
      {make_input("in", UInt8(), {"x", "y"}, BoundaryKind::Mirror)},
      {make_func("out", {"x", "y"}, input(UInt8(), "in", {var("x") - i32(20), var("y") - i32(3)}))},
      "out", {i32(40), i32(7)});
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  for (int64_t y = 0; y < 7; ++y) {
    for (int64_t x = 0; x < 40; ++x) {
      int64_t c[2] = {x, y}, src[2] = {ref_mirror(x - 20, 5), 0};
      ASSERT_EQ(out.get(c), in.get(src)) << x << ", " << y;
    }
  }
  EXPECT_EQ(ref_mirror(-1, 5), 1);
  EXPECT_EQ(ref_mirror(5, 5), 3);
}

TEST(InterpBoundary, ConstantIsConvertedToTheInputType) {
  Buffer in = zeros(ScalarType::UInt8, {2});
  Pipeline p = make_pipeline({make_input("in", UInt8(), {"x"}, BoundaryKind::Constant, 300.5)},
                             {make_func("out", {"x"}, input(UInt8(), "in", {var("x") - i32(2)}))},
                             "out", {i32(4)});
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  EXPECT_EQ(out.get_flat(0), 255);  // saturated
  EXPECT_EQ(out.get_flat(2), 0);
}

// Two-stage separable blur: A blurs x over taps -r..r, out blurs A along y.
TEST(InterpPipeline, SeparableBlurThroughAnIntermediateFunc) {
  const int r = 3, w = 11, h = 9, ch = 3;
  Buffer in = random_buffer(ScalarType::Float32, {w, h, ch}, 0, 1, 11);
  auto k = [](Expr i) { return f32(1) / (f32(1) + cast(Float32(), i * i)); };
  Expr a =
      reduce(ReduceOp::Sum, {rv("i", -r, r)},
             k(rvar("i")) * input(Float32(), "in", {var("x") - rvar("i"), var("y"), var("c")}));
  Expr o = reduce(ReduceOp::Sum, {rv("i", -r, r)},
                  k(rvar("i")) * call(Float32(), "A", {var("x"), var("y") - rvar("i"), var("c")}));
  Pipeline p =
      make_pipeline({make_input("in", Float32(), {"x", "y", "c"})},
                    {make_func("out", {"x", "y", "c"}, o), make_func("A", {"x", "y", "c"}, a)},
                    "out", {in_w(), in_h(), InputExtent::make("in", 2)});
  Buffer out = evaluate_pipeline(p, {{"in", in}});

  auto kf = [](int i) { return 1.0f / (1.0f + static_cast<float>(i * i)); };
  auto at = [&](int x, int y, int c) {
    int64_t p3[3] = {std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1), c};
    return static_cast<float>(in.get(p3));
  };
  auto A = [&](int x, int y, int c) {
    float s = 0;
    for (int i = -r; i <= r; ++i) s += kf(i) * at(x - i, y, c);
    return s;
  };
  for (int c = 0; c < ch; ++c) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        float s = 0;
        for (int i = -r; i <= r; ++i) s += kf(i) * A(x, y - i, c);
        int64_t p3[3] = {x, y, c};
        ASSERT_EQ(out.get(p3), static_cast<double>(s)) << x << " " << y << " " << c;
      }
    }
  }
  // A is realised over exactly the rows out reads: y - 3 .. y + 3.
  auto boxes = infer_func_boxes(p, {{"in", in}}, {}, {0, 0, 0}, {w, h, ch});
  EXPECT_EQ(boxes.at("A"), (FuncBox{{0, -r, 0}, {w - 1, h - 1 + r, ch - 1}}));
  EXPECT_EQ(boxes.at("out"), (FuncBox{{0, 0, 0}, {w - 1, h - 1, ch - 1}}));
}

TEST(InterpPipeline, HistogramScatterWithADataDependentIndex) {
  const int w = 37, h = 23;
  Buffer in = random_buffer(ScalarType::UInt8, {w, h}, 0, 40, 5);
  // hist(b) = 0; hist(i32(in(rx, ry))) += 1 for rx, ry over the image; out(b) = hist(b).
  UpdateDef u;
  Expr bin = cast(Int32(), input(UInt8(), "in", {rvar("rx"), rvar("ry")}));
  u.args = {bin};
  u.value = call(Int32(), "hist", {bin}) + i32(1);
  u.domain = {{"rx", i32(0), in_w() - i32(1)}, {"ry", i32(0), in_h() - i32(1)}};
  Func hist = make_func("hist", {"b"}, i32(0), {u});
  Func out = make_func("out", {"b"}, call(Int32(), "hist", {var("b")}));
  Pipeline p =
      make_pipeline({make_input("in", UInt8(), {"x", "y"})}, {out, hist}, "out", {i32(32)});
  Buffer result = evaluate_pipeline(p, {{"in", in}});
  std::vector<int> ref(256, 0);
  for (int64_t i = 0; i < in.element_count(); ++i) ref[static_cast<int>(in.get_flat(i))]++;
  ASSERT_EQ(result.extent(0), 32);
  for (int b = 0; b < 32; ++b) EXPECT_EQ(result.get_flat(b), ref[b]) << "bin " << b;
  // The histogram is realised over every bin a u8 can select, and what out reads.
  auto boxes = infer_func_boxes(p, {{"in", in}}, {}, {0}, {32});
  EXPECT_EQ(boxes.at("hist"), (FuncBox{{0}, {255}}));
}

TEST(InterpPipeline, CausalScanUsesTheUpdatedValues) {
  const int w = 17, h = 5;
  Buffer in = random_buffer(ScalarType::Float32, {w, h}, -1, 1, 9);
  // f(x, y) = in(x, y); f(x, y) = f(x, y) + 0.5 * f(x - 1, y) for x in 1..w-1.
  UpdateDef u;
  u.args = {rvar("x"), var("y")};
  u.value = call(Float32(), "f", {rvar("x"), var("y")}) +
            f32(0.5) * call(Float32(), "f", {rvar("x") - i32(1), var("y")});
  u.domain = {{"x", i32(1), in_w() - i32(1)}};
  Func f = make_func("f", {"x", "y"}, input(Float32(), "in", {var("x"), var("y")}), {u});
  Pipeline p = make_pipeline({make_input("in", Float32(), {"x", "y"})}, {f}, "f", {in_w(), in_h()});
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  for (int y = 0; y < h; ++y) {
    std::vector<float> row(w);
    for (int x = 0; x < w; ++x) {
      int64_t c[2] = {x, y};
      row[x] = static_cast<float>(in.get(c));
    }
    for (int x = 1; x < w; ++x) row[x] = row[x] + 0.5f * row[x - 1];
    for (int x = 0; x < w; ++x) {
      int64_t c[2] = {x, y};
      ASSERT_EQ(out.get(c), static_cast<double>(row[x])) << x << ", " << y;
    }
  }
}

TEST(InterpPipeline, PureUpdateAppliesAtEveryPoint) {
  UpdateDef u;
  u.args = {var("x")};
  u.value = call(Int32(), "f", {var("x")}) * i32(3);
  Func f = make_func("f", {"x"}, var("x") + i32(1), {u});
  Pipeline p = make_pipeline({}, {f}, "f", {i32(6)});
  Buffer out = evaluate_pipeline(p, {});
  for (int x = 0; x < 6; ++x) EXPECT_EQ(out.get_flat(x), (x + 1) * 3);
}

TEST(InterpPipeline, RegionsAgreeWithTheFullOutput) {
  Buffer in = random_buffer(ScalarType::Float32, {20, 15}, 0, 1, 21);
  Expr g = input(Float32(), "in", {var("x") * i32(2) - i32(3), var("y") + i32(1)});
  Expr o = call(Float32(), "g", {var("x") - i32(1), var("y")}) +
           call(Float32(), "g", {var("x") + i32(2), var("y") - i32(2)});
  Pipeline p = make_pipeline({make_input("in", Float32(), {"x", "y"}, BoundaryKind::Mirror)},
                             {make_func("out", {"x", "y"}, o), make_func("g", {"x", "y"}, g)},
                             "out", {in_w(), in_h()});
  Buffer full = evaluate_pipeline(p, {{"in", in}});
  Buffer part = evaluate_pipeline_region(p, {{"in", in}}, {}, {-4, 3}, {9, 6});
  ASSERT_EQ(part.min(0), -4);
  ASSERT_EQ(part.min(1), 3);
  for (int64_t y = 3; y < 9; ++y) {
    for (int64_t x = -4; x < 5; ++x) {
      int64_t c[2] = {x, y};
      if (x >= 0) {
        ASSERT_EQ(part.get(c), full.get(c));
      }
    }
  }
  auto boxes = infer_func_boxes(p, {{"in", in}}, {}, {-4, 3}, {9, 6});
  EXPECT_EQ(boxes.at("g"), (FuncBox{{-5, 1}, {6, 8}}));
  EXPECT_THROW(evaluate_pipeline_region(p, {{"in", in}}, {}, {0}, {4}), UserError);
  EXPECT_THROW(evaluate_pipeline_region(p, {{"in", in}}, {}, {0, 0}, {4, 0}), UserError);
}

TEST(InterpBounds, ConsumerWindowWidensTheProducerBox) {
  // f is read at x-2..x+2 (and y via a clamp to [0, 3]) by out over [0, 9] x [0, 4].
  Expr fx = cast(Float32(), var("x") * var("y"));
  Expr o = reduce(ReduceOp::Sum, {rv("i", -2, 2)},
                  call(Float32(), "f", {var("x") + rvar("i"), clamp(var("y"), i32(0), i32(3))}));
  Pipeline p = make_pipeline({}, {make_func("out", {"x", "y"}, o), make_func("f", {"x", "y"}, fx)},
                             "out", {i32(10), i32(5)});
  auto boxes = infer_func_boxes(p, {}, {}, {0, 0}, {10, 5});
  EXPECT_EQ(boxes.at("f"), (FuncBox{{-2, 0}, {11, 3}}));
  Buffer out = evaluate_pipeline(p, {});
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 10; ++x) {
      float s = 0;
      for (int i = -2; i <= 2; ++i) s += static_cast<float>((x + i) * std::min(y, 3));
      int64_t c[2] = {x, y};
      ASSERT_EQ(out.get(c), static_cast<double>(s));
    }
  }
}

TEST(InterpBounds, DivisionModAndSelectBounds) {
  // out(x) = f(x / 2) + f(x % 3 - 5) + f(select(x < 3, x, 20)) over x in [0, 9].
  Expr o = call(Int32(), "f", {var("x") / i32(2)}) +
           call(Int32(), "f", {var("x") % i32(3) - i32(5)}) +
           call(Int32(), "f", {select(var("x") < i32(3), var("x"), i32(20))});
  Pipeline p = make_pipeline({}, {make_func("out", {"x"}, o), make_func("f", {"x"}, var("x"))},
                             "out", {i32(10)});
  auto boxes = infer_func_boxes(p, {}, {}, {0}, {10});
  EXPECT_EQ(boxes.at("f"), (FuncBox{{-5}, {20}}));
  Buffer out = evaluate_pipeline(p, {});
  for (int x = 0; x < 10; ++x) {
    EXPECT_EQ(out.get_flat(x), x / 2 + (x % 3 - 5) + (x < 3 ? x : 20));
  }
}

TEST(InterpBounds, ClampedDataDependentIndexIsBounded) {
  Buffer in = random_buffer(ScalarType::Float32, {8}, -10, 10, 4);
  Expr idx = clamp(cast(Int32(), input(Float32(), "in", {var("x")}) * f32(3)), i32(-4), i32(6));
  Pipeline p = make_pipeline({make_input("in", Float32(), {"x"})},
                             {make_func("out", {"x"}, call(Int32(), "lut", {idx})),
                              make_func("lut", {"i"}, var("i") * var("i"))},
                             "out", {in_w()});
  auto boxes = infer_func_boxes(p, {{"in", in}}, {}, {0}, {8});
  EXPECT_EQ(boxes.at("lut"), (FuncBox{{-4}, {6}}));
  Buffer out = evaluate_pipeline(p, {{"in", in}});
  for (int x = 0; x < 8; ++x) {
    int i = std::clamp(static_cast<int>(static_cast<float>(in.get_flat(x)) * 3.0f), -4, 6);
    EXPECT_EQ(out.get_flat(x), i * i);
  }
}

TEST(InterpBounds, UnboundedDataDependentIndexIsAUserError) {
  Buffer in = random_buffer(ScalarType::Float32, {8}, 0, 1, 4);
  Expr idx = cast(Int32(), input(Float32(), "in", {var("x")}) * f32(255));
  Pipeline p = make_pipeline({make_input("in", Float32(), {"x"})},
                             {make_func("out", {"x"}, call(Float32(), "lut", {var("x"), idx})),
                              make_func("lut", {"i", "j"}, cast(Float32(), var("i")))},
                             "out", {in_w()});
  try {
    evaluate_pipeline(p, {{"in", in}});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot infer the bounds of func 'lut' (dimension 1): its index at a call in 'out' "
              "is unbounded; clamp the index");
  }
  // An i32 func's value is unbounded too.
  Pipeline q =
      make_pipeline({},
                    {make_func("out", {"x"}, call(Int32(), "g", {call(Int32(), "h", {var("x")})})),
                     make_func("g", {"x"}, var("x")), make_func("h", {"x"}, var("x"))},
                    "out", {i32(4)});
  EXPECT_THROW(evaluate_pipeline(q, {}), UserError);
}

TEST(InterpBounds, TooLargeABoxIsAUserError) {
  // Each index is bounded, but together they ask for 2^20 * 2^12 points.
  Expr o = call(Int32(), "f", {var("x") * i32(1 << 20), var("y") * i32(1 << 12)});
  Pipeline p = make_pipeline(
      {}, {make_func("out", {"x", "y"}, o), make_func("f", {"x", "y"}, var("x") + var("y"))}, "out",
      {i32(2), i32(2)});
  try {
    evaluate_pipeline(p, {});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("cannot infer the bounds of func 'f'"));
  }
}

TEST(InterpBounds, FuncOnlyCalledInAnEmptyReductionIsNotRealised) {
  Expr o = var("x") + reduce(ReduceOp::Sum, {rv("i", 1, 0)}, call(Int32(), "g", {rvar("i")}));
  Pipeline p = make_pipeline({}, {make_func("out", {"x"}, o), make_func("g", {"i"}, var("i"))},
                             "out", {i32(3)});
  auto boxes = infer_func_boxes(p, {}, {}, {0}, {3});
  EXPECT_EQ(boxes.count("g"), 0u);
  Buffer out = evaluate_pipeline(p, {});
  for (int x = 0; x < 3; ++x) EXPECT_EQ(out.get_flat(x), x);
}

TEST(InterpErrors, ACycleBetweenFuncsIsAnInternalError) {
  // The checker rejects cycles; the evaluator must still fail cleanly, not recurse.
  Pipeline p = make_pipeline({},
                             {make_func("out", {"x"}, call(Int32(), "a", {var("x")})),
                              make_func("a", {"x"}, call(Int32(), "b", {var("x")})),
                              make_func("b", {"x"}, call(Int32(), "a", {var("x")}))},
                             "out", {i32(3)});
  EXPECT_THROW(evaluate_pipeline(p, {}), InternalError);
}

TEST(InterpErrors, InputsAndParamsAreValidated) {
  Pipeline p =
      make_pipeline({make_input("in", Float32(), {"x", "y"})},
                    {make_func("out", {"x", "y"}, input(Float32(), "in", {var("x"), var("y")}))},
                    "out", {in_w(), in_h()}, {{"k", Int32(), 2}});
  auto message = [&](const InputImages& inputs, const ParamValues& params) -> std::string {
    try {
      evaluate_pipeline(p, inputs, params);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  Buffer good = random_buffer(ScalarType::Float32, {4, 3}, 0, 1, 1);
  EXPECT_EQ(message({{"in", good}}, {}), "no error");
  EXPECT_EQ(message({}, {}), "missing input image 'in'");
  EXPECT_THAT(message({{"in", zeros(ScalarType::UInt8, {4, 3})}}, {}),
              HasSubstr("input image 'in' has element type u8 but the pipeline declares f32"));
  EXPECT_THAT(message({{"in", zeros(ScalarType::Float32, {4, 3, 3})}}, {}),
              HasSubstr("has 3 dimensions but the pipeline declares 2"));
  EXPECT_THAT(message({{"in", zeros(ScalarType::Float32, {4, 0})}}, {}),
              HasSubstr("empty dimension 1"));
  EXPECT_EQ(message({{"in", good}}, {{"sigma", 1.0}}), "unknown param 'sigma'");
  EXPECT_EQ(message({{"in", good}}, {{"k", 7}}), "no error");

  Pipeline empty_out = make_pipeline({}, {make_func("out", {"x"}, var("x"))}, "out", {i32(0)});
  EXPECT_THROW(evaluate_pipeline(empty_out, {}), UserError);
}

}  // namespace
}  // namespace stipple
