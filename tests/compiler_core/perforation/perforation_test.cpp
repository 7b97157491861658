// Image perforation (compiler_core/perforation/apply_perforation.h): exactness at spacing
// 1, an independent implementation of the same perforations, the error of the paper's
// two-pass blur schedule, congruence simplification in the lowered loop nest, the checker's
// messages, and composition with random fusion schedules (compiled == evaluated, bit for
// bit).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>

#include "compiler_core/image/metrics.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/perforation/apply_perforation.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "proto/schedule_codec.h"
#include "tests/compiler_core/lowering/lowering_harness.h"
#include "tests/compiler_core/perforation/schedule_errors.h"

namespace stipple::perforation {
namespace {

using testing_lowering::Case;

std::string pipeline_path(const std::string& name) {
  return std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/" + name + ".stp";
}

bool same_bytes(const Buffer& a, const Buffer& b) {
  return a.size_in_bytes() == b.size_in_bytes() &&
         std::memcmp(a.data(), b.data(), a.size_in_bytes()) == 0;
}

// The perforated variant computed by the evaluator and by compiled code.
struct Variant {
  Buffer evaluated, compiled;
};

Variant run_variant(codegen::JitCompiler& jit, const Case& c, const std::string& schedule_text,
                    const PerforationOptions& options = {}) {
  Schedule s = compile_schedule(schedule_text, "<test>", c.pipeline);
  Variant v;
  v.evaluated = evaluate_pipeline(apply_perforation(c.pipeline, s, options).pipeline, c.inputs);
  LoweredFunction f = lower(c.pipeline, s);
  auto fn = jit.compile(f);
  v.compiled = run_lowered(*fn, f, c.pipeline, c.inputs, {}, c.extents);
  return v;
}

TEST(Perforation, SpacingOneAndFullFractionsAreExact) {
  auto jit = codegen::JitCompiler::create();
  Case c(pipeline_path("two_pass_blur"), 40, 30);
  for (const char* text : {
           "A.perforate(grid(1, 1))\nout.perforate(grid(1, 1, 1))",
           "A.perforate(grid(1), nearest, precomputed)\nout.perforate(grid(1, 1), nearest)",
           "A.perforate_reduction(i, grid(1))\nout.perforate_reduction(i, fraction(1.0))",
           "out.loop_perforate(x, stride(1)).loop_perforate(y, truncate(0.0, last))",
           "A.loop_perforate(i, truncate(0, first))\nout.channels(3)",
           "out.perforate(importance(1.0))",
           "out.perforate(adaptive(2, 1.0), nearest)",
           "A.perforate(adaptive(3, 1.0), gaussian(sigma = 1.5))",
           "A.perforate(importance(f = 1), varying_gaussian(sigma0 = 2))",
       }) {
    SCOPED_TRACE(text);
    Variant v = run_variant(*jit, c, text);
    EXPECT_TRUE(same_bytes(v.evaluated, c.expected));
    EXPECT_TRUE(same_bytes(v.compiled, c.expected));
  }
}

// Independent implementations of two_pass_blur's perforations, in double precision.
class TwoPassBlurReference {
 public:
  explicit TwoPassBlurReference(const Buffer& in) : in_(in) {
    for (int i = -8; i <= 8; ++i) {
      k_[i + 8] = std::exp(-double(i * i) / (2 * 4.0 * 4.0));
      norm_ += k_[i + 8];
    }
  }
  int64_t w() const { return in_.extent(0); }
  int64_t h() const { return in_.extent(1); }
  double in(int64_t x, int64_t y, int64_t c) const {
    x = std::clamp<int64_t>(x, 0, w() - 1);
    y = std::clamp<int64_t>(y, 0, h() - 1);
    const int64_t at[] = {x, y, c};
    return in_.get(at);
  }
  // A at x, with the taps i = -8 + stride * j (rescaled by 17 / kept).
  double a(int64_t x, int64_t y, int64_t c, int stride = 1) const {
    double s = 0;
    int kept = 0;
    for (int i = -8; i <= 8; i += stride, ++kept) s += k_[i + 8] * in(x - i, y, c);
    return s / norm_ * (17.0 / kept);
  }
  // A at x with only the taps `taps` (loop perforation: no rescaling).
  double a_taps(int64_t x, int64_t y, int64_t c, const std::vector<int>& taps) const {
    double s = 0;
    for (int i : taps) s += k_[i + 8] * in(x - i, y, c);
    return s / norm_;
  }
  static int64_t floor_div(int64_t a, int64_t b) { return (a - ((a % b + b) % b)) / b; }
  // A perforated by grid(4, 1): samples at x = 4q, linear or nearest on demand.
  double a_grid(int64_t x, int64_t y, int64_t c, bool linear) const {
    int64_t q = floor_div(x, 4), r = x - 4 * q;
    if (!linear) return a(4 * floor_div(x + 2, 4), y, c);
    double t = r / 4.0;
    return (1 - t) * a(4 * q, y, c) + t * a(4 * q + 4, y, c);
  }
  template <typename A>
  double out(int64_t x, int64_t y, int64_t c, A read_a) const {
    double s = 0;
    for (int i = -8; i <= 8; ++i) s += k_[i + 8] * read_a(x, y - i, c);
    return s / norm_;
  }

