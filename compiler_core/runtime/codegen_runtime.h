// The C functions generated code calls besides stipple_parallel_for (thread_pool.h): heap
// memory for large allocations and the median selection. They live in the runtime
// library, not in codegen, so that a program linking an ahead-of-time compiled pipeline
// (`stipple compile`) needs only libstipple_runtime.a, not LLVM.
#pragma once

#include <cstdint>

extern "C" {
/// 64-byte aligned allocation (nullptr on failure); bytes may be 0. Blocks up to 4 MiB
/// come from a small per-thread cache of freed blocks when one fits (codegen_runtime.cpp
/// says why); stipple_free takes blocks from any thread.
void* stipple_malloc(int64_t bytes);
void stipple_free(void* p);
/// The lower median of n doubles (element (n-1)/2 in IEEE 754 totalOrder, median_order.h), exactly
/// as the reference evaluator selects it; reorders `values`.
double stipple_median_f64(double* values, int64_t n);
/// out[i] = f(a[i]) (or f(a[i], b[i]) for pow, atan2 and hypot) for i < n, with the C
/// library's exp, logf, log, sinf, sin, cosf, cos, powf, pow, tanf, tan, atan2f, atan2,
/// hypotf, hypot, tanhf, tanh: what vector code calls for a whole vector of lanes at once
/// (one call instead of one per lane). `op` is a StippleLibmOp; `f64` selects the
/// double functions (the arrays are then doubles). Never f32 exp: generated code computes
/// Stipple's own (exp_f32.h) in line.
void stipple_libm_lanes(int32_t op, int32_t f64, const void* a, const void* b, void* out,
                        int32_t n);
}

/// The operations of stipple_libm_lanes.
enum StippleLibmOp : int32_t {
  kStippleExp = 0,
  kStippleLog = 1,
  kStippleSin = 2,
  kStippleCos = 3,
  kStipplePow = 4,
  kStippleTan = 5,
  kStippleAtan2 = 6,
  kStippleHypot = 7,
  kStippleTanh = 8,
};
