// Base64 (compiler_core/support/base64.h) against RFC 4648's test vectors (section 10), a
// round trip of every byte value at every padding length, and text that is not base64.
#include "compiler_core/support/base64.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace stipple {
namespace {

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(base64_encode(bytes), text);
    EXPECT_EQ(base64_decode(text), std::string(bytes)) << text;
  }
}

TEST(Base64, EveryByteRoundTripsAtEveryLength) {
  std::mt19937 rng(7);
  for (size_t n = 0; n < 70; ++n) {
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    if (n > 0) bytes[0] = '\0';  // zeros inside, as an object file has
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(base64_decode(base64_encode(all)), all);
}

TEST(Base64, TextThatIsNotBase64IsRefused) {
  EXPECT_FALSE(base64_decode("Zm9"));   // not a multiple of 4
  EXPECT_FALSE(base64_decode("Zm9*"));  // outside the alphabet
  EXPECT_FALSE(base64_decode("Z==="));  // too much padding
}

}  // namespace
}  // namespace stipple
