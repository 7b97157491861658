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
// and stores. Selects with per-lane conditions run both sides for every active lane and
// blend (emit_select says why that is safe); && and || run the right side under the
// lanes it still decides.
//
// Memory: an access whose dimension-0 coordinate advances by exactly one per lane (known
// from how the coordinate was computed: the loop variable plus uniform offsets) and whose
// other coordinates are uniform is one vector load or store; anything else is a gather or
// scatter (LLVM's masked.scatter stores lanes in order, so the last lane wins as the serial
// loop's last iteration would). Input reads take a fast path when the whole vector is
// inside the image (one load, no boundary arithmetic) and clamp per lane otherwise.
//
// Bodies that this cannot express run as scalar loops instead: loops or reductions whose
// bounds differ between lanes, allocations, parallel loops, and medians over more than
// 64 points or with non-constant bounds. A median in vector code is a sorting network
// (Batcher's odd-even merge sort, pruned by LLVM to the comparators its middle output
// needs) on integer keys that order floats as median_order.h does; for floats, a network
// over the values compared as floats runs first and gives way to the keys' network only
// for vectors where that could differ (emit_vector_median).
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::codegen {

namespace {

constexpr int64_t kMaxVectorMedianPoints = 64;
// A guarded vector body gets an unmasked copy for full vectors up to this many LLVM
// instructions (see emit_vector_if).
constexpr unsigned kMaxDuplicatedInstructions = 2000;

/// The number of points of a median with constant bounds (at most kMaxVectorMedianPoints),
/// else nullopt.
std::optional<int64_t> vector_median_points(const Reduce* op) {
  int64_t n = 1;
  for (const ReductionVariable& rv : op->domain) {
    const IntImm* lo = rv.min.as<IntImm>();
    const IntImm* hi = rv.max.as<IntImm>();
    if (!lo || !hi) return std::nullopt;
    n *= std::max<int64_t>(hi->value - lo->value + 1, 0);
    if (n > kMaxVectorMedianPoints) return std::nullopt;
  }
  return n;
}

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
    // A median is a selection network over its points, so it needs constant bounds and at
    // most kMaxVectorMedianPoints points.
    if (op->op == ReduceOp::Median && !vector_median_points(op)) ok_ = false;
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
  // n / s plus or minus a uniform value stays n / s shifted.
  if (op == IRNodeType::Add || op == IRNodeType::Sub) {
    auto a_div = lane_divisions_.find(a), c_div = lane_divisions_.find(c);
    if (a_div != lane_divisions_.end() && sc && *sc == 0) {
      lane_divisions_[result] = a_div->second;
    } else if (op == IRNodeType::Add && c_div != lane_divisions_.end() && sa && *sa == 0) {
      lane_divisions_[result] = c_div->second;
    }
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
  lane_divisions_.clear();
  index_spine_.clear();
  return true;
}

llvm::Value* CodeGen::lane_pointers(const BufferInfo& buf,
                                    const std::vector<llvm::Value*>& coords) {
  // The uniform coordinates give one scalar base pointer, the varying ones a vector of
  // offsets from it: i32 offsets where every element's offset fits (buf.narrow_offsets),
  // so that a gather of 16 lanes is one vpgatherdd-class instruction over i32 arithmetic,
  // not two of 8 lanes each over i64 arithmetic (Halide's 32-bit buffer offsets). For
  // lanes that read inside the buffer each partial sum is the difference of two element
  // offsets, so it cannot wrap; inactive lanes may wrap, and are not read.
  llvm::Type* et = memory_type(Type(buf.type));
  llvm::Value* uniform = i64(0);
  llvm::Value* varying = nullptr;
  for (int d = 0; d < buf.dims; ++d) {
    llvm::Value* c = coords[d];
    llvm::Value* m = buf.is_input ? i64(0) : buf.min[d];
    if (!c->getType()->isVectorTy()) {
      if (!c->getType()->isIntegerTy(64)) c = lane0_index(c);
      uniform = b_.CreateAdd(uniform, b_.CreateMul(b_.CreateSub(c, m), buf.stride[d]));
      continue;
    }
    llvm::Value* stride = buf.stride[d];
    if (buf.narrow_offsets && c->getType()->isIntOrIntVectorTy(32)) {
      m = b_.CreateTrunc(m, b_.getInt32Ty());
      stride = b_.CreateTrunc(stride, b_.getInt32Ty());
    } else if (!c->getType()->isIntOrIntVectorTy(64)) {
      c = b_.CreateSExt(c, shaped(b_.getInt64Ty(), c));
    }
    llvm::Value* term = b_.CreateMul(b_.CreateSub(c, widen(m)), widen(stride));
    if (varying && varying->getType() != term->getType()) {
      // One dimension's coordinates arrived as i64: the sum is i64.
      if (varying->getType()->isIntOrIntVectorTy(32)) {
        varying = b_.CreateSExt(varying, term->getType());
      } else {
        term = b_.CreateSExt(term, varying->getType());
      }
    }
    varying = varying ? b_.CreateAdd(varying, term) : term;
  }
  // A plain GEP for the base: with no lane active its coordinates need not be inside.
  llvm::Value* base = b_.CreateGEP(et, b_.CreateBitCast(buf.host, et->getPointerTo()), uniform);
  return b_.CreateGEP(et, base, varying ? varying : widen(i64(0)));
}

bool CodeGen::dense_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) const {
  if (coords.empty() || buf.inner_stride != 1) return false;
  for (size_t d = 1; d < coords.size(); ++d) {
    if (coords[d]->getType()->isVectorTy()) return false;
  }
  std::optional<int64_t> s = lane_stride(coords[0]);
  return s && *s == 1;
}

int64_t CodeGen::row_stride(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) const {
  if (coords.empty() || !coords[0]->getType()->isVectorTy()) return 0;
  for (size_t d = 1; d < coords.size(); ++d) {
    if (coords[d]->getType()->isVectorTy()) return 0;
  }
  std::optional<int64_t> step = lane_stride(coords[0]);
  if (!step || *step < 1 || *step > kMaxRowStride) return 0;
  const int64_t s = *step * buf.inner_stride;
  if (s > kMaxRowStride) return 0;
  return s;
}

llvm::Value* CodeGen::strided_row(llvm::Type* et, llvm::Value* p, int64_t stride, llvm::Align align,
                                  llvm::Value* mask) {
  // Pieces of at most kMaxRowSpan elements each, joined: a 64-lane row at stride 4 (a
  // perforated stage vectorised four registers wide, for four independent chains of
  // adds) is four loads of 64 elements and their shuffles, not one of 256 that LLVM's
  // x86 lowering splits badly, nor a gather.
  const int piece = static_cast<int>(std::max<int64_t>(kMaxRowSpan / stride, 1));
  std::vector<llvm::Value*> pieces;
  for (int first = 0; first < lanes_; first += piece) {
    const int n = std::min(piece, lanes_ - first);
    const unsigned span = static_cast<unsigned>((n - 1) * stride + 1);
    const unsigned wide = static_cast<unsigned>(n * stride);
    llvm::Type* wt = llvm::FixedVectorType::get(et, wide);
    llvm::Value* wide_mask;
    if (mask) {
      // Under a mask only the elements of active lanes are read (lane l's element l * s
      // takes lane l's bit, the others none), so an inactive lane touches no memory and
      // reads zero, as a masked gather's would: a tail vector costs a few more shuffles
      // instead of a gather per lane (a perforated stage's last vector of each row).
      std::vector<int> spread;
      for (unsigned i = 0; i < wide; ++i) {
        spread.push_back(i % stride == 0 && i < span ? first + static_cast<int>(i / stride)
                                                     : lanes_);
      }
      llvm::Value* none = llvm::Constant::getNullValue(mask->getType());
      wide_mask = b_.CreateShuffleVector(mask, none, spread);
    } else {
      std::vector<llvm::Constant*> bits;
      for (unsigned i = 0; i < wide; ++i) bits.push_back(b_.getInt1(i < span));
      wide_mask = llvm::ConstantVector::get(bits);
    }
    llvm::Value* at = b_.CreateConstGEP1_64(et, p, static_cast<uint64_t>(first * stride));
    llvm::Value* all = b_.CreateMaskedLoad(wt, b_.CreateBitCast(at, wt->getPointerTo()), align,
                                           wide_mask, llvm::Constant::getNullValue(wt));
    std::vector<int> pick;
    for (int i = 0; i < n; ++i) pick.push_back(static_cast<int>(i * stride));
    pieces.push_back(b_.CreateShuffleVector(all, pick, "strided.row"));
  }
  return pieces.size() == 1 ? pieces[0] : llvm::concatenateVectors(b_, pieces);
}

void CodeGen::record_lane_division(llvm::Value* result, llvm::Value* numerator,
                                   const Expr& divisor) {
  const IntImm* k = divisor.as<IntImm>();
  if (!k || k->value < 2 || k->value > kMaxLaneDivisor || !result->getType()->isVectorTy()) return;
  std::optional<int64_t> s = lane_stride(numerator);
  if (s && *s == 1) lane_divisions_[result] = {numerator, k->value};
}

llvm::Value* CodeGen::phase_terms(llvm::Value* v, int64_t s) {
  // Lane 0 of v (a scalar, or a vector whose lanes are lane 0's plus constants) up to
  // multiples of s: the adds and subtractions are followed, and a product by a constant
  // multiple of s (or a shift by at least log2(s)) is 0. Anything else is lane 0 itself.
  const uint64_t m = static_cast<uint64_t>(s);
  if (v->getType()->isVectorTy()) {
    if (llvm::Value* sp = llvm::getSplatValue(v)) return phase_terms(sp, s);
    if (auto* k = llvm::dyn_cast<llvm::Constant>(v)) {
      if (llvm::Constant* e = k->getAggregateElement(0u)) return e;
    }
  }
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (!bin) return v->getType()->isVectorTy() ? b_.CreateExtractElement(v, uint64_t{0}) : v;
  llvm::Value* a = bin->getOperand(0);
  llvm::Value* c = bin->getOperand(1);
  auto constant = [](llvm::Value* x) -> std::optional<uint64_t> {
    if (x->getType()->isVectorTy()) x = llvm::getSplatValue(x);
    auto* k = llvm::dyn_cast_or_null<llvm::ConstantInt>(x);
    if (!k) return std::nullopt;
    return k->getZExtValue();
  };
  llvm::Value* zero = llvm::ConstantInt::get(v->getType()->getScalarType(), 0);
  switch (bin->getOpcode()) {
    case llvm::Instruction::Add: return b_.CreateAdd(phase_terms(a, s), phase_terms(c, s));
    case llvm::Instruction::Sub: return b_.CreateSub(phase_terms(a, s), phase_terms(c, s));
    case llvm::Instruction::Mul:
      if (auto k = constant(c); k && *k % m == 0) return zero;
      if (auto k = constant(a); k && *k % m == 0) return zero;
      return b_.CreateMul(phase_terms(a, s), phase_terms(c, s));
    case llvm::Instruction::Shl:
      if (auto k = constant(c); k && *k < 64 && (uint64_t{1} << *k) % m == 0) return zero;
      break;
    default: break;
  }
  return v->getType()->isVectorTy() ? b_.CreateExtractElement(v, uint64_t{0}) : v;
}

llvm::Value* CodeGen::lane0_pointer(const BufferInfo& buf,
                                    const std::vector<llvm::Value*>& coords) {
  std::vector<llvm::Value*> first;
  for (llvm::Value* c : coords) first.push_back(lane0_index(c));
  return element_pointer(buf, first);
}

llvm::Value* CodeGen::window_load(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) {
  if (mask_ || coords.empty() || buf.inner_stride != 1) return nullptr;
  auto div = lane_divisions_.find(coords[0]);
  if (div == lane_divisions_.end()) return nullptr;
  for (size_t d = 1; d < coords.size(); ++d) {
    if (coords[d]->getType()->isVectorTy()) return nullptr;
  }
  const int64_t s = div->second.divisor;
  llvm::Type* et = memory_type(Type(buf.type));
  llvm::Type* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(lanes_));
  const llvm::Align align(static_cast<uint64_t>(bytes_of(buf.type)));
  llvm::Value* e0 = lane0_pointer(buf, coords);
  // An upsampling reads its coarse level along rows, as a stage reads an input: the level
  // was computed earlier (at root, megabytes away), so its rows come from memory.
  if (buf.dims >= 2 && reduction_depth_ == 0) prefetch_next_row(buf, et, e0);
  llvm::Value* p = b_.CreateBitCast(e0, vt->getPointerTo());
  // The phase of lane 0's numerator n0 in its group of s (Euclidean, as floor division
  // rounds): lane l reads element (phase + l) / s of the window that starts at lane 0's
  // coordinate. Each phase has its own constant shuffle, so the loop branches on the
  // phase; it is the same in every vector of a loop whose width is a multiple of s (the
  // upsampling reads x / 2 and (x + 1) / 2 of a pyramid), so the branch is predicted.
  // The window covers exactly the elements some lane reads, so nothing past the func's
  // bounds is touched.
  llvm::Value* n0 = b_.CreateExtractElement(div->second.numerator, uint64_t{0});
  llvm::Constant* sv = llvm::ConstantInt::get(n0->getType(), static_cast<uint64_t>(s));
  llvm::Value* phase;
  if ((s & (s - 1)) == 0) {
    // A power of two divides 2^32: n0's low bits are those of its terms that are not
    // multiples of s, even where the sum wraps. The vector loop's own term (x.outer * 16)
    // drops out, so the phase no longer changes in the loop and LICM hoists it (out of
    // interpolate's output, four windows of x / 2 per vector).
    phase = b_.CreateAnd(phase_terms(div->second.numerator, s),
                         llvm::ConstantInt::get(n0->getType(), static_cast<uint64_t>(s - 1)));
  } else {
    llvm::Value* rem = b_.CreateSRem(n0, sv);
    phase = b_.CreateSelect(b_.CreateICmpSLT(rem, llvm::ConstantInt::get(n0->getType(), 0)),
                            b_.CreateAdd(rem, sv), rem);
  }
  llvm::BasicBlock* after = new_block("window.end");
  std::vector<llvm::BasicBlock*> blocks;
  for (int64_t r = 0; r < s; ++r) blocks.push_back(new_block("window.phase"));
  llvm::SwitchInst* sw = b_.CreateSwitch(phase, blocks[0], static_cast<unsigned>(s - 1));
  for (int64_t r = 1; r < s; ++r) {
    sw->addCase(llvm::ConstantInt::get(llvm::cast<llvm::IntegerType>(n0->getType()),
                                       static_cast<uint64_t>(r)),
                blocks[static_cast<size_t>(r)]);
  }
  b_.SetInsertPoint(after);
  llvm::PHINode* phi = b_.CreatePHI(vt, static_cast<unsigned>(s));
  for (int64_t r = 0; r < s; ++r) {
    b_.SetInsertPoint(blocks[static_cast<size_t>(r)]);
    const int64_t window = (lanes_ - 1 + r) / s + 1;
    std::vector<llvm::Constant*> bits;
    for (int i = 0; i < lanes_; ++i) bits.push_back(b_.getInt1(i < window));
    llvm::Value* loaded = b_.CreateMaskedLoad(vt, p, align, llvm::ConstantVector::get(bits),
                                              llvm::Constant::getNullValue(vt));
    std::vector<int> pick;
    for (int i = 0; i < lanes_; ++i) pick.push_back(static_cast<int>((r + i) / s));
    phi->addIncoming(b_.CreateShuffleVector(loaded, pick), b_.GetInsertBlock());
    b_.CreateBr(after);
  }
  b_.SetInsertPoint(after);
  return phi;
}

