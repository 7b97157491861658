// i8, i16, u32 and f16 compiled by the JIT and run by the reference evaluator on random
// inputs (each type's extremes; NaN, infinities and subnormals in f16), serial and
// vectorised: bit for bit, NaN payloads aside. And the f16 conversions in the generated
// code, which are integer steps of its own (codegen_f16.cpp), against the evaluator's on
// every f16 bit pattern and on f32 values around every rounding boundary.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler_core/ir/scalar_ops.h"
#include "tests/compiler_core/codegen/element_types_cases.h"
#include "tests/compiler_core/codegen/jit_vs_evaluator.h"

namespace stipple {
namespace {

using jit_test::expect_same;
using jit_test::Result;
using jit_test::run_both;

TEST(ElementTypes, EveryCaseMatchesTheEvaluator) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (const element_types::Case& c : element_types::kCases) {
      for (const std::string& sched : element_types::schedules_of(c)) {
        Result r = run_both(std::string(element_types::kInputs) + c.funcs, sched,
                            element_types::random_inputs(seed),
                            {element_types::kWidth, element_types::kHeight});
        expect_same(r,
                    std::string(c.name) + " under '" + sched + "', seed " + std::to_string(seed));
      }
    }
  }
}

TEST(ElementTypes, VectorisedF16CodeIsVectorCode) {
  Result r = run_both(std::string(element_types::kInputs) + element_types::kCases[3].funcs,
                      "out.vectorize(x, 8)", element_types::random_inputs(9), {16, 2});
  EXPECT_NE(r.ir.find("<8 x i16>"), std::string::npos) << r.ir;
}

// Every f16 value (all 65536 bit patterns) read from an f16 input and stored into an f16
// output by the JIT keeps its bits (NaNs become 0x7e00 with their sign); every f32 near a
// rounding boundary (each f16 value and the midpoints between neighbours, and one f32 ulp
// either side) rounds as the evaluator rounds it.
TEST(ElementTypes, F16ConversionsAreExactAndRoundToNearestEven) {
  Buffer all(ScalarType::Float16, {65536});
  for (int64_t i = 0; i < 65536; ++i)
    static_cast<uint16_t*>(all.data())[i] = static_cast<uint16_t>(i);
  Result copy = run_both("pipeline t\ninput h : f16[x]\nfunc out(x) = h(x)\noutput out\n",
                         "out.vectorize(x, 8)", {{"h", all}}, {65536});
  for (int64_t i = 0; i < 65536; ++i) {
    const uint16_t got = static_cast<const uint16_t*>(copy.jit.data())[i];
    const uint16_t want = (i & 0x7fff) > 0x7c00 ? static_cast<uint16_t>((i & 0x8000) | 0x7e00)
                                                : static_cast<uint16_t>(i);
    ASSERT_EQ(got, want) << "f16 bits " << i;
  }
  std::vector<float> values;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float v = f16_bits_to_f32(static_cast<uint16_t>(h));
    const float next = f16_bits_to_f32(static_cast<uint16_t>(h + 1));
    const float mid = v + (next - v) / 2;  // exact in f32
    for (float x : {v, mid}) {
      for (float y : {std::nextafter(x, -1.0f), x, std::nextafter(x, 1e9f)}) {
        values.push_back(y);
        values.push_back(-y);
      }
    }
  }
  Buffer in(ScalarType::Float32, {static_cast<int64_t>(values.size())});
  std::memcpy(in.data(), values.data(), values.size() * sizeof(float));
  for (const char* sched : {"", "out.vectorize(x, 8)"}) {
    Result r = run_both("pipeline t\ninput v : f32[x]\nfunc out(x) = f16(v(x))\noutput out\n",
                        sched, {{"v", in}}, {static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t got = static_cast<const uint16_t*>(r.jit.data())[i];
      ASSERT_EQ(got, f32_to_f16_bits(values[i])) << values[i] << " under '" << sched << "'";
      ASSERT_EQ(static_cast<const uint16_t*>(r.reference.data())[i], got) << values[i];
    }
  }
}

}  // namespace
}  // namespace stipple
