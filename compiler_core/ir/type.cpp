#include "compiler_core/ir/type.h"

#include <limits>

namespace stipple {

int Type::bits() const {
  switch (code) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return 8;
    case ScalarType::UInt16: return 16;
    case ScalarType::Int32: return 32;
    case ScalarType::Float32: return 32;
    case ScalarType::Float64: return 64;
    case ScalarType::Int8: return 8;
    case ScalarType::Int16: return 16;
    case ScalarType::UInt32: return 32;
    case ScalarType::Float16: return 16;
  }
  return 0;
}

double Type::min_value() const {
  switch (code) {
    case ScalarType::Bool: return 0;
    case ScalarType::UInt8: return 0;
    case ScalarType::UInt16: return 0;
    case ScalarType::Int32: return std::numeric_limits<int32_t>::min();
    case ScalarType::Float32: return -std::numeric_limits<float>::infinity();
    case ScalarType::Float64: return -std::numeric_limits<double>::infinity();
    case ScalarType::Int8: return -128;
    case ScalarType::Int16: return -32768;
    case ScalarType::UInt32: return 0;
    case ScalarType::Float16: return -std::numeric_limits<float>::infinity();
  }
  return 0;
}

double Type::max_value() const {
  switch (code) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return 255;
    case ScalarType::UInt16: return 65535;
    case ScalarType::Int32: return std::numeric_limits<int32_t>::max();
    case ScalarType::Float32: return std::numeric_limits<float>::infinity();
    case ScalarType::Float64: return std::numeric_limits<double>::infinity();
    case ScalarType::Int8: return 127;
    case ScalarType::Int16: return 32767;
    case ScalarType::UInt32: return 4294967295.0;
    case ScalarType::Float16: return std::numeric_limits<float>::infinity();
  }
  return 0;
}

int bytes_of(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return 1;
    case ScalarType::UInt16: return 2;
    case ScalarType::Int32: return 4;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
    case ScalarType::Int8: return 1;
    case ScalarType::Int16: return 2;
    case ScalarType::UInt32: return 4;
    case ScalarType::Float16: return 2;
  }
  return 0;
}

std::string to_string(Type t) {
  std::string s;
  switch (t.code) {
    case ScalarType::Bool: s = "bool"; break;
    case ScalarType::UInt8: s = "u8"; break;
    case ScalarType::UInt16: s = "u16"; break;
    case ScalarType::Int32: s = "i32"; break;
    case ScalarType::Float32: s = "f32"; break;
    case ScalarType::Float64: s = "f64"; break;
    case ScalarType::Int8: s = "i8"; break;
    case ScalarType::Int16: s = "i16"; break;
    case ScalarType::UInt32: s = "u32"; break;
    case ScalarType::Float16: s = "f16"; break;
  }
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

std::optional<Type> parse_type_name(std::string_view name) {
  if (name == "u8") return UInt8();
  if (name == "u16") return UInt16();
  if (name == "u32") return UInt32();
  if (name == "i8") return Int8();
  if (name == "i16") return Int16();
  if (name == "i32") return Int32();
  if (name == "f16") return Float16();
  if (name == "f32") return Float32();
  if (name == "f64") return Float64();
  return std::nullopt;
}

}  // namespace stipple