llvm::Constant* CodeGen::zero_slot(llvm::Type* t) {
  llvm::GlobalVariable*& g = zero_slots_[t];
  if (!g) {
    g = new llvm::GlobalVariable(module_, t, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                 llvm::Constant::getNullValue(t), "masked.zero");
  }
  return g;
}

llvm::Value* CodeGen::load_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) {
  llvm::Type* et = memory_type(Type(buf.type));
  const llvm::Align align(static_cast<uint64_t>(bytes_of(buf.type)));
  bool uniform = true;
  for (llvm::Value* c : coords) uniform = uniform && !c->getType()->isVectorTy();
  if (mask_) ++masked_loads_;
  if (uniform) {
    std::vector<llvm::Value*> c64;
    for (llvm::Value* c : coords) c64.push_back(lane0_index(c));
    llvm::Value* p = element_pointer(buf, c64);
    if (!mask_) return b_.CreateLoad(et, p);
    // Every active lane reads this one element: a scalar load, and the value stays
    // uniform, so the loads it indexes stay dense. As a masked gather of one address per
    // lane, a LUT read in a vector loop's tail made every load it indexed a gather too
    // (max_filter's vertical maxima). A body under a mask may run with no lane active
    // (the right side of an && that none still needs): then it reads a zero of its own,
    // never the element, as the masked gather would not.
    llvm::Value* any = b_.CreateOrReduce(mask_);
    return b_.CreateLoad(et, b_.CreateSelect(any, p, zero_slot(et)));
  }
  llvm::Type* vt = llvm::FixedVectorType::get(et, static_cast<unsigned>(lanes_));
  // Inactive lanes read zero (not poison): their values may reach a mask reduction.
  llvm::Value* zero = llvm::Constant::getNullValue(vt);
  if (dense_lanes(buf, coords)) {
    llvm::Value* p = b_.CreateBitCast(lane0_pointer(buf, coords), vt->getPointerTo());
    if (mask_) return b_.CreateMaskedLoad(vt, p, align, mask_, zero);
    return b_.CreateAlignedLoad(vt, p, align);
  }
  if (llvm::Value* w = window_load(buf, coords)) return w;
  // Under a mask, only for 32- and 64-bit elements: x86 before AVX-512BW has no masked
  // load of bytes or halves, and LLVM would load such a row element by element behind a
  // branch each (the word gather below is cheaper).
  if (const int64_t s = row_stride(buf, coords);
      s > 1 && (!mask_ || bytes_of(buf.type) >= kGatherWordBytes)) {
    return strided_row(et, lane0_pointer(buf, coords), s, align, mask_);
  }
  if (llvm::Value* looked_up = byte_table_lookup(buf, coords)) return looked_up;
  llvm::Value* all = llvm::Constant::getAllOnesValue(shaped(b_.getInt1Ty(), zero));
  if (buf.narrow_offsets && bytes_of(buf.type) < kGatherWordBytes) {
    // x86 gathers no bytes or halves: LLVM would load them lane by lane (a pointer
    // extracted and a byte inserted per lane: camera_pipe's u8 curve). Gather the i32 word
    // at each element instead (the allocation has room past its last element:
    // emit_allocate) and keep its low bytes, the element on a little-endian target.
    llvm::Type* word = b_.getInt32Ty();
    llvm::Value* words =
        b_.CreateBitCast(lane_pointers(buf, coords), shaped(word->getPointerTo(), zero));
    llvm::Value* w = b_.CreateMaskedGather(llvm::FixedVectorType::get(word, lanes_), words,
                                           llvm::Align(1), mask_ ? mask_ : all,
                                           llvm::Constant::getNullValue(shaped(word, zero)));
    return b_.CreateTrunc(w, vt);
  }
  return b_.CreateMaskedGather(vt, lane_pointers(buf, coords), align, mask_ ? mask_ : all, zero);
}

