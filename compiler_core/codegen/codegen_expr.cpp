// Expression code generation, rule for rule as compiler_core/ir/ir.h defines them and the
// reference evaluator (compiler_core/interp/expr_machine.cpp) computes them: integers in
// their own width (wrapping), floor division and Euclidean modulo without traps,
// saturating float-to-int casts, no fast-math flags (so no contraction into FMAs),
// branches for select, && and || whose skipped side would do real work.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <cmath>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/error.h"

namespace stipple::codegen {

namespace {

bool is_float(ScalarType t) { return Type(t).is_float(); }
bool is_signed(ScalarType t) { return Type(t).is_signed(); }

/// Cheap enough to compute on both sides of a select: no memory access, no division,
/// no call, small.
bool is_cheap(const Expr& e, int depth = 0) {
  if (depth > 2) return false;
  switch (e.node_type()) {
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Variable:
    case IRNodeType::Param:
    case IRNodeType::InputExtent: return true;
    case IRNodeType::Cast: return is_cheap(e.as<Cast>()->value, depth + 1);
    case IRNodeType::Not: return is_cheap(e.as<Not>()->a, depth + 1);
    case IRNodeType::Add: {
      auto* op = e.as<Add>();
      return is_cheap(op->a, depth + 1) && is_cheap(op->b, depth + 1);
    }
    case IRNodeType::Sub: {
      auto* op = e.as<Sub>();
      return is_cheap(op->a, depth + 1) && is_cheap(op->b, depth + 1);
    }
    case IRNodeType::Mul: {
      auto* op = e.as<Mul>();
      return is_cheap(op->a, depth + 1) && is_cheap(op->b, depth + 1);
    }
    case IRNodeType::Min: {
      auto* op = e.as<Min>();
      return is_cheap(op->a, depth + 1) && is_cheap(op->b, depth + 1);
    }
    case IRNodeType::Max: {
      auto* op = e.as<Max>();
      return is_cheap(op->a, depth + 1) && is_cheap(op->b, depth + 1);
    }
    case IRNodeType::LT: {
      auto* op = e.as<LT>();
      return is_cheap(op->a, depth + 1) && is_cheap(op->b, depth + 1);
    }
    case IRNodeType::Div:
    case IRNodeType::Mod:
    case IRNodeType::EQ:
    case IRNodeType::NE:
    case IRNodeType::LE:
    case IRNodeType::GT:
    case IRNodeType::GE:
    case IRNodeType::And:
    case IRNodeType::Or:
    case IRNodeType::Select:
    case IRNodeType::Call:
    case IRNodeType::Reduce:
    case IRNodeType::Let:
    case IRNodeType::LetStmt:
    case IRNodeType::For:
    case IRNodeType::Provide:
    case IRNodeType::Allocate:
    case IRNodeType::Block:
    case IRNodeType::IfThenElse:
    case IRNodeType::Evaluate: break;
  }
  return false;
}

}  // namespace

llvm::Value* CodeGen::constant_of(Type t, double v) {
  llvm::Type* ty = value_type(t);
  if (t.is_float()) return llvm::ConstantFP::get(ty, v);
  return llvm::ConstantInt::get(ty, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

llvm::Value* CodeGen::libm(int32_t op, llvm::Value* x, llvm::Value* y) {
  if (!x->getType()->isVectorTy() && op <= kStipplePow) {
    // Scalars: the LLVM intrinsics, which become the same libm calls.
    static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::exp, llvm::Intrinsic::log,
                                              llvm::Intrinsic::sin, llvm::Intrinsic::cos,
                                              llvm::Intrinsic::pow};
    return y ? b_.CreateBinaryIntrinsic(ids[op], x, y) : unary_intrinsic(ids[op], x);
  }
  if (!x->getType()->isVectorTy()) {
    // Scalars without an LLVM 14 intrinsic: a direct call of the C library's function,
    // marked nobuiltin so that LLVM never folds it itself (it would compute tanf as a
    // double tan rounded to float, not always the bits tanf gives the evaluator).
    const bool f64 = x->getType()->isDoubleTy();
    const char* name = nullptr;
    switch (op) {
      case kStippleTan: name = f64 ? "tan" : "tanf"; break;
      case kStippleAtan2: name = f64 ? "atan2" : "atan2f"; break;
      case kStippleHypot: name = f64 ? "hypot" : "hypotf"; break;
      case kStippleTanh: name = f64 ? "tanh" : "tanhf"; break;
      default: throw_internal_error(__FILE__, __LINE__, "codegen: unknown libm operation");
    }
    std::vector<llvm::Type*> params(y ? 2 : 1, x->getType());
    llvm::FunctionCallee f =
        module_.getOrInsertFunction(name, llvm::FunctionType::get(x->getType(), params, false));
    if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
      fn->setDoesNotAccessMemory();
      fn->setDoesNotThrow();
      fn->setWillReturn();
    }
    std::vector<llvm::Value*> args = {x};
    if (y) args.push_back(y);
    llvm::CallInst* call = b_.CreateCall(f, args);
    call->addFnAttr(llvm::Attribute::NoBuiltin);
    return call;
  }
  // Vectors: one runtime call for all lanes. LLVM would scalarise the intrinsic into a
  // call per lane, each spilling every live vector register around it: slower code and
  // much more of it to compile.
  llvm::Type* vt = x->getType();
  llvm::AllocaInst* a = entry_alloca(vt, "libm.a");
  llvm::AllocaInst* out = entry_alloca(vt, "libm.out");
  b_.CreateStore(x, a);
  llvm::Value* b_arg = llvm::ConstantPointerNull::get(b_.getInt8PtrTy());
  if (y) {
    llvm::AllocaInst* bb = entry_alloca(vt, "libm.b");
    b_.CreateStore(y, bb);
    b_arg = b_.CreateBitCast(bb, b_.getInt8PtrTy());
  }
  const bool f64 = vt->getScalarType()->isDoubleTy();
  b_.CreateCall(runtime("stipple_libm_lanes"),
                {i32(op), i32(f64 ? 1 : 0), b_.CreateBitCast(a, b_.getInt8PtrTy()), b_arg,
                 b_.CreateBitCast(out, b_.getInt8PtrTy()),
                 i32(llvm::cast<llvm::FixedVectorType>(vt)->getNumElements())});
  return b_.CreateLoad(vt, out);
}

llvm::Value* CodeGen::unary_intrinsic(llvm::Intrinsic::ID id, llvm::Value* v) {
  return b_.CreateUnaryIntrinsic(id, v);
}

llvm::Value* CodeGen::emit(const Expr& e) {
  const Type t = e.type();
  switch (e.node_type()) {
    case IRNodeType::IntImm: return constant_of(t, static_cast<double>(e.as<IntImm>()->value));
    case IRNodeType::FloatImm: return constant_of(t, e.as<FloatImm>()->value);
    case IRNodeType::Cast: {
      const Cast* op = e.as<Cast>();
      return emit_cast(op->value.type().code, t.code, emit(op->value));
    }
    case IRNodeType::Variable: {
      const Variable* op = e.as<Variable>();
      llvm::Value* v = find_var(op->name);
      STIPPLE_INTERNAL_CHECK(v != nullptr, "codegen: unbound variable '" + op->name + "'");
      STIPPLE_INTERNAL_CHECK(
          v->getType()->getScalarType() == value_type(t),
          "codegen: variable '" + op->name + "' is bound to a value of another type");
      return v;
    }
    case IRNodeType::Param: {
      const Param* op = e.as<Param>();
      auto it = params_.find(op->name);
      STIPPLE_INTERNAL_CHECK(it != params_.end(), "codegen: undeclared param '" + op->name + "'");
      STIPPLE_INTERNAL_CHECK(it->second->getType() == value_type(t),
                             "codegen: param '" + op->name + "' read with another type");
      return it->second;
    }
    case IRNodeType::InputExtent: {
      const InputExtent* op = e.as<InputExtent>();
      const BufferInfo& buf = find_buffer(op->input);
      STIPPLE_INTERNAL_CHECK(buf.is_input, "codegen: extent of non-input '" + op->input + "'");
      if (op->dim >= buf.dims) return i32(1);  // as the evaluator: 1 beyond the dimensions
      return b_.CreateTrunc(buf.extent[op->dim], b_.getInt32Ty());
    }
    case IRNodeType::Add: {
      auto* op = e.as<Add>();
      return emit_binary(IRNodeType::Add, t, emit(op->a), emit(op->b));
    }
    case IRNodeType::Sub: {
      auto* op = e.as<Sub>();
      return emit_binary(IRNodeType::Sub, t, emit(op->a), emit(op->b));
    }
    case IRNodeType::Mul: {
      auto* op = e.as<Mul>();
      return emit_binary(IRNodeType::Mul, t, emit(op->a), emit(op->b));
    }
    case IRNodeType::Div: {
      auto* op = e.as<Div>();
      llvm::Value* a = emit(op->a);
      if (llvm::Value* r = emit_invariant_div_mod(true, t, a, op->b)) return r;
      llvm::Value* r = emit_div_mod(true, t, a, emit(op->b));
      if (vector_mode()) record_lane_division(r, a, op->b);
      return r;
    }
    case IRNodeType::Mod: {
      auto* op = e.as<Mod>();
      llvm::Value* a = emit(op->a);
      if (llvm::Value* r = emit_invariant_div_mod(false, t, a, op->b)) return r;
      return emit_div_mod(false, t, a, emit(op->b));
    }
    case IRNodeType::Min: {
      auto* op = e.as<Min>();
      return emit_binary(IRNodeType::Min, t, emit(op->a), emit(op->b));
    }
    case IRNodeType::Max: {
      auto* op = e.as<Max>();
      return emit_binary(IRNodeType::Max, t, emit(op->a), emit(op->b));
    }
#define STIPPLE_COMPARE(N)                                            \
  case IRNodeType::N: {                                               \
    auto* op = e.as<N>();                                             \
    llvm::Value* x = emit(op->a);                                     \
    return emit_compare(IRNodeType::N, op->a.type(), x, emit(op->b)); \
  }
      STIPPLE_COMPARE(EQ)
      STIPPLE_COMPARE(NE)
      STIPPLE_COMPARE(LT)
      STIPPLE_COMPARE(LE)
      STIPPLE_COMPARE(GT)
      STIPPLE_COMPARE(GE)
#undef STIPPLE_COMPARE
    case IRNodeType::And: return emit_logical(true, e.as<And>()->a, e.as<And>()->b);
    case IRNodeType::Or: return emit_logical(false, e.as<Or>()->a, e.as<Or>()->b);
    case IRNodeType::Not: return b_.CreateNot(emit(e.as<Not>()->a));
    case IRNodeType::Select: return emit_select(e.as<Select>());
    case IRNodeType::Call: return emit_call(e.as<Call>());
    case IRNodeType::Reduce: return emit_reduce(e.as<Reduce>());
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      push_var(op->name, emit(op->value));
      llvm::Value* v = emit(op->body);
      pop_var();
      return v;
    }
    case IRNodeType::LetStmt:
    case IRNodeType::For:
    case IRNodeType::Provide:
    case IRNodeType::Allocate:
    case IRNodeType::Block:
    case IRNodeType::IfThenElse:
    case IRNodeType::Evaluate: break;
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: statement node in expression position");
}

llvm::Value* CodeGen::emit_cast(ScalarType from, ScalarType to, llvm::Value* v) {
  if (from == to) return v;
  if (to == ScalarType::Float16) return emit_round_to_f16(from, v);
  if (from == ScalarType::Float16) from = ScalarType::Float32;  // held as its f32 widening
  if (from == to) return v;
  llvm::Type* ty = shaped(value_type(Type(to)), v);
  if (is_float(to)) {
    if (is_float(from)) return b_.CreateFPCast(v, ty);
    // Integers round to nearest; u8, u16, u32 and Bool are unsigned.
    return is_signed(from) ? b_.CreateSIToFP(v, ty) : b_.CreateUIToFP(v, ty);
  }
  if (to == ScalarType::Bool) {
    // A comparison with zero; NaN is not zero.
    if (is_float(from)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (is_float(from)) {
    // Truncation towards zero, saturating, NaN to 0: exactly fpto[su]i.sat. LLVM 14's x86
    // back end scalarises the vector form (a compare, a branch and a conversion per lane),
    // so vectors clamp first and convert with the plain instruction (vcvttps2dq), which
    // is exact once the value is in range.
    if (v->getType()->isVectorTy()) return emit_saturating_vector_cast(to, v, ty);
    llvm::Intrinsic::ID id =
        is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {ty, v->getType()}, {v});
  }
  // Integer to integer wraps: a wider target extends by the source's signedness.
  return is_signed(from) ? b_.CreateSExtOrTrunc(v, ty) : b_.CreateZExtOrTrunc(v, ty);
}

llvm::Value* CodeGen::emit_saturating_vector_cast(ScalarType to, llvm::Value* v, llvm::Type* ty) {
  // The integer type's range as floats of v's type: lo is exact in every float type;
  // hi_f is the largest float not above the type's maximum (2^31 - 128 for i32 from f32),
  // so every float in [lo, hi_f] converts exactly, and anything above hi_f saturates to
  // the maximum itself.
  const double lo = Type(to).min_value(), hi = Type(to).max_value();
  double hi_f = hi;
  if (v->getType()->getScalarType()->isFloatTy()) {
    float f = static_cast<float>(hi);
    if (static_cast<double>(f) > hi) f = std::nextafter(f, 0.0f);
    hi_f = f;
  }
  llvm::Value* lo_v = llvm::ConstantFP::get(v->getType(), lo);
  llvm::Value* hi_v = llvm::ConstantFP::get(v->getType(), hi_f);
  // NaN fails both comparisons and stays NaN here; its lane is replaced by 0 below, so the
  // conversion's poison for it is never selected.
  llvm::Value* clamped = b_.CreateSelect(b_.CreateFCmpOLT(v, lo_v), lo_v, v);
  clamped = b_.CreateSelect(b_.CreateFCmpOGT(clamped, hi_v), hi_v, clamped);
  llvm::Value* r = is_signed(to) ? b_.CreateFPToSI(clamped, ty) : b_.CreateFPToUI(clamped, ty);
  if (hi_f != hi) {
    r = b_.CreateSelect(b_.CreateFCmpOGT(v, hi_v),
                        llvm::ConstantInt::get(ty, static_cast<uint64_t>(hi)), r);
  }
  return b_.CreateSelect(b_.CreateFCmpUNO(v, v), llvm::Constant::getNullValue(ty), r);
}

llvm::Value* CodeGen::emit_binary(IRNodeType op, Type t, llvm::Value* a, llvm::Value* c) {
  const bool fl = t.is_float();
  llvm::Value* a0 = a;
  llvm::Value* c0 = c;
  unify(a, c);
  auto affine = [&](llvm::Value* r) {
    if (vector_mode()) record_lane_stride(r, op, a0, c0);
    return r;
  };
  switch (op) {
    case IRNodeType::Add: return fl ? b_.CreateFAdd(a, c) : affine(b_.CreateAdd(a, c));
    case IRNodeType::Sub: return fl ? b_.CreateFSub(a, c) : affine(b_.CreateSub(a, c));
    case IRNodeType::Mul: return fl ? b_.CreateFMul(a, c) : affine(b_.CreateMul(a, c));
    case IRNodeType::Min: return b_.CreateSelect(emit_compare(IRNodeType::LT, t, a, c), a, c);
    case IRNodeType::Max: return b_.CreateSelect(emit_compare(IRNodeType::GT, t, a, c), a, c);
    default: break;
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: not a binary arithmetic node");
}

llvm::Value* CodeGen::emit_compare(IRNodeType op, Type operand, llvm::Value* a, llvm::Value* c) {
  unify(a, c);
  if (operand.is_float()) {
    switch (op) {
      case IRNodeType::EQ: return b_.CreateFCmpOEQ(a, c);
      case IRNodeType::NE: return b_.CreateFCmpUNE(a, c);
      case IRNodeType::LT: return b_.CreateFCmpOLT(a, c);
      case IRNodeType::LE: return b_.CreateFCmpOLE(a, c);
      case IRNodeType::GT: return b_.CreateFCmpOGT(a, c);
      case IRNodeType::GE: return b_.CreateFCmpOGE(a, c);
      default: break;
    }
  } else {
    const bool s = is_signed(operand.code);
    switch (op) {
      case IRNodeType::EQ: return b_.CreateICmpEQ(a, c);
      case IRNodeType::NE: return b_.CreateICmpNE(a, c);
      case IRNodeType::LT: return s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
      case IRNodeType::LE: return s ? b_.CreateICmpSLE(a, c) : b_.CreateICmpULE(a, c);
      case IRNodeType::GT: return s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c);
      case IRNodeType::GE: return s ? b_.CreateICmpSGE(a, c) : b_.CreateICmpUGE(a, c);
      default: break;
    }
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: not a comparison node");
}

llvm::Value* CodeGen::emit_div_mod(bool is_div, Type t, llvm::Value* a, llvm::Value* c) {
  if (!t.is_float() && is_signed(t.code)) {
    // By a positive power of two, floor division is an arithmetic shift and the Euclidean
    // modulo a mask, for negative dividends too. LLVM cannot see that through the sign
    // fix-ups below (x % 2 on a vector took seven instructions instead of one).
    auto* k = llvm::dyn_cast<llvm::ConstantInt>(c);
    if (auto* v = llvm::dyn_cast<llvm::Constant>(c); !k && v && c->getType()->isVectorTy()) {
      k = llvm::dyn_cast_or_null<llvm::ConstantInt>(v->getSplatValue());
    }
    if (k && k->getValue().isStrictlyPositive() && k->getValue().isPowerOf2()) {
      if (c->getType()->isVectorTy()) a = widen(a);
      llvm::Type* ty = a->getType();
      const llvm::APInt& d = k->getValue();
      return is_div ? b_.CreateAShr(a, llvm::ConstantInt::get(ty, d.logBase2()))
                    : b_.CreateAnd(a, llvm::ConstantInt::get(ty, d - 1));
    }
  }
  if (!t.is_float() && (a->getType()->isVectorTy() || c->getType()->isVectorTy())) {
    auto* k = llvm::dyn_cast<llvm::ConstantInt>(c);
    if (!k || k->isZero() || (is_signed(t.code) && k->isMinusOne())) {
      // Lane by lane: x86 has no vector integer division (LLVM would split it anyway), and
      // LLVM 14 miscompiles the vector form of the safe-divisor select below once constant
      // folding threads the division over a select whose arm has a zero lane (it folds
      // that arm to poison: llvm-project PR 114280).
      a = widen(a);
      c = widen(c);
      llvm::Value* r = llvm::UndefValue::get(shaped(a->getType()->getScalarType(), a));
      for (int i = 0; i < lanes_; ++i) {
        llvm::Value* x = b_.CreateExtractElement(a, static_cast<uint64_t>(i));
        llvm::Value* y = b_.CreateExtractElement(c, static_cast<uint64_t>(i));
        const int saved = lanes_;
        lanes_ = 1;
        llvm::Value* q = emit_div_mod(is_div, t, x, y);
        lanes_ = saved;
        r = b_.CreateInsertElement(r, q, static_cast<uint64_t>(i));
      }
      return r;
    }
    // A uniform constant divisor other than 0 and -1: no special cases, so plain vector
    // code (LLVM turns it into multiplies and shifts).
    a = widen(a);
    c = widen(c);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    if (!is_signed(t.code)) return is_div ? b_.CreateUDiv(a, c) : b_.CreateURem(a, c);
    llvm::Value* q = b_.CreateSDiv(a, c);
    llvm::Value* r = b_.CreateSRem(a, c);
    if (is_div) {
      llvm::Value* adjust =
          b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, c), zero));
      return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
    }
    llvm::Value* abs_c = llvm::ConstantInt::get(a->getType(), k->getValue().abs());
    return b_.CreateSelect(b_.CreateICmpSLT(r, zero), b_.CreateAdd(r, abs_c), r);
  }
  unify(a, c);
  if (t.is_float()) {
    if (is_div) return b_.CreateFDiv(a, c);
    // a - b * floor(a / b), each step rounded in the operand type.
    llvm::Value* q = unary_intrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, c));
    return b_.CreateFSub(a, b_.CreateFMul(c, q));
  }
  llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  llvm::Value* one = llvm::ConstantInt::get(a->getType(), 1);
  llvm::Value* is_zero = b_.CreateICmpEQ(c, zero);
  if (!is_signed(t.code)) {
    // u8 and u16 values are never negative: floor division and Euclidean modulo are the
    // unsigned ones.
    llvm::Value* safe = b_.CreateSelect(is_zero, one, c);
    llvm::Value* r = is_div ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
    return b_.CreateSelect(is_zero, zero, r);
  }
  // i32: divisors 0 and -1 take a side path (x / 0 == 0; INT_MIN / -1 would trap and
  // wraps to INT_MIN instead), so the hardware division never traps.
  llvm::Value* minus_one = llvm::ConstantInt::getSigned(a->getType(), -1);
  llvm::Value* is_minus_one = b_.CreateICmpEQ(c, minus_one);
  llvm::Value* special = b_.CreateOr(is_zero, is_minus_one);
  llvm::Value* safe = b_.CreateSelect(special, one, c);
  llvm::Value* q = b_.CreateSDiv(a, safe);
  llvm::Value* r = b_.CreateSRem(a, safe);
  if (is_div) {
    // Truncated quotient minus one when the remainder and the divisor differ in sign.
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, c), zero));
    llvm::Value* floor_q = b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
    llvm::Value* neg = b_.CreateSub(zero, a);
    return b_.CreateSelect(is_zero, zero, b_.CreateSelect(is_minus_one, neg, floor_q));
  }
  llvm::Value* abs_c = b_.CreateSelect(b_.CreateICmpSLT(c, zero), b_.CreateSub(zero, c), c);
  llvm::Value* euclid = b_.CreateSelect(b_.CreateICmpSLT(r, zero), b_.CreateAdd(r, abs_c), r);
  return b_.CreateSelect(special, zero, euclid);
}

