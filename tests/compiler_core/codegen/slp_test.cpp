// LLVM's SLP vectoriser runs on the functions a schedule left scalar and only on those
// (ScalarFunctionSLPPass in target_machine.cpp, the pipeline the JIT and the AOT compiler
// share): the textbook SLP case, four neighbouring scalar loads, multiplies and stores, is
// packed into one <4 x float> operation where its function has no vector code, and left
// as it is where its function already has some.
#include <gtest/gtest.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

#include "compiler_core/codegen/target_machine.h"
#include "optimized_ir.h"

namespace stipple::codegen {
namespace {

// b[i] = a[i] * 3 for i in 0..3, written out as scalar code (as LLVM's full unrolling
// leaves a small constant loop). `extra` goes before the return.
std::string four_scalar_lanes(const std::string& name, const std::string& extra) {
  std::string body = "define void @" + name +
                     "(float* noalias %a, float* noalias %b, <16 x float>* noalias %v) {\n";
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    body += "  %pa" + n + " = getelementptr inbounds float, float* %a, i64 " + n + "\n";
    body += "  %x" + n + " = load float, float* %pa" + n + ", align 4\n";
    body += "  %y" + n + " = fmul float %x" + n + ", 3.0\n";
    body += "  %pb" + n + " = getelementptr inbounds float, float* %b, i64 " + n + "\n";
    body += "  store float %y" + n + ", float* %pb" + n + ", align 4\n";
  }
  return body + extra + "  ret void\n}\n";
}

/// How many <4 x float> multiplies each function has after optimize_module.
std::pair<int, int> four_lane_multiplies(const std::string& ir) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = jit_test::parse_ir(ir, ctx);
  if (!m) return {-1, -1};
  std::unique_ptr<llvm::TargetMachine> tm =
      create_target_machine(named_target("x86-64-v3"), TargetUse::AheadOfTime);
  prepare_module(*m, *tm);
  optimize_module(*m, *tm);
  auto count = [&](const char* name) {
    int n = 0;
    for (llvm::BasicBlock& bb : *m->getFunction(name)) {
      for (llvm::Instruction& inst : bb) {
        const auto* type = llvm::dyn_cast<llvm::FixedVectorType>(inst.getType());
        n += inst.getOpcode() == llvm::Instruction::FMul && type && type->getNumElements() == 4;
      }
    }
    return n;
  };
  return {count("scalar"), count("vector")};
}

TEST(ScalarFunctionSLP, PacksScalarFunctionsOnly) {
  // @vector also doubles a 16-lane vector, as a vectorised stage of a schedule would.
  const std::string ir =
      four_scalar_lanes("scalar", "") +
      four_scalar_lanes("vector",
                        "  %w = load <16 x float>, <16 x float>* %v, align 64\n"
                        "  %w2 = fadd <16 x float> %w, %w\n"
                        "  store <16 x float> %w2, <16 x float>* %v, align 64\n");
  auto [scalar, vector] = four_lane_multiplies(ir);
  EXPECT_EQ(scalar, 1) << "SLP did not pack the scalar function's four lanes";
  EXPECT_EQ(vector, 0) << "SLP ran on a function that has vector code";
}

}  // namespace
}  // namespace stipple::codegen
