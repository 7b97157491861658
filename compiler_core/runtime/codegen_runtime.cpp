// Definitions of the runtime helpers generated code calls (codegen_runtime.h).
#include "compiler_core/runtime/codegen_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler_core/runtime/median_order.h"

extern "C" void* stipple_malloc(int64_t bytes) {
  size_t n = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  n = (n + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  return std::aligned_alloc(64, n);
}

extern "C" void stipple_free(void* p) { std::free(p); }

extern "C" double stipple_median_f64(double* values, int64_t n) {
  // The evaluator's selection and order (median_order.h).
  double* nth = values + (n - 1) / 2;
  std::nth_element(values, nth, values + n, stipple::median_less);
  return *nth;
}