llvm::Value* CodeGen::emit_select(const Select* op) {
  llvm::Value* cond = emit(op->condition);
  const bool cheap = is_cheap(op->true_value) && is_cheap(op->false_value);
  if (cheap || cond->getType()->isVectorTy()) {
    // A per-lane condition runs both sides for every active lane and blends. That is safe:
    // bounds inference gives a func the hull of both sides' reads, whatever the condition
    // (CallWalker in lowering/bounds_inference.cpp), so each side's loads stay inside the
    // func's buffer; input reads clamp to the image; nothing here traps or stores. Masking
    // each side to its own lanes would turn the window loads of an upsampling's
    // select(x % 2 == 0, f(x / 2), g(x / 2)) into gathers.
    llvm::Value* tv = emit(op->true_value);
    llvm::Value* fv = emit(op->false_value);
    if (cond->getType()->isVectorTy() || tv->getType()->isVectorTy() ||
        fv->getType()->isVectorTy()) {
      cond = widen(cond);
      tv = widen(tv);
      fv = widen(fv);
    }
    return b_.CreateSelect(cond, tv, fv);
  }
  // Only the chosen side runs: the other may read out of bounds or be expensive.
  llvm::BasicBlock* t_bb = new_block("select.true");
  llvm::BasicBlock* f_bb = new_block("select.false");
  llvm::BasicBlock* after = new_block("select.end");
  b_.CreateCondBr(cond, t_bb, f_bb);
  b_.SetInsertPoint(t_bb);
  llvm::Value* tv = emit(op->true_value);
  llvm::BasicBlock* t_end = b_.GetInsertBlock();
  b_.SetInsertPoint(f_bb);
  llvm::Value* fv = emit(op->false_value);
  llvm::BasicBlock* f_end = b_.GetInsertBlock();
  // In vector code one side may be uniform and the other not: broadcast at its block's end.
  const bool vec = tv->getType()->isVectorTy() || fv->getType()->isVectorTy();
  b_.SetInsertPoint(t_end);
  if (vec) tv = widen(tv);
  b_.CreateBr(after);
  b_.SetInsertPoint(f_end);
  if (vec) fv = widen(fv);
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
  llvm::PHINode* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, t_end);
  phi->addIncoming(fv, f_end);
  return phi;
}

