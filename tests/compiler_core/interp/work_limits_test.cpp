// What a run is checked against before it starts (work_limits.h, make_constant_env):
// params taken exactly, and the buffers and points of a run counted as the evaluator's
// plan realises them, checked against an independent count of the same plan.
#include "compiler_core/interp/work_limits.h"

#include <gtest/gtest.h>

#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "tests/common/user_error_message.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;

using testing_common::message_of;

constexpr const char* kProgram = R"(
pipeline sizes
input  in : f32[x, y]
param  W  : i32 = 8
param  n  : i32 = 3
param  k  : f32 = 0.5
func   a(x, y) = in(x, y) * k
func   b(x, y) = a(x - 1, y) + a(x + 1, y)
func   out(x, y) = sum(i in 0..n : b(x, y + i))
out(x, 0) += a(x, r) for r in 0..4
output out size(W, in.height)
)";

// `--param W=1.5` was rounded to 1 and `W=99999999999` saturated to 2^31-1 (which then
// computed for 92 s): both are errors now, as are non-finite values and f32 overflow.
TEST(WorkLimits, ParamsAreTakenExactly) {
  Pipeline p = compile_pipeline(kProgram, "sizes.stp");
  InputImages in = {{"in", Buffer(ScalarType::Float32, {16, 10})}};
  auto extents = [&](ParamValues v) { return output_extents(p, in, v); };
  EXPECT_EQ(message_of([&] { extents({{"W", 1.5}}); }), "param 'W' is i32: 1.5 is not an integer");
  EXPECT_EQ(message_of([&] {
              extents({{"W", 99999999999.0}});
            }),
            "param 'W' is i32: 99999999999 is outside -2147483648..2147483647");
  EXPECT_EQ(message_of([&] {
              extents({{"W", -2147483649.0}});
            }),
            "param 'W' is i32: -2147483649 is outside -2147483648..2147483647");
  EXPECT_EQ(message_of([&] {
              extents({{"k", 1e39}});
            }),
            "param 'k' is f32: 1e+39 is outside the range of f32");
  EXPECT_EQ(message_of([&] {
              extents({{"k", std::numeric_limits<double>::infinity()}});
            }),
            "param 'k' is f32: inf is not a finite number");
  EXPECT_EQ(extents({{"W", 12}}), (std::vector<int64_t>{12, 10}));
  EXPECT_EQ(extents({{"W", 2147483647.0}, {"k", -0.1}}), (std::vector<int64_t>{2147483647, 10}));
}

// The plan counted by hand: out over W x H; b over out's rows plus n below; a over b's
// columns plus one each side, and rows 0..4 for the update.
TEST(WorkLimits, TheEstimateIsTheEvaluatorsPlan) {
  Pipeline p = compile_pipeline(kProgram, "sizes.stp");
  for (int64_t W : {1, 8, 37}) {
    for (int64_t n : {0, 3, 9}) {
      const int64_t H = 10;
      InputImages in = {{"in", Buffer(ScalarType::Float32, {64, H})}};
      ParamValues params = {{"W", double(W)}, {"n", double(n)}};
      WorkEstimate e = estimate_work(p, in, params, output_extents(p, in, params));
      const double out_pts = double(W * H), b_pts = double(W * (H + n));
      // a: columns -1..W, rows 0..max(H - 1 + n, 4) (b's rows, and the update's r).
      const double a_pts = double((W + 2) * (std::max(H - 1 + n, int64_t{4}) + 1));
      EXPECT_EQ(e.buffer_bytes, 4 * (out_pts + b_pts + a_pts)) << W << " " << n;
      // out: each point sums n + 1 terms; its update: W columns x 5 steps.
      EXPECT_EQ(e.points, out_pts * (1 + (n + 1)) + double(W * 5) + b_pts + a_pts) << W << " " << n;
      EXPECT_EQ(e.largest_func, a_pts >= b_pts ? "a" : "b");
    }
  }
}

TEST(WorkLimits, RunsOverALimitFailWithTheNumbers) {
  WorkEstimate e;
  e.buffer_bytes = 12.6 * double(int64_t{1} << 30);
  e.largest_func = "blur_y";
  e.largest_func_bytes = 4.2 * double(int64_t{1} << 30);
  e.points = 10;
  EXPECT_EQ(message_of([&] { check_work_limits(e, WorkLimits{}); }),
            "this run would realise 12.6 GiB of buffers (the largest, blur_y, 4.2 GiB), over the "
            "limit of 8.0 GiB (raise it with --max-memory)");
  e.buffer_bytes = 1;
  e.points = 2.95e14;
  WorkLimits quiet;
  quiet.work_option = "";
  EXPECT_EQ(message_of([&] { check_work_limits(e, quiet); }),
            "this run would compute 2.95e+14 points (pixels of every func, update and reduction "
            "step), over the limit of 1e+12");
  e.points = 1e12;
  EXPECT_EQ(message_of([&] { check_work_limits(e, WorkLimits{}); }), "(no UserError)");
}

// `sum(i in 0..2000000000 : ...)` ran for minutes: its estimate is immediate and exact.
TEST(WorkLimits, AHugeReductionIsCountedWithoutRunningIt) {
  Pipeline p = compile_pipeline(R"(
pipeline bigsum
input  in : f32[x, y]
func   out(x, y) = sum(i in 0..2000000000, j in 0..1 : in(x, y)) + sum(k in 1..3 : f32(k))
output out
)",
                                "bigsum.stp");
  InputImages in = {{"in", Buffer(ScalarType::Float32, {200, 10})}};
  WorkEstimate e = estimate_work(p, in, {}, {200, 10});
  EXPECT_EQ(e.points, 2000.0 * (1 + 2000000001.0 * 2 + 3));
  EXPECT_NE(message_of([&] { check_work_limits(e, WorkLimits{}); }).find("compute 8e+12 points"),
            std::string::npos);
}

}  // namespace
}  // namespace stipple
