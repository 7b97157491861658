// The scalar semantics of compiler_core/ir/ir.h in one place: a tagless Value, integer
// wrapping, floor division and Euclidean modulo, casts (saturating float to integer, NaN
// to 0) and loads and stores of buffer elements.
//
// A Value's meaning depends on the static type of the node that produced it: integers
// and Bool in `i` (always already wrapped to the type's range), f32 in `f` (so f32 work
// really happens in single precision) and f64 in `d`.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "compiler_core/ir/type.h"

namespace stipple {

union Value {
  int64_t i;
  float f;
  double d;
};

inline Value int_value(int64_t v) {
  Value r;
  r.i = v;
  return r;
}
inline Value f32_value(float v) {
  Value r;
  r.f = v;
  return r;
}
inline Value f64_value(double v) {
  Value r;
  r.d = v;
  return r;
}

/// Reduces an integer modulo 2^bits of an integer type (two's complement for i32).
inline int64_t wrap(ScalarType t, int64_t v) {
  switch (t) {
    case ScalarType::Bool: return v != 0;
    case ScalarType::UInt8: return static_cast<int64_t>(static_cast<uint64_t>(v) & 0xffu);
    case ScalarType::UInt16: return static_cast<int64_t>(static_cast<uint64_t>(v) & 0xffffu);
    case ScalarType::Int32:
      return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    case ScalarType::Float32:
    case ScalarType::Float64: break;
  }
  return v;
}

/// Integer division rounding towards negative infinity; x / 0 == 0.
inline int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// Euclidean remainder, never negative; x % 0 == 0.
inline int64_t euclid_mod(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t r = a % b;
  if (r < 0) r += b < 0 ? -b : b;
  return r;
}

/// Float to integer: truncates towards zero, saturates to the type's range, NaN -> 0.
inline int64_t float_to_int(ScalarType t, double v) {
  if (std::isnan(v)) return 0;
  if (t == ScalarType::Bool) return v != 0;
  double lo = Type(t).min_value(), hi = Type(t).max_value();
  if (v <= lo) return static_cast<int64_t>(lo);
  if (v >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(std::trunc(v));
}

/// The value as a double (exact for every type).
inline double to_double(ScalarType t, Value v) {
  switch (t) {
    case ScalarType::Float32: return v.f;
    case ScalarType::Float64: return v.d;
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::UInt16:
    case ScalarType::Int32: break;
  }
  return static_cast<double>(v.i);
}

/// Converts a value of type `from` to type `to` with the IR's cast semantics. Casting to
/// Bool is a comparison with zero.
inline Value cast_value(ScalarType from, ScalarType to, Value v) {
  bool from_float = from == ScalarType::Float32 || from == ScalarType::Float64;
  switch (to) {
    case ScalarType::Float32:
      if (from == ScalarType::Float32) return v;
      if (from == ScalarType::Float64) return f32_value(static_cast<float>(v.d));
      return f32_value(static_cast<float>(v.i));  // integers round to nearest
    case ScalarType::Float64:
      if (from == ScalarType::Float32) return f64_value(v.f);
      if (from == ScalarType::Float64) return v;
      return f64_value(static_cast<double>(v.i));
    case ScalarType::Bool:
      if (from_float) return int_value(to_double(from, v) != 0);
      return int_value(v.i != 0);
    case ScalarType::UInt8:
    case ScalarType::UInt16:
    case ScalarType::Int32:
      if (from_float) return int_value(float_to_int(to, to_double(from, v)));
      return int_value(wrap(to, v.i));
  }
  return v;
}

/// A double converted to a type as if it were an f64 cast (used for params and constants).
inline Value value_from_double(ScalarType t, double v) {
  return cast_value(ScalarType::Float64, t, f64_value(v));
}

inline Value load_element(ScalarType t, const void* data, int64_t i) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8: return int_value(static_cast<const uint8_t*>(data)[i]);
    case ScalarType::UInt16: return int_value(static_cast<const uint16_t*>(data)[i]);
    case ScalarType::Int32: return int_value(static_cast<const int32_t*>(data)[i]);
    case ScalarType::Float32: return f32_value(static_cast<const float*>(data)[i]);
    case ScalarType::Float64: return f64_value(static_cast<const double*>(data)[i]);
  }
  return int_value(0);
}

/// Stores a value that is already of type t (integers already wrapped).
inline void store_element(ScalarType t, void* data, int64_t i, Value v) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(v.i); return;
    case ScalarType::UInt16: static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(v.i); return;
    case ScalarType::Int32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v.i); return;
    case ScalarType::Float32: static_cast<float*>(data)[i] = v.f; return;
    case ScalarType::Float64: static_cast<double*>(data)[i] = v.d; return;
  }
}

/// Mirror boundary: reflection about the edge pixel without repeating it (-1 -> 1,
/// extent -> extent - 2), periodic for far-out coordinates; extent 1 always gives 0.
inline int64_t mirror_coordinate(int64_t c, int64_t extent) {
  if (extent <= 1) return 0;
  int64_t period = 2 * (extent - 1);
  int64_t m = euclid_mod(c, period);
  return m >= extent ? period - m : m;
}

inline int64_t clamp_coordinate(int64_t c, int64_t extent) {
  return c < 0 ? 0 : (c >= extent ? extent - 1 : c);
}

}  // namespace stipple
