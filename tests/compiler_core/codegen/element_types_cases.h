// Small pipelines over every element type added after the first five (i8, i16, u32 and the
// storage type f16), with random inputs that reach each type's extremes (and NaN,
// infinities and subnormals for f16): the cases the JIT (element_types_test.cpp) and the
// C++ source (cpp_source_test.cpp) are compared with the evaluator on.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/runtime/buffer.h"

namespace stipple::element_types {

inline constexpr int64_t kWidth = 37, kHeight = 5;

/// Inputs a : i8, b : i16, c : u32 (clamped) and h : f16 (a constant 0.1 outside).
inline const char* const kInputs =
    "pipeline t\ninput a : i8[x, y]\ninput b : i16[x, y]\ninput c : u32[x, y]\n"
    "input h : f16[x, y] constant(0.1)\n";

struct Case {
  const char* name;
  const char* funcs;  // the funcs and the output, after kInputs
};

inline const Case kCases[] = {
    {"i8",
     "func out(x, y) = a(x, y) * 3 + a(x + 1, y) / -2 - i8(b(x, y) % 100) + "
     "abs(a(x - 1, y))\noutput out\n"},
    {"i16",
     "func out(x, y) = b(x, y) * b(x - 1, y) + i16(a(x, y)) % 7 + "
     "max(b(x, y), i16(c(x, y) % 1000)) - select(a(x, y) < 0, i16(-32768), b(x, y) / -3)\n"
     "output out\n"},
    {"u32",
     "func out(x, y) = select(c(x, y) > c(x + 1, y), c(x, y) - c(x + 1, y), "
     "c(x + 1, y) % 12345) + c(x, y) * u32(-1640531535) + c(x, y) / (c(x, y + 1) % 1000 + "
     "1) + u32(a(x, y)) + u32(b(x, y))\noutput out\n"},
    {"f16",
     "func out(x, y) = f16(h(x, y) * 3.0 + f32(a(x, y)) / 7.0 + h(x - 1, y + 2))\n"
     "output out\n"},
    {"f16_casts",
     "func out(x, y) = f32(i8(h(x, y) * 100.0)) + f32(u32(h(x, y) * 1000.0)) + "
     "f32(i16(f64(h(x, y)))) + f16(f64(c(x, y)) * 0.000001) + f16(c(x, y)) + "
     "f16(a(x, y)) + select(h(x, y) < h(x + 1, y), 1.0, 0.0)\noutput out\n"},
    {"f16_update",
     "func t(x, y) = f16(h(x, y) + 1.0)\nt(x, y) += 0.001\n"
     "func out(x, y) = t(x, y) * 2.0 + f32(u32(b(x, y)) / 3)\noutput out\n"},
};

/// The schedules every case runs under: the default, vectorised, and an f16 func stored
/// at the root (the others have no func to place).
inline std::vector<std::string> schedules_of(const Case& c) {
  std::vector<std::string> s = {"", "out.vectorize(x, 8)"};
  if (std::string(c.name) == "f16_update")
    s.push_back("t.compute_root().vectorize(x, 4)\nout.vectorize(x, 16)");
  return s;
}

inline Buffer random_image(ScalarType t, uint32_t seed) {
  std::mt19937 rng(seed);
  Buffer b(t, {kWidth, kHeight});
  const Type type(t);
  const double inf = std::numeric_limits<double>::infinity();
  const double f16_specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                 inf,
                                 -inf,
                                 -0.0,
                                 65504.0,
                                 std::ldexp(1.0, -24),
                                 std::ldexp(-5.0, -20),
                                 1.0 / 3.0};
  for (int64_t i = 0; i < b.element_count(); ++i) {
    double v = 0;
    if (type.is_f16()) {
      v = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                     std::uniform_int_distribution<int>(-20, 12)(rng));
      if (rng() % 6 == 0) v = f16_specials[rng() % std::size(f16_specials)];
    } else {
      const double lo = type.min_value(), hi = type.max_value();
      v = rng() % 5 == 0 ? (rng() % 2 ? lo : hi)
                         : std::floor(std::uniform_real_distribution<double>(lo, hi + 1)(rng));
      v = std::min(v, hi);
    }
    b.set_flat(i, v);
  }
  return b;
}

inline std::map<std::string, Buffer> random_inputs(uint32_t seed) {
  return {{"a", random_image(ScalarType::Int8, seed)},
          {"b", random_image(ScalarType::Int16, seed + 1)},
          {"c", random_image(ScalarType::UInt32, seed + 2)},
          {"h", random_image(ScalarType::Float16, seed + 3)}};
}

}  // namespace stipple::element_types
