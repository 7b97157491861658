// SHA-256 (OpenSSL, compiler_core/support/content_hash.h) against the FIPS 180-2 example
// vectors (Appendix B) and NIST's extra vectors.
#include "compiler_core/support/content_hash.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler_core/ir/error.h"

namespace stipple {
namespace {

TEST(Sha256, Fips180_2Vectors) {
  // B.1: one block.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // B.2: two blocks (448-bit message: padding needs a second block).
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // B.3: one million 'a', fed in uneven pieces to exercise buffering.
  Sha256 hash;
  const std::string piece(999, 'a');
  size_t fed = 0;
  while (fed + piece.size() <= 1000000) {
    hash.update(piece);
    fed += piece.size();
  }
  hash.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(hash.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EmptyAndBoundaryLengths) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // 55, 56 and 64 bytes sit at the edges of the padding rule.
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, FileMatchesString) {
  const auto path = std::filesystem::temp_directory_path() / "stipple_sha256_test.bin";
  std::string data;
  for (int i = 0; i < 200000; ++i) data.push_back(static_cast<char>(i * 7 + i / 13));
  std::ofstream(path, std::ios::binary) << data;
  EXPECT_EQ(sha256_file(path.string()), sha256_hex(data));
  std::filesystem::remove(path);
  EXPECT_THROW(sha256_file(path.string()), UserError);
}

}  // namespace
}  // namespace stipple
