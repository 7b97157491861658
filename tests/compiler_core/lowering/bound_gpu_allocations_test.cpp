// Constant sizes for the allocations inside GPU kernels (bound_gpu_allocations.h): a func
// computed per thread gets the extents its region can reach at most, constants; one
// computed outside every kernel keeps its symbolic extents; and the loop nest still
// computes what the CPU hand schedule computes, bit for bit (the JIT runs GPU loops
// serially), at sizes whose tiles have tails.
#include "compiler_core/lowering/bound_gpu_allocations.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "tests/datasets/pipeline_test_support.h"

namespace stipple {
namespace {

using namespace stipple::testing;  // NOLINT: the pipeline test helpers

// The extents of the Allocate of `name` in s.
std::vector<Expr> allocation_extents(const Stmt& s, const std::string& name) {
  struct Finder : IRVisitor {
    std::string name;
    std::vector<Expr> extents;
    using IRVisitor::visit;
    void visit(const Allocate* op) override {
      if (op->name == name) extents = op->extents;
      IRVisitor::visit(op);
    }
  } f;
  f.name = name;
  s.accept(&f);
  return f.extents;
}

std::vector<int64_t> constants(const std::vector<Expr>& extents) {
  std::vector<int64_t> out;
  for (const Expr& e : extents) {
    const IntImm* imm = e.as<IntImm>();
    out.push_back(imm ? imm->value : -1);  // -1: not a constant
  }
  return out;
}

// blur_x per thread over the 4 rows of blur_y the thread computes: rows y0 - 1 .. y0 + 4.
const char* kPerThread =
    "blur_x.compute_at(blur_y, xi)\n"
    "blur_y.split(y, yo, yr, 4).gpu_tile(x, yo, xo, yoo, xi, yoi, 32, 8)"
    ".reorder(yr, xi, yoi, xo, yoo, c).gpu_blocks(c)\n";

TEST(BoundGpuAllocations, PerThreadRegionsGetConstantExtents) {
  const Pipeline p = load_benchmark_pipeline("blur3x3");
  const Schedule s = compile_schedule(kPerThread, "t.sched", p, ScheduleTarget::Gpu);
  const LoweredFunction f = lower(p, s);
  EXPECT_EQ(constants(allocation_extents(f.body, "blur_x")), (std::vector<int64_t>{1, 6, 1}))
      << to_string(f.body);
}

TEST(BoundGpuAllocations, AllocationsOutsideKernelsKeepTheirExtents) {
  const Pipeline p = load_benchmark_pipeline("blur3x3");
  // The same shape of schedule on the CPU: blur_x per iteration of a serial loop.
  const Schedule cpu = compile_schedule(
      "blur_x.compute_at(blur_y, xi)\n"
      "blur_y.split(y, yo, yr, 4).tile(x, yo, xo, yoo, xi, yoi, 32, 8).reorder(yr, xi, yoi, xo, "
      "yoo, c)\n",
      "t.sched", p);
  const std::vector<int64_t> extents = constants(allocation_extents(lower(p, cpu).body, "blur_x"));
  ASSERT_EQ(extents.size(), 3u);
  EXPECT_EQ(extents[1], -1);  // rows: symbolic
}

TEST(BoundGpuAllocations, TheBoundedLoopNestComputesTheHandSchedulesOutput) {
  const Pipeline p = load_benchmark_pipeline("blur3x3");
  const Schedule gpu = compile_schedule(kPerThread, "t.sched", p, ScheduleTarget::Gpu);
  const Schedule cpu = load_schedule_file(source_path("datasets/pipelines/blur3x3.sched"), p);
  auto jit = codegen::JitCompiler::create();
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{131, 87}, {64, 33}, {7, 5}}) {
    const std::map<std::string, Buffer> inputs = {{"in", to_buffer(random_image(w, h, 3, 5))}};
    const LoweredFunction want_f = lower(p, cpu), got_f = lower(p, gpu);
    const Buffer want = run_lowered(*jit->compile(want_f), want_f, p, inputs, {}, {w, h, 3});
    const Buffer got = run_lowered(*jit->compile(got_f), got_f, p, inputs, {}, {w, h, 3});
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size_in_bytes()), 0) << w << "x" << h;
  }
}

}  // namespace
}  // namespace stipple