void CodeGen::store_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords,
                          llvm::Value* value) {
  const llvm::Align align(static_cast<uint64_t>(bytes_of(buf.type)));
  bool uniform = !value->getType()->isVectorTy();
  for (llvm::Value* c : coords) uniform = uniform && !c->getType()->isVectorTy();
  if (uniform && !mask_) {
    std::vector<llvm::Value*> c64;
    for (llvm::Value* c : coords) c64.push_back(lane0_index(c));
    b_.CreateStore(value, element_pointer(buf, c64));
    return;
  }
  value = widen(value);
  if (dense_lanes(buf, coords)) {
    llvm::Value* p = b_.CreateBitCast(lane0_pointer(buf, coords), value->getType()->getPointerTo());
    const uint64_t vector_bytes =
        static_cast<uint64_t>(lanes_) * static_cast<uint64_t>(bytes_of(buf.type));
    auto cached_store = [&] {
      if (mask_) {
        b_.CreateMaskedStore(value, p, align, mask_);
      } else {
        b_.CreateAlignedStore(value, p, align);
      }
    };
    if (!buf.stream || vector_bytes % 64 != 0) {
      cached_store();
      return;
    }
    // A large output (kStreamingStoreBytes): a vector of whole cache lines bypasses the
    // cache when the row happens to be line-aligned here and every lane is stored; a
    // predictable branch per vector, no second copy of the body.
    llvm::Value* go = b_.CreateAnd(
        buf.stream,
        b_.CreateICmpEQ(b_.CreateAnd(b_.CreatePtrToInt(p, b_.getInt64Ty()), i64(63)), i64(0)));
    if (mask_) go = b_.CreateAnd(go, b_.CreateAndReduce(mask_));
    llvm::BasicBlock* nt = new_block("store.stream");
    llvm::BasicBlock* plain = new_block("store.cached");
    llvm::BasicBlock* after = new_block("store.end");
    b_.CreateCondBr(go, nt, plain);
    b_.SetInsertPoint(nt);
    llvm::StoreInst* st = b_.CreateAlignedStore(value, p, llvm::Align(64));
    streaming_stores_ = true;
    st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(ctx_, llvm::ConstantAsMetadata::get(b_.getInt32(1))));
    b_.CreateBr(after);
    b_.SetInsertPoint(plain);
    cached_store();
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
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
    llvm::BasicBlock* full = fast_path ? new_block("vif.all") : nullptr;
    if (fast_path) {
      llvm::BasicBlock* partial = new_block("vif.partial");
      b_.CreateCondBr(b_.CreateAndReduce(m), full, partial);
      b_.SetInsertPoint(partial);
    }
    b_.CreateCondBr(b_.CreateOrReduce(m), some, after);
    b_.SetInsertPoint(some);
    mask_ = m;
    const unsigned before = fn_->getInstructionCount();
    const int64_t masked_loads_before = masked_loads_;
    const int64_t unversioned_before = unversioned_under_mask_;
    emit(body);
    const unsigned size = fn_->getInstructionCount() - before;
    const bool loads_masked = masked_loads_ > masked_loads_before;
    const bool unversioned = unversioned_under_mask_ > unversioned_before;
    b_.CreateBr(after);
    if (fast_path) {
      // Every lane active: an unmasked copy of the body, which full vectors (all but the
      // tail) take, when the masked body loads from func buffers (LLVM 14 keeps masked
      // loads in loops from being hoisted and combined: a 17-tap blur ran 5x slower) or
      // has reductions over input rows that only an unmasked copy versions
      // (codegen_input_rows.cpp), and is small enough that the copy costs little compile
      // time. Other bodies, whose only masked access is the store (input reads are never
      // masked), run masked: a masked store costs about what a plain one does.
      b_.SetInsertPoint(full);
      if ((loads_masked || unversioned) && size <= kMaxDuplicatedInstructions) {
        mask_ = nullptr;
        emit(body);
        b_.CreateBr(after);
      } else {
        b_.CreateBr(some);
      }
    }
    b_.SetInsertPoint(after);
    mask_ = saved_mask;
  };
  llvm::Value* m_then = masked_with(cond, false);
  llvm::Value* m_else = op->else_case.defined() ? masked_with(cond, true) : nullptr;
  // In a partitioned loop's general copy the iterations with every lane active run in the
  // interior: an unmasked copy here would be code for the few the interior leaves out.
  run_masked(m_then, op->then_case, saved_mask == nullptr && !edge_guards_.count(op));
  if (m_else) run_masked(m_else, op->else_case, false);
}

