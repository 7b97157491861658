#include "compiler_core/support/content_hash.h"

#include <openssl/evp.h>

#include <fstream>
#include <vector>

#include "compiler_core/ir/error.h"

namespace stipple {

namespace {

std::string to_hex(const unsigned char* digest, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

// OpenSSL reports failure only for an allocation or a broken library: a bug, not input.
// (InternalError directly: STIPPLE_INTERNAL_CHECK's helper lives in the IR library, above.)
void check(int ok, const char* call) {
  if (ok != 1) throw InternalError(std::string("SHA-256 failed (OpenSSL ") + call + ")");
}

}  // namespace

struct Sha256::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  check(context_->md != nullptr, "EVP_MD_CTX_new");
  check(EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  check(EVP_DigestUpdate(context_->md, bytes.data(), bytes.size()), "EVP_DigestUpdate");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  check(EVP_DigestFinal_ex(context_->md, digest, &length), "EVP_DigestFinal_ex");
  return to_hex(digest, length);
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  check(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr),
        "EVP_Digest");
  return to_hex(digest, length);
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open '" + path + "' to hash it");
  Sha256 hash;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    hash.update(std::string_view(chunk.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw UserError("error while reading '" + path + "' to hash it");
  return hash.hex_digest();
}

}  // namespace stipple
