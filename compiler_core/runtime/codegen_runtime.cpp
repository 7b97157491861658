// Definitions of the runtime helpers generated code calls (codegen_runtime.h).
#include "compiler_core/runtime/codegen_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler_core/runtime/exp_f32.h"
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

namespace {

template <typename T>
T exp_of(T a) {
  return std::exp(a);
}

template <>
float exp_of<float>(float a) {
  return stipple::exp_f32(a);  // Stipple's f32 exp, not expf (exp_f32.h)
}

template <typename T>
T apply_libm(int32_t op, T a, T b) {
  switch (op) {
    case kStippleExp: return exp_of(a);
    case kStippleLog: return std::log(a);
    case kStippleSin: return std::sin(a);
    case kStippleCos: return std::cos(a);
    case kStipplePow: return std::pow(a, b);
    default: return a;
  }
}

template <typename T>
void libm_lanes(int32_t op, const void* a, const void* b, void* out, int32_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* r = static_cast<T*>(out);
  for (int32_t i = 0; i < n; ++i) r[i] = apply_libm<T>(op, x[i], y ? y[i] : T(0));
}

}  // namespace

extern "C" void stipple_libm_lanes(int32_t op, int32_t f64, const void* a, const void* b, void* out,
                                   int32_t n) {
  if (f64) {
    libm_lanes<double>(op, a, b, out, n);
  } else {
    libm_lanes<float>(op, a, b, out, n);
  }
}
