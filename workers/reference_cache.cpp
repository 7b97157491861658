// The reference-output cache (reference_cache.h). The file format, all integers
// little-endian:
//
//   offset 0    magic "STPREF1\n" (8 bytes; the "1" is the format version)
//   offset 8    uint32 scalar type code (kTypeCodes below, fixed apart from the enum's order)
//   offset 12   uint32 dimension count n (at most kMaxReferenceDimensions)
//   offset 16   n times: int64 min, int64 extent (dimension 0 first)
//   then        the elements, dense, dimension 0 innermost, each little-endian (Bool as
//               one byte, as in memory)
//   last 64     the SHA-256, as lower-case hex digits, of every byte before it
#include "workers/reference_cache.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"

namespace stipple::workers {
namespace {

// The element bytes are copied as they lie in memory; every host we build for is
// little-endian, and a big-endian one would need a byte swap here.
static_assert(std::endian::native == std::endian::little,
              "reference_cache stores elements little-endian by memcpy");

constexpr std::string_view kMagic = "STPREF1\n";
constexpr size_t kFixedHeader = 16;  // magic, type code, dimension count
constexpr size_t kDimBytes = 16;     // min, extent
constexpr size_t kChecksumChars = 64;

// The on-disk code of each type, by position; not the enum's values, so that reordering
// ScalarType does not silently change the meaning of stored files.
// New types are appended.
constexpr ScalarType kTypeCodes[] = {ScalarType::Bool,   ScalarType::UInt8,   ScalarType::UInt16,
                                     ScalarType::Int32,  ScalarType::Float32, ScalarType::Float64,
                                     ScalarType::Int8,   ScalarType::Int16,   ScalarType::UInt32,
                                     ScalarType::Float16};

uint32_t type_code(ScalarType t) {
  for (uint32_t i = 0; i < std::size(kTypeCodes); ++i) {
    if (kTypeCodes[i] == t) return i;
  }
  throw std::invalid_argument("write_reference: unknown scalar type");
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_i64(std::string& out, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return v;
}

// A length-prefixed field of the key, so that no two different inputs encode the same.
void put_field(std::string& out, std::string_view bytes) {
  out += std::to_string(bytes.size());
  out += ':';
  out += bytes;
  out += '\n';
}

// Every bit of a double (sign of zero, NaN aside): %a prints the exact binary value.
std::string exact_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

}  // namespace

std::string reference_key(std::string_view pipeline_source,
                          const std::map<std::string, double>& params,
                          std::string_view photo_sha256, std::string_view target) {
  std::string text = "stipple-reference-key 2\n";
  put_field(text, pipeline_source);
  put_field(text, std::to_string(params.size()));
  for (const auto& [name, value] : params) {  // std::map: in name order
    put_field(text, name);
    put_field(text, exact_double(value));
  }
  put_field(text, photo_sha256);
  put_field(text, target);
  return sha256_hex(text);
}

void write_reference(const std::string& path, const Buffer& b) {
  if (!b.defined()) throw std::invalid_argument("write_reference: undefined buffer");
  if (b.dimensions() > kMaxReferenceDimensions) {
    throw std::invalid_argument("write_reference: too many dimensions");
  }
  // Only dense buffers in the layout Buffer's constructor makes (stride of dimension d =
  // product of the extents below it), which read_reference rebuilds. Every Buffer is such
  // today; a strided one would be refused here rather than copied element-wise.
  int64_t stride = 1;
  for (int d = 0; d < b.dimensions(); ++d) {
    if (b.dim(d).stride != stride) {
      throw std::invalid_argument("write_reference: buffer is not dense");
    }
    stride *= b.extent(d);
  }
  const size_t data_bytes = b.size_in_bytes();
  std::string out;
  out.reserve(kFixedHeader + kDimBytes * b.dimensions() + data_bytes + kChecksumChars);
  out += kMagic;
  put_u32(out, type_code(b.type()));
  put_u32(out, static_cast<uint32_t>(b.dimensions()));
  for (int d = 0; d < b.dimensions(); ++d) {
    put_i64(out, b.min(d));
    put_i64(out, b.extent(d));
  }
  const size_t data_at = out.size();
  out.resize(data_at + data_bytes);
  if (data_bytes > 0) std::memcpy(out.data() + data_at, b.data(), data_bytes);
  out += sha256_hex(out);
  write_text_file(path, out);
}

std::optional<Buffer> read_reference(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_text_file(path, "reference", kNoFileSizeLimit);  // written by us
  } catch (const UserError&) {
    return std::nullopt;  // a missing or unreadable file is a miss
  }
  const std::string_view file = bytes;
  if (file.size() < kFixedHeader + kChecksumChars) return std::nullopt;
  if (file.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  const std::string_view body = file.substr(0, file.size() - kChecksumChars);
  if (sha256_hex(body) != file.substr(body.size())) return std::nullopt;

  const uint64_t code = get_le(body, 8, 4);
  if (code >= std::size(kTypeCodes)) return std::nullopt;
  const ScalarType type = kTypeCodes[code];
  const uint64_t n = get_le(body, 12, 4);
  if (n > static_cast<uint64_t>(kMaxReferenceDimensions)) return std::nullopt;
  const size_t header = kFixedHeader + kDimBytes * n;
  if (body.size() < header) return std::nullopt;

  std::vector<int64_t> mins(n), extents(n);
  int64_t count = 1;
  for (size_t d = 0; d < n; ++d) {
    mins[d] = static_cast<int64_t>(get_le(body, kFixedHeader + kDimBytes * d, 8));
    extents[d] = static_cast<int64_t>(get_le(body, kFixedHeader + kDimBytes * d + 8, 8));
    int64_t end = 0;  // min + extent must be representable (Buffer::contains computes it)
    if (extents[d] < 0 || __builtin_add_overflow(mins[d], extents[d], &end)) return std::nullopt;
    if (__builtin_mul_overflow(count, extents[d], &count)) return std::nullopt;
  }
  int64_t data_bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(bytes_of(type)), &data_bytes)) {
    return std::nullopt;
  }
  if (static_cast<uint64_t>(data_bytes) != body.size() - header) return std::nullopt;
  const std::string_view data = body.substr(header);

  Buffer b(type, std::move(mins), std::move(extents));
  if (!data.empty()) std::memcpy(b.data(), data.data(), data.size());
  return b;
}

}  // namespace stipple::workers
