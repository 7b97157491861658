// Func buffer coordinates with nsw arithmetic on their linear spine (codegen_index.cpp).
// Checked where it pays: after the JIT's optimisation, the address of every func read in
// a reduction loop is an affine recurrence of that loop for LLVM's scalar evolution
// ({start, +, stride}), which is what lets the back end's loop strength reduction advance
// one pointer by the row stride per tap; without the flags the i32 coordinate's sign
// extension hides that. And the outputs still equal the evaluator's, with a coordinate
// that wraps inside a clamp (no flag there) among them.
#include <gtest/gtest.h>
#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "jit_vs_evaluator.h"
#include "optimized_ir.h"

namespace stipple::codegen {
namespace {

/// Whether a load reads one of the funcs (not an input or the output).
bool loads_func(const llvm::LoadInst& load) {
  const std::string name = jit_test::tagged_buffer(load);
  return name == "d" || name == "blur_y";
}

struct Reads {
  int in_loops = 0;  // unmasked loads of d and blur_y in innermost loops
  int affine = 0;    // those whose address is an affine recurrence of their loop
};

/// Parses optimised IR and asks scalar evolution about the func reads of innermost loops.
Reads func_reads(const std::string& ir) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = jit_test::parse_ir(ir, ctx);
  Reads reads;
  if (!m) return reads;
  llvm::TargetLibraryInfoImpl tlii{llvm::Triple(m->getTargetTriple())};
  for (llvm::Function& fn : *m) {
    if (fn.isDeclaration()) continue;
    llvm::TargetLibraryInfo tli(tlii);
    llvm::AssumptionCache ac(fn);
    llvm::DominatorTree dom(fn);
    llvm::LoopInfo loops(dom);
    llvm::ScalarEvolution se(fn, tli, ac, dom, loops);
    for (llvm::Loop* loop : jit_test::innermost_loops(loops)) {
      for (llvm::BasicBlock* bb : loop->blocks()) {
        for (llvm::Instruction& inst : *bb) {
          auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
          if (!load || !loads_func(*load)) continue;
          ++reads.in_loops;
          const auto* rec =
              llvm::dyn_cast<llvm::SCEVAddRecExpr>(se.getSCEV(load->getPointerOperand()));
          reads.affine += rec && rec->getLoop() == loop && rec->isAffine();
        }
      }
    }
  }
  return reads;
}

// nl_means's patch sums: a separable box of radius r, a param, so the reduction loops are
// loops (not unrolled) and each tap is a read of the producer at y + j or x + i.
const char* const kBox =
    "pipeline t\ninput in : f32[x, y]\nparam r : i32 = 3\n"
    "func d(x, y) = in(x, y) * in(x, y)\n"
    "func blur_y(x, y) = sum(j in -r..r : d(x, y + j))\n"
    "func out(x, y) = sum(i in -r..r : blur_y(x + i, y))\n"
    "output out\n";

TEST(FuncIndex, AFuncReadInAReductionLoopIsAnAffineRecurrence) {
  for (const char* sched :
       {"d.compute_root()\nblur_y.compute_root()",
        "d.compute_root().vectorize(x, 8)\nblur_y.compute_root().vectorize(x, 8)\n"
        "out.vectorize(x, 8)"}) {
    Pipeline p = compile_pipeline(kBox, "t.stp");
    LoweredFunction f = lower(p, compile_schedule(sched, "t.sched", p));
    const std::string ir = JitCompiler::create()->llvm_ir(f, /*optimized=*/true);
    Reads reads = func_reads(ir);
    // The scalar schedule reads d at y + j and blur_y at x + i; the vector one the same
    // in its loops' full vectors (the tail vectors' masked loads are left out: a masked
    // load of a wrapped address is no undefined behaviour, so LLVM cannot use the flags).
    EXPECT_GE(reads.in_loops, 2) << sched;
    EXPECT_EQ(reads.affine, reads.in_loops) << sched << "\n" << ir;

    for (int64_t width : {1, 7, 8, 13, 40}) {
      Buffer in(ScalarType::Float32, {width, 9});
      for (int64_t i = 0; i < in.element_count(); ++i) {
        in.set_flat(i, static_cast<double>((i * 37) % 101) / 8);
      }
      for (double r : {0.0, 1.0, 3.0}) {
        jit_test::Result res =
            jit_test::run_both(kBox, sched, {{"in", in}}, {width, 9}, {{"r", r}});
        jit_test::expect_same(res, std::string(sched) + " width " + std::to_string(width) + " r " +
                                       std::to_string(r));
      }
    }
  }
}

TEST(FuncIndex, ACoordinateThatWrapsInsideAClampStillReadsTheClampedElement) {
  // x * 1000000007 wraps for x >= 3 (the evaluator's interval of it is the whole i32
  // range, which the clamp bounds): the spine stops at the clamp, so the product keeps
  // Stipple's wrapping arithmetic and the clamp sees the wrapped value, as in the
  // evaluator. (With nsw there LLVM could fold the clamp's comparisons as if it did not.)
  const std::string src =
      "pipeline t\ninput in : f32[x]\nfunc g(x) = in(x) + 1.0\n"
      "func out(x) = g(clamp(x * 1000000007, 0, 9) + 1) - g(clamp(x * 1000000007, 0, 9))\n"
      "output out\n";
  for (const char* sched : {"g.compute_root()", "g.compute_root()\nout.vectorize(x, 8)"}) {
    Buffer in(ScalarType::Float32, {40});
    for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, static_cast<double>(i * i));
    jit_test::Result res = jit_test::run_both(src, sched, {{"in", in}}, {40});
    jit_test::expect_same(res, sched);
  }
}

