// Benchmark pipelines written in Halide 14 as the same algorithms as their .stp files
// (types, planar layout, boundary conditions, operation order, reductions iterating like
// Stipple's), each with the manual schedule of Halide's apps for the CPU and, for the
// pipelines the GPU device check times, one for a CUDA GPU. Shared by halide_bench (the
// CPU comparison, JIT) and halide_gpu_peer (the GPU peer, compiled ahead of time).
#pragma once

#include <Halide.h>

#include <functional>
#include <string>
#include <vector>

namespace stipple::bench {

/// One pipeline as Halide funcs: its stages (what breadth-first computes at root) and its
/// manual schedules.
struct HalideAlgorithm {
  Halide::ImageParam input;
  Halide::Func output;
  std::vector<Halide::Func> stages;  // every func but the output and the boundary condition
  std::function<void()> schedule_manually;
  /// A schedule for a CUDA GPU, after the GPU schedule of Halide's app; empty where the
  /// GPU peer has none.
  std::function<void()> schedule_for_gpu = {};
};

/// Whether a benchmark pipeline has a Halide version.
bool has_algorithm(const std::string& pipeline);

/// The Halide version of a benchmark pipeline; exits with a message for one it has not.
HalideAlgorithm algorithm(const std::string& pipeline);

/// The largest difference from Stipple's output that the CPU comparison accepts, and why.
double tolerance_for(const std::string& pipeline);

/// The fraction of elements that may differ by more than tolerance_for() (0 for most), and
/// why: where a float is quantized to an index and the two round it differently.
double stray_fraction_for(const std::string& pipeline);

}  // namespace stipple::bench