llvm::Value* CodeGen::emit_logical(bool is_and, const Expr& a, const Expr& c) {
  llvm::Value* x = emit(a);
  const bool cheap = is_cheap(c);
  if (cheap || x->getType()->isVectorTy()) {
    // Per lane, the right side only matters where the left did not decide: run it with
    // just those lanes active.
    llvm::Value* saved_mask = mask_;
    if (!cheap) mask_ = masked_with(x, !is_and);
    llvm::Value* y = emit(c);
    mask_ = saved_mask;
    unify(x, y);
    return is_and ? b_.CreateAnd(x, y) : b_.CreateOr(x, y);
  }
  llvm::BasicBlock* start = b_.GetInsertBlock();
  llvm::BasicBlock* rhs = new_block(is_and ? "and.rhs" : "or.rhs");
  llvm::BasicBlock* after = new_block(is_and ? "and.end" : "or.end");
  if (is_and) {
    b_.CreateCondBr(x, rhs, after);
  } else {
    b_.CreateCondBr(x, after, rhs);
  }
  b_.SetInsertPoint(rhs);
  llvm::Value* y = emit(c);
  llvm::BasicBlock* rhs_end = b_.GetInsertBlock();
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
  llvm::PHINode* phi = b_.CreatePHI(y->getType(), 2);
  phi->addIncoming(llvm::ConstantInt::get(y->getType(), is_and ? 0 : 1), start);
  phi->addIncoming(y, rhs_end);
  return phi;
}