 private:
  const Buffer& in_;
  double k_[17];
  double norm_ = 0;
};

// Max |got - want| / max(|want|, 1e-3) over the output.
template <typename F>
double max_relative_error(const Buffer& got, F want) {
  double worst = 0;
  for (int64_t c = 0; c < got.extent(2); ++c) {
    for (int64_t y = 0; y < got.extent(1); ++y) {
      for (int64_t x = 0; x < got.extent(0); ++x) {
        double w = want(x, y, c);
        const int64_t at[] = {x, y, c};
        worst = std::max(worst, std::abs(got.get(at) - w) / std::max(std::abs(w), 1e-3));
      }
    }
  }
  return worst;
}

TEST(Perforation, MatchesAnIndependentImplementation) {
  auto jit = codegen::JitCompiler::create();
  Case c(pipeline_path("two_pass_blur"), 37, 29);
  TwoPassBlurReference ref(c.inputs.at("in"));
  // random(0.5) of A's 17 taps: 9 kept, the k-th at a hashed place in the k-th of 9 equal
  // strata (i32 arithmetic wraps).
  std::vector<int> random_taps;
  for (int64_t k = 0; k < 9; ++k) {
    const int32_t h = static_cast<int32_t>(static_cast<uint32_t>(k) * 668265263u + 374761393u);
    const int64_t jitter = ((TwoPassBlurReference::floor_div(h, 65536) % 17) + 17) % 17;
    random_taps.push_back(static_cast<int>(-8 + (k * 17 + jitter) / 9));
  }
  for (size_t k = 0; k + 1 < random_taps.size(); ++k) {
    ASSERT_LT(random_taps[k], random_taps[k + 1]) << "one tap per stratum";
  }
  ASSERT_NE(random_taps, (std::vector<int>{-8, -7, -5, -3, -1, 1, 3, 5, 7}))
      << "not the strata's first taps";
  struct Expected {
    const char* schedule;
    std::function<double(int64_t, int64_t, int64_t)> value;
  };
  std::vector<Expected> cases = {
      {"A.perforate(grid(4, 1))",
       [&](int64_t x, int64_t y, int64_t ch) {
         return ref.out(x, y, ch, [&](int64_t ax, int64_t ay, int64_t ac) {
           return ref.a_grid(ax, ay, ac, true);
         });
       }},
      {"A.perforate(grid(4), nearest, precomputed).compute_root()",
       [&](int64_t x, int64_t y, int64_t ch) {
         return ref.out(x, y, ch, [&](int64_t ax, int64_t ay, int64_t ac) {
           return ref.a_grid(ax, ay, ac, false);
         });
       }},
      {"A.perforate_reduction(i, grid(2))",
       [&](int64_t x, int64_t y, int64_t ch) {
         return ref.out(x, y, ch,
                        [&](int64_t ax, int64_t ay, int64_t ac) { return ref.a(ax, ay, ac, 2); });
       }},
      {"A.loop_perforate(i, random(0.5))",
       [&](int64_t x, int64_t y, int64_t ch) {
         return ref.out(x, y, ch, [&](int64_t ax, int64_t ay, int64_t ac) {
           return ref.a_taps(ax, ay, ac, random_taps);
         });
       }},
      {"out.loop_perforate(x, stride(2))",
       [&](int64_t x, int64_t y, int64_t ch) {
         if (x % 2) return 0.0;
         return ref.out(x, y, ch,
                        [&](int64_t ax, int64_t ay, int64_t ac) { return ref.a(ax, ay, ac); });
       }},
      {"out.loop_perforate(y, truncate(0.25, last))",
       [&](int64_t x, int64_t y, int64_t ch) {
         // 29 rows, int(29 * 0.25) = 7 skipped.
         if (y >= 29 - 7) return 0.0;
         return ref.out(x, y, ch,
                        [&](int64_t ax, int64_t ay, int64_t ac) { return ref.a(ax, ay, ac); });
       }},
      {"out.channels(1)",
       [&](int64_t x, int64_t y, int64_t ch) {
         if (ch >= 1) return ref.in(x, y, ch);
         return ref.out(x, y, ch,
                        [&](int64_t ax, int64_t ay, int64_t ac) { return ref.a(ax, ay, ac); });
       }},
  };
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.schedule);
    Variant v = run_variant(*jit, c, e.schedule);
    EXPECT_TRUE(same_bytes(v.evaluated, v.compiled));
    EXPECT_LT(max_relative_error(v.evaluated, e.value), 1e-5);
    // And it is an approximation: not the exact output.
    EXPECT_FALSE(same_bytes(v.evaluated, c.expected));
  }
}

TEST(Perforation, CompactedOutputsKeepTheirPointsExact) {
  // `compacted`: each row's points are computed side by side from a list, then put in
  // place. Computed points keep the exact value, and the compiled variant is the
  // evaluated one bit for bit, under tiles and vectors too.
  auto jit = codegen::JitCompiler::create();
  Case c(pipeline_path("two_pass_blur"), 45, 31);
  for (const std::string sampling : {"importance(0.3)", "adaptive(2, 0.3)"}) {
    for (const std::string fusion :
         {"", ".tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 8).parallel(yo)"}) {
      const std::string text = "out.perforate(" + sampling + ", nearest, compacted)" + fusion;
      SCOPED_TRACE(text);
      Schedule s = compile_schedule(text, "<test>", c.pipeline);
      const std::string prefix = sampling[0] == 'i' ? "out$importance$" : "out$adaptive$";
      PerforatedPipeline pp = apply_perforation(c.pipeline, s);
      ASSERT_NE(pp.pipeline.find_func(prefix + "compact$list"), nullptr);
      ASSERT_NE(pp.pipeline.find_func(prefix + "scattered"), nullptr);
      Variant v = run_variant(*jit, c, text);
      EXPECT_TRUE(same_bytes(v.evaluated, v.compiled));
      // The same values as the branch per point.
      const std::string masked = "out.perforate(" + sampling + ", nearest)" + fusion;
      EXPECT_EQ(apply_perforation(c.pipeline, compile_schedule(masked, "<test>", c.pipeline))
                    .pipeline.find_func(prefix + "compact$list"),
                nullptr);
      EXPECT_TRUE(same_bytes(run_variant(*jit, c, masked).compiled, v.compiled));
      Pipeline q = pp.pipeline;
      q.output.func = prefix + "mask";
      q.output.extents.resize(2);
      q.output.metric = ErrorMetric::Rmse;
      Buffer mask = evaluate_pipeline(q, c.inputs);
      int64_t computed = 0, exact = 0;
      for (int64_t y = 0; y < c.extents[1]; ++y) {
        for (int64_t x = 0; x < c.extents[0]; ++x) {
          const int64_t at[] = {x, y};
          if (mask.get(at) == 0) continue;
          ++computed;
          bool same = true;
          for (int64_t ch = 0; ch < 3; ++ch) {
            const int64_t p[] = {x, y, ch};
            same = same && v.compiled.get(p) == c.expected.get(p);
          }
          exact += same ? 1 : 0;
        }
      }
      EXPECT_GT(computed, 45 * 31 / 5);
      EXPECT_LT(computed, 45 * 31 / 2);
      EXPECT_EQ(exact, computed);
      EXPECT_FALSE(same_bytes(v.compiled, c.expected));
    }
  }
}

