// Markstein's division by an odd integer constant (constant_division.h says why it is exact).
#include "compiler_core/codegen/constant_division.h"

#include <cmath>

namespace stipple::codegen {

float markstein_quotient(float x, float d, float y) {
  const float q = x * y;
  if (q == 0.0f || !std::isfinite(q)) return q;
  return std::fma(std::fma(-q, d, x), y, q);
}

std::optional<float> markstein_reciprocal(float d) {
  const float magnitude = std::fabs(d);  // NaN fails every test below
  if (!(magnitude >= 3.0f && magnitude < 0x1p20f)) return std::nullopt;
  if (std::trunc(magnitude) != magnitude || std::fmod(magnitude, 2.0f) != 1.0f) {
    return std::nullopt;
  }
  return 1.0f / d;  // RN(1/d): IEEE division of floats
}

}  // namespace stipple::codegen
