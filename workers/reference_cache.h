// A content-addressed on-disk cache of reference outputs (the design, "Evaluation protocol":
// the pipeline's output under the default exact schedule, computed once per pipeline,
// photo and parameters). A worker that restarts, or measures a second run of the same
// setup, reads them back instead of compiling and running the exact schedule again.
//
// The file name is `reference_key(...)`, a SHA-256 over everything the output depends
// on; the file holds one Buffer in a tiny binary format with a trailing SHA-256, so that a
// truncated or corrupted file reads as a miss, never as a wrong reference.
//
// Hand-written on purpose: the format is one struct (type, mins, extents, dense bytes)
// and no Debian library fits better; we avoid depending on a general serialisation
// library (protobuf, cereal, msgpack, ...) for one struct, and the checksum is OpenSSL's
// SHA-256 (search/content_hash.h) as for the photo cache.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "compiler_core/runtime/buffer.h"

namespace stipple::workers {

/// The cache key of one reference output: 64 lower-case hex digits of a SHA-256 over a key
/// format version, the pipeline source, its params (in name order, each value printed
/// exactly with %a), the SHA-256 of the photo file's bytes, and the target key (float
/// results may differ by target). Each field is length-prefixed, so no two different
/// inputs encode the same. Bump the version when how a reference is computed changes.
std::string reference_key(std::string_view pipeline_source,
                          const std::map<std::string, double>& params,
                          std::string_view photo_sha256, std::string_view target);

/// Writes `b` to `path` atomically (a temporary file of this process and thread, then a
/// rename: write_text_file). Throws std::invalid_argument for an undefined
/// buffer, one of more than kMaxReferenceDimensions dimensions or one that is not dense
/// (every Buffer is dense today; the check guards against a future strided Buffer rather
/// than copying it), and UserError when the file cannot be written.
void write_reference(const std::string& path, const Buffer& b);

/// The buffer stored at `path`, or std::nullopt when the file is missing or unreadable,
/// truncated, corrupted (checksum mismatch), of another format version, or otherwise
/// invalid. Never throws for bad file contents; sizes in the file are checked against the
/// file's length before anything is allocated.
std::optional<Buffer> read_reference(const std::string& path);

/// The most dimensions a stored buffer may have (images have 2 or 3).
inline constexpr int kMaxReferenceDimensions = 16;

}  // namespace stipple::workers