// §3.4's colour conversion helpers: BT.601 YUV and its inverse, evaluated and compiled.
TEST(Perforation, ColourConversionHelpersAreBt601AndRoundTrip) {
  Case c(std::string(STIPPLE_SOURCE_DIR) + "/tests/compiler_core/perforation/yuv_blur.stp", 40, 30);
  Pipeline round_trip = compile_pipeline(R"(pipeline yuv_round_trip
input in : f32[x, y, c]
func yuv(x, y, c) = rgb_to_yuv(c, in(x, y, 0), in(x, y, 1), in(x, y, 2))
func out(x, y, c) = yuv_to_rgb(c, yuv(x, y, 0), yuv(x, y, 1), yuv(x, y, 2))
output out
)",
                                         "round_trip.stp");
  Pipeline to_yuv = round_trip;
  to_yuv.output.func = "yuv";
  const Buffer& in = c.inputs.at("in");
  auto jit = codegen::JitCompiler::create();
  for (const Pipeline* p : {&round_trip, &to_yuv}) {
    Buffer evaluated = evaluate_pipeline(*p, c.inputs);
    LoweredFunction f = lower(*p, Schedule{});
    auto fn = jit->compile(f);
    Buffer compiled = run_lowered(*fn, f, *p, c.inputs, {}, c.extents);
    EXPECT_TRUE(same_bytes(evaluated, compiled));
    for (int64_t y = 0; y < c.extents[1]; ++y) {
      for (int64_t x = 0; x < c.extents[0]; ++x) {
        auto at = [&](const Buffer& b, int64_t ch) {
          const int64_t i[] = {x, y, ch};
          return b.get(i);
        };
        const double r = at(in, 0), g = at(in, 1), b = at(in, 2);
        const double luma = 0.299 * r + 0.587 * g + 0.114 * b;
        const double want[3] = {luma, 0.492 * (b - luma), 0.877 * (r - luma)};
        for (int64_t ch = 0; ch < 3; ++ch) {
          const double expect = p == &round_trip ? at(in, ch) : want[ch];
          ASSERT_NEAR(at(compiled, ch), expect, 2e-6) << x << "," << y << "," << ch;
        }
      }
    }
  }
}

