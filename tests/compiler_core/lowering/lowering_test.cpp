// Lowering against the reference evaluator: every benchmark pipeline under the default
// schedule and under hand-written schedules (compute_root, splits, tiles, compute_at,
// store_at, parallel, vectorize, unroll) must give bit-identical outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "tests/compiler_core/lowering/lowering_harness.h"

namespace stipple {
namespace {

/// The JIT's output equals the evaluator's byte for byte.
void expect_same_bytes(const Buffer& got, const Buffer& expected) {
  ASSERT_EQ(got.size_in_bytes(), expected.size_in_bytes());
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size_in_bytes()), 0);
}

/// Lowers `p` under `s`, runs it by the JIT over `extents`, and compares with `expected`.
void expect_jit_equals(codegen::JitCompiler& jit, const Pipeline& p, const Schedule& s,
                       const InputImages& inputs, const std::vector<int64_t>& extents,
                       const Buffer& expected) {
  const LoweredFunction f = lower(p, s);
  auto fn = jit.compile(f);
  expect_same_bytes(run_lowered(*fn, f, p, inputs, {}, extents), expected);
}

/// Values in [0, 1] with few repeats, element i at (i * 37 % 101) / 100.
Buffer scrambled_ramp(std::vector<int64_t> extents) {
  Buffer b(ScalarType::Float32, std::move(extents));
  for (int64_t i = 0; i < b.element_count(); ++i) {
    b.set_flat(i, static_cast<float>((i * 37 % 101) / 100.0));
  }
  return b;
}