llvm::Value* CodeGen::emit_vector_median(const Reduce* op) {
  const Type t = op->body.type();
  // The body at every point, first variable innermost (the order does not matter for a
  // median, but it keeps the evaluation order of the scalar code).
  std::vector<llvm::Value*> values;
  std::function<void(size_t)> points = [&](size_t level) {
    if (level == 0) {
      values.push_back(widen(emit(op->body)));
      return;
    }
    const ReductionVariable& rv = op->domain[level - 1];
    for (int64_t v = rv.min.as<IntImm>()->value; v <= rv.max.as<IntImm>()->value; ++v) {
      push_var(rv.name, i32(v));
      points(level - 1);
      pop_var();
    }
  };
  points(op->domain.size());
  if (values.empty()) return widen(constant_of(t, 0));
  const bool is_unsigned = t.is_unsigned() || t.is_bool();
  auto exact = [&](const std::vector<llvm::Value*>& vs) {
    std::vector<llvm::Value*> keys;
    for (llvm::Value* v : vs) keys.push_back(median_key(v, t, false));
    const llvm::Intrinsic::ID lo = is_unsigned ? llvm::Intrinsic::umin : llvm::Intrinsic::smin;
    const llvm::Intrinsic::ID hi = is_unsigned ? llvm::Intrinsic::umax : llvm::Intrinsic::smax;
    llvm::Value* key = median_network(std::move(keys), [&](llvm::Value* x, llvm::Value* y) {
      return std::make_pair(b_.CreateBinaryIntrinsic(lo, x, y), b_.CreateBinaryIntrinsic(hi, x, y));
    });
    return median_key(key, t, true);
  };
  // Under a mask (a tail vector) the key network alone: tails are rare, and their idle
  // lanes, loaded as zeros, would send most of them there anyway.
  if ((t.code != ScalarType::Float32 && t.code != ScalarType::Float64) || mask_ ||
      !target_.float_select_min_max) {
    return exact(values);
  }

  // Floats: the network on the values themselves, compared as floats (on x86 one vminps
  // or vmaxps per output), is the median in totalOrder wherever
  // - no value is a NaN (one ordered compare per pair of values, before the network): the
  //   float order is then a total preorder, each comparator hands its lower output a value
  //   of the lower class and its upper output one of the upper, so the k-th output is a
  //   value of the k-th smallest class, and totalOrder only splits classes; and
  // - the result is not a zero: the one class of the float order with more than one bit
  //   pattern is {-0, +0}, so a nonzero result has the bits totalOrder's k-th has.
  // A vector where a lane fails either test takes the key network, exact always. The keys
  // cost two instructions per value and 16-lane integer min/max ran slower than float
  // min/max on the Xeon measured: the 5x5 median at 1920x1080, one thread, 24.1 -> 14.6 ms
  // (codegen/README.md). The branch conditions are frozen: a lane of uninitialised memory
  // must not decide a branch (it could decide nothing but its own lane before).
  llvm::Value* ordered = nullptr;
  for (size_t i = 0; i < values.size(); i += 2) {
    llvm::Value* o = b_.CreateFCmpORD(values[i], values[std::min(i + 1, values.size() - 1)]);
    ordered = ordered ? b_.CreateAnd(ordered, o) : o;
  }
  llvm::BasicBlock* network_bb = new_block("median.float");
  llvm::BasicBlock* exact_bb = new_block("median.exact");
  llvm::BasicBlock* done = new_block("median.done");
  b_.CreateCondBr(b_.CreateFreeze(b_.CreateAndReduce(ordered)), network_bb, exact_bb);
  b_.SetInsertPoint(network_bb);
  llvm::Value* fast = median_network(values, [&](llvm::Value* x, llvm::Value* y) {
    llvm::Value* less = b_.CreateFCmpOLT(x, y);
    return std::make_pair(b_.CreateSelect(less, x, y), b_.CreateSelect(less, y, x));
  });
  llvm::Value* nonzero = b_.CreateFCmpONE(fast, llvm::ConstantFP::get(fast->getType(), 0.0));
  network_bb = b_.GetInsertBlock();
  b_.CreateCondBr(b_.CreateFreeze(b_.CreateAndReduce(nonzero)), done, exact_bb);
  b_.SetInsertPoint(exact_bb);
  // The values again, after a compiler barrier: kept from before the fast network they
  // would be live through it, 25 vectors beside its own, and spilled on the fast path.
  b_.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), false), "",
                                     "~{memory}", /*hasSideEffects=*/true));
  values.clear();
  points(op->domain.size());
  llvm::Value* checked = exact(values);
  exact_bb = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode* phi = b_.CreatePHI(fast->getType(), 2);
  phi->addIncoming(fast, network_bb);
  phi->addIncoming(checked, exact_bb);
  return phi;
}