// channels(1, from = yuv): the blur computes Y only; U and V come from the unblurred YUV
// image, as §3.4 proposes (chroma matters less to the eye).
TEST(Perforation, ChannelsFromAFuncCopyTheOtherChannelsFromIt) {
  auto jit = codegen::JitCompiler::create();
  Case c(std::string(STIPPLE_SOURCE_DIR) + "/tests/compiler_core/perforation/yuv_blur.stp", 40, 30);
  const Buffer& in = c.inputs.at("in");
  auto yuv = [&](int64_t x, int64_t y, int64_t ch) {
    x = std::clamp<int64_t>(x, 0, c.extents[0] - 1);
    const int64_t i[] = {x, y, 0}, j[] = {x, y, 1}, k[] = {x, y, 2};
    const double r = in.get(i), g = in.get(j), b = in.get(k);
    const double luma = 0.299 * r + 0.587 * g + 0.114 * b;
    return ch == 0 ? luma : ch == 1 ? 0.492 * (b - luma) : 0.877 * (r - luma);
  };
  for (const char* text :
       {"b.channels(1, from = yuv)",
        "yuv.compute_root()\nb.channels(1, yuv).compute_root().vectorize(x, 8)"}) {
    SCOPED_TRACE(text);
    Variant v = run_variant(*jit, c, text);
    EXPECT_TRUE(same_bytes(v.evaluated, v.compiled));
    // The blurred Y with the original U and V, back to RGB.
    const double back[3][3] = {{1, 0, 1 / 0.877},
                               {1, -0.114 / (0.587 * 0.492), -0.299 / (0.587 * 0.877)},
                               {1, 1 / 0.492, 0}};
    double worst = 0;
    for (int64_t y = 0; y < c.extents[1]; ++y) {
      for (int64_t x = 0; x < c.extents[0]; ++x) {
        const double yuv_blurred[3] = {(yuv(x - 1, y, 0) + yuv(x, y, 0) + yuv(x + 1, y, 0)) / 3,
                                       yuv(x, y, 1), yuv(x, y, 2)};
        for (int64_t ch = 0; ch < 3; ++ch) {
          const double want = back[ch][0] * yuv_blurred[0] + back[ch][1] * yuv_blurred[1] +
                              back[ch][2] * yuv_blurred[2];
          const int64_t at[] = {x, y, ch};
          worst = std::max(worst, std::abs(v.compiled.get(at) - want));
        }
      }
    }
    EXPECT_LT(worst, 1e-5);
    EXPECT_FALSE(same_bytes(v.compiled, c.expected));
  }
  for (auto [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"b.channels(1, from = nothing)", "'nothing' is not a func of the pipeline"},
           {"b.channels(1, from = out)", "'out' reads 'b', whose channels it would give"},
           {"b.channels(1, to = yuv)", "expected from = func"},
           {"yuv.perforate(grid(2, 1))\nb.channels(1, from = yuv)",
            "which is approximated itself"}}) {
    try {
      compile_schedule(text, "t.sched", c.pipeline);
      ADD_FAILURE() << text << " was accepted";
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(Perforation, TwoPassBlurGridScheduleErrorIsSmall) {
  // The paper's highlighted two-pass blur schedule: grid(4, 1) on A, grid(4, 4) on out,
  // linear reconstruction on demand. Mean Lab Delta E against the exact output, below 1
  // (a just noticeable difference) on each fixture: 0.34 on natural-820x614, 0.77 on
  // people-256x192 (compiler_core/perforation/README.md).
  auto jit = codegen::JitCompiler::create();
  const std::string text = "A.perforate(grid(4, 1))\nout.perforate(grid(4, 4))";
  for (const char* fixture : {"natural-820x614.png", "people-256x192.png"}) {
    SCOPED_TRACE(fixture);
    Pipeline p = load_pipeline_file(pipeline_path("two_pass_blur"));
    InputImages inputs;
    inputs["in"] = photo_to_input(
        read_image(std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/" + fixture), p.inputs[0],
        fixture);
    Schedule s = compile_schedule(text, "<test>", p);
    LoweredFunction exact_f = lower(
        p,
        compile_schedule("k.compute_root()\nnorm.compute_root()\nA.compute_root()", "<exact>", p));
    auto exact_fn = jit->compile(exact_f);
    std::vector<int64_t> extents{inputs["in"].extent(0), inputs["in"].extent(1), 3};
    Buffer exact = run_lowered(*exact_fn, exact_f, p, inputs, {}, extents);
    LoweredFunction f = lower(p, s);
    auto fn = jit->compile(f);
    Buffer got = run_lowered(*fn, f, p, inputs, {}, extents);
    double de = mean_delta_e(got, exact);
    std::printf("%s: mean Lab dE %.4f\n", fixture, de);
    EXPECT_GT(de, 0.0);
    EXPECT_LT(de, 1.0);
  }
}

// two_pass_blur with out reading A two pixels to the right: A(x + 2, y - i, c).
const char* kShiftedBlur = R"(pipeline shifted_blur
input  in  : f32[x, y, c]
param  sigma : f32 = 4.0
param  h     : i32 = 8
func k(i)         = exp(-f32(i * i) / (2 * sigma * sigma))
func norm()       = sum(i in -h..h : k(i))
func A(x, y, c)   = sum(i in -h..h : k(i) * in(x - i, y, c)) / norm()
func out(x, y, c) = sum(i in -h..h : k(i) * A(x + 2, y - i, c)) / norm()
output out
)";

TEST(Perforation, CongruenceSimplificationInTheLoopNest) {
  // §3.3.3: with x ≡ 0 (mod 4) in out's perforated loop, A(x, y - i) is a plain read of
  // A's samples and A(x + 2, y - i) the blend of two with the weights (0.5, 0.5).
  const std::string text = "A.perforate(grid(4, 1))\nout.perforate(grid(4, 4))";
  Pipeline p = load_pipeline_file(pipeline_path("two_pass_blur"));
  Schedule s = compile_schedule(text, "<test>", p);
  std::string nest = lowered_text(p, s);
  EXPECT_NE(nest.find(" * A(out$samples.s0.x, out$samples.s0.y * 4 - i$3, out$samples.s0.c)"),
            std::string::npos)
      << nest;

  Pipeline shifted = compile_pipeline(kShiftedBlur, "shifted.stp");
  Schedule t = compile_schedule(text, "<test>", shifted);
  PerforatedPipeline with = apply_perforation(shifted, t);
  PerforatedPipeline without = apply_perforation(shifted, t, {.congruence = false});
  std::string simplified = to_string(with.pipeline.find_func("out$samples")->value);
  std::string general = to_string(without.pipeline.find_func("out$samples")->value);
  EXPECT_NE(simplified.find("0.5 * A(x, y * 4 - i, c) + 0.5 * A(x + 1, y * 4 - i, c)"),
            std::string::npos)
      << simplified;
  EXPECT_EQ(simplified.find('%'), std::string::npos) << simplified;
  EXPECT_NE(general.find("(x * 4 + 2) % 4"), std::string::npos) << general;

  // Equal output with and without the pass, evaluated and compiled.
  auto jit = codegen::JitCompiler::create();
  for (const Pipeline* pipeline : {&p, &shifted}) {
    SCOPED_TRACE(pipeline->name);
    Case c(pipeline_path("two_pass_blur"), 45, 31);
    c.pipeline = *pipeline;
    Variant a = run_variant(*jit, c, text);
    Variant b = run_variant(*jit, c, text, {.congruence = false});
    EXPECT_TRUE(same_bytes(a.evaluated, b.evaluated));
    EXPECT_TRUE(same_bytes(a.evaluated, a.compiled));
    // Lowering without the pass: the evaluator's pipeline compiled.
    Schedule sched = compile_schedule(text, "<test>", *pipeline);
    PerforatedPipeline plain = apply_perforation(*pipeline, sched, {.congruence = false});
    LoweredFunction f = lower(plain.pipeline, plain.schedule);
    auto fn = jit->compile(f);
    EXPECT_TRUE(
        same_bytes(run_lowered(*fn, f, plain.pipeline, c.inputs, {}, c.extents), a.compiled));
  }
}

// The bilateral grid's slice per tile of a perforated output (the benchmark's schedule):
// interp is read at (x * 2, y * 2) only, so it is computed at those points.
const char* kSampledSlice = R"(K.compute_root()
blurx.compute_root().vectorize(x, 8)
blury.compute_root().vectorize(x, 8)
blurz.compute_root().vectorize(x, 8)
interp.compute_at(out, xo).vectorize(x, 8).reorder(c, x, y).unroll(c, 4)
out.perforate(grid(2, 2)).bound(c, 0, 3).tile(x, y, xo, yo, xi, yi, 16, 8)
   .reorder(xi, yi, c, xo, yo).vectorize(xi, 8).parallel(yo)
)";

TEST(Perforation, RealisedProducersAreComputedAtTheSampledPointsOnly) {
  Case c(pipeline_path("bilateral_grid"), 45, 31);
  Schedule s = compile_schedule(kSampledSlice, "<test>", c.pipeline);
  PerforatedPipeline with = apply_perforation(c.pipeline, s);
  PerforatedPipeline without = apply_perforation(c.pipeline, s, {.sampled_producers = false});

  // interp$sampled is interp at the even points, with interp's schedule; interp is inlined
  // into it, and out$samples reads it at the quotients.
  const Func* sampled = with.pipeline.find_func("interp$sampled");
  ASSERT_NE(sampled, nullptr);
  EXPECT_EQ(without.pipeline.find_func("interp$sampled"), nullptr);
  EXPECT_EQ(with.pipeline.find_func("interp"), nullptr);  // read by nothing now
  const std::string value = to_string(sampled->value);
  EXPECT_NE(value.find("x * 2"), std::string::npos) << value;
  EXPECT_NE(value.find("y * 2"), std::string::npos) << value;
  const std::string reader = to_string(with.pipeline.find_func("out$samples")->value);
  EXPECT_NE(reader.find("interp$sampled(x, y, c)"), std::string::npos) << reader;
  EXPECT_EQ(reader.find("interp("), std::string::npos) << reader;
  const FuncSchedule* fs = with.schedule.find("interp$sampled");
  ASSERT_TRUE(fs && fs->compute);
  EXPECT_EQ(*fs->compute, LoopLevel::at("out$samples", 0, "xo"));
  EXPECT_EQ(with.schedule.find("interp"), nullptr);
  ASSERT_NE(without.schedule.find("interp"), nullptr);

  // bound(c, 0, 3) stays with the output (the reconstruction), not its samples.
  auto has_bound = [](const Schedule& t, const std::string& f) {
    const FuncSchedule* g = t.find(f);
    if (!g || !g->stages.count(0)) return false;
    for (const Directive& d : g->stages.at(0).directives)
      if (d.name == "bound") return true;
    return false;
  };
  EXPECT_TRUE(has_bound(with.schedule, "out"));
  EXPECT_FALSE(has_bound(with.schedule, "out$samples"));

  // The same values, bit for bit: evaluated with and without, compiled with, and compiled
  // without (the evaluator's pipeline lowered as it is).
  auto jit = codegen::JitCompiler::create();
  Variant a = run_variant(*jit, c, kSampledSlice);
  Variant b = run_variant(*jit, c, kSampledSlice, {.sampled_producers = false});
  EXPECT_TRUE(same_bytes(a.evaluated, b.evaluated));
  EXPECT_TRUE(same_bytes(a.evaluated, a.compiled));
  LoweredFunction f = lower(without.pipeline, without.schedule);
  auto fn = jit->compile(f);
  EXPECT_TRUE(
      same_bytes(run_lowered(*fn, f, without.pipeline, c.inputs, {}, c.extents), a.compiled));

  // A producer read at several residues (edge, by A's taps at x * 4 - i) stays as it is.
  Pipeline blur = load_pipeline_file(pipeline_path("two_pass_blur"));
  PerforatedPipeline taps = apply_perforation(
      blur, compile_schedule("edge.compute_at(out, xo)\nA.perforate(grid(4, 1)).compute_at(out, "
                             "xo)\nout.tile(x, y, xo, yo, xi, yi, 64, 32)",
                             "<test>", blur));
  EXPECT_EQ(taps.pipeline.find_func("edge$sampled"), nullptr);
  EXPECT_NE(taps.schedule.find("edge"), nullptr);
}

// Producers read by several funcs: w by a, b and the output; a and b by the output.
const char* kSharedProducers = R"(pipeline shared_producers
input  in : f32[x, y]
func w(x, y)   = in(x, y) * 2.0 + in(x + 1, y)
func a(x, y)   = w(x, y) + 1.0
func b(x, y)   = w(x + 1, y) * 0.5
func out(x, y) = a(x, y) + b(x, y) + w(x, y)
output out
)";

