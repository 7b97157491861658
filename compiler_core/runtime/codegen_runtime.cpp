// Definitions of the runtime helpers generated code calls (codegen_runtime.h).
#include "compiler_core/runtime/codegen_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

extern "C" void* stipple_malloc(int64_t bytes) {
  size_t n = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  n = (n + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  return std::aligned_alloc(64, n);
}

extern "C" void stipple_free(void* p) { std::free(p); }

extern "C" double stipple_median_f64(double* values, int64_t n) {
  // The same selection as the evaluator's (std::nth_element with NaN after every number),
  // so that even the choice between -0 and +0 agrees.
  double* nth = values + (n - 1) / 2;
  std::nth_element(values, nth, values + n,
                   [](double a, double b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
  return *nth;
}
