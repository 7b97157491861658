// Vector code for Vectorized loops. A Vectorized For of constant extent W becomes one
// iteration whose loop variable is the vector <min, min + 1, ..., min + W - 1>; every value
// computed from it is a <W x T> vector, and values that do not depend on it stay scalars
// (broadcast where they meet vectors). The lane operations are LLVM's element-wise ones, so
// each lane computes exactly what the scalar loop computes for its iteration.
//
// Control flow: an `if` whose condition differs between lanes runs its body under a mask
// (the active lanes): stores and func loads are masked, so a lane outside the guard never
// touches memory (its values are computed but never stored). When every lane is active
// the body also has an unmasked copy, so full vectors (all but the tail) run plain loads
// and stores. Selects with per-lane conditions evaluate both sides under complementary
// masks and blend; && and || likewise.
//
// Memory: an access whose dimension-0 coordinate advances by exactly one per lane (known
// from how the coordinate was computed: the loop variable plus uniform offsets) and whose
// other coordinates are uniform is one vector load or store; anything else is a gather or
// scatter (LLVM's masked.scatter stores lanes in order, so the last lane wins as the serial
// loop's last iteration would). Input reads take a fast path when the whole vector is
// inside the image (one load, no boundary arithmetic) and clamp per lane otherwise.
//
// Bodies that this cannot express run as scalar loops instead: loops or reductions whose
// bounds differ between lanes, allocations, parallel loops and median (whose scratch
// array and runtime call are per point).
#include <llvm/IR/Intrinsics.h>

#include <set>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::codegen {

namespace {

/// Decides whether a Vectorized loop's body can be vector code: tracks which names vary
/// between lanes (the loop variable and lets computed from varying values) and rejects
/// the constructs listed at the top of this file.
class VectorizabilityCheck : public IRVisitor {
 public:
  explicit VectorizabilityCheck(const std::string& lane_var) { varying_.insert(lane_var); }
  bool ok() const { return ok_; }

  void visit(const Variable* op) override {
    if (varying_.count(op->name)) saw_varying_ = true;
  }
  void visit(const Reduce* op) override {
    if (op->op == ReduceOp::Median) ok_ = false;
    for (const ReductionVariable& rv : op->domain) {
      if (varies(rv.min) || varies(rv.max)) ok_ = false;
    }
    // The accumulators are vectors, so a reduction counts as varying.
    saw_varying_ = true;
    with_shadowed(op->domain, [&] { op->body.accept(this); });
  }
  void visit(const Let* op) override {
    const bool v = varies(op->value);
    bind(op->name, v, [&] { op->body.accept(this); });
  }
  void visit(const LetStmt* op) override {
    const bool v = varies(op->value);
    bind(op->name, v, [&] { op->body.accept(this); });
  }
  void visit(const For* op) override {
    if (op->for_type == ForType::Parallel || varies(op->min) || varies(op->extent)) ok_ = false;
    bind(op->name, false, [&] { op->body.accept(this); });
  }
  void visit(const Allocate*) override { ok_ = false; }

 private:
  bool varies(const Expr& e) {
    const bool saved = saw_varying_;
    saw_varying_ = false;
    e.accept(this);
    const bool v = saw_varying_;
    saw_varying_ = saved || v;
    return v;
  }
  template <typename F>
  void bind(const std::string& name, bool is_varying, F&& body) {
    const bool was = varying_.count(name) > 0;
    if (is_varying) {
      varying_.insert(name);
    } else {
      varying_.erase(name);
    }
    body();
    if (was) {
      varying_.insert(name);
    } else {
      varying_.erase(name);
    }
  }
  template <typename F>
  void with_shadowed(const std::vector<ReductionVariable>& domain, F&& body) {
    std::set<std::string> saved = varying_;
    for (const ReductionVariable& rv : domain) varying_.erase(rv.name);
    body();
    varying_ = std::move(saved);
  }

  std::set<std::string> varying_;
  bool saw_varying_ = false;
  bool ok_ = true;
};

}  // namespace

llvm::Value* CodeGen::widen(llvm::Value* v) {
  if (lanes_ == 1 || v->getType()->isVectorTy()) return v;
  return b_.CreateVectorSplat(static_cast<unsigned>(lanes_), v);
}

