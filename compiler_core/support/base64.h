// Base64 (RFC 4648, with padding, no line breaks) over OpenSSL's EVP_EncodeBlock: how bytes
// travel in the evaluator's JSON lines (compiled code kept from one night to the next).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stipple {

std::string base64_encode(std::string_view bytes);
/// The bytes, or none when `text` is not base64 (a length not a multiple of 4, a character
/// outside the alphabet, misplaced padding).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace stipple
