// The JIT's optimised LLVM IR parsed back, for the codegen tests that check what LLVM made
// of the generated code (alias_test.cpp, func_index_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

#include <memory>
#include <string>
#include <vector>

namespace stipple::jit_test {

/// The module of `ir` in `ctx`; null (and a test failure) when it does not parse.
inline std::unique_ptr<llvm::Module> parse_ir(const std::string& ir, llvm::LLVMContext& ctx) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(ir, error, ctx);
  EXPECT_TRUE(m) << error.getMessage().str();
  return m;
}

/// The name of the buffer an access is tagged with ("" when untagged): its TBAA type node
/// is "buffer NAME" (codegen_alias.cpp).
inline std::string tagged_buffer(const llvm::Instruction& inst) {
  const llvm::MDNode* tag = inst.getMetadata(llvm::LLVMContext::MD_tbaa);
  if (!tag || tag->getNumOperands() < 1) return "";
  const auto* type = llvm::dyn_cast<llvm::MDNode>(tag->getOperand(0));
  if (!type || type->getNumOperands() < 1) return "";
  const auto* name = llvm::dyn_cast<llvm::MDString>(type->getOperand(0));
  if (!name || !name->getString().startswith("buffer ")) return "";
  return name->getString().drop_front(7).str();
}

/// The innermost loops of a function's loop info, nest by nest.
inline std::vector<llvm::Loop*> innermost_loops(const llvm::LoopInfo& loops) {
  std::vector<llvm::Loop*> found;
  for (llvm::Loop* top : loops) {
    for (llvm::Loop* loop : top->getLoopsInPreorder()) {
      if (loop->isInnermost()) found.push_back(loop);
    }
  }
  return found;
}

}  // namespace stipple::jit_test