void CodeGen::unify(llvm::Value*& a, llvm::Value*& c) {
  if (a->getType()->isVectorTy() == c->getType()->isVectorTy()) return;
  a = widen(a);
  c = widen(c);
}

llvm::Type* CodeGen::shaped(llvm::Type* scalar, const llvm::Value* like) const {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType())) {
    return llvm::FixedVectorType::get(scalar, vt->getNumElements());
  }
  return scalar;
}

std::optional<int64_t> CodeGen::lane_stride(llvm::Value* v) const {
  if (!v->getType()->isVectorTy()) return 0;
  auto it = lane_strides_.find(v);
  if (it == lane_strides_.end()) return std::nullopt;
  return it->second;
}

void CodeGen::record_lane_stride(llvm::Value* result, IRNodeType op, llvm::Value* a,
                                 llvm::Value* c) {
  if (!result->getType()->isVectorTy() || !result->getType()->isIntOrIntVectorTy(32)) return;
  std::optional<int64_t> sa = lane_stride(a), sc = lane_stride(c);
  std::optional<int64_t> s;
  switch (op) {
    case IRNodeType::Add:
      if (sa && sc) s = *sa + *sc;
      break;
    case IRNodeType::Sub:
      if (sa && sc) s = *sa - *sc;
      break;
    case IRNodeType::Mul:
      // Scaling by a uniform constant.
      if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(c); k && sa) s = *sa * k->getSExtValue();
      if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(a); k && sc) s = *sc * k->getSExtValue();
      break;
    default: break;
  }
  // Strides stay small: a coordinate never moves by more than 2^20 per lane in practice,
  // and bounding it keeps lane0 + s * lane free of overflow in the analysis.
  if (s && *s > -(int64_t{1} << 20) && *s < (int64_t{1} << 20)) lane_strides_[result] = *s;
}

llvm::Value* CodeGen::masked_with(llvm::Value* cond, bool negate) {
  cond = widen(cond);
  if (negate) cond = b_.CreateNot(cond);
  return mask_ ? b_.CreateAnd(mask_, cond) : cond;
}

bool CodeGen::emit_vector_for(const For* op, llvm::Value* min, llvm::Value* extent) {
  auto* w = llvm::dyn_cast<llvm::ConstantInt>(extent);
  if (vector_mode() || !w || w->getSExtValue() < 2 || w->getSExtValue() > 64) return false;
  VectorizabilityCheck check(op->name);
  op->body.accept(&check);
  if (!check.ok()) return false;

  lanes_ = static_cast<int>(w->getSExtValue());
  mask_ = nullptr;
  llvm::Value* base = widen(min);
  llvm::Value* lanes = b_.CreateAdd(base, b_.CreateStepVector(base->getType()));
  lane_strides_[lanes] = 1;
  push_var(op->name, lanes);
  emit(op->body);
  pop_var();
  lanes_ = 1;
  mask_ = nullptr;
  lane_strides_.clear();
  return true;
}

llvm::Value* CodeGen::lane_pointers(const BufferInfo& buf,
                                    const std::vector<llvm::Value*>& coords) {
  llvm::Value* index = widen(i64(0));
  for (int d = 0; d < buf.dims; ++d) {
    llvm::Value* c = widen(coords[d]);
    if (!c->getType()->isIntOrIntVectorTy(64)) c = b_.CreateSExt(c, shaped(b_.getInt64Ty(), c));
    llvm::Value* m = buf.is_input ? i64(0) : buf.min[d];
    llvm::Value* term = b_.CreateMul(b_.CreateSub(c, widen(m)), widen(buf.stride[d]));
    index = b_.CreateAdd(index, term);
  }
  llvm::Type* et = memory_type(Type(buf.type));
  llvm::Value* base = b_.CreateBitCast(buf.host, et->getPointerTo());
  return b_.CreateInBoundsGEP(et, base, index);
}

bool CodeGen::dense_lanes(const std::vector<llvm::Value*>& coords) const {
  if (coords.empty()) return false;
  for (size_t d = 1; d < coords.size(); ++d) {
    if (coords[d]->getType()->isVectorTy()) return false;
  }
  std::optional<int64_t> s = lane_stride(coords[0]);
  return s && *s == 1;
}

