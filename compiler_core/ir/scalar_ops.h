// The scalar semantics of compiler_core/ir/ir.h in one place: a tagless Value, integer
// wrapping, floor division and Euclidean modulo, casts (saturating float to integer, NaN
// to 0) and loads and stores of buffer elements.
//
// A Value's meaning depends on the static type of the node that produced it: integers
// and Bool in `i` (always already wrapped to the type's range: u32 as 0 .. 2^32 - 1), f32
// in `f` (so f32 work really happens in single precision), f16 also in `f` (a float that
// is exactly an f16 value: its widening to f32) and f64 in `d`.
//
// f16 conversions are written out with integer operations (f32_to_f16_bits and the rest
// below), and the back ends generate the same steps (codegen/codegen_f16.cpp, the C++
// source's stp_f16 helpers), so every NaN becomes the same bits everywhere: 0x7e00 with
// the sign kept.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
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

/// An f32 rounded to the nearest IEEE binary16 value, ties to even: the bits. Magnitudes
/// from 65520 up become infinity; below 2^-14 the result is subnormal (or zero); NaN
/// becomes the quiet NaN 0x7e00 with the sign kept. Three cases by magnitude, no
/// floating-point state but the default rounding (the subnormal case adds 0.5f so that
/// the FPU rounds at the f16 subnormal spacing 2^-24).
inline uint16_t f32_to_f16_bits(float x) {
  uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  const uint32_t sign = f & 0x80000000u;
  f ^= sign;
  uint32_t o;
  if (f >= 0x47800000u) {  // |x| >= 2^16, infinity or NaN
    o = f > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (f < 0x38800000u) {  // |x| < 2^-14
    float t;
    std::memcpy(&t, &f, sizeof t);
    t += 0.5f;
    uint32_t tb;
    std::memcpy(&tb, &t, sizeof tb);
    o = tb - 0x3f000000u;
  } else {  // normal: rebias the exponent by 15 - 127 and round the 13 dropped bits to even
    const uint32_t odd = (f >> 13) & 1u;
    f += 0xc8000fffu;
    f += odd;
    o = f >> 13;
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

/// The f32 value of IEEE binary16 bits (exact; NaN payloads kept).
inline float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  uint32_t bits;
  if (em < 0x0400u) {  // zero or subnormal: m * 2^-24, exact in f32
    float t = static_cast<float>(em) * 0x1p-24f;
    std::memcpy(&bits, &t, sizeof bits);
  } else if (em >= 0x7c00u) {  // infinity or NaN
    bits = (em << 13) | 0x7f800000u;
  } else {  // normal: rebias the exponent by 127 - 15
    bits = (em << 13) + 0x38000000u;
  }
  bits |= sign;
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

/// An f64 as an f32 rounded to odd (truncated, the last bit set when inexact), so that a
/// second rounding to f16 gives the f64's correctly rounded f16 value.
inline float f64_to_f32_round_odd(double d) {
  float t = static_cast<float>(d);
  if (static_cast<double>(t) == d || std::isnan(d)) return t;
  uint32_t b;
  std::memcpy(&b, &t, sizeof b);
  if (std::fabs(static_cast<double>(t)) > std::fabs(d)) b -= 1;  // rounded away: step back
  b |= 1u;
  std::memcpy(&t, &b, sizeof t);
  return t;
}

/// An f32 rounded to f16, as an f32 again: the value an f16 store keeps.
inline float round_to_f16(float x) { return f16_bits_to_f32(f32_to_f16_bits(x)); }

/// Reduces an integer modulo 2^bits of an integer type (two's complement for i8, i16 and
/// i32).
inline int64_t wrap(ScalarType t, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  switch (t) {
    case ScalarType::Bool: return v != 0;
    case ScalarType::UInt8: return static_cast<int64_t>(u & 0xffu);
    case ScalarType::UInt16: return static_cast<int64_t>(u & 0xffffu);
    case ScalarType::UInt32: return static_cast<int64_t>(u & 0xffffffffu);
    case ScalarType::Int8: return static_cast<int8_t>(static_cast<uint8_t>(u));
    case ScalarType::Int16: return static_cast<int16_t>(static_cast<uint16_t>(u));
    case ScalarType::Int32: return static_cast<int32_t>(static_cast<uint32_t>(u));
    case ScalarType::Float16:
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
    case ScalarType::Float16:
    case ScalarType::Float32: return v.f;
    case ScalarType::Float64: return v.d;
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32: break;
  }
  return static_cast<double>(v.i);
}

/// Converts a value of type `from` to type `to` with the IR's cast semantics. Casting to
/// Bool is a comparison with zero; casting to f16 rounds to nearest even (an f64 directly,
/// not through f32), from f16 is exact.
inline Value cast_value(ScalarType from, ScalarType to, Value v) {
  const bool from_float = Type(from).is_float();
  const bool from_f32 = from == ScalarType::Float32 || from == ScalarType::Float16;
  switch (to) {
    case ScalarType::Float16:
      if (from == ScalarType::Float16) return v;
      if (from_f32) return f32_value(round_to_f16(v.f));
      if (from == ScalarType::Float64) return f32_value(round_to_f16(f64_to_f32_round_odd(v.d)));
      // An integer: exact in f32 below 2^24, and every larger one rounds to infinity
      // either way, so the rounding through f32 never matters.
      return f32_value(round_to_f16(static_cast<float>(v.i)));
    case ScalarType::Float32:
      if (from_f32) return f32_value(v.f);
      if (from == ScalarType::Float64) return f32_value(static_cast<float>(v.d));
      return f32_value(static_cast<float>(v.i));  // integers round to nearest
    case ScalarType::Float64:
      if (from_f32) return f64_value(v.f);
      if (from == ScalarType::Float64) return v;
      return f64_value(static_cast<double>(v.i));
    case ScalarType::Bool:
      if (from_float) return int_value(to_double(from, v) != 0);
      return int_value(v.i != 0);
    case ScalarType::UInt8:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::Int8:
    case ScalarType::Int16:
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
    case ScalarType::UInt32: return int_value(static_cast<const uint32_t*>(data)[i]);
    case ScalarType::Int8: return int_value(static_cast<const int8_t*>(data)[i]);
    case ScalarType::Int16: return int_value(static_cast<const int16_t*>(data)[i]);
    case ScalarType::Int32: return int_value(static_cast<const int32_t*>(data)[i]);
    case ScalarType::Float16:
      return f32_value(f16_bits_to_f32(static_cast<const uint16_t*>(data)[i]));
    case ScalarType::Float32: return f32_value(static_cast<const float*>(data)[i]);
    case ScalarType::Float64: return f64_value(static_cast<const double*>(data)[i]);
  }
  return int_value(0);
}

/// Stores a value that is already of type t (integers already wrapped, f16 already
/// rounded: its bits are then exact).
inline void store_element(ScalarType t, void* data, int64_t i, Value v) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(v.i); return;
    case ScalarType::UInt16: static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(v.i); return;
    case ScalarType::UInt32: static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(v.i); return;
    case ScalarType::Int8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(v.i); return;
    case ScalarType::Int16: static_cast<int16_t*>(data)[i] = static_cast<int16_t>(v.i); return;
    case ScalarType::Int32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v.i); return;
    case ScalarType::Float16: static_cast<uint16_t*>(data)[i] = f32_to_f16_bits(v.f); return;
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
