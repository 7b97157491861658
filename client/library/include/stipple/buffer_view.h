// Stipple's embedding API, part 1 of 3: a program's own images as pipelines read and
// write them, what a pipeline declares, and the one exception type. Installed as
// <stipple/buffer_view.h>; most programs include <stipple/stipple.h>, which includes this.
//
//   std::vector<uint8_t> rgb(width * height * 3);                 // RGBRGB..., row by row
//   auto in = stipple::BufferView::interleaved(rgb.data(), width, height, 3);
//   auto planes = stipple::BufferView::planar(floats.data(), width, height, 3);
//
// Dimensions are in the pipeline's order, x first (x, y, c for an `input in : u8[x, y, c]`),
// each with its extent and its stride in elements, so any layout is described without a
// copy: planar (x stride 1), interleaved (x stride C, c stride 1, as OpenCV's cv::Mat and
// numpy's H x W x C arrays hold pixels), a crop of a larger image (its row stride), rows
// bottom up (a negative y stride).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

/// What the library exports: the API, and nothing of the compiler inside it.
#if defined(__GNUC__)
#define STIPPLE_API __attribute__((visibility("default")))
#else
#define STIPPLE_API
#endif

namespace stipple {

/// The element types of the language (`u8`, `f32`, ...).
enum class ElementType { UInt8, UInt16, UInt32, Int8, Int16, Int32, Float16, Float32, Float64 };

/// The language's name of a type ("u8", "f32").
STIPPLE_API const char* element_type_name(ElementType type);
/// Its size in bytes.
STIPPLE_API size_t element_size(ElementType type);

/// The ElementType of a C++ element type (Float16 has none: name it explicitly).
template <typename T>
constexpr ElementType element_type_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, uint8_t>)
    return ElementType::UInt8;
  else if constexpr (std::is_same_v<U, uint16_t>)
    return ElementType::UInt16;
  else if constexpr (std::is_same_v<U, uint32_t>)
    return ElementType::UInt32;
  else if constexpr (std::is_same_v<U, int8_t>)
    return ElementType::Int8;
  else if constexpr (std::is_same_v<U, int16_t>)
    return ElementType::Int16;
  else if constexpr (std::is_same_v<U, int32_t>)
    return ElementType::Int32;
  else if constexpr (std::is_same_v<U, float>)
    return ElementType::Float32;
  else if constexpr (std::is_same_v<U, double>)
    return ElementType::Float64;
  else
    static_assert(sizeof(U) == 0, "no Stipple element type for this C++ type");
}

/// A view of memory the caller owns: where the element at coordinate 0 of every
/// dimension is, its type, and each dimension's extent and stride (in elements, not bytes).
/// The memory must stay alive and, for an output, unshared while a pipeline runs on it.
struct STIPPLE_API BufferView {
  struct Dimension {
    int64_t extent = 0;
    int64_t stride = 0;  // elements; dimension 0's must be positive
  };

  void* data = nullptr;
  ElementType type = ElementType::Float32;
  std::vector<Dimension> dims;  // x first

  /// Pixels interleaved (RGBRGB...): dimensions x, y, c with strides channels,
  /// row_stride (elements; 0: width * channels, rows back to back) and 1. With
  /// channels 1 it is a two-dimensional (x, y) image (for a program's `f32[x, y]`; a gray
  /// image for an `[x, y, c]` input is written out: {{w, 1}, {h, w}, {1, w * h}}).
  static BufferView interleaved(void* data, ElementType type, int64_t width, int64_t height,
                                int64_t channels, int64_t row_stride = 0);
  /// One plane per channel (all of channel 0's rows, then channel 1's, ...): dimensions x,
  /// y, c with strides 1, width and width * height; with channels 1, (x, y).
  static BufferView planar(void* data, ElementType type, int64_t width, int64_t height,
                           int64_t channels = 1);

  template <typename T>
  static BufferView interleaved(T* data, int64_t width, int64_t height, int64_t channels,
                                int64_t row_stride = 0) {
    return interleaved(const_cast<std::remove_cv_t<T>*>(data), element_type_of<T>(), width, height,
                       channels, row_stride);
  }
  template <typename T>
  static BufferView planar(T* data, int64_t width, int64_t height, int64_t channels = 1) {
    return planar(const_cast<std::remove_cv_t<T>*>(data), element_type_of<T>(), width, height,
                  channels);
  }
};

/// A pipeline's input as its program declares it.
struct PipelineInput {
  std::string name;
  ElementType type = ElementType::Float32;
  std::vector<std::string> dimensions;  // x first: {"x", "y", "c"}
};

/// A pipeline's param and its default value.
struct PipelineParam {
  std::string name;
  ElementType type = ElementType::Float32;
  double default_value = 0;
};

/// What every call of the embedding API throws. The message is the command line's for
/// the same problem (`blur.stp:3:14: error: ...` with the line and a caret for a program
/// or schedule); kind() says whose problem it is, as the command line's exit codes do.
class STIPPLE_API Error : public std::runtime_error {
 public:
  enum class Kind {
    BadInput,  // the caller's: a program, schedule, buffer, param or database (exit 2)
    Failure,   // Stipple's or the machine's: out of memory, an internal error (exit 1)
  };
  Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace stipple
