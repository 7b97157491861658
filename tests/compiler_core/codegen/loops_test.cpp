// Hand-lowered loop nests, JIT-compiled and compared exactly with the reference evaluator:
// a two-stage separable blur with its intermediate realised at the root (a heap Allocate
// over the whole output) and per output row (a stack Allocate, its min from a LetStmt), for
// each boundary condition and element type, serial and parallel; a ten-stage chain whose
// compile time is printed; the descriptor check on entry.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/error.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;
using codegen::BufferDescriptor;
using codegen::JitCompiler;

JitCompiler& jit() {
  static std::unique_ptr<JitCompiler> j = JitCompiler::create();
  return *j;
}

Expr v(const char* n) { return var(n); }

/// blurx(x, y) = in(x-2, y) + 2 in(x-1, y) + 3 in(x, y) + 2 in(x+1, y) + in(x+2, y)
/// out(x, y)   = (blurx(x, y-1) + 2 blurx(x, y) + blurx(x, y+1)) / 36, in the output type.
struct Blur {
  Type in_type, mid_type;
  BoundaryKind boundary;
  Pipeline pipeline;
  Expr blurx_value, out_value;

  Blur(Type in_t, BoundaryKind b) : in_type(in_t), boundary(b) {
    const bool fl = in_t.is_float();
    mid_type = fl ? Float32() : Int32();
    auto px = [&](int dx) { return cast(mid_type, input(in_t, "in", {v("x") + i32(dx), v("y")})); };
    auto w = [&](double k) { return make_const(mid_type, k); };
    blurx_value = px(-2) + w(2) * px(-1) + w(3) * px(0) + w(2) * px(1) + px(2);
    auto bx = [&](int dy) { return call(mid_type, "blurx", {v("x"), v("y") + i32(dy)}); };
    Expr sum = bx(-1) + w(2) * bx(0) + bx(1);
    out_value = fl ? sum * f32(1.0 / 36) : cast(in_t, sum / i32(36));
    pipeline = make_pipeline(
        {make_input("in", in_t, {"x", "y"}, b, fl ? 0.5 : 200)},
        {make_func("out", {"x", "y"}, out_value), make_func("blurx", {"x", "y"}, blurx_value)},
        "out", {i32(1), i32(1)});
  }

  LoweredFunction base() const {
    LoweredFunction f;
    f.name = "blur";
    f.inputs = pipeline.inputs;
    f.buffers = {ExternalBuffer{"out", in_type, 2}};
    return f;
  }

  Stmt produce_blurx(Expr y_min, Expr y_extent, ForType outer) const {
    return For::make("y", y_min, y_extent, outer,
                     For::make("x", v("out.min.0"), v("out.extent.0"), ForType::Serial,
                               Provide::make("blurx", blurx_value, {v("x"), v("y")})));
  }
  Stmt produce_out_row() const {
    return For::make("x", v("out.min.0"), v("out.extent.0"), ForType::Vectorized,
                     Provide::make("out", out_value, {v("x"), v("y")}));
  }

  /// blurx over the whole output region (plus a row above and below), then out.
  LoweredFunction compute_root(ForType outer) const {
    LoweredFunction f = base();
    Stmt body =
        Block::make(produce_blurx(v("out.min.1") - i32(1), v("out.extent.1") + i32(2), outer),
                    For::make("y", v("out.min.1"), v("out.extent.1"), outer, produce_out_row()));
    body = Allocate::make("blurx", mid_type, {v("out.extent.0"), v("out.extent.1") + i32(2)}, body);
    body = LetStmt::make("blurx.min.0", v("out.min.0"),
                         LetStmt::make("blurx.min.1", v("out.min.1") - i32(1), body));
    f.body = body;
    return f;
  }

