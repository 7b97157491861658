// Reading PNG (stb_image) and JPEG (libjpeg) photos, writing PNGs (libpng, which unlike
// stb_image_write can write 16 bits), and converting photos to and from pipeline buffers.
//
// stb_image and libpng store pixels interleaved (RGBRGB...), while a Buffer keeps each
// channel in its own plane (dimension 0 innermost, c outermost), so both directions
// transpose.
#include "compiler_core/image/image_io.h"

#include <fmt/format.h>
#include <png.h>
#include <stb/stb_image.h>

// jpeglib.h needs FILE and size_t declared before it.
#include <jpeglib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/files.h"

namespace stipple {

namespace {

[[noreturn]] void fail_read(const std::string& path, const std::string& why) {
  throw UserError(fmt::format("cannot read image '{}': {}", path, why));
}

[[noreturn]] void fail_write(const std::string& path, const std::string& why) {
  throw UserError(fmt::format("cannot write image '{}': {}", path, why));
}

bool starts_with(std::string_view bytes, std::initializer_list<unsigned char> magic) {
  return bytes.size() >= magic.size() &&
         std::equal(magic.begin(), magic.end(), bytes.begin(),
                    [](unsigned char m, char b) { return m == static_cast<unsigned char>(b); });
}

// stb_image also decodes BMP, GIF, TGA, HDR and more; we promise PNG and JPEG only, and
// HDR in particular would be silently tone-mapped to 8 bits.
bool is_png(std::string_view b) {
  return starts_with(b, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
}
bool is_jpeg(std::string_view b) { return starts_with(b, {0xff, 0xd8, 0xff}); }

// The size a PNG's header states (IHDR is always its first chunk): width, height,
// channels and bytes per sample, or nothing when the header is cut short.
std::optional<std::array<int64_t, 4>> png_header_size(const std::string& b) {
  if (b.size() < 26) return std::nullopt;
  auto u32 = [&](size_t at) {
    int64_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
  };
  const int depth = static_cast<unsigned char>(b[24]), color = static_cast<unsigned char>(b[25]);
  // Colour types 0 gray, 2 RGB, 3 palette (expanded to RGB), 4 gray + alpha, 6 RGBA.
  const int64_t channels = color == 2 || color == 3 ? 3 : color == 4 ? 2 : color == 6 ? 4 : 1;
  return std::array<int64_t, 4>{u32(16), u32(20), channels, depth == 16 ? 2 : 1};
}

// JPEG through libjpeg(-turbo), the decoder OpenCV, Pillow and ImageMagick use, with its
// defaults (accurate integer IDCT, fancy upsampling): stb_image's JPEG decoder differs
// from it by one or two levels a sample, so a photo read here would not be the photo every
// other tool sees. libjpeg reports errors through error_exit, which must not return: it
// longjmps back to decode_jpeg, which holds nothing with a destructor across the jump.
struct JpegErrorState {
  jpeg_error_mgr manager;  // first: libjpeg's pointer to it is a pointer to this
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void on_jpeg_error(j_common_ptr cinfo) {
  auto* state = reinterpret_cast<JpegErrorState*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, state->message);
  std::longjmp(state->jump, 1);
}

// A warning (level -1) is corrupt data that libjpeg would paper over (a file cut short
// decodes with gray rows): an error here. Trace messages (level >= 0) are dropped.
extern "C" void on_jpeg_message(j_common_ptr cinfo, int level) {
  if (level < 0) on_jpeg_error(cinfo);
}

// Decodes into `samples` (interleaved, as libjpeg writes rows); false with the reason.
bool decode_jpeg_rows(const std::string& bytes, std::vector<unsigned char>& samples, int* width,
                      int* height, int* channels, std::string* why) {
  jpeg_decompress_struct cinfo;
  JpegErrorState state;
  cinfo.err = jpeg_std_error(&state.manager);
  state.manager.error_exit = on_jpeg_error;
  state.manager.emit_message = on_jpeg_message;
  state.message[0] = '\0';
  jpeg_create_decompress(&cinfo);
  if (setjmp(state.jump)) {
    jpeg_destroy_decompress(&cinfo);
    *why = state.message;
    return false;
  }
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  // Gray stays one channel; YCbCr (and RGB) become RGB. CMYK and YCCK, which a photograph
  // from a camera never is, are refused rather than guessed at.
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    *why = "a CMYK JPEG: convert it to RGB";
    return false;
  }
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  if (std::string problem = image_size_problem(cinfo.image_width, cinfo.image_height,
                                               cinfo.num_components == 1 ? 1 : 3, 1);
      !problem.empty()) {
    jpeg_destroy_decompress(&cinfo);
    *why = problem;
    return false;
  }
  jpeg_start_decompress(&cinfo);
  *width = int(cinfo.output_width);
  *height = int(cinfo.output_height);
  *channels = cinfo.output_components;
  const size_t row = size_t(cinfo.output_width) * size_t(cinfo.output_components);
  samples.resize(row * cinfo.output_height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW rows[1] = {samples.data() + row * cinfo.output_scanline};
    jpeg_read_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

std::string stb_reason() {
  const char* reason = stbi_failure_reason();
  return fmt::format("corrupt or unsupported image (stb_image: {})", reason ? reason : "unknown");
}

// Interleaved samples (as decoded) into a planar (x, y, c) buffer.
template <typename T>
Buffer deinterleave(const T* samples, int width, int height, int channels, ScalarType type) {
  Buffer photo(type, {width, height, channels});
  T* out = photo.data_as<T>();
  int64_t plane = int64_t{width} * height;
  for (int64_t i = 0; i < plane; ++i) {
    for (int c = 0; c < channels; ++c) out[c * plane + i] = samples[i * channels + c];
  }
  return photo;
}

// libpng reports errors by calling this and expects it not to return; we longjmp back
// into write_png_rows, which holds nothing with a destructor across the jump.
struct PngErrorState {
  std::jmp_buf jump;
  char message[256];
};

extern "C" void on_png_error(png_structp png, png_const_charp message) {
  auto* state = static_cast<PngErrorState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof state->message, "%s", message);
  std::longjmp(state->jump, 1);
}

extern "C" void on_png_warning(png_structp, png_const_charp) {}

int png_color_type(int channels) {
  switch (channels) {
    case 1: return PNG_COLOR_TYPE_GRAY;
    case 2: return PNG_COLOR_TYPE_GRAY_ALPHA;
    case 3: return PNG_COLOR_TYPE_RGB;
    default: return PNG_COLOR_TYPE_RGBA;
  }
}

// Returns false with state->message set on failure.
bool write_png_rows(FILE* file, png_uint_32 width, png_uint_32 height, int channels, int bit_depth,
                    png_bytepp rows, PngErrorState* state) {
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, state, on_png_error, on_png_warning);
  if (!png) {
    std::snprintf(state->message, sizeof state->message, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(state->message, sizeof state->message, "out of memory");
    return false;
  }
  if (setjmp(state->jump)) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, width, height, bit_depth, png_color_type(channels), PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

std::string shape_of(const Buffer& b) {
  std::string s = to_string(Type(b.type())) + " ";
  for (int d = 0; d < b.dimensions(); ++d) s += (d > 0 ? "x" : "") + std::to_string(b.extent(d));
  return s;
}

bool is_photo_shape(const Buffer& b) {
  return (b.dimensions() == 2 || b.dimensions() == 3) && b.extent_or_one(2) >= 1 &&
         b.extent_or_one(2) <= 4;
}

}  // namespace

std::string image_size_problem(int64_t width, int64_t height, int64_t channels, int sample_bytes) {
  const int64_t bytes = width * height * channels * sample_bytes;
  // In stb_image's own form, floor divisions first, so that an image this accepts is one
  // stb_image accepts even where the divisions round.
  const int64_t limit = int64_t{kMaxImageDecodedBytes};
  if (width < 1 || channels < 1 || limit / sample_bytes / width / channels >= height) return "";
  return fmt::format(
      "{}x{} with {} channel(s) of {} bit(s) is {} bytes decoded, over the limit of {} for an "
      "image (width x height x channels x bytes per sample)",
      width, height, channels, 8 * sample_bytes, bytes, byte_size_text(kMaxImageDecodedBytes));
}

Buffer read_image(const std::string& path) {
  // The format from the first bytes, so that /dev/zero or a huge file of another kind
  // fails at once.
  const std::string bytes =
      read_text_file(path, "image", kMaxImageFileBytes, [&](std::string_view head) {
        if (!is_png(head) && !is_jpeg(head)) fail_read(path, "not a PNG or JPEG file");
      });
  static_assert(kMaxImageFileBytes <= static_cast<size_t>(INT_MAX), "stb_image takes an int size");
  if (is_jpeg(bytes)) {
    std::vector<unsigned char> samples;
    int width = 0, height = 0, channels = 0;
    std::string why;
    if (!decode_jpeg_rows(bytes, samples, &width, &height, &channels, &why)) {
      fail_read(path, "corrupt or unsupported JPEG (libjpeg: " + why + ")");
    }
    return deinterleave(samples.data(), width, height, channels, ScalarType::UInt8);
  }
  const stbi_uc* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int length = static_cast<int>(bytes.size());
  if (is_png(bytes)) {
    if (auto size = png_header_size(bytes)) {
      const auto [w, h, c, sample_bytes] = *size;
      if (std::string why = image_size_problem(w, h, c, int(sample_bytes)); !why.empty()) {
        fail_read(path, why);
      }
    }
  }
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, length, &width, &height, &channels)) {
    fail_read(path, stb_reason());
  }
  if (std::string why = image_size_problem(width, height, channels,
                                           stbi_is_16_bit_from_memory(data, length) ? 2 : 1);
      !why.empty()) {
    fail_read(path, why);
  }
  if (stbi_is_16_bit_from_memory(data, length)) {
    std::unique_ptr<stbi_us, void (*)(void*)> samples(
        stbi_load_16_from_memory(data, length, &width, &height, &channels, 0), &stbi_image_free);
    if (!samples) fail_read(path, stb_reason());
    return deinterleave(samples.get(), width, height, channels, ScalarType::UInt16);
  }
  std::unique_ptr<stbi_uc, void (*)(void*)> samples(
      stbi_load_from_memory(data, length, &width, &height, &channels, 0), &stbi_image_free);
  if (!samples) fail_read(path, stb_reason());
  return deinterleave(samples.get(), width, height, channels, ScalarType::UInt8);
}

void write_png(const std::string& path, const Buffer& image) {
  if (!image.defined()) fail_write(path, "the image is empty");
  if (image.type() != ScalarType::UInt8 && image.type() != ScalarType::UInt16) {
    fail_write(path,
               fmt::format("a PNG holds u8 or u16 samples, not {}", to_string(Type(image.type()))));
  }
  if (!is_photo_shape(image)) {
    fail_write(path, fmt::format("a PNG needs (x, y) or (x, y, c) with 1 to 4 channels, not {}",
                                 shape_of(image)));
  }
  int64_t width = image.extent(0), height = image.extent(1);
  int channels = static_cast<int>(image.extent_or_one(2));
  // PNG allows up to 2^31 - 1; libpng's default user limit is 1,000,000 per side.
  if (width < 1 || height < 1 || width > 1000000 || height > 1000000) {
    fail_write(path, fmt::format("a PNG must be 1 to 1000000 pixels on each side, not {}x{}", width,
                                 height));
  }
  bool sixteen = image.type() == ScalarType::UInt16;
  int sample_bytes = sixteen ? 2 : 1;
  // What read_image could not read back is not written.
  if (std::string why = image_size_problem(width, height, channels, sample_bytes); !why.empty()) {
    fail_write(path, why);
  }
  int64_t row_bytes = width * channels * sample_bytes;
  int64_t plane = image.dimensions() == 3 ? image.dim(2).stride : 0;
  std::vector<png_byte> pixels(static_cast<size_t>(row_bytes * height));
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) {
    png_bytep row = pixels.data() + y * row_bytes;
    rows[y] = row;
    for (int64_t x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        int64_t at = x * image.dim(0).stride + y * image.dim(1).stride + c * plane;
        png_bytep out = row + (x * channels + c) * sample_bytes;
        if (sixteen) {
          uint16_t v = image.data_as<uint16_t>()[at];
          out[0] = static_cast<png_byte>(v >> 8);  // PNG is big-endian
          out[1] = static_cast<png_byte>(v & 0xff);
        } else {
          out[0] = image.data_as<uint8_t>()[at];
        }
      }
    }
  }
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) fail_write(path, std::strerror(errno));
  PngErrorState state{};
  bool ok = write_png_rows(file, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
                           channels, sixteen ? 16 : 8, rows.data(), &state);
  std::string why = ok ? "" : state.message;
  // fclose flushes, so a full disk shows up here rather than in libpng.
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    why = std::strerror(errno);
  }
  if (!ok) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // leave no truncated PNG behind
    fail_write(path, why);
  }
}

