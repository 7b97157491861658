// A pipeline compiled from .stp text under a schedule, run by the JIT and by the reference
// evaluator, and compared bit for bit: the harness of the codegen tests that check one
// code-generation technique on cases built for it (vector_test.cpp,
// loop_partition_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::jit_test {

/// Bit equality, NaN payloads aside (they are not semantics).
inline bool same_bits(ScalarType t, double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  if (t == ScalarType::Float32) {
    float fa = static_cast<float>(a), fb = static_cast<float>(b);
    return std::memcmp(&fa, &fb, sizeof fa) == 0;
  }
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Result {
  Buffer jit, reference;
  std::string ir;  // the JIT's LLVM IR before optimisation
};

inline Result run_both(const std::string& source, const std::string& schedule,
                       const std::map<std::string, Buffer>& inputs, std::vector<int64_t> extents,
                       const std::map<std::string, double>& params = {}) {
  Pipeline p = compile_pipeline(source, "test.stp");
  Schedule s = compile_schedule(schedule, "test.sched", p);
  LoweredFunction f = lower(p, s);
  auto jit = codegen::JitCompiler::create();
  auto fn = jit->compile(f);
  Result r;
  r.ir = jit->llvm_ir(f, false);
  r.jit = run_lowered(*fn, f, p, inputs, params, extents);
  r.reference =
      evaluate_pipeline_region(p, inputs, params, std::vector<int64_t>(extents.size(), 0), extents);
  return r;
}

inline void expect_same(const Result& r, const std::string& what) {
  ASSERT_EQ(r.jit.element_count(), r.reference.element_count());
  for (int64_t i = 0; i < r.jit.element_count(); ++i) {
    if (!same_bits(r.jit.type(), r.jit.get_flat(i), r.reference.get_flat(i))) {
      ADD_FAILURE() << what << ": element " << i << ": jit " << r.jit.get_flat(i) << ", evaluator "
                    << r.reference.get_flat(i);
      return;
    }
  }
}

}  // namespace stipple::jit_test