/// The address of a read less its constant offset: the GEP's base and its index with a
/// constant addend taken off (`gep p, (x + 2)` and `gep (gep p, x), 2` are both (p, x)).
std::pair<llvm::Value*, llvm::Value*> address_less_constant(llvm::Value* ptr) {
  ptr = ptr->stripPointerCasts();
  auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(ptr);
  if (!gep || gep->getNumIndices() != 1) return {ptr, nullptr};
  llvm::Value* index = gep->getOperand(1);
  if (llvm::isa<llvm::ConstantInt>(index)) return address_less_constant(gep->getPointerOperand());
  if (auto* add = llvm::dyn_cast<llvm::BinaryOperator>(index)) {
    if (add->getOpcode() == llvm::Instruction::Add &&
        llvm::isa<llvm::ConstantInt>(add->getOperand(1))) {
      index = add->getOperand(0);
    }
  }
  return {gep->getPointerOperand()->stripPointerCasts(), index};
}

/// In an innermost loop that reads `f`: those reads, the distinct sign extensions of i32
/// values inside the loop that their addresses are computed from, and their distinct
/// addresses less constant offsets.
struct StencilLoop {
  int reads = 0, extensions = 0, addresses = 0;
};

/// Adds to `found` the i32 sign extensions in `loop` that `v` is computed from (through
/// arithmetic, casts and address computations; not through phis).
void address_extensions(llvm::Value* v, const llvm::Loop& loop, std::set<llvm::Instruction*>& found,
                        std::set<llvm::Value*>& seen) {
  auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
  if (!inst || !loop.contains(inst) || !seen.insert(v).second) return;
  if (auto* ext = llvm::dyn_cast<llvm::SExtInst>(inst)) {
    if (ext->getSrcTy()->isIntegerTy(32)) found.insert(ext);
  }
  if (llvm::isa<llvm::PHINode>(inst) || llvm::isa<llvm::LoadInst>(inst)) return;
  for (llvm::Value* operand : inst->operands()) address_extensions(operand, loop, found, seen);
}

std::vector<StencilLoop> stencil_loops(const std::string& ir) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = jit_test::parse_ir(ir, ctx);
  std::vector<StencilLoop> result;
  if (!m) return result;
  for (llvm::Function& fn : *m) {
    if (fn.isDeclaration()) continue;
    llvm::DominatorTree dom(fn);
    llvm::LoopInfo loops(dom);
    for (llvm::Loop* loop : jit_test::innermost_loops(loops)) {
      StencilLoop l;
      std::set<llvm::Instruction*> extensions;
      std::set<llvm::Value*> seen;
      std::set<std::pair<llvm::Value*, llvm::Value*>> addresses;
      for (llvm::BasicBlock* bb : loop->blocks()) {
        for (llvm::Instruction& inst : *bb) {
          auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
          if (!load || jit_test::tagged_buffer(*load) != "f") continue;
          ++l.reads;
          address_extensions(load->getPointerOperand(), *loop, extensions, seen);
          addresses.insert(address_less_constant(load->getPointerOperand()));
        }
      }
      l.extensions = static_cast<int>(extensions.size());
      l.addresses = static_cast<int>(addresses.size());
      if (l.reads > 0) result.push_back(l);
    }
  }
  return result;
}

