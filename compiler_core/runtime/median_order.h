// The order `median` sorts by, shared by the reference evaluator, the runtime's scalar
// selection and the vector code: IEEE 754 totalOrder (IEEE 754-2019 section 5.10),
//   -NaN < -inf < ... < -1 < -0 < +0 < 1 < ... < +inf < +NaN,
// NaNs of one sign ordered by payload. As a key: the bits with the magnitude flipped
// when the sign is set, compared as signed integers, which is what the vector code sorts
// (three integer operations per value, no NaN test). It is total, so every correct
// selection algorithm (nth_element, a sorting network) picks the same element. An f32
// converts to f64 keeping its sign, so the order of f32 values survives the evaluator's
// doubles (up to the payloads of signalling NaNs, which the conversion quiets).
#pragma once

#include <cstdint>
#include <cstring>

namespace stipple {

// median_key(double) -> int64_t; the generated C++ prints the same text.
#include "compiler_core/runtime/median_key.inc"

inline bool median_less(double a, double b) { return median_key(a) < median_key(b); }

}  // namespace stipple
