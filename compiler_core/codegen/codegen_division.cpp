// Integer division by a divisor that is the same for the whole function: made only of
// params, input extents and constants, as `x / s_sigma` in the bilateral grid's slice or
// `(x + s_sigma / 2) / s_sigma` in its splat.
//
// x86 has no vector integer division, so LLVM divides such a vector lane by lane (sixteen
// idivs per AVX-512 vector), and one scalar idiv costs 10 to 20 cycles on the path of
// every pixel. By a constant divisor LLVM multiplies and shifts instead; this does the
// same for a divisor known only when the pipeline runs, with the multiplier computed once
// per function, in its entry block (Granlund and Montgomery, "Division by invariant
// integers using multiplication", PLDI 1994, theorem 4.2; libdivide does the same at run
// time). For 1 <= a <= 2^31 and 0 <= n <= 2^31, with l = ceil(log2 a) and
// m = ceil(2^(31 + l) / a), which fits in 32 bits,
//     floor(n / a) == (n * m) >> (31 + l)      (the product fits in 64 bits).
// (The theorem covers n < 2^31; n == 2^31 holds too because m * a - 2^(31 + l) < a when a
// is not a power of two and is 0 when it is; the unit test checks these ends.)
// Signs, exactly as ir.h defines `/` and `%`, without branches, for every divisor:
// - floor(x / d) for d > 0: a negative x maps to n = ~x = -x - 1 and
//   floor(x / d) == ~floor(n / d), so the sign is an xor before and after (s = x >> 31).
// - for d < 0: floor(x / d) == floor(-x / a) with a = -d, the same with y = -x in place of
//   x (s: x > 0); y = -INT_MIN is 2^31 as an unsigned n, and INT_MIN / -1 wraps to
//   INT_MIN as ir.h says.
// - x % d is Euclidean, which depends on a = |d| only: x - a * floor(x / a).
// - d == 0: the result is 0 (an and with a mask that is 0 only then).
#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/ir_printer.h"

namespace stipple::codegen {

namespace {

/// Whether `e` has one value in the whole function and is emitted as straight-line code
/// without loads: params, input extents, constants and arithmetic on them. (Variables are
/// left out: a Let or loop variable may be bound inside a loop; Select, && and || may
/// branch.)
bool function_invariant(const Expr& e) {
  switch (e.node_type()) {
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Param:
    case IRNodeType::InputExtent: return true;
    case IRNodeType::Cast: return function_invariant(e.as<Cast>()->value);
#define STIPPLE_INVARIANT_BINARY(N) \
  case IRNodeType::N: return function_invariant(e.as<N>()->a) && function_invariant(e.as<N>()->b);
      STIPPLE_INVARIANT_BINARY(Add)
      STIPPLE_INVARIANT_BINARY(Sub)
      STIPPLE_INVARIANT_BINARY(Mul)
      STIPPLE_INVARIANT_BINARY(Div)
      STIPPLE_INVARIANT_BINARY(Mod)
      STIPPLE_INVARIANT_BINARY(Min)
      STIPPLE_INVARIANT_BINARY(Max)
#undef STIPPLE_INVARIANT_BINARY
    default: return false;
  }
}

}  // namespace

const CodeGen::DivisorMagic& CodeGen::divisor_magic(const Expr& divisor) {
  const std::string key = to_string(divisor);
  auto it = divisor_magic_.find(key);
  if (it != divisor_magic_.end()) return it->second;

  // Emitted at the end of the entry block, outside every loop, as scalar code.
  llvm::IRBuilderBase::InsertPointGuard keep_insert_point(b_);
  b_.SetInsertPoint(invariant_block_->getTerminator());
  const int saved_lanes = lanes_;
  llvm::Value* saved_mask = mask_;
  lanes_ = 1;
  mask_ = nullptr;
  llvm::Value* d = emit(divisor);
  lanes_ = saved_lanes;
  mask_ = saved_mask;

  DivisorMagic magic;
  magic.negative = b_.CreateICmpSLT(d, i32(0), "divisor.negative");
  llvm::Value* sign = b_.CreateSExt(magic.negative, b_.getInt32Ty());
  magic.nonzero = b_.CreateSExt(b_.CreateICmpNE(d, i32(0)), b_.getInt32Ty(), "divisor.nonzero");
  // a = |d| (2^31 for INT_MIN, read as unsigned), 1 in place of 0.
  llvm::Value* abs = b_.CreateSub(b_.CreateXor(d, sign), sign);
  magic.magnitude = b_.CreateSelect(b_.CreateICmpEQ(d, i32(0)), i32(1), abs, "divisor.magnitude");
  // l = ceil(log2 a) = 32 - clz(a - 1) (0 for a == 1).
  llvm::Function* ctlz =
      llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::ctlz, {b_.getInt32Ty()});
  llvm::Value* l = b_.CreateSub(
      i32(32), b_.CreateCall(ctlz, {b_.CreateSub(magic.magnitude, i32(1)), b_.getFalse()}));
  magic.shift = b_.CreateZExt(b_.CreateAdd(l, i32(31)), b_.getInt64Ty(), "divisor.shift");
  llvm::Value* a64 = b_.CreateZExt(magic.magnitude, b_.getInt64Ty());
  llvm::Value* power = b_.CreateShl(i64(1), magic.shift);
  llvm::Value* m = b_.CreateUDiv(b_.CreateAdd(power, b_.CreateSub(a64, i64(1))), a64);
  magic.multiplier = b_.CreateTrunc(m, b_.getInt32Ty(), "divisor.multiplier");
  return divisor_magic_.emplace(key, magic).first->second;
}

