// The C functions generated code calls besides stipple_parallel_for (thread_pool.h): heap
// memory for large allocations and the median selection. They live in the runtime
// library, not in codegen, so that a program linking an ahead-of-time compiled pipeline
// (`stipple compile`) needs only libstipple_runtime.a, not LLVM.
#pragma once

#include <cstdint>

extern "C" {
/// 64-byte aligned allocation (nullptr on failure); bytes may be 0.
void* stipple_malloc(int64_t bytes);
void stipple_free(void* p);
/// The lower median of n doubles (element (n-1)/2 in sorted order, NaN last), exactly
/// as the reference evaluator selects it; reorders `values`.
double stipple_median_f64(double* values, int64_t n);
}