llvm::Value* CodeGen::emit_call(const Call* op) {
  switch (op->call_type) {
    case CallType::Intrinsic: return emit_intrinsic(op);
    case CallType::Input: return emit_input_load(op);
    case CallType::Func: break;
  }
  const BufferInfo& buf = find_buffer(op->name);
  STIPPLE_INTERNAL_CHECK(!buf.is_input, "codegen: func call of input '" + op->name + "'");
  STIPPLE_INTERNAL_CHECK(op->type == Type(buf.type),
                         "codegen: call of '" + op->name + "' with the wrong type");
  std::vector<llvm::Value*> coords;
  for (const Expr& a : op->args) coords.push_back(emit_func_index(a));
  llvm::Value* v = nullptr;
  if (vector_mode()) {
    v = load_lanes(buf, coords);
  } else {
    for (llvm::Value*& c : coords) c = lane0_index(c);
    v = b_.CreateLoad(memory_type(op->type), element_pointer(buf, coords));
  }
  if (op->type.is_f16()) return f16_func_bits_to_f32(v);
  return from_memory(op->type, v);
}

llvm::Value* CodeGen::emit_input_load(const Call* op) {
  const BufferInfo& buf = find_buffer(op->name);
  STIPPLE_INTERNAL_CHECK(buf.is_input && buf.decl, "codegen: '" + op->name + "' is no input");
  STIPPLE_INTERNAL_CHECK(op->type == buf.decl->type,
                         "codegen: read of input '" + op->name + "' with the wrong type");
  STIPPLE_INTERNAL_CHECK(static_cast<int>(op->args.size()) == buf.dims,
                         "codegen: read of input '" + op->name + "' with the wrong arity");
  std::vector<llvm::Value*> coords;
  bool varying = false;
  for (int d = 0; d < buf.dims; ++d) {
    coords.push_back(emit(op->args[d]));
    varying = varying || coords.back()->getType()->isVectorTy();
  }
  // Inside a versioned reduction whose corners were checked (codegen_input_rows.cpp) or a
  // partitioned loop's interior (codegen_loop_partition.cpp): no check.
  if (inside_rows_.count(op)) {
    if (varying && row_stride(buf, coords) != 0) return input_row(buf, op->type, coords);
    return input_inside(buf, op->type, coords);
  }
  if (!varying || row_stride(buf, coords) == 0) {
    return input_with_boundary(buf, op->type, coords);
  }
  // A row of lanes: one plain load when all of it lies inside the image (every vector but
  // those at the left and right edges), per-lane boundary handling otherwise.
  // The other coordinates are the same in every lane: where they are outside the image,
  // a clamp or constant boundary maps them to a row inside it (and the constant replaces
  // the whole vector), so they are mapped once, not checked per vector, and only the
  // lanes' span decides between the plain load and the per-lane path. The mapping does
  // not change along the vector loop and LICM hoists it out: a row read's check is two
  // compares instead of four (blur3x3 at one thread 20% faster, bench/README.md). A
  // mirror's mapping (a remainder and five selects per read) made demosaic's many taps
  // compile 40% slower for no run time, so its rows are still checked.
  std::vector<llvm::Value*> mapped = coords;
  llvm::Value* row_outside = nullptr;
  const bool map_rows = buf.decl->boundary != BoundaryKind::Mirror;
  for (int d = 1; d < buf.dims && map_rows; ++d) {
    mapped[d] =
        boundary_coordinate(buf, d, b_.CreateSExt(coords[d], b_.getInt64Ty()), &row_outside);
  }
  llvm::BasicBlock* fast = new_block("in.row");
  llvm::BasicBlock* edge = new_block("in.edge");
  llvm::BasicBlock* after = new_block("in.end");
  b_.CreateCondBr(map_rows ? lanes_inside(buf, coords) : row_inside(buf, coords), fast, edge);
  b_.SetInsertPoint(fast);
  llvm::Value* row = input_row(buf, op->type, mapped);
  if (row_outside) row = b_.CreateSelect(row_outside, widen(boundary_constant(buf, op->type)), row);
  llvm::BasicBlock* fast_end = b_.GetInsertBlock();
  b_.CreateBr(after);
  b_.SetInsertPoint(edge);
  llvm::Value* lanes = input_with_boundary(buf, op->type, coords);
  llvm::BasicBlock* edge_end = b_.GetInsertBlock();
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
  llvm::PHINode* phi = b_.CreatePHI(row->getType(), 2);
  phi->addIncoming(row, fast_end);
  phi->addIncoming(lanes, edge_end);
  return phi;
}