llvm::Value* CodeGen::emit_invariant_div_mod(bool is_div, Type t, llvm::Value* a,
                                             const Expr& divisor) {
  if (t != Int32() || !invariant_block_) return nullptr;
  // Constants are LLVM's to divide by (emit_div_mod).
  if (divisor.node_type() == IRNodeType::IntImm || !function_invariant(divisor)) return nullptr;
  const DivisorMagic& magic = divisor_magic(divisor);
  llvm::Value* negative = magic.negative;
  llvm::Value* nonzero = magic.nonzero;
  llvm::Value* magnitude = magic.magnitude;
  llvm::Value* m = b_.CreateZExt(magic.multiplier, b_.getInt64Ty());
  llvm::Value* shift = magic.shift;
  if (a->getType()->isVectorTy()) {
    negative = widen(negative);
    nonzero = widen(nonzero);
    magnitude = widen(magnitude);
    m = widen(m);
    shift = widen(shift);
  }
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  // floor(y / a) of the signed y, by n = y or ~y (s: y's sign mask).
  auto floor_div = [&](llvm::Value* y, llvm::Value* s) {
    llvm::Value* n = b_.CreateZExt(b_.CreateXor(y, s), shaped(b_.getInt64Ty(), a));
    llvm::Value* product = b_.CreateMul(n, m, "", /*HasNUW=*/true, /*HasNSW=*/true);
    return b_.CreateXor(b_.CreateTrunc(b_.CreateLShr(product, shift), a->getType()), s);
  };
  if (!is_div) {
    llvm::Value* q = floor_div(a, b_.CreateAShr(a, llvm::ConstantInt::get(a->getType(), 31)));
    return b_.CreateAnd(b_.CreateSub(a, b_.CreateMul(q, magnitude)), nonzero);
  }
  llvm::Value* neg_mask = b_.CreateSExt(negative, a->getType());
  llvm::Value* y = b_.CreateSub(b_.CreateXor(a, neg_mask), neg_mask);  // x, or -x for d < 0
  llvm::Value* s =
      b_.CreateSExt(b_.CreateSelect(negative, b_.CreateICmpSGT(a, zero), b_.CreateICmpSLT(a, zero)),
                    a->getType());
  return b_.CreateAnd(floor_div(y, s), nonzero);
}

}  // namespace stipple::codegen
