// What the issue-#3 benchmark binaries share: the pipelines and sizes they time, the
// inputs (a photo-like RGB image or a Bayer mosaic, made deterministically from the
// fixture photo), Stipple programs compiled once and run on preallocated buffers, the
// check that a comparator computes what Stipple computes, and one way to register a
// timed benchmark so that every binary reports the same counters.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"

namespace stipple::bench {

struct ImageSize {
  int64_t width = 0, height = 0;
  std::string label() const { return std::to_string(width) + "x" + std::to_string(height); }
};

/// The six pipelines of issue #3, in table order.
const std::vector<std::string>& issue3_pipelines();
/// The pipelines of Halide's apps that issue #26 compares with Halide 14 (manual schedule
/// and autoschedulers) under Stipple's hand schedules, in table order.
const std::vector<std::string>& halide_app_pipelines();
/// Where each is timed: 1920x1080 for all; blur3x3, the DRAM-bound case, also at
/// 6400x4800 (its working set, 2 x 369 MB, is far beyond the 32 MiB L3); the apps of
/// halide_app_pipelines also at the size Halide's apps run them (1536x2560; camera_pipe
/// 2592x1968).
std::vector<ImageSize> bench_sizes(const std::string& pipeline);
/// The thread counts every parallel variant runs with.
const std::vector<int>& bench_threads();

std::string pipeline_path(const std::string& name);  // datasets/pipelines/NAME.stp
std::string schedule_path(const std::string& name);  // datasets/pipelines/NAME.sched

/// The input `pipeline` reads at `size`, made once and cached: for demosaic an RGGB
/// mosaic f32[x, y], for camera_pipe a GRBG mosaic of 10-bit values u16[x, y], for
/// interpolate planar f32[x, y, c] RGBA (alpha a disc), for bilateral_grid_halide the
/// Rec. 601 luma f32[x, y] in [0, 1], for the others a planar f32[x, y, c] RGB image in
/// [0, 1] (the fixture photo resampled bilinearly to the size; the others are made from it).
const Buffer& bench_input(const std::string& pipeline, ImageSize size);

/// A Stipple pipeline lowered and JIT-compiled once; run() calls the generated function
/// directly on descriptors made once, so a timed run allocates nothing.
class StippleProgram {
 public:
  /// Compiles `pipeline` under its hand schedule (hand) or the default schedule.
  StippleProgram(const std::string& pipeline, bool hand);
  /// Compiles `pipeline` under the schedule in `schedule_file` (empty: the default).
  StippleProgram(const std::string& pipeline, const std::string& schedule_file);
  ~StippleProgram();

  /// The output buffer for `input` (allocated by the caller once).
  Buffer make_output(const Buffer& input) const;
  /// Runs the compiled code on `input` into `output`; aborts on a nonzero return.
  void run(const Buffer& input, Buffer& output) const;

  const Pipeline& pipeline() const { return pipeline_; }
  double compile_ms() const { return compile_ms_; }  // lower() + JIT, wall time
  const codegen::CompileStats& jit_stats() const;

 private:
  Pipeline pipeline_;
  LoweredFunction lowered_;
  std::shared_ptr<codegen::CompiledFunction> compiled_;
  std::vector<double> params_;
  double compile_ms_ = 0;
};

/// Stipple's output for `pipeline` on bench_input(pipeline, size) under its hand
/// schedule, computed once and cached: what every comparator is checked against.
const Buffer& stipple_reference_output(const std::string& pipeline, ImageSize size);

/// An f32 image in any layout: element (x, y, c) is data[x * sx + y * sy + c * sc].
struct ImageView {
  const float* data = nullptr;
  int64_t sx = 1, sy = 0, sc = 0;
  float at(int64_t x, int64_t y, int64_t c) const { return data[x * sx + y * sy + c * sc]; }
};
/// A planar f32 Buffer (x, y[, c]) as a view.
ImageView view_of(const Buffer& b);

/// The largest |reference - actual| over the channels in [c0, c1) and the pixels at least
/// `margin` pixels from every border (where a comparator's boundary handling differs).
/// With `over`, also counts the elements whose difference exceeds `tolerance` (or is NaN).
double max_abs_diff(const Buffer& reference, const ImageView& actual, int64_t margin = 0,
                    int64_t c0 = 0, int64_t c1 = -1, double tolerance = 0, int64_t* over = nullptr);

/// Prints "check: WHAT: max |diff| D (tolerance T, border margin M)" to stderr; exits
/// the process when D > T or D is NaN, so that no benchmark compares unequal work.
void check_close(const std::string& what, double diff, double tolerance, int64_t margin = 0);

/// check_close for computations that quantize floats to indices, where one ulp moves a
/// lookup to the neighbouring entry: passes when at most `stray_fraction` of the elements
/// differ by more than `tolerance` (none by NaN), and prints how many did.
void check_close_but_strays(const std::string& what, const Buffer& reference,
                            const ImageView& actual, double tolerance, double stray_fraction);

/// "PIPELINE/WxH/tTHREADS/VARIANT": the name the table script parses.
std::string bench_name(const std::string& pipeline, ImageSize size, int threads,
                       const std::string& variant);

/// Registers `body` as a benchmark timed in wall-clock milliseconds. Besides Google
/// Benchmark's mean it reports the counters median_ms and min_ms over the iterations
/// (the machine is shared; the median is what the table uses). Each benchmark runs for
/// about min_time seconds, and at least one iteration however slow. `setup` (compiling,
/// allocating, setting the thread count) runs untimed before the iterations.
benchmark::internal::Benchmark* register_timed(const std::string& name, std::function<void()> body,
                                               std::function<void()> setup = {},
                                               double min_time = 0.5);

/// Google Benchmark's main, plus a line on stderr naming the binary's checks.
int run_benchmarks(int argc, char** argv);

}  // namespace stipple::bench