TEST(Perforation, ProducersAreSampledWhenEveryReaderReadsThemAtOneResidue) {
  const std::string path = testing::TempDir() + "shared_producers.stp";
  std::ofstream(path) << kSharedProducers;
  Case c(path, 37, 23);  // the gray fixture's corner
  auto jit = codegen::JitCompiler::create();
  struct Expected {
    const char* schedule;
    std::vector<const char*> sampled, kept;  // funcs with and without a $sampled
    const char* w_value;                     // a part of w$sampled's value, if sampled
  };
  const std::vector<Expected> cases = {
      // b is inlined, so it reads w at every point: w stays; a is read by the output only.
      {"w.compute_root()\na.compute_root()\nout.perforate(grid(2, 2))", {"a"}, {"w"}, ""},
      // a$sampled reads w at (2x, 2y), b$sampled at (2x + 1, 2y), the output at (2x, 2y):
      // w is sampled along y only, after a and b (recursion).
      {"w.compute_root()\na.compute_root()\nb.compute_root()\nout.perforate(grid(2, 2))",
       {"a", "b", "w"},
       {},
       "in(x, y * 2)"},
      // loop_perforate(x, stride(2)) computes strided points too.
      {"w.compute_root()\na.compute_root()\nb.compute_root()\nout.loop_perforate(x, stride(2))",
       {"a", "b"},
       {"w"},
       ""},
  };
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.schedule);
    Schedule s = compile_schedule(e.schedule, "<test>", c.pipeline);
    PerforatedPipeline with = apply_perforation(c.pipeline, s);
    for (const char* f : e.sampled) {
      EXPECT_NE(with.pipeline.find_func(std::string(f) + "$sampled"), nullptr) << f;
      EXPECT_EQ(with.pipeline.find_func(f), nullptr) << f;
    }
    for (const char* f : e.kept) {
      EXPECT_EQ(with.pipeline.find_func(std::string(f) + "$sampled"), nullptr) << f;
      EXPECT_NE(with.schedule.find(f), nullptr) << f;
    }
    if (*e.w_value) {
      const std::string w = to_string(with.pipeline.find_func("w$sampled")->value);
      EXPECT_NE(w.find(e.w_value), std::string::npos) << w;
    }
    Variant a = run_variant(*jit, c, e.schedule);
    Variant b = run_variant(*jit, c, e.schedule, {.sampled_producers = false});
    EXPECT_TRUE(same_bytes(a.evaluated, b.evaluated));
    EXPECT_TRUE(same_bytes(a.evaluated, a.compiled));
  }
}

