// A GPU schedule derived from a CPU one: every func the CPU schedule realises (computed at
// root or at a loop), every func with updates and the output are computed at root, each
// stage's loops mapped to a kernel (gpu_tile over its first two pure variables, a third
// pure variable as a third block dimension, a one-dimensional stage split into blocks and
// threads); every other func is inlined. Halide's GPU schedules of its apps (Decoupling
// Algorithms from Schedules §6) have this shape: one kernel per realised stage.
//
// It is the starting point for GPU tuning and what the GPU tests run every benchmark
// pipeline under (with random tile shapes).
#pragma once

#include <cstdint>
#include <random>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

struct GpuTileShape {
  int64_t x = 32, y = 8;  // threads per block along the first two pure variables
  int64_t threads_1d = 128;
};

/// The GPU schedule of `p` that realises what `cpu` realises. An update that scatters
/// (fewer than two pure loops, reduction loops along which it writes the same sites) and
/// adds to its sites is atomic() over its first one or two reduction loops. A stage whose
/// loops cannot be mapped (an update carrying a dependence along a pure variable that is
/// not an atomic add, a func with no variables that cannot be inlined) keeps no GPU loops,
/// and the CUDA back end then says which func it cannot place. Approximation directives
/// of `cpu` are kept.
Schedule gpu_schedule_from(const Pipeline& p, const Schedule& cpu, const GpuTileShape& shape = {});

/// The same with a tile shape drawn per stage from `rng` (at most 1024 threads a block).
Schedule random_gpu_schedule(const Pipeline& p, const Schedule& cpu, std::mt19937& rng);

}  // namespace stipple
