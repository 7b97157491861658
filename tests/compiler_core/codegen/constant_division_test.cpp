// Markstein's division by an odd integer constant (compiler_core/codegen/constant_division.h):
// which divisors get a reciprocal, why even ones do not, and that the quotient the CUDA
// dialect prints is IEEE's for random dividends of every magnitude over random odd divisors.
// constant_division_exhaustive_test.cpp tries every dividend of a few (label slow).
#include "compiler_core/codegen/constant_division.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

namespace stipple::codegen {
namespace {

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

bool same_float(float a, float b) {
  return to_bits(a) == to_bits(b) || (std::isnan(a) && std::isnan(b));
}

TEST(MarksteinReciprocal, IsTheRoundedReciprocalOfOddIntegers) {
  ASSERT_TRUE(markstein_reciprocal(3.0f).has_value());
  EXPECT_EQ(to_bits(*markstein_reciprocal(3.0f)), 0x3EAAAAABu);  // RN(1/3)
  EXPECT_EQ(to_bits(*markstein_reciprocal(-3.0f)), 0xBEAAAAABu);
  EXPECT_EQ(to_bits(*markstein_reciprocal(255.0f)), 0x3B808081u);
  EXPECT_EQ(to_bits(*markstein_reciprocal(1048575.0f)), 0x35800008u);
}

TEST(MarksteinReciprocal, RefusesEveryOtherDivisor) {
  for (const float d :
       {0.0f,  -0.0f, INFINITY, -INFINITY, NAN,  1.0f,  -1.0f,      2.0f,        0.5f,    10.0f,
        12.0f, -4.0f, 1.5f,     0.3f,      3.5f, -3.5f, 1048577.0f, -1048577.0f, 0x1p30f, -NAN}) {
    EXPECT_FALSE(markstein_reciprocal(d).has_value()) << d;
  }
}

// Why only odd divisors: x / 10 with x = 15 * 2^-149 is 1.5 * 2^-149, a midpoint of the
// subnormals (IEEE: 2^-148, to even), which the correction rounds down.
TEST(MarksteinReciprocal, AnEvenDivisorsMidpointIsRoundedTheWrongWay) {
  const float x = 0x1.ep-146f, d = 10.0f;
  EXPECT_EQ(x / d, 0x1p-148f);
  EXPECT_EQ(markstein_quotient(x, d, 1.0f / d), 0x1p-149f);
}

// Random odd divisors of every size allowed, random dividends of every bit pattern
// (subnormals, infinities and NaNs among them) and of both signs: IEEE's quotient, bit for
// bit.
TEST(MarksteinReciprocal, IsIeeeDivisionForRandomDividendsOverRandomOddDivisors) {
  std::mt19937 rng(20261128);
  std::vector<float> divisors = {3.0f, 5.0f, 7.0f, 9.0f, 17.0f, 255.0f, -3.0f, 1048575.0f};
  std::uniform_int_distribution<int> bits(2, 20);
  for (int i = 0; i < 24; ++i) {
    const int width = bits(rng);
    const uint32_t odd = (static_cast<uint32_t>(rng()) & ((1u << width) - 1)) | 1u;
    if (odd >= 3) divisors.push_back(static_cast<float>(odd) * (i % 2 ? -1.0f : 1.0f));
  }
  for (const float d : divisors) {
    const std::optional<float> y = markstein_reciprocal(d);
    ASSERT_TRUE(y.has_value()) << d;
    int mismatches = 0;
    for (int i = 0; i < 100000; ++i) {
      const float x = from_bits(static_cast<uint32_t>(rng()));
      const float got = markstein_quotient(x, d, *y), want = x / d;
      if (!same_float(got, want) && ++mismatches <= 5) {
        ADD_FAILURE() << std::hexfloat << x << " / " << d << ": " << got << ", IEEE " << want;
      }
    }
    EXPECT_EQ(mismatches, 0) << d;
  }
}

}  // namespace
}  // namespace stipple::codegen
