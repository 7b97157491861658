// SHA-256 (FIPS 180-4) of byte strings and files, for the benchmark manifest.
//
// Our own small implementation: the Debian libraries that offer SHA-256 (OpenSSL, nettle,
// libgcrypt) are not among Stipple's dependencies, and the manifest needs only hashing of
// a few hundred files. tests/datasets/sha256_test.cpp checks it against the FIPS 180-2
// example vectors.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace stipple::dataset {

/// Incremental SHA-256: update() any number of times, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::byte> data);
  void update(std::string_view data);
  /// Finishes the hash and returns 64 lowercase hex digits. The object is spent afterwards.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_{};
  size_t block_used_ = 0;
  uint64_t total_bytes_ = 0;
};

/// SHA-256 of a string, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

/// SHA-256 of a file's contents. Throws UserError naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace stipple::dataset
