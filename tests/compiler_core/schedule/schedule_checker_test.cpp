// The schedule checker: legal schedules pass and resolve to the documented loop nests
// (LOOPS.md); each illegal schedule fails with one message at the exact line:col, in
// the manner of tests/compiler_core/language/error_test.cpp.
#include "compiler_core/schedule/schedule_checker.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_loops.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "compiler_core/support/host_probe.h"

namespace stipple {
namespace {

// A blur (A along x, B along y, B inlined by default), a scan (update along rvar r that
// reads r - 1; y is independent), a histogram (rvars x, y write data-dependent sites).
const char* kPipeline = R"(pipeline p
input in : f32[x, y, c]
func A(x, y, c) = in(x - 1, y, c) + in(x + 1, y, c)
func B(x, y, c) = A(x, y - 1, c) + A(x, y + 1, c)
func scan(x, y) = in(x, y, 0)
scan(r, y) = scan(r, y) + scan(r - 1, y) for r in 1..in.width-1
func hist(i) = 0
hist(clamp(i32(in(x, y, 0) * 255.0), 0, 255)) += 1 for x in in, y in in
func out(x, y, c) = B(x, y, c) + scan(x, y) + f32(hist(clamp(x, 0, 255)))
output out
)";

const Pipeline& pipeline() {
  static const Pipeline p = compile_pipeline(kPipeline, "p.stp");
  return p;
}

std::string loops(const std::string& text, const std::string& func, int stage) {
  Schedule s = compile_schedule(text, "s", pipeline());
  SourceText src(text, "s");
  return stage_loop_nest(s, pipeline(), *pipeline().find_func(func), stage, src).describe();
}

TEST(ScheduleChecker, AcceptsLegalSchedules) {
  const char* ok[] = {
      "",
      "out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo).vectorize(xi, 8)\n"
      "A.compute_at(out, yi).store_at(out, yo).vectorize(x, 8)\n",
      "B.compute_root().parallel(c)\nA.compute_at(B, y).store_at(B, c)\n",
      "B.compute_at(out, y)\nA.compute_at(B, y).store_at(out, c)\n",
      "A.compute_at(out, x).store_root()\n",
      "scan.update(0).parallel(y).split(r, ro, ri, 16).unroll(ri, 4)\n",
      "scan.update(0).reorder(y, r)\n",
      "scan.compute_at(out, y).vectorize(x, 4)\nscan.update(0).reorder(y, r).vectorize(y, 8)\n",
      "hist.update(0).unroll(x, 2).split(y, yo, yi, 7, guard_with_if)\n",
      "hist.compute_root().parallel(i)\n",
      "out.split(x, x, xi, 16).compute_root().reorder(c, xi, x, y)\n",
      "A.compute_inline()\nB.compute_inline()\nout.compute_root().store_root()\n",
      "out.split(y, yo, yi, 8, shift_inwards).split(x, xo, xi, 8, guard_with_if)\n"
      "A.compute_root().split(x, xo, xi, 8, round_up)\n",
      "out.vectorize(x, 8).unroll(x, 2).parallel(y)\n",
      "out.bound(c, 0, 3).unroll(c, 3).bound(x, -4, 64)\n",
  };
  for (const char* text : ok) {
    EXPECT_NO_THROW(compile_schedule(text, "s", pipeline())) << text;
  }
}

TEST(ScheduleChecker, LoopNestsFollowLoopsMd) {
  EXPECT_EQ(loops("", "out", 0), "x, y, c");
  EXPECT_EQ(loops("", "scan", 1), "r, y");
  EXPECT_EQ(loops("", "hist", 0), "i");
  EXPECT_EQ(loops("", "hist", 1), "x, y");
  EXPECT_EQ(
      loops("out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo).vectorize(xi, 8)", "out", 0),
      "xi.vector, xi, yi, xo, yo, c");
  EXPECT_EQ(loops("out.split(x, x, xi, 4).reorder(c, xi)", "out", 0), "c, x, y, xi");
  EXPECT_EQ(loops("out.reorder(c, y, x)", "out", 0), "c, y, x");
  EXPECT_EQ(loops("out.unroll(y, 2).vectorize(x, 4)", "out", 0), "x.vector, x, y.unroll, y, c");
  Schedule s = compile_schedule(
      "out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo).vectorize(xi, 8)", "s", pipeline());
  SourceText src("", "s");
  StageLoopNest n = stage_loop_nest(s, pipeline(), *pipeline().find_func("out"), 0, src);
  ASSERT_EQ(n.splits.size(), 3u);
  EXPECT_EQ(n.splits[0].old_var, "x");
  EXPECT_EQ(n.splits[0].outer, "xo");
  EXPECT_EQ(n.splits[0].inner, "xi");
  EXPECT_EQ(n.splits[0].factor, 256);
  EXPECT_EQ(n.splits[1].factor, 32);
  EXPECT_EQ(n.splits[2].inner, "xi.vector");
  EXPECT_EQ(n.loops[0].for_type, ForType::Vectorized);
  EXPECT_EQ(n.loops[0].lanes, 8);
  EXPECT_EQ(n.loops[0].origin, "x");
  EXPECT_EQ(n.loops[4].for_type, ForType::Parallel);
  StageLoopNest sc = default_loop_nest(*pipeline().find_func("scan"), 1);
  EXPECT_TRUE(sc.loops[0].reduction && sc.loops[0].dependent);
  EXPECT_FALSE(sc.loops[1].reduction || sc.loops[1].dependent);
}

// gpu_tile is tile, then the inner loops as GPU threads and the outer as GPU blocks; the
// thread counts are the split factors.
TEST(ScheduleChecker, GpuTileMapsTheTileToThreadsAndBlocks) {
  const std::string text = "out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8).gpu_blocks(c)";
  Schedule s = compile_schedule(text, "s", pipeline());
  SourceText src(text, "s");
  const StageLoopNest nest = stage_loop_nest(s, pipeline(), *pipeline().find_func("out"), 0, src);
  EXPECT_EQ(nest.describe(), "xi, yi, xo, yo, c");
  const ForType expected[] = {ForType::GpuThread, ForType::GpuThread, ForType::GpuBlock,
                              ForType::GpuBlock, ForType::GpuBlock};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(nest.loops[i].for_type, expected[i]) << i;
  EXPECT_EQ(gpu_thread_extent(nest, 0), 16);
  EXPECT_EQ(gpu_thread_extent(nest, 1), 8);
  // The largest block: 1024 threads.
  EXPECT_NO_THROW(compile_schedule("out.gpu_tile(x, y, xo, yo, xi, yi, 32, 32)", "s", pipeline()));
}

TEST(ScheduleChecker, EffectiveLevels) {
  Schedule s = compile_schedule("A.compute_at(out, y)\n", "s", pipeline());
  const Pipeline& p = pipeline();
  EXPECT_EQ(effective_compute_level(s, p, *p.find_func("A")), LoopLevel::at("out", 0, "y"));
  EXPECT_EQ(effective_store_level(s, p, *p.find_func("A")), LoopLevel::at("out", 0, "y"));
  EXPECT_EQ(effective_compute_level(s, p, *p.find_func("B")), LoopLevel::inlined());
  EXPECT_EQ(effective_compute_level(s, p, *p.find_func("scan")), LoopLevel::root());
  EXPECT_EQ(effective_compute_level(s, p, *p.find_func("out")), LoopLevel::root());
}

struct CheckCase {
  const char* name;
  const char* schedule;
  int line, col;
  const char* message;
};

const CheckCase kCases[] = {
    // Funcs and stages
    {"unknown_func", "out.parallel(y)\nC.compute_root()", 2, 1,
     "unknown func 'C'; the pipeline's funcs are A, B, scan, hist, out"},
    {"input", "in.compute_root()", 1, 1, "'in' is an input; only funcs are scheduled"},
    {"unknown_update", "scan.update(1).parallel(y)", 1, 1,
     "'scan' has 1 update definition; update(1) does not exist"},
    {"no_updates", "A.compute_root()\nA.update(0).parallel(y)", 2, 1,
     "'A' has no update definitions; update(0) does not exist"},
    // Levels of one func
    {"output_compute_at", "out.compute_at(B, x)", 1, 5,
     "the output func 'out' is always computed at root"},
    {"output_inline", "out.compute_inline()", 1, 5,
     "the output func 'out' is always computed at root"},
    {"output_store_at", "out.store_at(B, x)", 1, 5,
     "the output func 'out' is always stored at root"},
    {"inline_with_updates", "hist.compute_inline()", 1, 6,
     "'hist' has update definitions, so it cannot be inlined"},
    {"inlined_store", "A.store_root()", 1, 3,
     "'A' is inlined, so it has no storage to place; give it compute_root() or compute_at(...)"},
    {"inlined_directives", "A.vectorize(x, 4)", 1, 3,
     "'A' is inlined, so it has no loops to schedule"},
    // Directives
    {"unknown_loop", "out.split(z, zo, zi, 4)", 1, 11,
     "'out' has no loop 'z' here; its loops, innermost first, are x, y, c"},
    {"split_away", "out.split(x, xo, xi, 4).parallel(x)", 1, 34,
     "loop 'x' of 'out' was split into 'xo' and 'xi'; name one of those"},
    {"same_new_names", "out.split(x, xo, xo, 4)", 1, 18,
     "the outer and inner loops of a split need different names"},
    {"inner_keeps_name", "out.split(x, xo, x, 4)", 1, 18, "the inner loop needs a new name"},
    {"name_taken", "out.split(x, y, xi, 4)", 1, 14, "'y' already names a loop of 'out'"},
    {"name_taken_earlier", "out.split(x, xo, xi, 4).split(y, yo, xo, 4)", 1, 38,
     "'xo' already names a loop of 'out'"},
    {"zero_factor", "out.split(x, xo, xi, 0)", 1, 22, "the split factor must be positive, found 0"},
    {"negative_factor", "out.split(x, xo, xi, -8)", 1, 22, "must be positive, found -8"},
    // A factor whose loop count wrapped in 32 bits gave an output never written (issue #24).
    {"huge_factor", "out.split(x, xo, xi, 2147483647)", 1, 22,
     "the split factor must be at most 16777216, found 2147483647"},
    {"huge_tile_factor", "out.tile(x, y, xo, yo, xi, yi, 8, 16777217)", 1, 35,
     "the split factor must be at most 16777216, found 16777217"},
    // GPU loops (LOOPS.md, "GPU loops").
    {"gpu_threads_without_blocks", "out.split(x, xo, xi, 32).gpu_threads(xi)", 1, 26,
     "'out' has GPU thread loops but no GPU block loop outside them"},
    {"gpu_threads_unsplit", "out.gpu_blocks(y).gpu_threads(x)", 1, 19,
     "GPU thread loop 'x' of 'out' is not the inner loop of a split"},
    {"gpu_too_many_threads", "out.gpu_tile(x, y, xo, yo, xi, yi, 64, 32)", 1, 5,
     "'out' has 2048 GPU threads per block; a block has at most 1024"},
    {"gpu_parallel_in_kernel", "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8).parallel(c)", 1, 42,
     "'out' has GPU loops and a parallel loop"},
    {"gpu_threads_outside_blocks",
     "out.tile(x, y, xo, yo, xi, yi, 8, 8).gpu_blocks(xi).gpu_threads(xo)", 1, 53,
     "the GPU thread loops of 'out' must be directly inside its GPU block loops"},
    {"gpu_blocks_apart", "out.tile(x, y, xo, yo, xi, yi, 8, 8).gpu_blocks(xo, c)", 1, 38,
     "the GPU block loops of 'out' must be adjacent, but 'yo' is between them"},
    {"gpu_split_after", "out.gpu_blocks(y).split(y, yo, yi, 8)", 1, 25,
     "loop 'y' is already a GPU block loop; split it before making it a GPU block loop"},
    {"gpu_threads_twice", "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8).gpu_threads(xi)", 1, 54,
     "loop 'xi' is already a GPU thread loop"},
    {"gpu_parallel_after", "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8).parallel(xo)", 1, 51,
     "loop 'xo' is a GPU loop; its iterations already run in parallel on the GPU"},
    {"gpu_blocks_arity", "out.gpu_blocks(x, y, c, xo)", 1, 5,
     "gpu_blocks takes 1 to 3 arguments, found 4"},
    {"gpu_nested_kernel",
     "A.compute_at(out, xi).gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n"
     "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)",
     1, 3,
     "'A' is computed inside GPU loop 'xi' of 'out', so it runs inside that kernel, but its "
     "loop 'xi' of 'A' is a GPU loop"},
    {"gpu_store_outside_kernel",
     "A.store_root().compute_at(out, xi)\nout.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)", 1, 3,
     "'A' is stored at root but computed inside the GPU loop 'xi' of 'out'"},
    {"bad_tail", "out.split(x, xo, xi, 8, sideways)", 1, 25,
     "unknown tail strategy 'sideways'; use auto, round_up, guard_with_if or shift_inwards"},
    {"round_up_output", "out.split(x, xo, xi, 8, round_up)", 1, 25,
     "round_up would write past the edge of the output buffer"},
    {"shift_update", "scan.update(0).split(y, yo, yi, 8, shift_inwards)", 1, 36,
     "shift_inwards would run some iterations of an update twice"},
    {"tile_same", "out.tile(x, x, xo, yo, xi, yi, 8, 8)", 1, 13, "tile needs two different loops"},
    {"tile_names", "out.tile(x, y, xo, yo, xo, yi, 8, 8)", 1, 24,
     "'xo' is given twice; the four new loops of a tile need different names"},
    {"tile_factor", "out.tile(x, y, xo, yo, xi, yi, 8, 0)", 1, 35,
     "the split factor must be positive"},
    {"reorder_twice", "out.reorder(x, y, x)", 1, 19, "'x' appears twice in reorder"},
    {"reorder_unknown", "out.reorder(x, q)", 1, 16, "'out' has no loop 'q' here"},
    {"width_three", "out.vectorize(x, 3)", 1, 18,
     "the vector width must be a power of two from 2 to 64, found 3"},
    {"width_huge", "out.vectorize(x, 128)", 1, 18, "power of two from 2 to 64, found 128"},
    {"vectorize_outer", "out.vectorize(y, 8)", 1, 15,
     "only the innermost loop can be vectorized; 'y' of 'out' has 'x' inside it"},
    {"vectorize_twice", "out.vectorize(x, 8).vectorize(x, 4)", 1, 31,
     "only the innermost loop can be vectorized"},
    {"parallel_twice", "out.parallel(y).parallel(y)", 1, 26, "loop 'y' is already parallel"},
    {"split_parallel", "out.parallel(y).split(y, yo, yi, 8)", 1, 23,
     "loop 'y' is already parallel; split it before making it parallel"},
    {"unroll_one", "out.unroll(x, 1)", 1, 15, "the unroll factor must be from 2 to 64, found 1"},
    {"unroll_twice", "out.unroll(x, 2).unroll(x, 2)", 1, 25, "loop 'x' is already unrolled"},
    // bound (LOOPS.md, "Bounds")
    {"bound_not_output", "A.compute_root().bound(c, 0, 3)", 1, 18,
     "bound(...) fixes the region of the output, and 'A' is not the output ('out' is)"},
    {"bound_unknown_var", "out.bound(z, 0, 3)", 1, 5,
     "'z' is not a variable of 'out''s definition (x, y, c)"},
    {"bound_split_loop", "out.split(c, co, ci, 2).bound(ci, 0, 2)", 1, 25,
     "'ci' is not a variable of 'out''s definition"},
    {"bound_twice", "out.bound(c, 0, 3).bound(c, 0, 4)", 1, 20,
     "'out' is already bounded in 'c'; bound it once"},
    {"bound_empty", "out.bound(c, 0, 0)", 1, 5, "the extent must be at least 1"},
    {"bound_past_i32", "out.bound(x, 2147483000, 1000)", 1, 5, "the range within i32"},
    // Dependences of updates
    {"vectorize_scan", "scan.update(0).vectorize(r, 4)", 1, 26,
     "cannot vectorize loop 'r' of 'scan.update(0)': the update carries a dependence along 'r' "
     "(it reads scan(r - 1, y), another site along 'r')"},
    {"parallel_scan_split", "scan.update(0).split(r, ro, ri, 8).parallel(ro)", 1, 45,
     "cannot parallelize loop 'ro' of 'scan.update(0)': the update carries a dependence along 'r'"},
    {"parallel_hist", "hist.update(0).parallel(y)", 1, 25,
     "cannot parallelize loop 'y' of 'hist.update(0)': the update carries a dependence along 'y' "
     "(different iterations of 'y' may write the same site of 'hist')"},
    {"reorder_hist", "hist.update(0).reorder(y, x)", 1, 16,
     "this reorder would change the order of loops 'x' and 'y' of 'hist.update(0)'"},
    {"tile_hist", "hist.update(0).tile(x, y, xo, yo, xi, yi, 4, 4)", 1, 16,
     "this reorder would change the order of loops"},
    {"vectorize_hist", "hist.update(0).vectorize(x, 8)", 1, 26, "cannot vectorize loop 'x'"},
    // compute_at and store_at
    {"compute_at_self", "A.compute_at(A, x)", 1, 3,
     "'A' cannot be computed at one of its own loops"},
    {"compute_at_unknown", "A.compute_at(Z, x)", 1, 3, "unknown func 'Z' in compute_at"},
    {"compute_at_input", "A.compute_at(in, x)", 1, 3, "'in' is an input and has no loops"},
    {"compute_at_bad_stage", "A.compute_at(out.update(0), x)", 1, 3,
     "'out' has no stage out.update(0)"},
    {"compute_at_inlined", "A.compute_at(B, y)", 1, 3,
     "'B' is inlined, so it has no loops to compute 'A' at; give 'B' compute_root() or "
     "compute_at(...)"},
    {"compute_at_no_loop", "B.compute_root()\nA.compute_at(B, z)", 2, 3,
     "'B' has no loop 'z'; its loops, innermost first, are x, y, c"},
    {"compute_at_split_loop", "out.split(y, yo, yi, 8)\nA.compute_at(out, y)", 2, 3,
     "loop 'y' of 'out' was split into 'yo' and 'yi'; name one of those"},
    {"store_at_no_loop", "A.compute_at(out, y).store_at(out, q)", 1, 22, "'out' has no loop 'q'"},
    {"not_a_consumer", "B.compute_root()\nscan.compute_at(B, y)", 2, 6,
     "'B' does not use 'scan', directly or through other funcs"},
    {"wrong_stage", "hist.compute_root()\nA.compute_at(hist.update(0), x)", 2, 3,
     "'hist' does not use 'A'"},
    {"use_outside", "B.compute_root()\nA.compute_at(out, y)", 2, 3,
     "'A' is also used by 'B', outside loop 'y' of 'out'; every use of a func must be inside the "
     "loop it is computed at"},
    {"use_outside_inner", "B.compute_at(out, c)\nA.compute_at(out, y)", 2, 3,
     "'A' is also used by 'B', outside loop 'y' of 'out'"},
    {"cycle", "A.compute_at(B, x)\nB.compute_at(A, x)", 1, 3,
     "compute_at cycle: 'A' is computed inside 'B', which is computed inside 'A'"},
    {"store_inside_compute", "A.compute_at(out, y).store_at(out, x)", 1, 22,
     "'A' is stored at loop 'x' of 'out', which is not outside loop 'y' of 'out' where it is "
     "computed"},
    {"store_inside_root", "A.compute_root().store_at(out, y)", 1, 18,
     "'A' is stored at loop 'y' of 'out', inside its compute level (root)"},
    {"store_other_branch", "B.compute_at(out, y)\nA.compute_at(out, y).store_at(B, c)", 2, 22,
     "which is not outside loop 'y' of 'out'"},
    {"parallel_between", "out.parallel(y)\nA.compute_at(out, x).store_at(out, c)", 2, 22,
     "'A' is stored at loop 'c' of 'out' but computed inside the parallel loop 'y' of 'out', so "
     "its threads would share one buffer"},
    {"parallel_between_root", "out.parallel(c)\nA.compute_at(out, y).store_root()", 2, 22,
     "computed inside the parallel loop 'c'"},
};

class CheckErrors : public ::testing::TestWithParam<CheckCase> {};

TEST_P(CheckErrors, ReportExactLocation) {
  const CheckCase& c = GetParam();
  try {
    compile_schedule(c.schedule, "bad.sched", pipeline());
    FAIL() << "accepted: " << c.schedule;
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.col(), c.col) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(All, CheckErrors, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// vectorize(x, vectors(k)): k native registers of the target, in 32-bit lanes (f32 here;
// hist is i32), resolved when the schedule is compiled for it.
TEST(ScheduleChecker, VectorsCountTheTargetsRegisters) {
  const std::string text =
      "out.vectorize(x, vectors(4))\nA.compute_root().vectorize(x, vectors(1))\n"
      "hist.compute_root().vectorize(i, vectors(2))\n";
  for (const auto& [bytes, lanes] : {std::pair{16, 4}, {32, 8}, {64, 16}}) {
    Schedule s = compile_schedule(text, "s", pipeline(), ScheduleTarget::Cpu, bytes);
    EXPECT_EQ(s.find("out")->stages.at(0).directives[0].integer(1), 4 * lanes) << bytes;
    EXPECT_EQ(s.find("A")->stages.at(0).directives[0].integer(1), lanes) << bytes;
    EXPECT_EQ(s.find("hist")->stages.at(0).directives[0].integer(1), 2 * lanes) << bytes;
  }
  // Without a target, this host's registers (1, 2 or 4 of them: always a legal width).
  Schedule here = compile_schedule(text, "s", pipeline());
  EXPECT_EQ(here.find("A")->stages.at(0).directives[0].integer(1), host_vector_bytes() / 4);
  auto error_at = [&](const std::string& bad) -> std::pair<int, std::string> {
    try {
      compile_schedule(bad, "s", pipeline(), ScheduleTarget::Cpu, 16);
    } catch (const CompileError& e) {
      return {e.col(), e.message()};
    }
    return {0, "accepted"};
  };
  EXPECT_EQ(error_at("out.vectorize(x, vectors(3))"),
            (std::pair<int, std::string>{26, "vectors(k) takes 1, 2 or 4 registers, found 3"}));
  EXPECT_EQ(error_at("out.vectorize(x, lanes(4))").first, 18);
  EXPECT_EQ(error_at("out.vectorize(x, y)").first, 18);
  EXPECT_EQ(error_at("out.vectorize(x, vectors(4))").first, 0);
  // In text order with the checker's other errors: the unknown loop on line 1 first.
  try {
    compile_schedule("out.vectorize(q, 8)\nA.compute_root().vectorize(x, vectors(3))", "s",
                     pipeline());
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 1) << e.what();
  }
  // Checked without a target (check_schedule alone), a width in registers has no meaning.
  EXPECT_THROW(check_schedule(parse_schedule("out.vectorize(x, vectors(2))", "s"), pipeline()),
               CompileError);
}

TEST(ScheduleChecker, FirstErrorInTextOrder) {
  try {
    compile_schedule("out.parallel(q)\nZ.compute_root()\nA.vectorize(x, 3)", "s", pipeline());
    FAIL();
  } catch (const CompileError& e) {
    // Funcs are checked before directives: Z is the first error.
    EXPECT_EQ(e.line(), 2);
  }
  try {
    compile_schedule("A.compute_root().vectorize(x, 3)\nout.parallel(q)", "s", pipeline());
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 1);
  }
}

TEST(ScheduleChecker, WithoutSourceTheMessageStillHasTheReason) {
  Schedule s = parse_schedule("out.vectorize(y, 8)", "x.sched");
  try {
    check_schedule(s, pipeline());
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.file(), "x.sched");
    EXPECT_EQ(e.col(), 15);
    EXPECT_NE(e.message().find("only the innermost loop"), std::string::npos);
  }
}

