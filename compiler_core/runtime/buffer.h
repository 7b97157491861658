// A dense N-dimensional buffer of one scalar type, dimension 0 innermost. Images are
// buffers of dimensions (x, y) or (x, y, c); each dimension has a min so that a func can
// be realised over any box, including one that starts at a negative coordinate.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "compiler_core/ir/type.h"

namespace stipple {

struct BufferDim {
  int64_t min = 0;
  int64_t extent = 0;
  int64_t stride = 0;  // in elements
};

class Buffer {
 public:
  Buffer() = default;
  /// A zero-filled buffer with all mins 0.
  Buffer(ScalarType type, std::vector<int64_t> extents);
  /// A zero-filled buffer over the box [mins, mins + extents).
  Buffer(ScalarType type, std::vector<int64_t> mins, std::vector<int64_t> extents);
  /// A buffer over memory its caller owns and keeps alive while the buffer is used, with
  /// the caller's strides (an interleaved image, a crop, rows in reverse): how a program's
  /// own images reach compiled code without a copy (the embedding library). What assumes
  /// the dense layout of the constructors above (get_flat and set_flat over
  /// element_count(), size_in_bytes, same_contents) does not apply to it; offset_of,
  /// get and set do.
  static Buffer view(ScalarType type, std::vector<BufferDim> dims, void* data);

  bool defined() const { return data_ != nullptr; }
  ScalarType type() const { return type_; }
  int dimensions() const { return static_cast<int>(dims_.size()); }
  const BufferDim& dim(int d) const { return dims_[d]; }
  int64_t min(int d) const { return dims_[d].min; }
  int64_t extent(int d) const { return dims_[d].extent; }
  /// Extent of dimension d, or 1 when the buffer has fewer dimensions.
  int64_t extent_or_one(int d) const { return d < dimensions() ? dims_[d].extent : 1; }
  int64_t element_count() const { return element_count_; }
  size_t size_in_bytes() const { return static_cast<size_t>(element_count_) * bytes_of(type_); }

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* data_as() {
    return reinterpret_cast<T*>(data_.get());
  }
  template <typename T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(data_.get());
  }

  bool contains(std::span<const int64_t> coords) const;
  /// Flat element index of a coordinate inside the buffer.
  int64_t offset_of(std::span<const int64_t> coords) const {
    int64_t off = 0;
    for (size_t d = 0; d < coords.size(); ++d) off += (coords[d] - dims_[d].min) * dims_[d].stride;
    return off;
  }
  /// Element at a flat index, converted to double (exact for every element type).
  double get_flat(int64_t i) const;
  void set_flat(int64_t i, double v);  // v must be representable in the element type
  double get(std::span<const int64_t> coords) const { return get_flat(offset_of(coords)); }
  void set(std::span<const int64_t> coords, double v) { set_flat(offset_of(coords), v); }

  /// Element-wise equality of type, shape and contents.
  bool same_contents(const Buffer& other) const;

 private:
  ScalarType type_ = ScalarType::Float32;
  std::vector<BufferDim> dims_;
  int64_t element_count_ = 0;
  std::shared_ptr<std::byte[]> data_;
};

}  // namespace stipple