llvm::Value* CodeGen::median_network(
    std::vector<llvm::Value*> wires,
    const std::function<std::pair<llvm::Value*, llvm::Value*>(llvm::Value*, llvm::Value*)>&
        exchange) {
  const size_t n = wires.size(), k = (n - 1) / 2;
  size_t m = 1;
  while (m < n) m *= 2;
  // The padding wires hold a value above every value (+infinity and NaNs included): a
  // comparator with one of them leaves the real value on its lower wire and emits
  // nothing (as Halide's apps do).
  wires.resize(m, nullptr);
  auto compare = [&](size_t a, size_t c) {
    if (!wires[c]) return;
    if (!wires[a]) {
      std::swap(wires[a], wires[c]);
      return;
    }
    std::tie(wires[a], wires[c]) = exchange(wires[a], wires[c]);
  };
  // Batcher's odd-even merge sort; outputs other than wires[k] are dead and LLVM drops
  // the comparators that only feed them.
  for (size_t p = 1; p < m; p *= 2) {
    for (size_t step = p; step >= 1; step /= 2) {
      for (size_t j = step % p; j + step < m; j += 2 * step) {
        for (size_t i = 0; i < std::min(step, m - j - step); ++i) {
          if ((i + j) / (2 * p) == (i + j + step) / (2 * p)) compare(i + j, i + j + step);
        }
      }
    }
  }
  return wires[k];
}