TEST(ScheduleChecker, LaneLoopsCannotBeNamedFromCode) {
  // The text cannot spell "x.vector", but a schedule built in code could.
  Schedule s = parse_schedule("out.vectorize(x, 8)\nA.compute_at(out, x)", "s");
  s.funcs.at("out").stages.at(0).directives.push_back(
      Directive{"unroll", {ScheduleArg::make_name("x.vector"), ScheduleArg::make_int(2)}, {}});
  EXPECT_THROW(check_schedule(s, pipeline()), CompileError);
  s.funcs.at("out").stages.at(0).directives.pop_back();
  EXPECT_NO_THROW(check_schedule(s, pipeline()));
  s.funcs.at("A").compute->var = "x.vector";
  EXPECT_THROW(check_schedule(s, pipeline()), CompileError);
}

TEST(ScheduleChecker, LoadScheduleFile) {
  EXPECT_THROW(load_schedule_file("/nonexistent/s.sched", pipeline()), UserError);
}

// For a GPU target every func that is not inlined runs in a kernel: its own GPU loops, or
// computed inside another func's (ScheduleTarget::Gpu).
TEST(ScheduleChecker, GpuTargetNeedsEveryRealisedFuncInAKernel) {
  const Pipeline g = compile_pipeline(R"(pipeline g
input in : f32[x, y]
func k(i) = f32(i)
func n() = 2.0
func a(x, y) = in(x, y) * n() + k(x % 4)
func out(x, y) = a(x, y) + a(x + 1, y)
output out
)",
                                      "g.stp");
  const std::string tile = "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n";
  auto gpu = [&](const std::string& text) {
    return compile_schedule(text, "g.sched", g, ScheduleTarget::Gpu);
  };
  EXPECT_NO_THROW(gpu(tile));
  EXPECT_NO_THROW(gpu("a.compute_at(out, xi)\n" + tile));
  // At a block loop: inside the kernel too (each thread computes the block's region).
  EXPECT_NO_THROW(gpu("a.compute_at(out, xo)\n" + tile));
  EXPECT_NO_THROW(
      gpu("k.compute_root().split(i, io, ii, 32).gpu_blocks(io).gpu_threads(ii)\n" + tile));
  // A 0-d func at root in a kernel of one thread; any stage may run so, its loops serial.
  EXPECT_NO_THROW(gpu("n.compute_root().gpu_single_thread()\n" + tile));
  EXPECT_NO_THROW(gpu("a.compute_root().split(x, xo, xi, 4).gpu_single_thread()\n" + tile));
  // The same schedules are legal for a CPU.
  EXPECT_NO_THROW(compile_schedule("a.compute_root()\n" + tile, "g.sched", g));
  auto expect_error = [&](const std::string& text, int line, int col, const std::string& what) {
    try {
      gpu(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const CompileError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.col(), col) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("a.compute_root()\n" + tile, 1, 1,
               "'a' has no GPU loops and is not computed inside a kernel, so it would run on the "
               "host");
  expect_error("n.compute_root()\n" + tile, 1, 1,
               "'n' is computed at root, outside every GPU kernel, and has no variable to map to "
               "GPU threads");
  expect_error("a.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8).gpu_single_thread()\n" + tile,
               1, 55,
               "'a' already has GPU loops ('xi'); gpu_single_thread() runs it in one thread");
  expect_error("n.compute_root().gpu_single_thread().gpu_single_thread()\n" + tile, 1, 38,
               "'n' already has GPU loops ('gpu.single')");
  // ... nor GPU loops after it (its loops stay serial).
  expect_error("a.compute_root().gpu_single_thread().split(x, xo, xi, 4).gpu_blocks(xo)\n" + tile,
               1, 58, "'a' runs in one GPU thread (gpu_single_thread()); its loops stay serial");
  expect_error("a.compute_root().gpu_single_thread().gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n" + tile,
               1, 38, "'a' runs in one GPU thread (gpu_single_thread())");
  // The output is not in the schedule: the message names the schedule instead of a line.
  try {
    check_schedule(Schedule{}, g, nullptr, ScheduleTarget::Gpu);
    ADD_FAILURE() << "the default schedule was accepted for a GPU";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the default schedule: the output 'out' has no GPU loops; give it gpu_tile or "
              "gpu_blocks");
  }
}

