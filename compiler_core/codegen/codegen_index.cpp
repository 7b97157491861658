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
// (lane0_index()): a dense access addresses lane 0's element, and a gather keeps its
// wrapping per-lane arithmetic.
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
    // slower). Only lane 0 gets the flag, recomputed by lane0_index() for a dense access.
    index_spine_.insert(r);
  } else {
    bin->setHasNoSignedWrap(true);
  }
  return r;
}

llvm::Value* CodeGen::lane0_index(llvm::Value* c) {
  if (c->getType()->isVectorTy()) {
    if (llvm::Value* s = llvm::getSplatValue(c)) return lane0_index(s);
  }
  // The spine emit_func_index made, rebuilt on lane 0 in i64. A scalar spine op carries
  // nsw; a vector one (index_spine_) gets it on lane 0, which is the element a dense
  // access reads, so its coordinate never wraps either (the lanes after it may run past
  // the region in a tail vector, under the mask). sext(a +nsw b) == sext(a) + sext(b),
  // likewise for - and * (where the promise is broken the i32 value was poison already),
  // so the extension goes to the spine's leaves: the taps of a stencil, `x - 2` .. `x + 2`,
  // share one extended x and differ by constants LLVM folds into the loads'
  // displacements. Extended after the add, each tap kept its own i32 add, extension and
  // subtraction (a 5x5 median spent 60 of its 342 instructions per vector on addresses, 42
  // after this; unsharp and nl_means ran 4-5% faster, the median's own time did not move).
  // The spine is a tree (emit_func_index makes an instruction per Expr node), so this is
  // linear.
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(c);
  const bool spine = bin && (c->getType()->isVectorTy()
                                 ? index_spine_.count(bin) > 0
                                 : bin->getType()->isIntegerTy(32) && bin->hasNoSignedWrap());
  if (spine) {
    const auto op = bin->getOpcode();
    if (op == llvm::Instruction::Add || op == llvm::Instruction::Sub ||
        op == llvm::Instruction::Mul) {
      llvm::Value* r =
          b_.CreateBinOp(op, lane0_index(bin->getOperand(0)), lane0_index(bin->getOperand(1)));
      if (auto* rb = llvm::dyn_cast<llvm::BinaryOperator>(r)) rb->setHasNoSignedWrap(true);
      return r;
    }
  }
  if (c->getType()->isVectorTy()) c = b_.CreateExtractElement(c, uint64_t{0});
  return b_.CreateSExt(c, b_.getInt64Ty());
}

}  // namespace stipple::codegen
