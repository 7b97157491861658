// Buffer alias tags (codegen_alias.cpp): every access of a buffer carries its buffer's own
// TBAA tag, so LLVM may move a read of one buffer past a store to another. Checked where
// it pays: after the JIT's optimisation, a table read whose index does not change in a
// loop is loaded once before the loop, not every iteration, although the loop stores to
// another func's buffer (without the tags LLVM must assume the store may change the
// table). And the outputs still equal the evaluator's.
#include <gtest/gtest.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <string>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "jit_vs_evaluator.h"
#include "optimized_ir.h"

namespace stipple::codegen {
namespace {

using jit_test::tagged_buffer;

bool is_store(const llvm::Instruction& inst) {
  if (llvm::isa<llvm::StoreInst>(inst)) return true;
  const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && (call->getIntrinsicID() == llvm::Intrinsic::masked_store ||
                  call->getIntrinsicID() == llvm::Intrinsic::masked_scatter);
}

bool is_load(const llvm::Instruction& inst) {
  if (llvm::isa<llvm::LoadInst>(inst)) return true;
  const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && (call->getIntrinsicID() == llvm::Intrinsic::masked_load ||
                  call->getIntrinsicID() == llvm::Intrinsic::masked_gather);
}

struct LoopCounts {
  int tagged_accesses = 0;     // loads and stores with a buffer's tag, anywhere
  int storing_loops = 0;       // innermost loops that store
  int most_loads_in_one = 0;   // the most loads in one of them
  std::string buffers_loaded;  // the buffers those loads are tagged with
};

/// Parses optimised IR and counts the loads in every innermost loop that stores.
LoopCounts count_in_loops(const std::string& ir) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = jit_test::parse_ir(ir, ctx);
  LoopCounts counts;
  if (!m) return counts;
  for (llvm::Function& fn : *m) {
    if (fn.isDeclaration()) continue;
    for (llvm::BasicBlock& bb : fn) {
      for (llvm::Instruction& inst : bb) counts.tagged_accesses += !tagged_buffer(inst).empty();
    }
    llvm::DominatorTree dom(fn);
    llvm::LoopInfo loops(dom);
    for (llvm::Loop* loop : jit_test::innermost_loops(loops)) {
      bool stores = false;
      int loads = 0;
      std::string names;
      for (llvm::BasicBlock* bb : loop->blocks()) {
        for (llvm::Instruction& inst : *bb) {
          stores = stores || is_store(inst);
          if (is_load(inst)) {
            ++loads;
            names += " '" + tagged_buffer(inst) + "'";
          }
        }
      }
      if (!stores) continue;
      ++counts.storing_loops;
      if (loads > counts.most_loads_in_one) {
        counts.most_loads_in_one = loads;
        counts.buffers_loaded = names;
      }
    }
  }
  return counts;
}

TEST(BufferAliasTags, ATableReadInvariantInALoopStoringElsewhereIsHoisted) {
  // gain(y) is the same for every x of row y, and out's x loop stores only to out: with
  // the tags, the load of gain leaves the loop. Both a scalar loop and a vector loop with
  // a tail (its guard partitioned: codegen_loop_partition.cpp).
  const std::string src =
      "pipeline t\ninput in : f32[x, y]\nfunc gain(y) = f32(y % 5) * 0.5 + 1.0\n"
      "func out(x, y) = in(x, y) * gain(y) + gain(y + 1)\noutput out\n";
  for (const char* sched : {"gain.compute_root()", "gain.compute_root()\nout.vectorize(x, 8)"}) {
    Pipeline p = compile_pipeline(src, "t.stp");
    LoweredFunction f = lower(p, compile_schedule(sched, "t.sched", p));
    const std::string ir = JitCompiler::create()->llvm_ir(f, /*optimized=*/true);
    LoopCounts c = count_in_loops(ir);
    EXPECT_GT(c.tagged_accesses, 0) << sched;
    EXPECT_GT(c.storing_loops, 0) << sched;
    // One load per iteration: in(x, y). gain(y) and gain(y + 1) are loaded before the loop.
    EXPECT_EQ(c.most_loads_in_one, 1) << sched << ": loads of" << c.buffers_loaded << "\n" << ir;

    for (int64_t width : {1, 7, 8, 13, 40}) {
      Buffer in(ScalarType::Float32, {width, 6});
      for (int64_t i = 0; i < in.element_count(); ++i) {
        in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
      }
      jit_test::Result r = jit_test::run_both(src, sched, {{"in", in}}, {width, 6});
      jit_test::expect_same(r, std::string(sched) + " width " + std::to_string(width));
    }
  }
}

}  // namespace
}  // namespace stipple::codegen
