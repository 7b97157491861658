// Content hashes for the cluster: photos are cached by workers under the SHA-256 of their
// bytes, setups are named by a hash of what they contain, and job ids carry a hash of the
// schedule text so that they are the same after a coordinator restart. SHA-256 comes
// from OpenSSL's libcrypto (DESIGN.md: prefer a well-kept library to hand-written code).
#pragma once

#include <string>
#include <string_view>

namespace stipple::search {

/// The SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace stipple::search
