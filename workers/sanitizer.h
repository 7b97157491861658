// Whether this build runs under AddressSanitizer, which reserves terabytes of shadow
// address space: an address-space limit (RLIMIT_AS) cannot be used under it.
#pragma once

namespace stipple::workers {

constexpr bool address_sanitizer_active() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace stipple::workers