llvm::Value* CodeGen::input_row(const BufferInfo& buf, Type type,
                                const std::vector<llvm::Value*>& coords) {
  std::vector<llvm::Value*> at;
  at.push_back(b_.CreateSExt(b_.CreateExtractElement(coords[0], uint64_t{0}), b_.getInt64Ty()));
  for (int d = 1; d < buf.dims; ++d) at.push_back(b_.CreateSExt(coords[d], b_.getInt64Ty()));
  llvm::Type* et = memory_type(type);
  llvm::Type* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(lanes_));
  const llvm::Align align(bytes_of(type.code));
  const int64_t stride = row_stride(buf, coords);
  llvm::Value* p = element_pointer(buf, at);
  if (buf.dims >= 2 && reduction_depth_ == 0) prefetch_next_row(buf, et, p);
  llvm::Value* row = stride > 1
                         ? strided_row(et, p, stride, align)
                         : b_.CreateAlignedLoad(vt, b_.CreateBitCast(p, vt->getPointerTo()), align);
  return from_memory(type, row);
}

void CodeGen::prefetch_next_row(const BufferInfo& buf, llvm::Type* et, llvm::Value* p) {
  // The same columns one row further on (input rows, and the windows of window_load). A
  // loop over rows that reads a row of the input per iteration and then computes from it
  // (a sliding window's new producer row, then the consumer's row from cache) reads memory
  // in bursts; asking for the next row while this one is read keeps requests in flight
  // across the compute phase, which the hardware prefetchers, following the addresses
  // read, evidently do not: blur3x3 6400x4800 ran 7-25% faster in three rounds
  // (bench/README.md). A prefetch never faults, so its address needs no bounds (past the
  // last row it is a no-op). Prefetches of lines already cached cost an instruction each,
  // which is why reads inside reductions (the taps of a window, mostly cached) issue none.
  llvm::Value* next = b_.CreateGEP(et, p, buf.stride[1], "next.row");
  llvm::Function* prefetch =
      llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::prefetch, {b_.getInt8PtrTy()});
  // Locality 1 (x86 prefetcht2: into L2, not L1): the row is read one row's time later.
  b_.CreateCall(prefetch, {b_.CreateBitCast(next, b_.getInt8PtrTy()), /*read*/ b_.getInt32(0),
                           /*locality*/ b_.getInt32(1), /*data*/ b_.getInt32(1)});
}