// atomic() (LOOPS.md, "Atomic updates"): an update that adds to the site it writes may map
// the loops along which its iterations write the same sites to GPU blocks and threads, and
// reorder them; nothing else changes.
// A float `+= a * b` is contracted into fma(a, b, f(site)) (LANGUAGE.md, "Contraction"):
// still an add to the site it writes, of a * b.
TEST(ScheduleChecker, AContractedFloatSplatMayBeAtomic) {
  const Pipeline p = compile_pipeline(R"(pipeline s
input in : f32[x, y]
func w(i) = 0.0
w(clamp(i32(in(x, y) * 255.0), 0, 255)) += in(x, y) * 0.5 for x in in, y in in
output w size(256)
)",
                                      "s.stp");
  const Func& w = *p.find_func("w");
  ASSERT_EQ(to_string(w.updates[0].value).substr(0, 4), "fma(");
  EXPECT_EQ(atomic_update_error(w, 1), "");
}

TEST(ScheduleChecker, AtomicUpdatesMapTheirScatteringLoopsToTheGpu) {
  const std::string tile = "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n";
  const std::string hist_bins = "hist.split(i, io, ii, 32).gpu_blocks(io).gpu_threads(ii)\n";
  auto gpu = [&](const std::string& text) {
    return compile_schedule(text, "s.sched", pipeline(), ScheduleTarget::Gpu);
  };
  const std::string scan_gpu =
      "scan.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n"
      "scan.update(0).split(y, yo, yi, 32).gpu_blocks(yo).gpu_threads(yi)\n";
  const std::string atomic_hist =
      hist_bins + "hist.update(0).atomic().gpu_tile(x, y, xo, yo, xi, yi, 16, 16)\n";
  EXPECT_NO_THROW(gpu(atomic_hist + scan_gpu + tile));
  // The reduction loops became the kernel's blocks and threads (they reorder freely).
  EXPECT_EQ(loops(atomic_hist, "hist", 1), "xi, yi, xo, yo");
  EXPECT_NO_THROW(gpu(hist_bins +
                      "hist.update(0).atomic().split(y, yo, yi, 4).reorder(x, yo, yi)"
                      ".gpu_blocks(yi).split(x, xo, xi, 64).gpu_threads(xi)"
                      ".gpu_blocks(xo, yo)\n" +
                      scan_gpu + tile));
  auto expect_error = [&](const std::string& text, int line, int col, const std::string& what) {
    try {
      gpu(text + scan_gpu + tile);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const CompileError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.col(), col) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  // Without atomic(), the message says what would make it legal.
  expect_error(hist_bins + "hist.update(0).split(x, xo, xi, 16).gpu_blocks(xo).gpu_threads(xi)\n",
               2, 48, "give the stage atomic() first to sum into the same sites atomically");
  // gpu_tile maps both its loops: a dependent one needs atomic() (a scan's never can).
  expect_error(hist_bins + "hist.update(0).gpu_tile(x, y, xo, yo, xi, yi, 16, 16)\n", 2, 25,
               "cannot map to GPU blocks and threads loop 'x' of 'hist.update(0)'");
  try {
    gpu(atomic_hist +
        "scan.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n"
        "scan.update(0).gpu_tile(r, y, ro, yo, ri, yi, 8, 8)\n" +
        tile);
    ADD_FAILURE() << "a scan's dependent loop was mapped to GPU threads";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot map to GPU blocks and threads loop 'r' of "
                                         "'scan.update(0)': the update carries a dependence "
                                         "along 'r' (it reads scan(r - 1, y)"),
              std::string::npos)
        << e.what();
  }
  // atomic() comes first: it applies to the directives after it.
  expect_error(hist_bins + "hist.update(0).split(x, xo, xi, 16).gpu_blocks(xo).atomic()\n", 2, 48,
               "cannot map to GPU blocks loop 'xo' of 'hist.update(0)'");
  // Atomic adds are GPU stores: the CPU's parallel and vectorised loops still refuse.
  expect_error(hist_bins + "hist.update(0).atomic().parallel(y)\n", 2, 34,
               "atomic() makes its iterations safe to run on GPU threads, not CPU threads");
  expect_error(hist_bins + "hist.update(0).atomic().vectorize(x, 8)\n", 2, 35,
               "cannot vectorize loop 'x' of 'hist.update(0)'");
  // Only an update adding to the site it writes, with a value not reading the func.
  expect_error(hist_bins + "hist.atomic()\n", 2, 6,
               "atomic() applies to an update; 'hist' is a pure definition");
  expect_error("scan.update(0).atomic()\n", 1, 16,
               "atomic() needs an update whose added value does not read 'scan'; "
               "'scan.update(0)' reads scan(r - 1, y)");
  expect_error(hist_bins + "hist.update(0).atomic().atomic()\n", 2, 25,
               "'hist.update(0)' is already atomic");
  const Pipeline other = compile_pipeline(R"(pipeline o
input in : f32[x, y]
func m(i) = 0.0
m(clamp(i32(in(x, y) * 255.0), 0, 255)) max= in(x, y) for x in in, y in in
func b(i) = u8(0)
b(clamp(i32(in(x, y) * 255.0), 0, 255)) += u8(1) for x in in, y in in
func out(x, y) = in(x, y) * m(clamp(x, 0, 255)) + f32(b(clamp(x, 0, 255)))
output out
)",
                                          "o.stp");
  auto other_error = [&](const std::string& text, const std::string& what) {
    try {
      compile_schedule(text, "o.sched", other);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  other_error("m.update(0).atomic()\n",
              "atomic() needs an update that adds to the site it writes, f(...) += e");
  other_error("b.update(0).atomic()\n",
              "atomic() adds f32, f64, i32 or u32 values (CUDA's atomicAdd); 'b' is u8");
}

}  // namespace
}  // namespace stipple
