// Reading photographs, writing PNGs, and moving between photos and pipeline buffers.
//
// A photo is a Buffer of u8 or u16 with dimensions (x, y, c), c = 1 (gray), 2 (gray +
// alpha), 3 (RGB) or 4 (RGBA), exactly as stored in the file.
#pragma once

#include <string>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"

namespace stipple {

/// The most an image may hold decoded (width x height x channels x bytes per sample),
/// read or written alike, so that every PNG Stipple writes it can read back: stb_image
/// refuses PNGs of more than 2^30 samples. A file itself may be up to kMaxImageFileBytes
/// (support/files.h), which any PNG under this limit stays below.
inline constexpr size_t kMaxImageDecodedBytes = size_t{1} << 30;  // 1 GiB

/// Empty when an image of this size is within kMaxImageDecodedBytes, else why not, with
/// the numbers: the rule read_image and write_png both apply (stb_image's "unknown image
/// type" for a PNG over its limit says nothing of size).
std::string image_size_problem(int64_t width, int64_t height, int64_t channels, int sample_bytes);

/// Reads a PNG (8 or 16 bit) or JPEG file of at most kMaxImageFileBytes, decoding to at
/// most kMaxImageDecodedBytes. Throws UserError naming the file on failure.
Buffer read_image(const std::string& path);

/// Writes a u8 or u16 buffer of dimensions (x, y) or (x, y, c) with c in 1..4 as a PNG of
/// that bit depth, refusing one over kMaxImageDecodedBytes (read_image could not read it
/// back). Throws UserError on failure.
void write_png(const std::string& path, const Buffer& image);

/// Converts a photo into a buffer for `input`: into f16/f32/f64 inputs 8- and 16-bit values
/// are scaled to [0, 1] (f16 rounded to nearest even); into integer inputs the values are
/// kept, and an error says so where they do not fit (16-bit into u8, i8 or i16; 8-bit into
/// i8). A 2-D input takes only gray photos; a 3-D input takes any, with the photo's
/// channels. `source` names the photo in messages. Throws UserError.
Buffer photo_to_input(const Buffer& photo, const InputDecl& input, const std::string& source);

/// Empty when an output of `type` and `extents` can be written as a PNG (output_to_photo,
/// then write_png), else why not: to check before computing it.
std::string output_image_problem(ScalarType type, const std::vector<int64_t>& extents);

/// Converts an output buffer of (x, y) or (x, y, c) to a photo for write_png: f32/f64 to
/// 16 bit after clamping to [0, 1]; u8 and u16 as they are; i8, i16, i32 and u32
/// clamped to u16.
Buffer output_to_photo(const Buffer& output);

}  // namespace stipple