  /// Per output row: the three rows of blurx it needs, in a constant-size (stack) buffer.
  LoweredFunction compute_at(ForType outer, int64_t width) const {
    LoweredFunction f = base();
    Stmt row =
        Block::make(produce_blurx(v("y") - i32(1), i32(3), ForType::Serial), produce_out_row());
    row = Allocate::make("blurx", mid_type, {i32(width), i32(3)}, row);
    row = LetStmt::make("blurx.min.0", v("out.min.0"),
                        LetStmt::make("blurx.min.1", v("y") - i32(1), row));
    f.body = For::make("y", v("out.min.1"), v("out.extent.1"), outer, row);
    return f;
  }
};

Buffer run(const LoweredFunction& f, const Buffer& input, Type out_type,
           const std::vector<int64_t>& mins, const std::vector<int64_t>& extents) {
  auto fn = jit().compile(f);
  Buffer out(out_type.code, mins, extents);
  BufferDescriptor descs[] = {codegen::describe(input), codegen::describe(out)};
  EXPECT_EQ((*fn)(descs, nullptr), 0);
  return out;
}

class BlurTest : public ::testing::TestWithParam<std::tuple<BoundaryKind, bool>> {};

TEST_P(BlurTest, ComputeRootAndComputeAtMatchTheEvaluator) {
  auto [boundary, is_float] = GetParam();
  Blur blur(is_float ? Float32() : UInt8(), boundary);
  uint32_t seed = 7;
  // Images of extent 1 and 2 exercise the mirror's degenerate and far-away cases.
  for (auto [w, h] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {13, 7}, {40, 33}}) {
    Buffer in = random_buffer(blur.in_type.code, {w, h}, 0, is_float ? 1 : 255.99, seed++);
    std::vector<int64_t> mins = {-5, -4}, extents = {w + 10, h + 8};
    Buffer ref = evaluate_pipeline_region(blur.pipeline, {{"in", in}}, {}, mins, extents);
    for (ForType outer : {ForType::Serial, ForType::Parallel}) {
      Buffer root = run(blur.compute_root(outer), in, blur.in_type, mins, extents);
      EXPECT_TRUE(root.same_contents(ref)) << "compute_root " << w << "x" << h;
      Buffer at = run(blur.compute_at(outer, extents[0]), in, blur.in_type, mins, extents);
      EXPECT_TRUE(at.same_contents(ref)) << "compute_at " << w << "x" << h;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllBoundaries, BlurTest,
                         ::testing::Combine(::testing::Values(BoundaryKind::Clamp,
                                                              BoundaryKind::Mirror,
                                                              BoundaryKind::Constant),
                                            ::testing::Bool()));

TEST(Codegen, ParallelLoopMatchesSerialOnALargeImage) {
  Blur blur(Float32(), BoundaryKind::Mirror);
  Buffer in = random_buffer(ScalarType::Float32, {300, 200}, 0, 1, 3);
  std::vector<int64_t> mins = {0, 0}, extents = {300, 200};
  Buffer serial = run(blur.compute_root(ForType::Serial), in, Float32(), mins, extents);
  Buffer parallel = run(blur.compute_root(ForType::Parallel), in, Float32(), mins, extents);
  Buffer at = run(blur.compute_at(ForType::Parallel, 300), in, Float32(), mins, extents);
  EXPECT_TRUE(parallel.same_contents(serial));
  EXPECT_TRUE(at.same_contents(serial));
}

TEST(Codegen, PerfMapNamesEveryParallelLoopBody) {
  // STIPPLE_JIT_PERF=1: a JIT created then writes /tmp/perf-PID.map, which perf reads.
  ::setenv("STIPPLE_JIT_PERF", "1", 1);
  std::unique_ptr<JitCompiler> profiled = JitCompiler::create();
  ::unsetenv("STIPPLE_JIT_PERF");
  Blur blur(Float32(), BoundaryKind::Clamp);
  auto fn = profiled->compile(blur.compute_root(ForType::Parallel));
  Buffer in = random_buffer(ScalarType::Float32, {20, 10}, 0, 1, 5);
  Buffer out(ScalarType::Float32, {0, 0}, {20, 10});
  BufferDescriptor descs[] = {codegen::describe(in), codegen::describe(out)};
  ASSERT_EQ((*fn)(descs, nullptr), 0);
  const std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  std::FILE* map = std::fopen(path.c_str(), "r");
  ASSERT_NE(map, nullptr) << path;
  bool entry = false, closure = false;
  char line[512];
  unsigned long long start = 0, size = 0;
  char name[400];
  while (std::fgets(line, sizeof line, map)) {
    ASSERT_EQ(std::sscanf(line, "%llx %llx %399s", &start, &size, name), 3) << line;
    EXPECT_GT(start, 0u);
    EXPECT_GT(size, 0u);
    const std::string n = name;
    entry |= n == fn->symbol();
    closure |= n.rfind(fn->symbol() + ".", 0) == 0 && n.find(".par") != std::string::npos;
  }
  std::fclose(map);
  std::remove(path.c_str());
  EXPECT_TRUE(entry) << "the function itself";
  EXPECT_TRUE(closure) << "its parallel loop body";
}

TEST(Codegen, MismatchedDescriptorIsRejected) {
  Blur blur(UInt8(), BoundaryKind::Clamp);
  auto fn = jit().compile(blur.compute_root(ForType::Serial));
  Buffer in(ScalarType::Float32, {4, 4});  // declared u8
  Buffer out(ScalarType::UInt8, {4, 4});
  BufferDescriptor descs[] = {codegen::describe(in), codegen::describe(out)};
  EXPECT_EQ((*fn)(descs, nullptr), codegen::kErrorBufferMismatch);
}

TEST(Codegen, UnboundVariableIsAnInternalError) {
  LoweredFunction f;
  f.buffers = {ExternalBuffer{"out", Int32(), 1}};
  f.body =
      For::make("x", i32(0), i32(4), ForType::Serial, Provide::make("out", v("nope"), {v("x")}));
  EXPECT_THROW(jit().compile(f), InternalError);
}

TEST(Codegen, ParamsAreConvertedLikeTheEvaluator) {
  // out(x) = p * x + k, with p an f32 and k an i32: converted as the evaluator converts a
  // valid value; and an out-of-range double, which the evaluator refuses (params are taken
  // exactly), saturates in the generated code rather than being undefined.
  LoweredFunction f;
  f.params = {{"p", Float32(), 0}, {"k", Int32(), 0}};
  f.buffers = {ExternalBuffer{"out", Float64(), 1}};
  Expr value = cast(Float64(), Param::make(Float32(), "p") * cast(Float32(), v("x"))) +
               cast(Float64(), Param::make(Int32(), "k"));
  f.body = For::make("x", i32(-2), i32(5), ForType::Serial, Provide::make("out", value, {v("x")}));
  auto fn = jit().compile(f);
  Buffer out(ScalarType::Float64, {-2}, {5});
  BufferDescriptor d = codegen::describe(out);
  const double params[] = {0.1, 1099511627776.0};
  ASSERT_EQ((*fn)(&d, params), 0);
  Pipeline p = make_pipeline({}, {make_func("out", {"x"}, value)}, "out", {i32(5)}, f.params);
  EXPECT_EQ(out.get_flat(2), 2147483647.0);  // x = 0
  const double valid[] = {0.1, -7};
  ASSERT_EQ((*fn)(&d, valid), 0);
  Buffer ref = evaluate_pipeline_region(p, {}, {{"p", 0.1}, {"k", -7}}, {-2}, {5});
  EXPECT_TRUE(out.same_contents(ref));
}

TEST(Codegen, TenStageChainCompileTime) {
  // f0 = in; f_i = (f_{i-1}(x-1) + 2 f_{i-1}(x) + f_{i-1}(x+1)) / 4 along x for odd i and
  // along y for even i; every stage realised at the root over the output region grown by
  // the stages still to come.
  constexpr int kStages = 10;
  std::vector<Func> funcs;
  std::vector<Expr> values(kStages + 1);
  auto name = [](int i) { return i == kStages ? std::string("out") : "f" + std::to_string(i); };
  values[0] = input(Float32(), "in", {v("x"), v("y")});
  for (int i = 1; i <= kStages; ++i) {
    auto prev = [&](int d) {
      if (i == 1) return input(Float32(), "in", {v("x") + i32(d), v("y")});
      return i % 2 ? call(Float32(), name(i - 1), {v("x") + i32(d), v("y")})
                   : call(Float32(), name(i - 1), {v("x"), v("y") + i32(d)});
    };
    values[i] = (prev(-1) + f32(2) * prev(0) + prev(1)) * f32(0.25);
    funcs.push_back(make_func(name(i), {"x", "y"}, values[i]));
  }
  Pipeline p = make_pipeline({make_input("in", Float32(), {"x", "y"}, BoundaryKind::Mirror)}, funcs,
                             "out", {i32(1), i32(1)});
  LoweredFunction f;
  f.inputs = p.inputs;
  f.buffers = {ExternalBuffer{"out", Float32(), 2}};
  std::vector<Stmt> produce;
  for (int i = 1; i <= kStages; ++i) {
    int margin = kStages - i;
    produce.push_back(For::make(
        "y", v("out.min.1") - i32(margin), v("out.extent.1") + i32(2 * margin), ForType::Parallel,
        For::make("x", v("out.min.0") - i32(margin), v("out.extent.0") + i32(2 * margin),
                  ForType::Serial, Provide::make(name(i), values[i], {v("x"), v("y")}))));
  }
  Stmt body = Block::make(produce);
  for (int i = kStages - 1; i >= 1; --i) {
    int margin = kStages - i;
    body = Allocate::make(
        name(i), Float32(),
        {v("out.extent.0") + i32(2 * margin), v("out.extent.1") + i32(2 * margin)}, body);
    body = LetStmt::make(name(i) + ".min.0", v("out.min.0") - i32(margin),
                         LetStmt::make(name(i) + ".min.1", v("out.min.1") - i32(margin), body));
  }
  f.body = body;

  std::vector<double> totals;
  codegen::CompileStats last;
  Buffer in = random_buffer(ScalarType::Float32, {64, 48}, 0, 1, 11);
  for (int rep = 0; rep < 7; ++rep) {
    auto fn = jit().compile(f);
    totals.push_back(fn->stats().total_ms);
    last = fn->stats();
    if (rep == 0) {
      Buffer out(ScalarType::Float32, {0, 0}, {64, 48});
      BufferDescriptor descs[] = {codegen::describe(in), codegen::describe(out)};
      ASSERT_EQ((*fn)(descs, nullptr), 0);
      Buffer ref = evaluate_pipeline_region(p, {{"in", in}}, {}, {0, 0}, {64, 48});
      EXPECT_TRUE(out.same_contents(ref));
    }
  }
  std::sort(totals.begin(), totals.end());
  std::printf(
      "host %s; 10-stage compile: median %.1f ms (min %.1f, max %.1f); last: generate "
      "%.1f, optimize %.1f, codegen %.1f, link %.1f ms\n",
      jit().host_cpu().c_str(), totals[totals.size() / 2], totals.front(), totals.back(),
      last.generate_ms, last.optimize_ms, last.codegen_ms, last.link_ms);
  // The target is 100 ms; allow slack for loaded and sanitised builds.
  EXPECT_LT(totals[totals.size() / 2], 1000);
}

TEST(Codegen, ConcurrentCompilesProduceWorkingCode) {
  Blur blur(UInt8(), BoundaryKind::Clamp);
  Buffer in = random_buffer(ScalarType::UInt8, {9, 8}, 0, 255.99, 5);
  Buffer ref = evaluate_pipeline_region(blur.pipeline, {{"in", in}}, {}, {0, 0}, {9, 8});
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      Buffer out = run(blur.compute_root(ForType::Serial), in, UInt8(), {0, 0}, {9, 8});
      if (out.same_contents(ref)) ++good;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 3);
}

}  // namespace
}  // namespace stipple