TEST(Perforation, CheckerNamesTheArgumentAtFault) {
  Pipeline p = load_pipeline_file(pipeline_path("two_pass_blur"));
  expect_refused(
      p, {
             {"A.perforate(grid(0, 1))", "1:18", "a grid spacing must be in 1..4096, found 0"},
             {"A.perforate(grid(2, 2, 2, 2))", "1:27",
              "'A' has 3 dimensions, so grid takes at most 3"},
             {"A.perforate(poisson(3))", "1:13", "unknown sampling 'poisson'"},
             {"A.perforate(grid(2), cubic)", "1:22", "unknown reconstruction 'cubic'"},
             {"A.perforate(grid(2), linear, eventually)", "1:30",
              "expected on_demand, precomputed or compacted"},
             {"out.loop_perforate(x, random(0.5))", "1:23",
              "random skips apply to reduction variables; 'x' is a pure variable"},
             {"out.perforate(grid(2), linear, compacted)", "1:32",
              "compacted computation lists the points of adaptive or importance sampling"},
             {"A.perforate(importance(0.5), nearest, compacted).compute_root()", "1:3",
              "'A''s points cannot be compacted: only the output's are"},
             {"A.perforate(adaptive(3, 0.25), nearest, on_demand)", "1:41",
              "on-demand reconstruction needs grid sampling"},
             {"A.perforate(adaptive(k = 3, f = 1.5))", "1:33", "adaptive's f must be in (0, 1]"},
             {"A.perforate(adaptive(3, 0.25), linear)", "1:3",
              "linear reconstruction needs grid sampling"},
             {"A.perforate(grid(2), gaussian)", "1:3",
              "gaussian reconstruction of grid samples is not implemented yet"},
             {"A.perforate(grid(2)).perforate(grid(4))", "1:22", "'A' is perforated twice"},
             {"A.perforate(grid(2)).compute_inline()", "1:22", "'A' is perforated"},
             {"A.perforate_reduction(j, grid(2))", "1:23", "'A' has no reduction variable 'j'"},
             {"A.perforate_reduction(i, fraction(0))", "1:35", "must be in (0, 1]"},
             {"norm.channels(1)", "1:6", "channels(c) needs a func whose last dimension"},
             {"A.loop_perforate(z, stride(2))", "1:18", "'A' has no loop over 'z'"},
             {"A.loop_perforate(x, stride(2)).perforate(grid(2))", "1:3",
              "loop_perforate of a pure variable and perforate both"},
             {"A.update(0).perforate(grid(2))", "1:13", "perforate applies to the whole func"},
             {"A.store_as(f64)", "1:12", "store_as takes the storage type: store_as(f16)"},
             {"out.store_as(f16)", "1:5", "'out' is the output, whose type is what the pipeline"},
             {"A.store_as(f16).store_as(f16)", "1:17", "the storage of 'A' is set twice"},
             {"A.store_as(f16).perforate(grid(2))", "1:3",
              "store_as and perforation of its points on one func ('A') are not supported"},
             {"A.channels(1).store_as(f16)", "1:15", "store_as and channels on one func ('A')"},
         });
}

TEST(Perforation, DirectivesRoundTripThroughTextAndProto) {
  Pipeline p = load_pipeline_file(pipeline_path("two_pass_blur"));
  const char* text =
      "A.perforate(grid(4, 1), nearest, precomputed).compute_root().vectorize(x, 8)\n"
      "out.perforate(grid(4, 4), linear, on_demand).perforate_reduction(i, fraction(0.5))"
      ".channels(2).tile(x, y, xo, yo, xi, yi, 16, 8)\n"
      "k.compute_root().loop_perforate(i, truncate(fraction = 0.25, end = first))\n";
  const char* compacted = "out.perforate(importance(0.3), varying_gaussian(0.5), compacted)\n";
  Schedule c = compile_schedule(compacted, "<test>", p);
  EXPECT_EQ(compile_schedule(print_schedule(c, p), "<printed>", p), c);
  EXPECT_EQ(from_proto(to_proto(c)), c);
  EXPECT_TRUE(func_approximation(c, p, *p.find_func("out"), SourceText("", "<test>"))
                  .perforation->compacted);
  Schedule s = compile_schedule(text, "<test>", p);
  Schedule again = compile_schedule(print_schedule(s, p), "<printed>", p);
  EXPECT_EQ(again, s);
  EXPECT_EQ(from_proto(to_proto(s)), s);
  FuncApproximation a = func_approximation(s, p, *p.find_func("out"), SourceText("", "<test>"));
  ASSERT_TRUE(a.perforation);
  EXPECT_EQ(a.perforation->spacing, (std::vector<int64_t>{4, 4, 1}));
  EXPECT_TRUE(a.perforation->on_demand);
  ASSERT_EQ(a.reductions.size(), 1u);
  EXPECT_EQ(a.reductions[0].fraction, 0.5);
  EXPECT_EQ(a.channels, 2);
}

// A row sum by an update definition, its domain perforated.
const char* kRowSum = R"(pipeline row_sum
input  in : f32[x, y]
func s(y) = f32(0)
s(y) += in(x, y) * 0.5 for x in in
func out(x, y) = s(y) + in(x, y)
output out
)";

