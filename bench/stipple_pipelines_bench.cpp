// Issue #3: Stipple's own numbers. JIT compile time (lower() + JIT) of every pipeline in
// datasets/pipelines under its hand schedule and of the six issue-#3 pipelines under the
// default schedule, and the run time of those six under the default and the hand-written
// schedule, at the sizes and thread counts of bench_common.h. The default schedule has
// no parallel loop, so it is timed with one thread only. Run by bench/run_issue3.sh.
#include <filesystem>
#include <memory>

#include "bench/bench_common.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/runtime/thread_pool.h"

namespace stipple::bench {
namespace {

/// Registers compile/NAME/VARIANT: each iteration lowers and JIT-compiles from the
/// parsed pipeline; counters: stages (funcs) and the JIT's own share (jit_ms, median).
void register_compile(const std::string& name, bool hand) {
  int stages = static_cast<int>(load_pipeline_file(pipeline_path(name)).funcs.size());
  std::string bench = "compile/" + name + "/" + (hand ? "hand" : "default");
  benchmark::RegisterBenchmark(bench.c_str(),
                               [name, hand, stages](benchmark::State& state) {
                                 std::vector<double> total, jit;
                                 for (auto _ : state) {
                                   StippleProgram program(name, hand);
                                   total.push_back(program.compile_ms());
                                   jit.push_back(program.jit_stats().total_ms);
                                 }
                                 std::sort(total.begin(), total.end());
                                 std::sort(jit.begin(), jit.end());
                                 state.counters["median_ms"] = total[total.size() / 2];
                                 state.counters["min_ms"] = total.front();
                                 state.counters["jit_ms"] = jit[jit.size() / 2];
                                 state.counters["stages"] = stages;
                               })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->MinTime(0.5);
}

void register_runs(const std::string& name, ImageSize size) {
  for (bool hand : {false, true}) {
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
    for (ImageSize size : bench_sizes(name)) register_runs(name, size);
  }
  return run_benchmarks(argc, argv);
}
