// Markstein's division by an odd integer constant (constant_division.h says why it is exact).
#include "compiler_core/codegen/constant_division.h"

#include <cmath>

namespace stipple::codegen {
namespace {
#define STIPPLE_RUNTIME_INLINE inline
#include "compiler_core/runtime/div_by_constant.inc"
#undef STIPPLE_RUNTIME_INLINE
}  // namespace

float markstein_quotient(float x, float d, float y) { return div_by_constant(x, d, y); }

std::optional<float> markstein_reciprocal(float d) {
  const float magnitude = std::fabs(d);  // NaN fails every test below
  if (!(magnitude >= 3.0f && magnitude < 0x1p20f)) return std::nullopt;
  // fmod is exact: a remainder of 1 modulo 2 is an odd integer's.
  if (std::fmod(magnitude, 2.0f) != 1.0f) return std::nullopt;
  return 1.0f / d;  // RN(1/d): IEEE division of floats
}

}  // namespace stipple::codegen
