// Issue #3: Stipple's own numbers. JIT compile time (lower() + JIT) of every pipeline in
// datasets/pipelines under its hand schedule and of the six issue-#3 pipelines under the
// default schedule, and the run time of those six under the default and the hand-written
// schedule, at the sizes and thread counts of bench_common.h. The default schedule has
// no parallel loop, so it is timed with one thread only. Run by bench/run_issue3.sh.
//
// Issue #26: also the run time of the pipelines of Halide's apps (halide_app_pipelines(),
// the ones halide_bench has Halide 14 versions of) under their hand schedules only, as
// NAME/1920x1080/tT/stipple_hand: the default schedule of a multi-stage pipeline computes
// every stage at root without vectors or threads, which can take seconds.
//
// Issue #5: with STIPPLE_BENCH_SCHEDULES=DIR, also every schedule file DIR/NAME.VARIANT.sched
// (the reuse model's schedule, the searches' best, ...; bench/search_vs_halide.sh writes
// them) as NAME/1920x1080/tT/stipple_VARIANT, checked against the hand schedule's output
// first, so that they compare with halide_bench's autoschedulers on the same input.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "bench/bench_common.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/runtime/thread_pool.h"

namespace stipple::bench {
namespace {

/// Registers compile/NAME/VARIANT: each iteration lowers and JIT-compiles from the
/// parsed pipeline; counters: stages (funcs), the JIT's own share (jit_ms) and its steps
/// (gen_ms: Stipple IR to LLVM IR, opt_ms: the pass pipeline, cg_ms: instruction selection
/// to object code, link_ms), each a median over the iterations.
void register_compile(const std::string& name, bool hand) {
  int stages = static_cast<int>(load_pipeline_file(pipeline_path(name)).funcs.size());
  std::string bench = "compile/" + name + "/" + (hand ? "hand" : "default");
  benchmark::RegisterBenchmark(bench.c_str(),
                               [name, hand, stages](benchmark::State& state) {
                                 std::vector<double> total, jit, gen, opt, cg, link;
                                 for (auto _ : state) {
                                   StippleProgram program(name, hand);
                                   total.push_back(program.compile_ms());
                                   const codegen::CompileStats& s = program.jit_stats();
                                   jit.push_back(s.total_ms);
                                   gen.push_back(s.generate_ms);
                                   opt.push_back(s.optimize_ms);
                                   cg.push_back(s.codegen_ms);
                                   link.push_back(s.link_ms);
                                 }
                                 auto median = [](std::vector<double>& v) {
                                   std::sort(v.begin(), v.end());
                                   return v[v.size() / 2];
                                 };
                                 std::sort(total.begin(), total.end());
                                 state.counters["median_ms"] = total[total.size() / 2];
                                 state.counters["min_ms"] = total.front();
                                 state.counters["jit_ms"] = median(jit);
                                 state.counters["gen_ms"] = median(gen);
                                 state.counters["opt_ms"] = median(opt);
                                 state.counters["cg_ms"] = median(cg);
                                 state.counters["link_ms"] = median(link);
                                 state.counters["stages"] = stages;
                               })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->MinTime(0.5);
}

/// Registers NAME/SIZE/tT/stipple_hand for every thread count, and with `with_default`
/// NAME/SIZE/t1/stipple_default.
void register_runs(const std::string& name, ImageSize size, bool with_default) {
  for (bool hand : {false, true}) {
    if (!hand && !with_default) continue;
    // Compiled on first use (so a --benchmark_filter skips the compile) and kept for
    // every thread count.
    auto program = std::make_shared<std::unique_ptr<StippleProgram>>();
    auto output = std::make_shared<Buffer>();
    for (int threads : bench_threads()) {
      if (!hand && threads > 1) continue;  // no parallel loop to spread
      auto setup = [=] {
        ThreadPool::set_global_threads(threads);
        if (*program) return;
        *program = std::make_unique<StippleProgram>(name, hand);
        *output = (*program)->make_output(bench_input(name, size));
      };
      std::string variant = hand ? "stipple_hand" : "stipple_default";
      register_timed(
          bench_name(name, size, threads, variant),
          [=] { (*program)->run(bench_input(name, size), *output); }, setup);
    }
  }
}

/// Registers NAME/1920x1080/tT/stipple_VARIANT for every DIR/NAME.VARIANT.sched, but for
/// NAME.hand.sched where NAME's checked-in hand schedule is already timed as stipple_hand
/// (`hand_timed`): one name, one benchmark.
void register_schedule_files(const std::string& dir, const std::vector<std::string>& hand_timed) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".sched") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const ImageSize size{1920, 1080};
  for (const std::filesystem::path& file : files) {
    const std::string stem = file.stem().string();  // NAME.VARIANT
    const size_t dot = stem.find('.');
    if (dot == std::string::npos) continue;
    const std::string name = stem.substr(0, dot), variant = "stipple_" + stem.substr(dot + 1);
    if (variant == "stipple_hand" &&
        std::find(hand_timed.begin(), hand_timed.end(), name) != hand_timed.end()) {
      continue;
    }
    auto program = std::make_shared<std::unique_ptr<StippleProgram>>();
    auto output = std::make_shared<Buffer>();
    for (int threads : bench_threads()) {
      auto setup = [=] {
        ThreadPool::set_global_threads(threads);
        if (*program) return;
        *program = std::make_unique<StippleProgram>(name, file.string());
        const Buffer& input = bench_input(name, size);
        *output = (*program)->make_output(input);
        (*program)->run(input, *output);
        // Exact schedules: the hand schedule's result up to float reassociation. Both
        // buffers come from make_output: one type, one shape, one layout.
        const Buffer& reference = stipple_reference_output(name, size);
        double worst = 0;
        for (int64_t e = 0; e < reference.element_count(); ++e) {
          worst = std::max(worst, std::fabs(reference.get_flat(e) - output->get_flat(e)));
        }
        check_close(variant + " " + name + " " + size.label(), worst, 1e-3);
      };
      register_timed(
          bench_name(name, size, threads, variant),
          [=] { (*program)->run(bench_input(name, size), *output); }, setup);
    }
  }
}

}  // namespace
}  // namespace stipple::bench

int main(int argc, char** argv) {
  using namespace stipple::bench;
  std::vector<std::string> all;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(STIPPLE_SOURCE_DIR) +
                                                               "/datasets/pipelines")) {
    if (entry.path().extension() == ".stp") all.push_back(entry.path().stem().string());
  }
  std::sort(all.begin(), all.end());
  for (const std::string& name : all) register_compile(name, /*hand=*/true);
  for (const std::string& name : issue3_pipelines()) register_compile(name, /*hand=*/false);
  for (const std::string& name : issue3_pipelines()) {
    for (ImageSize size : bench_sizes(name)) register_runs(name, size, /*with_default=*/true);
  }
  for (const std::string& name : halide_app_pipelines()) {
    for (ImageSize size : bench_sizes(name)) register_runs(name, size, /*with_default=*/false);
  }
  if (const char* dir = std::getenv("STIPPLE_BENCH_SCHEDULES")) {
    std::vector<std::string> hand_timed = issue3_pipelines();
    hand_timed.insert(hand_timed.end(), halide_app_pipelines().begin(),
                      halide_app_pipelines().end());
    register_schedule_files(dir, hand_timed);
  }
  return run_benchmarks(argc, argv);
}