llvm::Value* CodeGen::boundary_coordinate(const BufferInfo& buf, int d, llvm::Value* c,
                                          llvm::Value** outside) {
  // Scalar or per lane (vectors): the same instructions on either shape.
  const bool vec = c->getType()->isVectorTy();
  auto k = [&](int64_t v) {
    return llvm::ConstantInt::get(c->getType(), static_cast<uint64_t>(v));
  };
  llvm::Value* zero = k(0);
  llvm::Value* ext = vec ? widen(buf.extent[d]) : buf.extent[d];
  llvm::Value* last = b_.CreateSub(ext, k(1));
  llvm::Value* clamped = b_.CreateSelect(b_.CreateICmpSLT(c, zero), zero,
                                         b_.CreateSelect(b_.CreateICmpSGE(c, ext), last, c));
  switch (buf.decl->boundary) {
    case BoundaryKind::Clamp: return clamped;
    case BoundaryKind::Constant: {
      // Out of range (as unsigned: negative coordinates are huge); the load itself reads
      // the clamped pixel so that it stays in bounds, and the constant replaces it.
      llvm::Value* out = b_.CreateICmpUGE(c, ext);
      if (*outside) unify(*outside, out);
      *outside = *outside ? b_.CreateOr(*outside, out) : out;
      return clamped;
    }
    case BoundaryKind::Mirror: {
      // Reflection about the edge without repeating it, period 2 * (extent - 1);
      // extent 1 always gives 0.
      // Computed on the (uniform) extent, then broadcast.
      llvm::Value* tiny_s = b_.CreateICmpSLE(buf.extent[d], i64(1));
      llvm::Value* period_s = b_.CreateSelect(
          tiny_s, i64(1), b_.CreateMul(b_.CreateSub(buf.extent[d], i64(1)), i64(2)));
      llvm::Value* tiny = vec ? widen(tiny_s) : tiny_s;
      llvm::Value* period = vec ? widen(period_s) : period_s;
      llvm::Value* m = nullptr;
      if (vec) {
        // x86 has no vector integer division: a vector srem becomes one idiv per lane,
        // some 40 cycles each, on every vector that crosses the image's left or right edge
        // (demosaic: three taps of 16 lanes per plane and row). The quotient in double is
        // exact instead: c (an i32 coordinate) and the period are exact doubles, and a
        // quotient that is not an integer lies at least 1 / period from one while its
        // rounding error is below |c / period| * 2^-53 < 1 / period, so floor() gives the
        // integer below it, and c - floor(c / period) * period is the Euclidean remainder.
        llvm::Type* dt = shaped(b_.getDoubleTy(), c);
        llvm::Value* q = b_.CreateFDiv(b_.CreateSIToFP(c, dt), b_.CreateSIToFP(period, dt));
        q = b_.CreateFPToSI(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, q), c->getType());
        m = b_.CreateSub(c, b_.CreateMul(q, period));
      } else {
        m = b_.CreateSRem(c, period);
        m = b_.CreateSelect(b_.CreateICmpSLT(m, zero), b_.CreateAdd(m, period), m);
      }
      llvm::Value* r = b_.CreateSelect(b_.CreateICmpSGE(m, ext), b_.CreateSub(period, m), m);
      r = b_.CreateSelect(tiny, zero, r);
      return b_.CreateSelect(b_.CreateICmpULT(c, ext), c, r);
    }
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: unknown boundary kind");
}

llvm::Value* CodeGen::boundary_constant(const BufferInfo& buf, Type type) {
  // The declared value cast to the element type, as an f64 cast.
  return emit_cast(ScalarType::Float64, type.code,
                   llvm::ConstantFP::get(b_.getDoubleTy(), buf.decl->boundary_value));
}

llvm::Value* CodeGen::input_inside(const BufferInfo& buf, Type type,
                                   const std::vector<llvm::Value*>& coords_i32) {
  std::vector<llvm::Value*> coords;
  for (llvm::Value* c : coords_i32) coords.push_back(b_.CreateSExt(c, shaped(b_.getInt64Ty(), c)));
  return load_input(buf, type, coords);
}

llvm::Value* CodeGen::load_input(const BufferInfo& buf, Type type,
                                 const std::vector<llvm::Value*>& coords) {
  bool varying = false;
  for (llvm::Value* c : coords) varying = varying || c->getType()->isVectorTy();
  llvm::Type* et = memory_type(type);
  llvm::Value* v = nullptr;
  if (!varying) {
    v = b_.CreateLoad(et, element_pointer(buf, coords));
  } else {
    // Every lane's coordinates are inside the image: a gather needs no mask.
    llvm::Type* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(lanes_));
    v = b_.CreateMaskedGather(
        vt, lane_pointers(buf, coords), llvm::Align(bytes_of(type.code)),
        llvm::Constant::getAllOnesValue(shaped(b_.getInt1Ty(), widen(i32(0)))),
        llvm::Constant::getNullValue(vt));
  }
  return from_memory(type, v);
}