TEST(Perforation, UpdateDomainsArePerforatedAndRescaled) {
  // s.update(0).perforate_reduction(x, grid(3)): each row adds in(0), in(3), in(6), ...,
  // each term times width / kept (f32), so that the sum estimates the whole row's.
  Pipeline p = compile_pipeline(kRowSum, "row_sum.stp");
  const std::string text = "s.compute_root()\ns.update(0).perforate_reduction(x, grid(3))\n";
  Schedule s = compile_schedule(text, "<test>", p);
  EXPECT_EQ(compile_schedule(print_schedule(s, p), "<printed>", p), s);
  EXPECT_EQ(from_proto(to_proto(s)), s);
  FuncApproximation a = func_approximation(s, p, *p.find_func("s"), SourceText("", "<test>"));
  ASSERT_EQ(a.update_reductions.count(0), 1u);
  EXPECT_EQ(a.update_reductions[0][0].stride, 3);

  const int64_t w = 37, h = 5;
  Buffer in(ScalarType::Float32, {w, h});
  std::mt19937 rng(28);
  float* v = in.data_as<float>();
  for (int64_t i = 0; i < w * h; ++i) v[i] = std::uniform_real_distribution<float>(0, 1)(rng);
  InputImages inputs{{"in", in}};
  const int64_t kept = (w - 1) / 3 + 1;
  const float scale = static_cast<float>(w) / static_cast<float>(kept);
  Buffer want(ScalarType::Float32, {w, h});
  float* o = want.data_as<float>();
  for (int64_t y = 0; y < h; ++y) {
    float sum = 0;
    // The update is fma(in, 0.5, s) (contracted); perforated, fma(in, 0.5 * scale, s).
    for (int64_t x = 0; x < w; x += 3) sum = std::fma(v[y * w + x], 0.5f * scale, sum);
    for (int64_t x = 0; x < w; ++x) o[y * w + x] = sum + v[y * w + x];
  }
  Buffer evaluated = evaluate_pipeline(apply_perforation(p, s).pipeline, inputs);
  auto jit = codegen::JitCompiler::create();
  LoweredFunction f = lower(p, s);
  auto fn = jit->compile(f);
  Buffer compiled = run_lowered(*fn, f, p, inputs, {}, {w, h});
  EXPECT_TRUE(same_bytes(evaluated, want));
  EXPECT_TRUE(same_bytes(compiled, want));

  // `s(y) += in(x, y)`, the Add form: s(y) + in(x, y) * scale.
  Pipeline plain = compile_pipeline(R"(pipeline row_sum_add
input  in : f32[x, y]
func s(y) = f32(0)
s(y) += in(x, y) for x in in
func out(x, y) = s(y)
output out
)",
                                    "row_sum_add.stp");
  Schedule t = compile_schedule(text, "<test>", plain);
  Buffer want_add(ScalarType::Float32, {w, h});
  float* oa = want_add.data_as<float>();
  for (int64_t y = 0; y < h; ++y) {
    float sum = 0;
    for (int64_t x = 0; x < w; x += 3) {
      volatile float term = v[y * w + x] * scale;  // rounded, then added
      sum = sum + term;
    }
    for (int64_t x = 0; x < w; ++x) oa[y * w + x] = sum;
  }
  EXPECT_TRUE(
      same_bytes(evaluate_pipeline(apply_perforation(plain, t).pipeline, inputs), want_add));
  LoweredFunction fa = lower(plain, t);
  auto fna = jit->compile(fa);
  EXPECT_TRUE(same_bytes(run_lowered(*fna, fa, plain, inputs, {}, {w, h}), want_add));

  // The checker: only perforate_reduction of the update's own domain, and nothing on the
  // pure definition of a func with updates.
  Pipeline hist = compile_pipeline(R"(pipeline prefix
input  in : f32[x]
func f(x) = in(x)
f(r) = f(r - 1) + in(r) for r in 1..in.width - 1
output f
)",
                                   "prefix.stp");
  expect_refused(hist, {{"f.update(0).perforate_reduction(r, grid(2))", "1:33",
                         "'r' is where update(0) of 'f' writes"}});
  expect_refused(
      p, {{"s.update(0).perforate(grid(2))", "1:13", "applies to the whole func"},
          {"s.update(0).perforate_reduction(y, grid(2))", "1:33", "no reduction variable 'y'"},
          {"s.perforate_reduction(x, grid(2))", "1:3", "update definitions"}});
}

