// Scalar and vector types of the Stipple IR.
//
// The language has the integer types u8, u16, u32 (unsigned) and i8, i16, i32 (two's
// complement), the float types f32 and f64, and f16, a storage type: an f16 func, input or
// output holds IEEE binary16 values, but every f16 value used in an expression is widened
// to f32 first, so no arithmetic happens in f16 (compiler_core/ir/ir.h says which nodes
// may have type f16). Bool is the type of comparisons and logical operators and never the
// type of a func. `lanes` is 1 everywhere in the language and the reference evaluator; the
// vectorising back end uses wider types.
//
// The enumerators are in the order they were added (i8, i16, u32 and f16 last): the AOT
// header's STIPPLE_TYPE_* codes are their numbers, so existing codes never change (the
// wire formats have numbers of their own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stipple {

enum class ScalarType : uint8_t {
  Bool,
  UInt8,
  UInt16,
  Int32,
  Float32,
  Float64,
  Int8,
  Int16,
  UInt32,
  Float16,
};

struct Type {
  ScalarType code = ScalarType::Int32;
  int lanes = 1;

  constexpr Type() = default;
  constexpr Type(ScalarType c, int l = 1) : code(c), lanes(l) {}

  constexpr bool is_bool() const { return code == ScalarType::Bool; }
  constexpr bool is_float() const {
    return code == ScalarType::Float16 || code == ScalarType::Float32 ||
           code == ScalarType::Float64;
  }
  constexpr bool is_int() const { return is_signed() || is_unsigned(); }
  constexpr bool is_unsigned() const {
    return code == ScalarType::UInt8 || code == ScalarType::UInt16 || code == ScalarType::UInt32;
  }
  constexpr bool is_signed() const {
    return code == ScalarType::Int8 || code == ScalarType::Int16 || code == ScalarType::Int32;
  }
  /// f16, the storage-only type.
  constexpr bool is_f16() const { return code == ScalarType::Float16; }
  constexpr bool is_numeric() const { return is_int() || is_float(); }
  int bits() const;
  Type with_lanes(int l) const { return Type(code, l); }
  Type element_of() const { return Type(code, 1); }

  friend constexpr bool operator==(Type a, Type b) {
    return a.code == b.code && a.lanes == b.lanes;
  }
  friend constexpr bool operator!=(Type a, Type b) { return !(a == b); }

  /// Smallest and largest value of an integer type, as doubles (exact for these widths).
  double min_value() const;
  double max_value() const;
};

inline constexpr Type Bool() { return Type(ScalarType::Bool); }
inline constexpr Type UInt8() { return Type(ScalarType::UInt8); }
inline constexpr Type UInt16() { return Type(ScalarType::UInt16); }
inline constexpr Type UInt32() { return Type(ScalarType::UInt32); }
inline constexpr Type Int8() { return Type(ScalarType::Int8); }
inline constexpr Type Int16() { return Type(ScalarType::Int16); }
inline constexpr Type Int32() { return Type(ScalarType::Int32); }
inline constexpr Type Float16() { return Type(ScalarType::Float16); }
inline constexpr Type Float32() { return Type(ScalarType::Float32); }
inline constexpr Type Float64() { return Type(ScalarType::Float64); }

/// The language spelling: "u8", "u16", "u32", "i8", "i16", "i32", "f16", "f32", "f64",
/// "bool"; vectors as "f32x8".
std::string to_string(Type t);
/// Parses a language type name; nullopt for anything else (including "bool").
std::optional<Type> parse_type_name(std::string_view name);

/// Size in bytes of one element of a scalar type (Bool takes one byte in buffers).
int bytes_of(ScalarType t);

}  // namespace stipple
