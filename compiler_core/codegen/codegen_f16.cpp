// f16, the storage type, in generated code: an f16 value lives in an f32 register (its
// exact widening) and is converted at loads, stores and casts with the integer steps of
// compiler_core/ir/scalar_ops.h, written here as LLVM IR that works on scalars and vectors
// alike. LLVM's own `half` conversions were not used: without F16C they become calls to
// __gnu_h2f_ieee / __gnu_f2h_ieee (and f64 to f16 to __truncdfhf2), which the JIT would
// have to be given and an object file's user to link, and hardware conversions keep NaN
// payloads where the evaluator makes every NaN 0x7e00; these few integer operations are
// the same on every target and vectorise as they stand.
//
// Where the target has F16C (x86 since Ivy Bridge and Zen), funcs' f16 values convert in
// hardware: a stored half of precision lowering (store_as(f16)) is read by every tap of
// its consumers, and the integer widening, a dozen instructions per vector, made two_pass_blur
// with its horizontal pass stored as f16 2.9x slower than in f32 (2.04 -> 5.98 ms at 820x614,
// one thread); vcvtph2ps is one, folded into the load. The hardware rounds to nearest even
// as the integer steps do, exactly, for every value but NaN, whose payload it keeps: the
// narrowing then puts 0x7e00 with the sign in, as the evaluator does. Widening in hardware
// is used for funcs only, whose buffers hold nothing but what generated code stored (so
// every NaN is 0x7e00): an input's signalling NaN would come out quieted, where the integer
// widening keeps its bits, as the evaluator does.
#include "compiler_core/codegen/codegen_internal.h"

namespace stipple::codegen {

namespace {
// An i32 constant shaped like `like` (a splat for vectors).
llvm::Value* splat_i32(llvm::Value* like, uint32_t v) {
  return llvm::ConstantInt::get(like->getType(), v);
}
}  // namespace

llvm::Value* CodeGen::f16_bits_to_f32(llvm::Value* h) {
  llvm::Value* x = b_.CreateZExt(h, shaped(b_.getInt32Ty(), h));
  auto k = [&](uint32_t v) { return splat_i32(x, v); };
  llvm::Value* sign = b_.CreateShl(b_.CreateAnd(x, k(0x8000u)), k(16));
  llvm::Value* em = b_.CreateAnd(x, k(0x7fffu));
  llvm::Value* shifted = b_.CreateShl(em, k(13));
  // Zero or subnormal: m * 2^-24, exact in f32.
  llvm::Type* ft = shaped(b_.getFloatTy(), h);
  llvm::Value* sub = b_.CreateFMul(b_.CreateUIToFP(em, ft), llvm::ConstantFP::get(ft, 0x1p-24));
  llvm::Value* sub_bits = b_.CreateBitCast(sub, x->getType());
  llvm::Value* special = b_.CreateOr(shifted, k(0x7f800000u));  // infinity or NaN
  llvm::Value* normal = b_.CreateAdd(shifted, k(0x38000000u));  // exponent + 127 - 15
  llvm::Value* bits =
      b_.CreateSelect(b_.CreateICmpULT(em, k(0x0400u)), sub_bits,
                      b_.CreateSelect(b_.CreateICmpUGE(em, k(0x7c00u)), special, normal));
  return b_.CreateBitCast(b_.CreateOr(bits, sign), ft);
}

llvm::Value* CodeGen::f16_func_bits_to_f32(llvm::Value* h) {
  if (!target_.f16_conversions) return f16_bits_to_f32(h);
  return b_.CreateFPExt(b_.CreateBitCast(h, shaped(b_.getHalfTy(), h)), shaped(b_.getFloatTy(), h));
}

llvm::Value* CodeGen::f32_to_f16_bits(llvm::Value* v) {
  llvm::Value* f = b_.CreateBitCast(v, shaped(b_.getInt32Ty(), v));
  auto k = [&](uint32_t c) { return splat_i32(f, c); };
  if (target_.f16_conversions) {
    llvm::Type* i16 = shaped(b_.getInt16Ty(), v);
    llvm::Value* rounded = b_.CreateBitCast(b_.CreateFPTrunc(v, shaped(b_.getHalfTy(), v)), i16);
    llvm::Value* nan = b_.CreateTrunc(
        b_.CreateOr(b_.CreateAnd(b_.CreateLShr(f, k(16)), k(0x8000u)), k(0x7e00u)), i16);
    return b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, rounded);
  }
  llvm::Value* sign = b_.CreateAnd(f, k(0x80000000u));
  llvm::Value* a = b_.CreateXor(f, sign);
  // |x| >= 2^16: infinity, or the quiet NaN 0x7e00.
  llvm::Value* special =
      b_.CreateSelect(b_.CreateICmpUGT(a, k(0x7f800000u)), k(0x7e00u), k(0x7c00u));
  // |x| < 2^-14: adding 0.5 makes the FPU round at the f16 subnormal spacing 2^-24.
  llvm::Value* t =
      b_.CreateFAdd(b_.CreateBitCast(a, v->getType()), llvm::ConstantFP::get(v->getType(), 0.5));
  llvm::Value* sub = b_.CreateSub(b_.CreateBitCast(t, f->getType()), k(0x3f000000u));
  // Normal: rebias the exponent by 15 - 127, round the 13 dropped bits to even.
  llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(a, k(13)), k(1));
  llvm::Value* normal = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(a, k(0xc8000fffu)), odd), k(13));
  llvm::Value* o =
      b_.CreateSelect(b_.CreateICmpUGE(a, k(0x47800000u)), special,
                      b_.CreateSelect(b_.CreateICmpULT(a, k(0x38800000u)), sub, normal));
  o = b_.CreateOr(o, b_.CreateLShr(sign, k(16)));
  return b_.CreateTrunc(o, shaped(b_.getInt16Ty(), v));
}