Buffer photo_to_input(const Buffer& photo, const InputDecl& input, const std::string& source) {
  if (!photo.defined() || !is_photo_shape(photo) ||
      (photo.type() != ScalarType::UInt8 && photo.type() != ScalarType::UInt16)) {
    throw UserError(fmt::format("'{}' is not an 8- or 16-bit photo", source));
  }
  int64_t channels = photo.extent_or_one(2);
  size_t dims = input.dim_names.size();
  if (dims == 2 && channels != 1) {
    throw UserError(fmt::format(
        "input '{}' is 2-D but '{}' has {} channels; declare the input as [x, y, c] or pass a "
        "gray image",
        input.name, source, channels));
  }
  if (dims != 2 && dims != 3) {
    throw UserError(fmt::format(
        "input '{}' is {}-D but a photo such as '{}' can only go into a 2-D or 3-D input",
        input.name, dims, source));
  }
  bool sixteen = photo.type() == ScalarType::UInt16;
  ScalarType target = input.type.code;
  if (target == ScalarType::UInt8 && sixteen) {
    throw UserError(fmt::format(
        "'{}' is 16-bit: a 16-bit image cannot go into u8 input '{}'; declare it u16 or f32",
        source, input.name));
  }
  if (target == ScalarType::Bool) {
    throw UserError(fmt::format("input '{}' is bool and cannot take a photo", input.name));
  }
  const double largest = sixteen ? 65535.0 : 255.0;
  if (input.type.is_int() && largest > input.type.max_value()) {  // i8; i16 from 16 bits
    throw UserError(fmt::format(
        "'{}' is {}-bit: its values up to {} do not fit {} input '{}'; declare it {} or f32",
        source, sixteen ? 16 : 8, largest, to_string(input.type), input.name,
        sixteen ? "u16, i32" : "u8, i16"));
  }
  std::vector<int64_t> extents = {photo.extent(0), photo.extent(1)};
  if (dims == 3) extents.push_back(channels);
  Buffer result(target, extents);
  // Both layouts are dense with c outermost, so a flat copy keeps every pixel in place.
  bool scale = input.type.is_float();
  double peak = sixteen ? 65535.0 : 255.0;
  for (int64_t i = 0; i < photo.element_count(); ++i) {
    double v = photo.get_flat(i);
    // Divide rather than multiply by a reciprocal so that 255 / 255 is exactly 1.
    result.set_flat(i, scale ? v / peak : v);
  }
  return result;
}