llvm::Value* CodeGen::input_with_boundary(const BufferInfo& buf, Type type,
                                          const std::vector<llvm::Value*>& coords_i32) {
  llvm::Value* outside = nullptr;
  std::vector<llvm::Value*> coords;
  for (int d = 0; d < buf.dims; ++d) {
    llvm::Value* c = coords_i32[d];
    c = b_.CreateSExt(c, shaped(b_.getInt64Ty(), c));
    coords.push_back(boundary_coordinate(buf, d, c, &outside));
  }
  llvm::Value* v = load_input(buf, type, coords);
  if (!outside) return v;  // not a constant boundary, or a zero-dimensional input
  llvm::Value* k = boundary_constant(buf, type);
  unify(outside, v);
  unify(k, v);
  return b_.CreateSelect(outside, k, v);
}

llvm::Value* CodeGen::emit_intrinsic(const Call* op) {
  const Type t = op->type;
  llvm::Value* x = emit(op->args[0]);
  switch (op->intrinsic) {
    case Intrinsic::Abs:
      if (t.is_float()) return unary_intrinsic(llvm::Intrinsic::fabs, x);
      if (t.is_unsigned()) return x;
      // abs(INT_MIN) wraps to itself: llvm.abs with INT_MIN not poison.
      return b_.CreateIntrinsic(llvm::Intrinsic::abs, {x->getType()}, {x, b_.getFalse()});
    case Intrinsic::Floor: return unary_intrinsic(llvm::Intrinsic::floor, x);
    case Intrinsic::Ceil: return unary_intrinsic(llvm::Intrinsic::ceil, x);
    case Intrinsic::Round: return unary_intrinsic(llvm::Intrinsic::roundeven, x);
    case Intrinsic::Sqrt: return unary_intrinsic(llvm::Intrinsic::sqrt, x);
    case Intrinsic::Exp:
      if (t == Float32()) return emit_expf(x);
      return libm(kStippleExp, x, nullptr);
    case Intrinsic::Log: return libm(kStippleLog, x, nullptr);
    case Intrinsic::Sin: return libm(kStippleSin, x, nullptr);
    case Intrinsic::Cos: return libm(kStippleCos, x, nullptr);
    case Intrinsic::Pow: {
      llvm::Value* y = emit(op->args[1]);
      unify(x, y);
      return libm(kStipplePow, x, y);
    }
    case Intrinsic::Tan: return libm(kStippleTan, x, nullptr);
    case Intrinsic::Tanh: return libm(kStippleTanh, x, nullptr);
    case Intrinsic::Atan2:
    case Intrinsic::Hypot: {
      llvm::Value* y = emit(op->args[1]);
      unify(x, y);
      return libm(op->intrinsic == Intrinsic::Atan2 ? kStippleAtan2 : kStippleHypot, x, y);
    }
    case Intrinsic::Fma: {
      llvm::Value* y = emit(op->args[1]);
      return emit_fma(x, y, emit(op->args[2]));
    }
    case Intrinsic::None: break;
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: intrinsic call without an intrinsic");
}

llvm::Value* CodeGen::emit_fma(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  // llvm.fma is always fused (one rounding), unlike llvm.fmuladd; without FMA hardware
  // it becomes the C library's fma/fmaf, which is exact too.
  unify(a, b);
  unify(a, c);
  unify(b, c);
  return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
}

void CodeGen::emit_reduction_loops(const std::vector<const Reduce*>& group, llvm::Value** empty,
                                   const std::function<void()>& per_point) {
  const std::vector<ReductionVariable>& domain = group[0]->domain;
  const size_t n = domain.size();
  std::vector<llvm::Value*> lo(n), hi(n);
  llvm::Value* nonempty = b_.getTrue();
  for (size_t v = 0; v < n; ++v) {
    lo[v] = emit(domain[v].min);
    hi[v] = emit(domain[v].max);
    nonempty = b_.CreateAnd(nonempty, b_.CreateICmpSLE(lo[v], hi[v]));
  }
  *empty = b_.CreateNot(nonempty);
  llvm::BasicBlock* loops = new_block("reduce");
  llvm::BasicBlock* after = new_block("reduce.end");
  b_.CreateCondBr(nonempty, loops, after);
  b_.SetInsertPoint(loops);
  // The last variable is the outermost loop, the first the innermost.
  std::function<void(size_t)> nest = [&](size_t level) {
    if (level == 0) {
      per_point();
      return;
    }
    emit_inclusive_loop(domain[level - 1].name, lo[level - 1], hi[level - 1], [&](llvm::Value* i) {
      for (const Reduce* op : group) push_var(op->domain[level - 1].name, i);
      nest(level - 1);
      for (size_t k = 0; k < group.size(); ++k) pop_var();
    });
  };
  nest(n);
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
}

llvm::Value* CodeGen::emit_reduce(const Reduce* op) {
  if (auto fused = fused_values_.find(op); fused != fused_values_.end()) return fused->second;
  ++reduction_depth_;
  llvm::Value* v = emit_reduce_body(op);
  --reduction_depth_;
  return v;
}

llvm::Value* CodeGen::emit_reduce_body(const Reduce* op) {
  const Type t = op->body.type();
  // In vector code the accumulators are vectors (one reduction per lane); the domain is
  // uniform (VectorizabilityCheck), so the loops are shared by all lanes.
  llvm::Type* ty = shaped(value_type(t), widen(i32(0)));
  llvm::Value* empty = nullptr;
  switch (op->op) {
    case ReduceOp::Sum:
    case ReduceOp::FusedSum:
    case ReduceOp::Prod:
    case ReduceOp::Minimum:
    case ReduceOp::Maximum: return emit_folds({op})[0];
    case ReduceOp::ArgMin: {
      llvm::Type* i64t = shaped(b_.getInt64Ty(), widen(i32(0)));
      llvm::AllocaInst* best = entry_alloca(ty, "best");
      llvm::AllocaInst* best_index = entry_alloca(i64t, "best_index");
      llvm::AllocaInst* index = entry_alloca(b_.getInt64Ty(), "index");
      b_.CreateStore(widen(constant_of(t, 0)), best);
      b_.CreateStore(widen(i64(-1)), best_index);
      b_.CreateStore(i64(0), index);
      emit_reduction_loops({op}, &empty, [&] {
        llvm::Value* v = widen(emit(op->body));
        llvm::Value* bi = b_.CreateLoad(i64t, best_index);
        llvm::Value* bv = b_.CreateLoad(ty, best);
        llvm::Value* i = widen(b_.CreateLoad(b_.getInt64Ty(), index));
        llvm::Value* take = b_.CreateOr(b_.CreateICmpSLT(bi, widen(i64(0))),
                                        emit_compare(IRNodeType::LT, t, v, bv));
        b_.CreateStore(b_.CreateSelect(take, v, bv), best);
        b_.CreateStore(b_.CreateSelect(take, i, bi), best_index);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), index), i64(1)), index);
      });
      llvm::Value* r = b_.CreateLoad(i64t, best_index);
      return b_.CreateTrunc(r, shaped(b_.getInt32Ty(), r));
    }
    case ReduceOp::Median:
      if (vector_mode()) {
        return versioned_for_input_rows(
            {op}, [&] { return std::vector<llvm::Value*>{emit_vector_median(op)}; })[0];
      }
      break;
  }
  // Median: the values as doubles (exact for every type) in a scratch array, on the stack
  // up to kStackValues, else on the heap; the runtime picks the lower median.
  constexpr int64_t kStackValues = 64;
  llvm::Type* f64 = b_.getDoubleTy();
  llvm::Type* f64p = f64->getPointerTo();
  llvm::AllocaInst* stack = entry_alloca(f64, "median.stack", i32(kStackValues));
  llvm::AllocaInst* scratch = entry_alloca(f64p, "median.scratch");
  llvm::AllocaInst* capacity = entry_alloca(b_.getInt64Ty(), "median.capacity");
  llvm::AllocaInst* count = entry_alloca(b_.getInt64Ty(), "median.count");
  llvm::AllocaInst* result = entry_alloca(ty, "median");
  b_.CreateStore(constant_of(t, 0), result);
  b_.CreateStore(i64(0), count);
  // The number of points, for the scratch size (non-positive when the domain is empty).
  llvm::Value* points = i64(1);
  for (const ReductionVariable& rv : op->domain) {
    llvm::Value* lo = b_.CreateSExt(emit(rv.min), b_.getInt64Ty());
    llvm::Value* hi = b_.CreateSExt(emit(rv.max), b_.getInt64Ty());
    llvm::Value* e = b_.CreateAdd(b_.CreateSub(hi, lo), i64(1));
    points = b_.CreateMul(points, b_.CreateSelect(b_.CreateICmpSGT(e, i64(0)), e, i64(0)));
  }
  llvm::Value* big = b_.CreateICmpSGT(points, i64(kStackValues));
  llvm::BasicBlock* heap_bb = new_block("median.heap");
  llvm::BasicBlock* oom_bb = new_block("median.oom");
  llvm::BasicBlock* ready = new_block("median.ready");
  b_.CreateStore(stack, scratch);
  b_.CreateStore(i64(kStackValues), capacity);
  b_.CreateCondBr(big, heap_bb, ready);
  b_.SetInsertPoint(heap_bb);
  llvm::Value* mem = b_.CreateCall(runtime("stipple_malloc"), {b_.CreateMul(points, i64(8))});
  llvm::BasicBlock* heap_ok = new_block("median.heap.ok");
  b_.CreateCondBr(b_.CreateIsNotNull(mem), heap_ok, oom_bb);
  b_.SetInsertPoint(heap_ok);
  b_.CreateStore(b_.CreateBitCast(mem, f64p), scratch);
  b_.CreateStore(points, capacity);
  b_.CreateBr(ready);
  b_.SetInsertPoint(oom_bb);  // keep the stack scratch (stores past it are dropped)
  set_status(kErrorOutOfMemory);
  b_.CreateBr(ready);
  b_.SetInsertPoint(ready);
  emit_reduction_loops({op}, &empty, [&] {
    llvm::Value* v = emit(op->body);
    llvm::Value* i = b_.CreateLoad(b_.getInt64Ty(), count);
    llvm::BasicBlock* store_bb = new_block("median.store");
    llvm::BasicBlock* next_bb = new_block("median.next");
    b_.CreateCondBr(b_.CreateICmpSLT(i, b_.CreateLoad(b_.getInt64Ty(), capacity)), store_bb,
                    next_bb);
    b_.SetInsertPoint(store_bb);
    llvm::Value* slot = b_.CreateInBoundsGEP(f64, b_.CreateLoad(f64p, scratch), i);
    b_.CreateStore(emit_cast(t.code, ScalarType::Float64, v), slot);
    b_.CreateBr(next_bb);
    b_.SetInsertPoint(next_bb);
    b_.CreateStore(b_.CreateAdd(i, i64(1)), count);
  });
  llvm::BasicBlock* pick = new_block("median.pick");
  llvm::BasicBlock* done = new_block("median.done");
  b_.CreateCondBr(empty, done, pick);
  b_.SetInsertPoint(pick);
  llvm::Value* used = b_.CreateLoad(b_.getInt64Ty(), count);
  llvm::Value* cap = b_.CreateLoad(b_.getInt64Ty(), capacity);
  used = b_.CreateSelect(b_.CreateICmpSLT(used, cap), used, cap);
  llvm::Value* buf = b_.CreateLoad(f64p, scratch);
  llvm::Value* m = b_.CreateCall(runtime("stipple_median_f64"), {buf, used});
  b_.CreateStore(emit_cast(ScalarType::Float64, t.code, m), result);
  llvm::BasicBlock* free_bb = new_block("median.free");
  b_.CreateCondBr(b_.CreateICmpNE(buf, stack), free_bb, done);
  b_.SetInsertPoint(free_bb);
  b_.CreateCall(runtime("stipple_free"), {b_.CreateBitCast(buf, b_.getInt8PtrTy())});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return b_.CreateLoad(ty, result);
}

}  // namespace stipple::codegen
