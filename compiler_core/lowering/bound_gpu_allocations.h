// Constant sizes for the allocations inside GPU kernels. A func computed inside a kernel
// (at a GPU loop, or at a serial loop within one) is allocated by each thread, over a
// region whose extent lowering writes with the clamps of bounds inference: for
// blur_x.compute_at(blur_y, xi) under a split of y by 4, the rows are
// `min(y0 + 3 + 1, cmax) - max(y0 - 1, cmin) + 1`, which is at most 6 but not a constant. A
// GPU thread has no cheap heap (CUDA's device malloc draws on a small shared heap, which
// thousands of threads exhaust), so, as Halide requires of GPU allocations, each extent is
// replaced by the constant that bounds it where RegionAnalyzer proves one: the allocation
// becomes a fixed-size array in the thread's registers or local memory. The region
// computed is unchanged; only the storage around it grows.
//
// Runs after storage folding; extents outside kernels, and ones with no provable bound,
// are left as they are (the CUDA back end then uses the device heap).
#pragma once

#include "compiler_core/ir/ir.h"

namespace stipple::lowering {

/// The largest bound put in place of an extent (elements in one dimension); a larger one
/// stays as it was.
inline constexpr int64_t kMaxBoundedGpuExtent = 1 << 16;

/// s with each non-constant extent of an Allocate inside a GpuBlock loop replaced by a
/// constant upper bound of it, given the LetStmts around the Allocate.
Stmt bound_gpu_allocations(const Stmt& s);

}  // namespace stipple::lowering
