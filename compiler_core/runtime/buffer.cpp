#include "compiler_core/runtime/buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple {

// `extents` is copied, not moved: the order in which the two arguments are evaluated is
// unspecified, and a move could empty it before its size is read.
Buffer::Buffer(ScalarType type, std::vector<int64_t> extents)
    : Buffer(type, std::vector<int64_t>(extents.size(), 0), extents) {}

Buffer::Buffer(ScalarType type, std::vector<int64_t> mins, std::vector<int64_t> extents)
    : type_(type) {
  STIPPLE_INTERNAL_CHECK(mins.size() == extents.size(), "buffer mins and extents differ in length");
  int64_t stride = 1;
  for (size_t d = 0; d < extents.size(); ++d) {
    STIPPLE_INTERNAL_CHECK(extents[d] >= 0, "negative buffer extent");
    dims_.push_back({mins[d], extents[d], stride});
    stride *= extents[d];
  }
  element_count_ = stride;
  size_t bytes = static_cast<size_t>(element_count_) * bytes_of(type_);
  // 64-byte aligned (a cache line, an AVX-512 vector): generated code's whole-line vector
  // stores to large outputs can then bypass the cache (codegen_llvm.h,
  // kStreamingStoreBytes). Zeroed, as before.
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  data_ =
      std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
}

Buffer Buffer::view(ScalarType type, std::vector<BufferDim> dims, void* data) {
  Buffer b;
  b.type_ = type;
  b.element_count_ = 1;
  for (const BufferDim& d : dims) b.element_count_ *= d.extent;
  b.dims_ = std::move(dims);
  // Not owned: the deleter does nothing.
  b.data_ = std::shared_ptr<std::byte[]>(static_cast<std::byte*>(data), [](std::byte*) {});
  return b;
}

bool Buffer::contains(std::span<const int64_t> coords) const {
  if (coords.size() != dims_.size()) return false;
  for (size_t d = 0; d < coords.size(); ++d) {
    if (coords[d] < dims_[d].min || coords[d] >= dims_[d].min + dims_[d].extent) return false;
  }
  return true;
}

double Buffer::get_flat(int64_t i) const {
  const std::byte* p = data_.get();
  switch (type_) {
    case ScalarType::Bool: return static_cast<double>(reinterpret_cast<const uint8_t*>(p)[i] != 0);
    case ScalarType::UInt8: return reinterpret_cast<const uint8_t*>(p)[i];
    case ScalarType::UInt16: return reinterpret_cast<const uint16_t*>(p)[i];
    case ScalarType::Int32: return reinterpret_cast<const int32_t*>(p)[i];
    case ScalarType::Float32: return reinterpret_cast<const float*>(p)[i];
    case ScalarType::Float64: return reinterpret_cast<const double*>(p)[i];
    case ScalarType::Int8: return reinterpret_cast<const int8_t*>(p)[i];
    case ScalarType::Int16: return reinterpret_cast<const int16_t*>(p)[i];
    case ScalarType::UInt32: return reinterpret_cast<const uint32_t*>(p)[i];
    case ScalarType::Float16: return f16_bits_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
  }
  return 0;
}

void Buffer::set_flat(int64_t i, double v) {
  std::byte* p = data_.get();
  switch (type_) {
    case ScalarType::Bool: reinterpret_cast<uint8_t*>(p)[i] = v != 0; return;
    case ScalarType::UInt8: reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case ScalarType::UInt16: reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
    case ScalarType::Int32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case ScalarType::Float32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); return;
    case ScalarType::Float64: reinterpret_cast<double*>(p)[i] = v; return;
    case ScalarType::Int8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case ScalarType::Int16: reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case ScalarType::UInt32: reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
    case ScalarType::Float16:  // rounded to nearest even, from the double itself
      reinterpret_cast<uint16_t*>(p)[i] = f32_to_f16_bits(f64_to_f32_round_odd(v));
      return;
  }
}

bool Buffer::same_contents(const Buffer& other) const {
  if (type_ != other.type_ || dims_.size() != other.dims_.size()) return false;
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].min != other.dims_[d].min || dims_[d].extent != other.dims_[d].extent)
      return false;
  }
  return std::memcmp(data_.get(), other.data_.get(), size_in_bytes()) == 0;
}

}  // namespace stipple
