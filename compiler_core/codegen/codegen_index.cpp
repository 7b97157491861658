// The coordinates of a func buffer access, with signed-overflow-free adds, subtractions
// and multiplications along their linear spine.
//
// A read of a func in a reduction, `d(x, y + j, dx, dy)`, addresses
// `((y + j) - d.min.1) * d.stride.1 + ...`: the i32 coordinate `y + j` is sign-extended to
// i64 for the address. Without a no-wrap flag LLVM must keep that order (add in i32, then
// extend), so the sum is not affine in j in i64 and scalar evolution cannot turn the
// address into a pointer advanced by the row stride: each tap recomputed it (an add, a
// sign extension, a subtraction, a multiply and three adds per load in nl_means's patch
// sums). With `add nsw` the extension distributes over the sum and the address is
// `base + j * stride`, one pointer increment per tap (Halide's code gets this for free:
// its i32 arithmetic never wraps, Halide's CodeGen_LLVM emits every i32 add as nsw).
//
// Why the flag is sound here, though Stipple's i32 arithmetic wraps: the flag is put only
// on the Add/Sub/Mul nodes of the coordinate expression itself, down to the first node
// that is anything else (a variable, a clamp, a division, a call are emitted as before:
// `f(clamp(x + k, 0, n))` may wrap inside the clamp and still read inside). Every value
// on that spine is bounded by bounds inference's interval arithmetic over the same
// expression, which takes i32 arithmetic not to wrap (compiler_core/lowering/README.md,
// "Bounds"), and the evaluator rejects, as unbounded, an index whose interval leaves the
// i32 range in any operation: an input the evaluator accepts never wraps there.
//
// The reduction variable j needs the flag on its increment too (emit_inclusive_loop), for
// j itself to be an affine recurrence. In vector code the flags go on lane 0 only
// (lane0()): a dense access addresses lane 0's element, and a gather keeps its wrapping
// per-lane arithmetic.
#include <llvm/Analysis/VectorUtils.h>

#include "compiler_core/codegen/codegen_internal.h"

namespace stipple::codegen {

llvm::Value* CodeGen::emit_func_index(const Expr& e) {
  if (e.type() != Int32()) return emit(e);
  IRNodeType op;
  Expr a, c;
  if (const Add* n = e.as<Add>()) {
    op = IRNodeType::Add, a = n->a, c = n->b;
  } else if (const Sub* n = e.as<Sub>()) {
    op = IRNodeType::Sub, a = n->a, c = n->b;
  } else if (const Mul* n = e.as<Mul>()) {
    op = IRNodeType::Mul, a = n->a, c = n->b;
  } else {
    return emit(e);
  }
  llvm::Value* r = emit_binary(op, e.type(), emit_func_index(a), emit_func_index(c));
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(r);
  if (!bin) return r;  // constants folded
  if (r->getType()->isVectorTy()) {
    // Vector coordinates keep their wrapping ops: flagged, LLVM widened a gather's
    // per-lane `sext(x / s + 1)` to i64 adds on two halves (bilateral_grid's slice, 10%
    // slower). Only lane 0 gets the flag, recomputed by lane0() for a dense access.
    index_spine_.insert(r);
  } else {
    bin->setHasNoSignedWrap(true);
  }
  return r;
}

llvm::Value* CodeGen::lane0(llvm::Value* c) {
  if (!c->getType()->isVectorTy()) return c;
  if (llvm::Value* s = llvm::getSplatValue(c)) return s;
  // The spine emit_func_index made, on lane 0's scalars: lane 0 of a dense access is the
  // element read, so its coordinate never wraps either (the lanes after it may run past
  // the region in a tail vector, under the mask). LLVM would scalarise
  // `extractelement (add (x, splat(j))), 0` itself, but without a flag to keep.
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(c);
  if (bin && index_spine_.count(bin)) {
    llvm::Value* r =
        b_.CreateBinOp(bin->getOpcode(), lane0(bin->getOperand(0)), lane0(bin->getOperand(1)));
    if (auto* rb = llvm::dyn_cast<llvm::BinaryOperator>(r)) rb->setHasNoSignedWrap(true);
    return r;
  }
  return b_.CreateExtractElement(c, uint64_t{0});
}

llvm::Value* CodeGen::sext_index(llvm::Value* c) {
  // sext(a +nsw b) == sext(a) + sext(b), likewise for - and *: the flag says the i32 op did
  // not wrap (and where that promise is broken the i32 result was poison already). Widened
  // term by term, the taps of a stencil, `x - 2`, `x - 1`, ..., `x + 2`, share one
  // sign-extended x and differ by constants LLVM folds into the loads' displacements;
  // extended after the add, each tap kept its own i32 add, extension and subtraction (a
  // 5x5 median spent 60 of its 342 instructions per vector on addresses, 42 after this;
  // unsharp and nl_means ran 4-5% faster, the median's own time did not move). The spine
  // is a tree (emit_func_index makes an instruction per Expr node), so this is linear.
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(c);
  if (bin && bin->getType()->isIntegerTy(32) && bin->hasNoSignedWrap()) {
    const auto op = bin->getOpcode();
    if (op == llvm::Instruction::Add || op == llvm::Instruction::Sub ||
        op == llvm::Instruction::Mul) {
      llvm::Value* r =
          b_.CreateBinOp(op, sext_index(bin->getOperand(0)), sext_index(bin->getOperand(1)));
      if (auto* rb = llvm::dyn_cast<llvm::BinaryOperator>(r)) rb->setHasNoSignedWrap(true);
      return r;
    }
  }
  return b_.CreateSExt(c, b_.getInt64Ty());
}

}  // namespace stipple::codegen
