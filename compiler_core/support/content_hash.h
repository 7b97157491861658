// Content hashes: photos and manifests are checked by the SHA-256 of their bytes, image
// sets and cluster setups are named by a hash of what they contain, reference outputs
// and job ids carry a hash of the schedule and the pipeline. One implementation for all
// of them, OpenSSL's libcrypto: a well-kept library rather than a hand-written one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace stipple {

/// Incremental SHA-256: update() any number of times, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  /// Finishes the hash and returns 64 lower-case hex digits. The object is spent afterwards.
  std::string hex_digest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

/// The SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

/// The SHA-256 of a file's contents, read in pieces. Throws UserError naming the file
/// when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace stipple
