// The order `median` sorts by, shared by the reference evaluator, the runtime's scalar
// selection and (as integer keys) the vector code: numbers ascending with -0 before +0,
// NaN after every number. It is total up to NaN payloads, so every correct selection
// algorithm (nth_element, a sorting network) picks the same bits.
#pragma once

#include <cmath>

namespace stipple {

inline bool median_less(double a, double b) {
  if (std::isnan(b)) return !std::isnan(a);
  if (std::isnan(a)) return false;
  if (a != b) return a < b;
  return std::signbit(a) && !std::signbit(b);
}

}  // namespace stipple
