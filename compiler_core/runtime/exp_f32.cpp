// Stipple's f32 exp (exp_f32.h). Built with -ffp-contract=off (CMakeLists.txt): every
// fused multiply-add is an explicit std::fma and nothing else may be fused, or the
// evaluator and the generated code would round differently.
#include "compiler_core/runtime/exp_f32.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace stipple {

namespace {

// 2^e for -126 <= e <= 127, built from its exponent bits.
float pow2i(int32_t e) {
  uint32_t bits = static_cast<uint32_t>(e + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The body, inlined into the two entry points below.
[[gnu::always_inline]] inline float exp_f32_body(float x) {
  if (std::isnan(x)) return x + x;
  // e^-104 is below half the smallest denormal: +0. The vector code computes the formula
  // on 0 for such lanes and selects 0, rather than letting the formula underflow there:
  // x86 takes a microcode assist for every multiply that underflows (the unscheduled
  // bilateral filter, whose range weights are mostly e^-hundreds, ran 2.8x slower).
  if (!(x > -104.0f)) return 0.0f;
  // Clamped to 104, the formula overflows to +inf (e^104 does); q stays in [-150, 150].
  x = x < 104.0f ? x : 104.0f;
  const float log2e = 1.442695040888963407359924681001892137f;
  const float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187045e-06f;
  const float q = std::nearbyint(x * log2e);
  float s = std::fma(q, -ln2_hi, x);
  s = std::fma(q, -ln2_lo, s);
  float u = 0.000198527617612853646278381f;
  u = std::fma(u, s, 0.00139304355252534151077271f);
  u = std::fma(u, s, 0.00833336077630519866943359f);
  u = std::fma(u, s, 0.0416664853692054748535156f);
  u = std::fma(u, s, 0.166666671633720397949219f);
  u = std::fma(u, s, 0.5f);
  u = 1.0f + std::fma(s * s, u, s);
  // u * 2^q in two steps, so that 2^q need not be a normal float (denormal results, and
  // overflow to +inf for q up to 150). The first is exact (u is in [0.7, 1.5] and
  // |half| <= 75): an add to the exponent bits. The second rounds once.
  const int32_t e = static_cast<int32_t>(q);
  const int32_t half = e >> 1;  // arithmetic shift: floor(e / 2)
  uint32_t bits;
  std::memcpy(&bits, &u, sizeof u);
  bits += static_cast<uint32_t>(half) << 23;
  std::memcpy(&u, &bits, sizeof u);
  return u * pow2i(e - half);
}

#if defined(__x86_64__)
// The evaluator calls this for every f32 exp. Built for baseline x86-64, std::fma is a
// call into libm per operation (about 5x slower); with the target attribute it is one
// instruction. Same results either way: a fused multiply-add rounds once.
[[gnu::target("fma")]] float exp_f32_fma(float x) { return exp_f32_body(x); }
float exp_f32_plain(float x) { return exp_f32_body(x); }
#endif

}  // namespace

float exp_f32(float x) {
#if defined(__x86_64__)
  static const auto impl = __builtin_cpu_supports("fma") ? exp_f32_fma : exp_f32_plain;
  return impl(x);
#else
  return exp_f32_body(x);
#endif
}

}  // namespace stipple
