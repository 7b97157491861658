// The reuse model on every benchmark pipeline (datasets/pipelines/*.stp) at the size of
// the fixture photo: the schedule passes the checker, is exact, and is found in well
// under 2 s; for two_pass_blur and harris it lowers, runs on the photo and computes
// exactly what the reference evaluator computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "search/reuse/reuse_model.h"
#include "workers/sanitizer.h"

namespace stipple::search::reuse {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr double kTimeLimitMs = 20000;  // instrumented code runs several times slower
#else
constexpr double kTimeLimitMs = 2000;
#endif

std::string source_path(const std::string& relative) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + relative;
}

std::vector<std::string> pipeline_names() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(source_path("datasets/pipelines"))) {
    if (e.path().extension() == ".stp") names.push_back(e.path().stem());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Pipeline load(const std::string& name) {
  return load_pipeline_file(source_path("datasets/pipelines/" + name + ".stp"));
}

// The fixture photo's size, with the output's channel count (or 3 for a 2-D output of a
// 3-D computation).
std::vector<int64_t> photo_extents(const Pipeline& p) {
  std::vector<int64_t> e = {820, 614};
  if (p.output.extents.size() > 2) e.push_back(3);
  return e;
}

// A machine like the one the hand schedules were written for, so that results do not
// depend on where the test runs: 2 cores, 48 KiB L1d, 1 MiB L2, 32 MiB LLC, AVX-512.
MachineModel zen4() {
  MachineModel m;
  m.cores = 2;
  m.l1_bytes = 48 << 10;
  m.l2_bytes = 1 << 20;
  m.llc_bytes = 32 << 20;
  m.cache_line = 64;
  m.vector_bytes = 64;
  return m;
}

class BenchmarkPipeline : public ::testing::TestWithParam<std::string> {};

TEST_P(BenchmarkPipeline, PassesTheCheckerQuickly) {
  Pipeline p = load(GetParam());
  ReuseModelResult r = reuse_model_schedule(p, zen4(), photo_extents(p));
  std::string text = print_schedule(r.schedule, p);
  RecordProperty("optimisation_ms", std::to_string(r.optimisation_ms));
  std::printf("[%s] optimisation %.2f ms, cost %.4g\n%s%s", GetParam().c_str(), r.optimisation_ms,
              r.cost, r.explanation.c_str(), text.c_str());
  EXPECT_NO_THROW(check_schedule(r.schedule, p)) << text;
  // Exact: no approximation directive anywhere.
  EXPECT_EQ(text.find("perforate"), std::string::npos);
  EXPECT_EQ(text.find("channels("), std::string::npos);
  EXPECT_LT(r.optimisation_ms, kTimeLimitMs);
  EXPECT_EQ(r.degraded, 0) << r.explanation;
  // It parses back to the same schedule.
  EXPECT_EQ(compile_schedule(text, "reuse.sched", p), r.schedule) << text;
  // STIPPLE_REUSE_DUMP=DIR writes DIR/NAME.sched (for `stipple run --schedule`).
  if (const char* dir = std::getenv("STIPPLE_REUSE_DUMP")) {
    std::ofstream(std::string(dir) + "/" + GetParam() + ".sched")
        << "# Reuse model schedule (search/reuse) for " << GetParam() << "\n"
        << text;
  }
}

// The photo as the input `in` wants it: RGB for 3-D inputs, Rec. 601 luma for 2-D ones,
// scaled to 10 bits for integer inputs (camera_pipe's raw mosaic reads a gray mosaic).
Buffer input_for(const InputDecl& in, const Buffer& photo) {
  if (in.dim_names.size() == 3) return photo_to_input(photo, in, "photo");
  Buffer out(in.type.code, {photo.extent(0), photo.extent(1)});
  for (int64_t y = 0; y < photo.extent(1); ++y) {
    for (int64_t x = 0; x < photo.extent(0); ++x) {
      int64_t r[3] = {x, y, 0}, g[3] = {x, y, 1}, b[3] = {x, y, 2}, at[2] = {x, y};
      double luma = (0.299 * photo.get(r) + 0.587 * photo.get(g) + 0.114 * photo.get(b)) / 255.0;
      out.set(at, in.type.is_float() ? luma : std::round(luma * 1023.0));
    }
  }
  return out;
}

// Lowers and JIT-compiles `s` for `p`, runs it on `photo` and compares byte for byte with
// the hand-written schedule (datasets/pipelines/NAME.sched), whose output is the reference
// evaluator's (tests/datasets/schedules_test.cpp holds it to that) and which is fast enough
// to run every pipeline even under the sanitisers: "" when equal, else what differs.
std::string run_and_compare(const Pipeline& p, const Schedule& s, const std::string& photo_name) {
  Buffer photo = read_image(source_path("datasets/fixtures/" + photo_name));
  InputImages inputs;
  for (const InputDecl& in : p.inputs) inputs[in.name] = input_for(in, photo);
  std::vector<int64_t> extents = output_extents(p, inputs);
  auto jit = codegen::JitCompiler::create();
  LoweredFunction exact =
      lower(p, load_schedule_file(source_path("datasets/pipelines/" + p.name + ".sched"), p));
  Buffer expected = run_lowered(*jit->compile(exact), exact, p, inputs, {}, extents);
  LoweredFunction f = lower(p, s);
  auto fn = jit->compile(f);
  Buffer got = run_lowered(*fn, f, p, inputs, {}, extents);
  if (got.size_in_bytes() != expected.size_in_bytes()) return "output sizes differ";
  if (std::memcmp(got.data(), expected.data(), got.size_in_bytes()) == 0) return "";
  for (int64_t i = 0; i < got.element_count(); ++i) {
    if (got.get_flat(i) != expected.get_flat(i)) {
      return "first difference at flat index " + std::to_string(i) + ": got " +
             std::to_string(got.get_flat(i)) + ", expected " + std::to_string(expected.get_flat(i));
    }
  }
  return "bytes differ";
}

TEST_P(BenchmarkPipeline, RunsExactly) {
  // The schedule for the 820x614 photo, run on it and on a smaller one (its tiles then
  // overhang the image: the tails must be right too).
  Pipeline p = load(GetParam());
  Buffer photo = read_image(source_path("datasets/fixtures/natural-820x614.png"));
  InputImages inputs;
  for (const InputDecl& in : p.inputs) inputs[in.name] = input_for(in, photo);
  std::vector<int64_t> extents = output_extents(p, inputs);
  ReuseModelResult r = reuse_model_schedule(p, zen4(), extents);
  EXPECT_EQ(run_and_compare(p, r.schedule, "natural-820x614.png"), "")
      << print_schedule(r.schedule, p);
  EXPECT_EQ(run_and_compare(p, r.schedule, "people-256x192.png"), "")
      << print_schedule(r.schedule, p);
}

// Under the sanitisers lowering and LLVM run ten times slower: two pipelines there, every
// pipeline in the normal build.
std::vector<std::string> pipelines_to_run() {
  if (workers::address_sanitizer_active()) return {"harris", "two_pass_blur"};
  return pipeline_names();
}

INSTANTIATE_TEST_SUITE_P(Datasets, BenchmarkPipeline, ::testing::ValuesIn(pipelines_to_run()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace stipple::search::reuse