llvm::Value* CodeGen::f64_to_f32_round_odd(llvm::Value* d) {
  llvm::Value* t = b_.CreateFPTrunc(d, shaped(b_.getFloatTy(), d));
  llvm::Value* back = b_.CreateFPExt(t, d->getType());
  llvm::Value* keep = b_.CreateOr(b_.CreateFCmpOEQ(back, d), b_.CreateFCmpUNO(d, d));
  llvm::Value* bits = b_.CreateBitCast(t, shaped(b_.getInt32Ty(), t));
  // Rounded away from zero: one step back; then the last bit set (inexact).
  llvm::Value* away = b_.CreateFCmpOGT(unary_intrinsic(llvm::Intrinsic::fabs, back),
                                       unary_intrinsic(llvm::Intrinsic::fabs, d));
  bits = b_.CreateSub(bits, b_.CreateZExt(away, bits->getType()));
  bits = b_.CreateOr(bits, splat_i32(bits, 1));
  return b_.CreateSelect(keep, t, b_.CreateBitCast(bits, t->getType()));
}

llvm::Value* CodeGen::emit_round_to_f16(ScalarType from, llvm::Value* v) {
  llvm::Value* x = v;
  if (from == ScalarType::Float64) {
    x = f64_to_f32_round_odd(v);
  } else if (from != ScalarType::Float32 && from != ScalarType::Float16) {
    // Integers: exact in f32 below 2^24, and larger ones become infinity either way.
    x = emit_cast(from, ScalarType::Float32, v);
  }
  return f16_func_bits_to_f32(f32_to_f16_bits(x));
}

llvm::Value* CodeGen::from_memory(Type t, llvm::Value* v) {
  if (t.is_bool()) return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (t.is_f16()) return f16_bits_to_f32(v);
  return v;
}

llvm::Value* CodeGen::to_memory(Type t, llvm::Value* v) {
  if (t.is_bool()) return b_.CreateZExt(v, shaped(b_.getInt8Ty(), v));
  if (t.is_f16()) return f32_to_f16_bits(v);
  return v;
}

}  // namespace stipple::codegen