TEST(Perforation, BilateralGridSplatPerforatedStaysCloseAndMatchesTheEvaluator) {
  // The benchmark's perforated bilateral grid: every other pixel of every other row
  // splatted (the homogeneous weight is rescaled with the values, so their ratio is
  // unchanged), the slice at a quarter of the points.
  const std::string text = std::string(kSampledSlice) +
                           "grid.update(0).reorder(gc, x, y).perforate_reduction(x, grid(2))"
                           ".perforate_reduction(y, grid(2))\n";
  Pipeline p = load_pipeline_file(pipeline_path("bilateral_grid"));
  InputImages inputs;
  inputs["in"] = photo_to_input(
      read_image(std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/people-256x192.png"),
      p.inputs[0], "people");
  std::vector<int64_t> extents{inputs["in"].extent(0), inputs["in"].extent(1), 3};
  auto jit = codegen::JitCompiler::create();
  auto run = [&](const Schedule& s) {
    LoweredFunction f = lower(p, s);
    auto fn = jit->compile(f);
    return run_lowered(*fn, f, p, inputs, {}, extents);
  };
  Schedule s = compile_schedule(text, "<test>", p);
  Buffer exact = run(compile_schedule("", "<exact>", p));
  Buffer got = run(s);
  // The splat's perforation changes the output (the slice's alone is kSampledSlice).
  EXPECT_FALSE(same_bytes(got, run(compile_schedule(kSampledSlice, "<slice>", p))));
  EXPECT_TRUE(same_bytes(got, evaluate_pipeline(apply_perforation(p, s).pipeline, inputs)));
  const double de = mean_delta_e(got, exact);
  std::printf("bilateral_grid, splat and slice perforated: mean Lab dE %.4f\n", de);
  EXPECT_GT(de, 0.0);
  EXPECT_LT(de, 2.0);
}

// Random approximation directives for the pure funcs of p, as schedule text.
std::string random_approximations(const Pipeline& p, std::mt19937_64& rng,
                                  std::mt19937_64& storage_rng) {
  std::string text;
  auto chance = [&](double q) { return std::uniform_real_distribution<double>(0, 1)(rng) < q; };
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (const Func& f : p.funcs) {
    // An update's domain thinned (a histogram's or a splat's pixels), drawn from the
    // second stream too.
    for (size_t k = 0; k < f.updates.size(); ++k) {
      const std::vector<ReductionVariable>& domain = f.updates[k].domain;
      if (domain.empty() || std::uniform_int_distribution<int>(0, 1)(storage_rng) == 0) continue;
      const std::string& r =
          domain[std::uniform_int_distribution<size_t>(0, domain.size() - 1)(storage_rng)].name;
      text += f.name + ".update(" + std::to_string(k) + ").perforate_reduction(" + r + ", grid(" +
              std::to_string(2 + std::uniform_int_distribution<int>(0, 1)(storage_rng)) + "))\n";
    }
    if (!f.updates.empty() || f.args.empty() || !chance(0.6)) continue;
    std::vector<std::string> ds;
    const int dims = static_cast<int>(f.args.size());
    if ((dims == 2 || dims == 3) && f.args.size() <= p.output.extents.size() && chance(0.2)) {
      static const char* kHow[] = {"nearest", "gaussian(sigma = 1.5)", "varying_gaussian"};
      std::string sampling =
          pick(2) ? "adaptive(" + std::to_string(2 + pick(2)) + ", 0.5)" : "importance(0.4)";
      const bool compacted = f.name == p.output.func && pick(2);
      ds.push_back("perforate(" + sampling + ", " + kHow[pick(3)] +
                   (compacted ? ", compacted)" : ")"));
    } else if (chance(0.6)) {
      std::string g = "grid(";
      for (int d = 0; d < std::min(dims, 2); ++d)
        g += (d ? ", " : "") + std::to_string(1 + pick(4));
      g += ")";
      std::string how = pick(2) ? "linear" : "nearest";
      std::string where = f.name != p.output.func && pick(3) == 0 ? "precomputed" : "on_demand";
      ds.push_back("perforate(" + g + ", " + how + ", " + where + ")");
    } else if (chance(0.4) && f.args.size() <= p.output.extents.size()) {
      const std::string& v = f.args[static_cast<size_t>(pick(std::min(dims, 2)))];
      ds.push_back(pick(2)
                       ? "loop_perforate(" + v + ", stride(" + std::to_string(2 + pick(2)) + "))"
                       : "loop_perforate(" + v + ", truncate(0.3, " + (pick(2) ? "first" : "last") +
                             "))");
    }
    if (dims == 3 && channel_source(p, f) && chance(0.3)) {
      ds.push_back("channels(" + std::to_string(1 + pick(2)) + ")");
    }
    // Precision lowering where nothing else approximates the func, drawn from a stream of
    // its own so that the draws above stay what they were (the random schedules drawn on top of
    // them may differ: the base they start from has the extra directive).
    if (ds.empty() && f.type == Float32() && f.name != p.output.func &&
        std::uniform_int_distribution<int>(0, 1)(storage_rng) == 0) {
      ds.push_back("store_as(f16)");
    }
    std::string value = to_string(f.value);
    size_t in = value.find(" in ");
    if (in != std::string::npos && chance(0.4)) {
      size_t start = value.rfind('(', in);
      std::string r = value.substr(start + 1, in - start - 1);
      if (r.find(',') == std::string::npos && r.find(' ') == std::string::npos) {
        const int kind = pick(3);
        ds.push_back(kind == 0   ? "perforate_reduction(" + r + ", grid(2))"
                     : kind == 1 ? "perforate_reduction(" + r + ", fraction(0.6))"
                                 : "loop_perforate(" + r + ", random(0.4))");
      }
    }
    if (ds.empty()) continue;
    text += f.name;
    for (const std::string& d : ds) text += "." + d;
    text += "\n";
  }
  return text;
}

// Random approximations, then a random fusion schedule drawn legal with them in place
// (RandomScheduleOptions::base): the compiled variant equals the evaluated one, bit for
// bit. Approximations the checker rejects on their own are drawn again.
void run_random_perforations(int per_pipeline, uint64_t seed, bool paper_pipelines_only) {
  auto jit = codegen::JitCompiler::create();
  int checked = 0, rejected = 0;
  const std::set<std::string> paper = {"artistic_blur", "bilateral_filter", "bilateral_grid",
                                       "demosaic",      "median",           "two_pass_blur",
                                       "unsharp_mask"};
  for (const std::string& path : testing_lowering::benchmark_paths()) {
    if (paper_pipelines_only && !paper.count(std::filesystem::path(path).stem().string())) continue;
    Case c(path, 24, 18);
    std::mt19937_64 rng(seed + std::hash<std::string>()(c.pipeline.name) % 1000);
    std::mt19937_64 storage_rng(seed + 16);
    auto start = std::chrono::steady_clock::now();
    int done = 0;
    for (int attempt = 0; attempt < 4 * per_pipeline && done < per_pipeline; ++attempt) {
      RandomScheduleOptions options;
      try {
        options.base = compile_schedule(random_approximations(c.pipeline, rng, storage_rng),
                                        "<random>", c.pipeline);
      } catch (const CompileError& e) {
        ++rejected;
        if (std::getenv("STIPPLE_PERFORATION_VERBOSE")) std::printf("rejected: %s\n", e.what());
        continue;
      }
      Schedule s = random_schedule(c.pipeline, rng, options);
      ++checked;
      ++done;
      SCOPED_TRACE(c.pipeline.name + " under\n" + print_schedule(s, c.pipeline));
      if (std::getenv("STIPPLE_PERFORATION_VERBOSE"))
        std::printf("checking: %s\n", print_schedule(s, c.pipeline).c_str());
      // The evaluator's reference without sampled producers (sampled_producers.h), which
      // the compiled variant has: they change where values are computed, never a value.
      Buffer evaluated = evaluate_pipeline(
          apply_perforation(c.pipeline, s, {.sampled_producers = false}).pipeline, c.inputs);
      LoweredFunction f = lower(c.pipeline, s);
      auto fn = jit->compile(f);
      Buffer compiled = run_lowered(*fn, f, c.pipeline, c.inputs, {}, c.extents);
      ASSERT_TRUE(same_bytes(evaluated, compiled));
    }
    std::printf("%-24s %d perforated schedules in %.2f s\n", c.pipeline.name.c_str(), done,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    EXPECT_EQ(done, per_pipeline) << c.pipeline.name;
  }
  std::printf("%d perforated schedules checked, %d approximations rejected by the checker\n",
              checked, rejected);
}

#ifdef STIPPLE_PERFORATION_SLOW
// Every benchmark pipeline (label `slow`).
TEST(PerforationRandomSlow, ThreePerPipeline) { run_random_perforations(3, 11, false); }
#else
// The image-perforation paper's seven pipelines (label `asan`).
TEST(PerforationRandom, ThreePerPaperPipeline) { run_random_perforations(3, 20261122, true); }
#endif

}  // namespace
}  // namespace stipple::perforation