llvm::Value* CodeGen::load_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) {
  llvm::Type* et = memory_type(Type(buf.type));
  const llvm::Align align(static_cast<uint64_t>(bytes_of(buf.type)));
  bool uniform = true;
  for (llvm::Value* c : coords) uniform = uniform && !c->getType()->isVectorTy();
  if (uniform && !mask_) {
    std::vector<llvm::Value*> c64;
    for (llvm::Value* c : coords) c64.push_back(b_.CreateSExt(c, b_.getInt64Ty()));
    return b_.CreateLoad(et, element_pointer(buf, c64));
  }
  llvm::Type* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(lanes_));
  // Inactive lanes read zero (not poison): their values may reach a mask reduction.
  llvm::Value* zero = llvm::Constant::getNullValue(vt);
  if (dense_lanes(coords)) {
    std::vector<llvm::Value*> lane0;
    for (size_t d = 0; d < coords.size(); ++d) {
      llvm::Value* c = coords[d];
      if (c->getType()->isVectorTy()) c = b_.CreateExtractElement(c, uint64_t{0});
      lane0.push_back(b_.CreateSExt(c, b_.getInt64Ty()));
    }
    llvm::Value* p = b_.CreateBitCast(element_pointer(buf, lane0), vt->getPointerTo());
    if (mask_) return b_.CreateMaskedLoad(vt, p, align, mask_, zero);
    return b_.CreateAlignedLoad(vt, p, align);
  }
  llvm::Value* all = llvm::Constant::getAllOnesValue(shaped(b_.getInt1Ty(), zero));
  return b_.CreateMaskedGather(vt, lane_pointers(buf, coords), align, mask_ ? mask_ : all, zero);
}

void CodeGen::store_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords,
                          llvm::Value* value) {
  const llvm::Align align(static_cast<uint64_t>(bytes_of(buf.type)));
  bool uniform = !value->getType()->isVectorTy();
  for (llvm::Value* c : coords) uniform = uniform && !c->getType()->isVectorTy();
  if (uniform && !mask_) {
    std::vector<llvm::Value*> c64;
    for (llvm::Value* c : coords) c64.push_back(b_.CreateSExt(c, b_.getInt64Ty()));
    b_.CreateStore(value, element_pointer(buf, c64));
    return;
  }
  value = widen(value);
  if (dense_lanes(coords)) {
    std::vector<llvm::Value*> lane0;
    for (llvm::Value* c : coords) {
      if (c->getType()->isVectorTy()) c = b_.CreateExtractElement(c, uint64_t{0});
      lane0.push_back(b_.CreateSExt(c, b_.getInt64Ty()));
    }
    llvm::Value* p =
        b_.CreateBitCast(element_pointer(buf, lane0), value->getType()->getPointerTo());
    if (mask_) {
      b_.CreateMaskedStore(value, p, align, mask_);
    } else {
      b_.CreateAlignedStore(value, p, align);
    }
    return;
  }
  llvm::Value* all = llvm::Constant::getAllOnesValue(shaped(b_.getInt1Ty(), value));
  b_.CreateMaskedScatter(value, lane_pointers(buf, coords), align, mask_ ? mask_ : all);
}

void CodeGen::emit_vector_if(const IfThenElse* op, llvm::Value* cond) {
  llvm::Value* saved_mask = mask_;
  auto run_masked = [&](llvm::Value* m, const Stmt& body, bool fast_path) {
    llvm::BasicBlock* after = new_block("vif.end");
    llvm::BasicBlock* some = new_block("vif.some");
    if (fast_path) {
      // Every lane active: an unmasked copy of the body (full vectors take this path).
      llvm::BasicBlock* full = new_block("vif.all");
      llvm::BasicBlock* partial = new_block("vif.partial");
      b_.CreateCondBr(b_.CreateAndReduce(m), full, partial);
      b_.SetInsertPoint(full);
      mask_ = nullptr;
      emit(body);
      b_.CreateBr(after);
      b_.SetInsertPoint(partial);
    }
    b_.CreateCondBr(b_.CreateOrReduce(m), some, after);
    b_.SetInsertPoint(some);
    mask_ = m;
    emit(body);
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
    mask_ = saved_mask;
  };
  llvm::Value* m_then = masked_with(cond, false);
  llvm::Value* m_else = op->else_case.defined() ? masked_with(cond, true) : nullptr;
  run_masked(m_then, op->then_case, saved_mask == nullptr);
  if (m_else) run_masked(m_else, op->else_case, false);
}

}  // namespace stipple::codegen