/// Compiles `src`, which reads a func `f`, with `f` at root and `out` scalar, then
/// vectorised: hands the stencil loops of each optimised IR to `check`, and compares the
/// output with the evaluator's on a width x height image.
void check_stencil_loops(
    const char* src, int64_t width, int64_t height,
    const std::function<void(const std::vector<StencilLoop>&, const std::string& what)>& check) {
  for (const char* sched : {"f.compute_root()", "f.compute_root()\nout.vectorize(x, 8)"}) {
    Pipeline p = compile_pipeline(src, "t.stp");
    LoweredFunction lowered = lower(p, compile_schedule(sched, "t.sched", p));
    const std::string ir = JitCompiler::create()->llvm_ir(lowered, /*optimized=*/true);
    check(stencil_loops(ir), std::string(sched) + "\n" + ir);
    Buffer in(ScalarType::Float32, {width, height});
    for (int64_t i = 0; i < in.element_count(); ++i) {
      in.set_flat(i, static_cast<double>((i * 29) % 97) / 4);
    }
    jit_test::expect_same(jit_test::run_both(src, sched, {{"in", in}}, {width, height}), sched);
  }
}

TEST(FuncIndex, TheTapsOfAStencilShareOneExtendedCoordinate) {
  // Five taps x - 2 .. x + 2 of a func: their i32 coordinates are nsw adds of x, so the
  // extension to i64 distributes over them (lane0_index) and the five addresses are one
  // extended x plus constants. Extended after the add, LLVM keeps one add, extension and
  // subtraction per tap in the loop (a 5x5 median spent 60 instructions per vector on its
  // addresses).
  check_stencil_loops(
      "pipeline t\ninput in : f32[x, y]\nfunc f(x, y) = in(x, y) * 2.0\n"
      "func out(x, y) = f(x - 2, y) + f(x - 1, y) + f(x, y) + f(x + 1, y) + f(x + 2, y)\n"
      "output out\n",
      37, 5, [](const std::vector<StencilLoop>& loops, const std::string& what) {
        ASSERT_FALSE(loops.empty()) << what;
        for (const StencilLoop& l : loops) {
          EXPECT_GE(l.reads, 5) << what;
          EXPECT_LE(l.extensions, 1) << what;
        }
      });
}

TEST(FuncIndex, TheTapsOfARowOfAStencilDifferOnlyByConstants) {
  // A 3x3 stencil of a func, its taps written out (as a median's points are enumerated):
  // the constant part of each coordinate is added last (element_pointer), so the nine
  // reads address three row pointers plus constants, which the instruction selector folds
  // into the loads' displacements. Added inside the coordinate, each tap had an index of
  // its own (the 5x5 median kept 25 live through its network and spilled them). A
  // reduction's taps are a loop at code generation, unrolled by LLVM later: not these.
  check_stencil_loops(
      "pipeline t\ninput in : f32[x, y]\nfunc f(x, y) = in(x, y) * 2.0\n"
      "func out(x, y) = f(x - 1, y - 1) + f(x, y - 1) + f(x + 1, y - 1) + f(x - 1, y) + f(x, y)"
      " + f(x + 1, y) + f(x - 1, y + 1) + f(x, y + 1) + f(x + 1, y + 1)\noutput out\n",
      29, 7, [](const std::vector<StencilLoop>& loops, const std::string& what) {
        int checked = 0;
        for (const StencilLoop& l : loops) {
          if (l.reads < 9) continue;
          ++checked;
          EXPECT_LE(l.addresses, 3) << what;
        }
        EXPECT_GE(checked, 1) << what;
      });
}

}  // namespace
}  // namespace stipple::codegen