llvm::Value* CodeGen::median_key(llvm::Value* v, Type t, bool inverse) {
  if (t.is_bool()) {
    return inverse ? b_.CreateTrunc(v, shaped(b_.getInt1Ty(), v))
                   : b_.CreateZExt(v, shaped(b_.getInt8Ty(), v));
  }
  if (!t.is_float()) return v;  // integers compare as themselves (signed or unsigned)
  // Floats: the bits with the magnitude flipped when the sign is set compare as signed
  // integers in IEEE 754 totalOrder (median_order.h). The mapping is its own inverse.
  const unsigned bits = t.code == ScalarType::Float64 ? 64 : 32;
  llvm::Type* it = shaped(b_.getIntNTy(bits), v);
  llvm::Value* x = inverse ? v : b_.CreateBitCast(v, it);
  // A select, not x ^ ((x >> 31) >> 1): on AVX-512 it is a sign-to-mask move and a masked
  // xor, two instructions per value instead of three (25 values per 5x5 median).
  llvm::Value* negative = b_.CreateICmpSLT(x, llvm::ConstantInt::get(it, 0));
  llvm::Value* key = b_.CreateSelect(
      negative, b_.CreateXor(x, llvm::ConstantInt::get(it, llvm::APInt::getSignedMaxValue(bits))),
      x);
  return inverse ? b_.CreateBitCast(key, shaped(value_type(t), v)) : key;
}

