// Stipple's f32 exp (exp_f32.h), whose body is exp_f32_body.inc, the text the C++ source
// back end prints too. Built with -ffp-contract=off (CMakeLists.txt): every fused
// multiply-add is an explicit std::fma and nothing else may be fused, or the evaluator
// and the generated code would round differently.
#include "compiler_core/runtime/exp_f32.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace stipple {

namespace {

// The body (exp_f32_body.inc), inlined into the two entry points below.
#define STIPPLE_RUNTIME_INLINE [[gnu::always_inline]] inline
#define STIPPLE_RUNTIME_ROUND_EVEN(x) std::nearbyint(x)  // the default rounding mode
#include "compiler_core/runtime/exp_f32_body.inc"
#undef STIPPLE_RUNTIME_ROUND_EVEN
#undef STIPPLE_RUNTIME_INLINE

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
