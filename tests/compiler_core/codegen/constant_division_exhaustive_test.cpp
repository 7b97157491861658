// Markstein's division by an odd integer constant over every dividend where it is most at
// risk (compiler_core/codegen/constant_division.h): all 2^32 floats divided by 3 (blur3x3's
// divisor), and the subnormal dividends and the smallest normal binade, where the quotients
// are subnormal (the midpoints an even divisor gets wrong), for several odd divisors.
// Subnormal arithmetic is slow on x86 (microcode assists): about a minute in all, label slow.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "compiler_core/codegen/constant_division.h"

namespace stipple::codegen {
namespace {

// The dividends from bit pattern `first` to `last` (both included), of both signs, that
// markstein_quotient does not divide as IEEE does.
uint64_t mismatches(float d, uint32_t first, uint32_t last) {
  const float y = *markstein_reciprocal(d);
  uint64_t count = 0;
  for (uint64_t bits = first; bits <= last; ++bits) {
    for (const uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t pattern = static_cast<uint32_t>(bits) | sign;
      float x;
      std::memcpy(&x, &pattern, sizeof x);
      const float got = markstein_quotient(x, d, y), want = x / d;
      uint32_t got_bits, want_bits;
      std::memcpy(&got_bits, &got, sizeof got);
      std::memcpy(&want_bits, &want, sizeof want);
      if (got_bits != want_bits && !(std::isnan(got) && std::isnan(want))) ++count;
    }
  }
  return count;
}

TEST(MarksteinReciprocalExhaustive, EveryFloatDividedByThreeIsIeeesQuotient) {
  EXPECT_EQ(mismatches(3.0f, 0, 0x7FFFFFFFu), 0u);
}

TEST(MarksteinReciprocalExhaustive, SubnormalQuotientsOfOddDivisorsAreIeees) {
  for (const float d : {-3.0f, 5.0f, 9.0f, 255.0f, 1048575.0f}) {
    EXPECT_EQ(mismatches(d, 0, 0x00FFFFFFu), 0u) << d;
  }
}

}  // namespace
}  // namespace stipple::codegen