llvm::Value* CodeGen::emit_expf(llvm::Value* x) {
  // compiler_core/runtime/exp_f32.cpp operation for operation (that file says why this
  // algorithm); scalar or vector x. The special cases are selects on a clamped input, so
  // the code is straight-line and two reductions computing the same exp share it (GVN).
  llvm::Type* f32v = x->getType();
  llvm::Type* i32v = shaped(b_.getInt32Ty(), x);
  auto f = [&](float v) { return llvm::ConstantFP::get(f32v, static_cast<double>(v)); };
  auto i = [&](int32_t v) { return llvm::ConstantInt::get(i32v, static_cast<uint64_t>(v), true); };
  auto fma = [&](llvm::Value* a, llvm::Value* c, llvm::Value* e) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32v}, {a, c, e});
  };
  // Lanes at or below -104 (and NaN) compute the formula on 0 and are replaced at the end
  // (exp_f32.cpp says why not on -104); the rest are clamped to 104.
  llvm::Value* in_range = b_.CreateFCmpOGT(x, f(-104.0f));
  llvm::Value* xc = b_.CreateSelect(in_range, x, f(0.0f));
  xc = b_.CreateSelect(b_.CreateFCmpOLT(xc, f(104.0f)), xc, f(104.0f));
  llvm::Value* q = unary_intrinsic(llvm::Intrinsic::roundeven,
                                   b_.CreateFMul(xc, f(1.442695040888963407359924681001892137f)));
  llvm::Value* s = fma(q, f(-0.693145751953125f), xc);
  s = fma(q, f(-1.428606765330187045e-06f), s);
  llvm::Value* u = f(0.000198527617612853646278381f);
  for (float c : {0.00139304355252534151077271f, 0.00833336077630519866943359f,
                  0.0416664853692054748535156f, 0.166666671633720397949219f, 0.5f}) {
    u = fma(u, s, f(c));
  }
  u = b_.CreateFAdd(f(1.0f), fma(b_.CreateFMul(s, s), u, s));
  llvm::Value* e = b_.CreateFPToSI(q, i32v);
  llvm::Value* half = b_.CreateAShr(e, i(1));
  auto pow2i = [&](llvm::Value* k) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, i(127)), i(23)), f32v);
  };
  llvm::Value* u_bits = b_.CreateAdd(b_.CreateBitCast(u, i32v), b_.CreateShl(half, i(23)));
  llvm::Value* r = b_.CreateFMul(b_.CreateBitCast(u_bits, f32v), pow2i(b_.CreateSub(e, half)));
  llvm::Value* special = b_.CreateSelect(b_.CreateFCmpUNO(x, x), b_.CreateFAdd(x, x), f(0.0f));
  return b_.CreateSelect(in_range, r, special);
}

}  // namespace stipple::codegen
