// Every f32 input of `exp` in vector code against the host's expf, bit for bit (label
// `slow`: about 2^32 expf calls). The random-input test in vector_test.cpp cannot tell
// the variants of glibc's algorithm apart (they differ on 2 of 2^31 inputs); this can.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple {
namespace {

TEST(VectorExpExhaustive, EveryFloatMatchesTheHostExpf) {
  Pipeline p = compile_pipeline(
      "pipeline e\ninput in : f32[x]\nfunc out(x) = exp(in(x))\noutput out\n", "e.stp");
  codegen::LoweredFunction f = lower(p, compile_schedule("out.vectorize(x, 16)", "e.sched", p));
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  constexpr int64_t kChunk = int64_t{1} << 24;
  Buffer in(ScalarType::Float32, {kChunk});
  Buffer out(ScalarType::Float32, {kChunk});
  int64_t differ = 0;
  for (uint64_t start = 0; start < (uint64_t{1} << 32); start += kChunk) {
    auto* src = in.data_as<float>();
    for (int64_t i = 0; i < kChunk; ++i) {
      uint32_t bits = static_cast<uint32_t>(start + static_cast<uint64_t>(i));
      std::memcpy(&src[i], &bits, sizeof(float));
    }
    codegen::BufferDescriptor d[2] = {codegen::describe(in), codegen::describe(out)};
    ASSERT_EQ((*fn)(d, nullptr), 0);
    const auto* got = out.data_as<float>();
    for (int64_t i = 0; i < kChunk; ++i) {
      float want = std::exp(src[i]);
      if (std::isnan(want) && std::isnan(got[i])) continue;
      if (std::memcmp(&want, &got[i], sizeof want) != 0 && ++differ <= 5) {
        ADD_FAILURE() << "exp(" << src[i] << "): expf " << want << ", vector " << got[i];
      }
    }
  }
  EXPECT_EQ(differ, 0);
}

}  // namespace
}  // namespace stipple