std::string output_image_problem(ScalarType type, const std::vector<int64_t>& extents) {
  std::string shape = to_string(Type(type)) + " ";
  for (size_t d = 0; d < extents.size(); ++d) shape += (d ? "x" : "") + std::to_string(extents[d]);
  if ((extents.size() != 2 && extents.size() != 3) || type == ScalarType::Bool ||
      (extents.size() == 3 && (extents[2] < 1 || extents[2] > 4))) {
    return "an output of " + shape +
           " cannot be written as an image: it needs (x, y) or (x, y, c) with 1 to 4 channels";
  }
  if (extents[0] > 1000000 || extents[1] > 1000000) {
    return "an output of " + shape + " cannot be written as a PNG: at most 1000000 pixels a side";
  }
  return image_size_problem(extents[0], extents[1], extents.size() == 3 ? extents[2] : 1,
                            type == ScalarType::UInt8 ? 1 : 2);
}

Buffer output_to_photo(const Buffer& output) {
  if (!output.defined() || !is_photo_shape(output) || output.type() == ScalarType::Bool) {
    throw UserError(fmt::format(
        "cannot turn an output of {} into an image: it needs (x, y) or (x, y, c) with 1 to 4 "
        "channels",
        output.defined() ? shape_of(output) : "nothing"));
  }
  ScalarType type = output.type() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::UInt16;
  Buffer photo(type, {output.extent(0), output.extent(1), output.extent_or_one(2)});
  bool is_float = Type(output.type()).is_float();
  for (int64_t i = 0; i < output.element_count(); ++i) {
    double v = output.get_flat(i);
    if (is_float) {
      // NaN becomes black rather than undefined behaviour in the conversion; the error
      // metrics are what flag it. std::round rounds halves away from zero (up, here).
      v = std::isnan(v) ? 0.0 : std::round(std::clamp(v, 0.0, 1.0) * 65535.0);
    } else if (type == ScalarType::UInt16) {
      v = std::clamp(v, 0.0, 65535.0);
    }
    photo.set_flat(i, v);
  }
  return photo;
}

}  // namespace stipple