TEST(Lowering, DefaultScheduleMatchesEvaluatorOnEveryBenchmark) {
  auto jit = codegen::JitCompiler::create();
  int checked = 0;
  for (const std::string& path : testing_lowering::benchmark_paths()) {
    SCOPED_TRACE(path);
    testing_lowering::Case c(path);
    std::string why = c.check(*jit, Schedule{});
    EXPECT_EQ(why, "") << path;
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

// The committed datasets/pipelines/NAME.sched of every benchmark pipeline (what the README's
// main job and `stipple run --schedule` use) gives the evaluator's output byte for byte.
TEST(Lowering, CommittedBenchmarkSchedulesMatchEvaluator) {
  auto jit = codegen::JitCompiler::create();
  int checked = 0;
  for (const std::string& path : testing_lowering::benchmark_paths()) {
    std::string sched = path.substr(0, path.size() - 4) + ".sched";
    ASSERT_TRUE(std::filesystem::exists(sched)) << sched;
    testing_lowering::Case c(path);
    Schedule s = load_schedule_file(sched, c.pipeline);
    EXPECT_EQ(c.check(*jit, s), "") << sched;
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

// Hand-written schedules of blur3x3 and two_pass_blur: every directive and level kind.
TEST(Lowering, HandWrittenSchedulesMatchEvaluator) {
  auto jit = codegen::JitCompiler::create();
  const std::string dir = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/";
  struct Sched {
    const char* pipeline;
    const char* text;
  };
  const Sched scheds[] = {
      {"blur3x3", "blur_x.compute_root()"},
      {"blur3x3",
       "blur_x.compute_root().split(x, xo, xi, 7).parallel(y)\n"
       "blur_y.tile(x, y, xo, yo, xi, yi, 5, 3).parallel(yo)"},
      {"blur3x3", "blur_x.compute_at(blur_y, y).vectorize(x, 8)\nblur_y.parallel(c)"},
      {"blur3x3",
       "blur_x.compute_at(blur_y, xi).store_at(blur_y, yo)\n"
       "blur_y.tile(x, y, xo, yo, xi, yi, 16, 16, guard_with_if)"},
      {"blur3x3",
       "blur_x.compute_at(blur_y, y).split(x, xo, xi, 10, shift_inwards)\n"
       "blur_y.split(x, x, xi, 9, shift_inwards).unroll(xi, 3)"},
      {"blur3x3", "blur_x.compute_root().split(y, yo, yi, 5, round_up).reorder(c, yi, x, yo)"},
      {"two_pass_blur", "A.compute_at(out, c).vectorize(x, 4)\nnorm.compute_root()"},
  };
  std::map<std::string, testing_lowering::Case> cases;
  for (const Sched& sc : scheds) {
    SCOPED_TRACE(sc.text);
    auto it = cases.find(sc.pipeline);
    if (it == cases.end()) {
      it = cases.emplace(sc.pipeline, testing_lowering::Case(dir + sc.pipeline + ".stp")).first;
    }
    Schedule s = compile_schedule(sc.text, "test.sched", it->second.pipeline);
    EXPECT_EQ(it->second.check(*jit, s), "");
  }
}

// A data-dependent scatter: stores whose index leaves the box are skipped, exactly as the
// evaluator skips them; the bounded read decides the box.
TEST(Lowering, UnboundedScatterSkipsStoresOutsideTheBox) {
  Pipeline p = compile_pipeline(
      "pipeline scatter\n"
      "input in : f32[x, y]\n"
      "func h(i) = 0\n"
      "h(i32(in(x, y) * 300.0) - 20) += 1 for x in in, y in in\n"
      "func out(x, y) = h(clamp(x * 7 + y, 0, 255))\n"
      "output out\n",
      "scatter.stp");
  InputImages inputs;
  Buffer in(ScalarType::Float32, {16, 12});
  for (int64_t i = 0; i < in.element_count(); ++i)
    in.set_flat(i, static_cast<float>((i * 37 % 101) / 100.0));
  inputs["in"] = in;
  Buffer expected = evaluate_pipeline(p, inputs);
  auto jit = codegen::JitCompiler::create();
  for (const char* text : {"", "h.compute_at(out, y)", "out.parallel(y)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "s", p);
    EXPECT_NE(lowered_text(p, s).find("h.s1.site.0 >= h.cmin.0"), std::string::npos);
    expect_jit_equals(*jit, p, s, inputs, {16, 12}, expected);
  }
}

// A scatter whose sites are bounded stores without checking them: the box is the union of
// their intervals, so none can leave it (the unbounded scatter above keeps its check).
// Values as the evaluator's, under schedules that move and split the scatter.
TEST(Lowering, ABoundedScatterStoresWithoutACheck) {
  Pipeline p = compile_pipeline(
      "pipeline bounded_scatter\n"
      "input in : f32[x, y]\n"
      "func h(i, c) = 0.0\n"
      "h(clamp(i32(in(x, y) * 300.0) - 20, 0, 255), c) += select(c == 0, in(x, y), 1.0)"
      " for x in in, y in in\n"
      "func out(x, y) = h(clamp(x * 7 + y, 0, 255), 0) / max(h(clamp(x * 7 + y, 0, 255), 1), 1.0)\n"
      "output out\n",
      "bounded_scatter.stp");
  InputImages inputs = {{"in", scrambled_ramp({16, 12})}};
  Buffer expected = evaluate_pipeline(p, inputs);
  auto jit = codegen::JitCompiler::create();
  for (const char* text : {"", "h.update(0).reorder(c, x, y).unroll(c, 2)",
                           "h.compute_at(out, y)\nh.update(0).split(y, yo, yi, 5)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "s", p);
    const std::string lowered = lowered_text(p, s);
    EXPECT_NE(lowered.find("h(h.s1.site.0, h.s1.c) = h(h.s1.site.0, h.s1.c) + "), std::string::npos)
        << lowered;
    EXPECT_EQ(lowered.find("h.s1.site.0 >= h.cmin.0"), std::string::npos) << lowered;
    expect_jit_equals(*jit, p, s, inputs, {16, 12}, expected);
  }
}

// A scatter binds each computed site coordinate to a Let before its bounds check, and the
// check, the store and the value's read of the site use it: one computation per point, at
// the top of the iteration, where the channels of a splat (a bare pure variable of the
// site, here innermost or unrolled) share it. Values as the evaluator's, with stores
// outside the box skipped.
TEST(Lowering, AScatterComputesItsSiteOnceBeforeItsCheck) {
  Pipeline p = compile_pipeline(
      "pipeline splat\n"
      "input in : f32[x, y, c]\n"
      "func g(gx, gz, gc) = 0.0\n"
      "g((x + 2) / 4, i32(in(x, y, 0) * 9.0) - 1, gc) += select(gc == 2, 1.0, in(x, y, gc))"
      " for x in in, y in in\n"
      "func out(x, z) = g(x, clamp(z, 0, 7), 0) + g(x, clamp(z, 0, 7), 2)\n"
      "output out\n",
      "splat.stp");
  InputImages inputs = {{"in", scrambled_ramp({19, 7, 2})}};
  Buffer expected = evaluate_pipeline_region(p, inputs, {}, {0, 0}, {5, 8});
  auto jit = codegen::JitCompiler::create();
  for (const char* text :
       {"", "g.update(0).reorder(gc, x, y)", "g.update(0).reorder(gc, x, y).unroll(gc, 4)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "s", p);
    const std::string lowered = lowered_text(p, s);
    EXPECT_NE(lowered.find("let g.s1.site.0 = (g.s1.x + 2) / 4"), std::string::npos) << lowered;
    EXPECT_NE(lowered.find("let g.s1.site.1 = i32(in(g.s1.x, g.s1.y, 0) * 9.0) - 1"),
              std::string::npos);
    EXPECT_NE(lowered.find("g(g.s1.site.0, g.s1.site.1, g.s1.gc) = g(g.s1.site.0, g.s1.site.1, "
                           "g.s1.gc) + "),
              std::string::npos)
        << lowered;
    EXPECT_EQ(lowered.find("(g.s1.x + 2) / 4 >="), std::string::npos) << "the check recomputes";
    expect_jit_equals(*jit, p, s, inputs, {5, 8}, expected);
  }
}

// bound(c, 0, 3) of the output: its region and the regions of the funcs before it are
// constants (what lets channel loops unroll without guards), the values are the
// evaluator's, and an output that does not span the bound is refused before anything runs,
// by run_lowered with a message and by the generated code itself (a caller of the object
// file has no run_lowered).
TEST(Lowering, ABoundOutputIsComputedOverItsConstantRange) {
  Pipeline p = compile_pipeline(
      "pipeline bounded\n"
      "input in : f32[x, y, c]\n"
      "func g(x, y, c) = in(x, y, c) * 2.0 + f32(c)\n"
      "func out(x, y, c) = g(x, y, c) * 0.5 + g(x + 1, y, 2 - c)\n"
      "output out\n",
      "bounded.stp");
  InputImages inputs = {{"in", scrambled_ramp({9, 5, 3})}};
  Buffer expected = evaluate_pipeline_region(p, inputs, {}, {0, 0, 0}, {7, 5, 3});
  auto jit = codegen::JitCompiler::create();
  for (const char* text :
       {"out.bound(c, 0, 3)",
        "g.compute_at(out, x)\nout.bound(c, 0, 3).reorder(c, x, y).unroll(c, 3)",
        "g.compute_root().vectorize(x, 4)\nout.bound(c, 0, 3).bound(y, 0, 5).vectorize(x, 8)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "s", p);
    const std::string lowered = lowered_text(p, s);
    EXPECT_NE(lowered.find("let out.rmin.2 = 0\n"), std::string::npos) << lowered;
    EXPECT_NE(lowered.find("let out.rmax.2 = 2\n"), std::string::npos);
    LoweredFunction f = lower(p, s);
    ASSERT_EQ(f.buffers.size(), 1u);
    ASSERT_EQ(f.buffers[0].fixed.size(),
              std::string(text).find("bound(y") == std::string::npos ? 1u : 2u);
    auto fn = jit->compile(f);
    expect_same_bytes(run_lowered(*fn, f, p, inputs, {}, {7, 5, 3}), expected);
    try {
      run_lowered(*fn, f, p, inputs, {}, {7, 5, 2});
      ADD_FAILURE() << "a 2-channel output was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("the schedule bounds 'out' to 0..2 in 'c' (bound), "
                                           "but the output is 0..1 there"),
                std::string::npos)
          << e.what();
    }
    // The generated code checks too: a 4-channel output is refused untouched.
    Buffer four(ScalarType::Float32, {7, 5, 4});
    std::vector<codegen::BufferDescriptor> d = {codegen::describe(inputs["in"]),
                                                codegen::describe(four)};
    const std::vector<double> no_params = {};
    EXPECT_EQ((*fn)(d.data(), no_params.data()), codegen::kErrorBufferMismatch);
  }
}

// An output with updates (a running sum along x) is realised in its own buffer and then
// copied into the caller's.
TEST(Lowering, OutputWithUpdatesMatchesEvaluator) {
  Pipeline p = compile_pipeline(
      "pipeline scan\n"
      "input in : f32[x, y]\n"
      "func out(x, y) = in(x, y)\n"
      "out(r, y) = out(r, y) + out(r - 1, y) for r in 1..in.width - 1\n"
      "output out\n",
      "scan.stp");
  InputImages inputs;
  Buffer in(ScalarType::Float32, {13, 6});
  for (int64_t i = 0; i < in.element_count(); ++i) {
    in.set_flat(i, static_cast<float>((i * 29 % 97) / 7.0));
  }
  inputs["in"] = in;
  Buffer expected = evaluate_pipeline(p, inputs);
  auto jit = codegen::JitCompiler::create();
  for (const char* text : {"", "out.update(0).parallel(y).split(r, ro, ri, 4)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "s", p);
    expect_jit_equals(*jit, p, s, inputs, {13, 6}, expected);
  }
}

// A reduction that reads an inlined reduction at arguments free of its own variables
// evaluates it once per point (hoist_invariant_reductions.h), with the same result bit for
// bit; one that reads it at its own variables does not hoist it.
TEST(Lowering, InvariantInnerReductionsAreHoisted) {
  Pipeline p = compile_pipeline(
      "pipeline hoist\n"
      "input in : f32[x, y]\n"
      "func s(x, y) = sum(j in -2..2 : in(x + j, y))\n"
      "func t(x, y) = maximum(j in 0..2 : in(x, y + j))\n"
      "func out(x, y) = sum(i in -1..1 : in(x, y + i) / s(x, y) + t(x + i, y))\n"
      "output out\n",
      "hoist.stp");
  InputImages inputs;
  Buffer in(ScalarType::Float32, {37, 11});
  for (int64_t i = 0; i < in.element_count(); ++i) {
    in.set_flat(i, static_cast<float>(0.5 + (i * 31 % 89) / 10.0));
  }
  inputs["in"] = in;
  Buffer expected = evaluate_pipeline(p, inputs);
  auto jit = codegen::JitCompiler::create();
  for (const char* text : {"", "out.vectorize(x, 8).parallel(y)"}) {
    SCOPED_TRACE(text);
    Schedule s = compile_schedule(text, "s", p);
    LoweredFunction f = lower(p, s);
    const std::string nest = to_string(f.body);
    // s is bound once, outside the sum over i; t (read at x + i) stays inside it.
    const size_t hoisted = nest.find("let hoisted$");
    ASSERT_NE(hoisted, std::string::npos) << nest;
    EXPECT_EQ(nest.find("let hoisted$", hoisted + 1), std::string::npos) << nest;
    EXPECT_LT(hoisted, nest.find("sum(i")) << nest;
    auto fn = jit->compile(f);
    expect_same_bytes(run_lowered(*fn, f, p, inputs, {}, {37, 11}), expected);
  }
}

// The text the lead's `stipple lower` prints: the loop nest with its directives visible.
TEST(Lowering, LoweredTextShowsTheLoopNest) {
  Pipeline p =
      load_pipeline_file(std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/blur3x3.stp");
  Schedule s = compile_schedule(
      "blur_x.compute_at(blur_y, yo)\nblur_y.split(y, yo, yi, 8).parallel(yo)", "s", p);
  std::string text = lowered_text(p, s);
  EXPECT_NE(text.find("parallel blur_y.s0.yo"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate blur_x"), std::string::npos) << text;
  // blur_x is computed inside the parallel loop, before blur_y's inner loops.
  EXPECT_LT(text.find("parallel blur_y.s0.yo"), text.find("allocate blur_x")) << text;
}

}  // namespace
}  // namespace stipple
