// Statement code generation: the entry point and its descriptors, loops (serial and
// parallel through outlined closures), stores, local allocations, and the runtime helpers
// generated code calls.
#include <llvm/IR/Verifier.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/runtime/thread_pool.h"

namespace stipple::codegen {

namespace {
// Allocations of a constant size up to this many bytes live on the stack.
constexpr int64_t kMaxStackAllocation = 64 * 1024;
}  // namespace

CodeGen::CodeGen(const LoweredFunction& f, llvm::Module& module, const CodeGenTarget& target)
    : f_(f), module_(module), ctx_(module.getContext()), b_(module.getContext()), target_(target) {}

llvm::Type* CodeGen::value_type(Type t) {
  STIPPLE_INTERNAL_CHECK(t.lanes == 1, "codegen of vector type " + to_string(t));
  switch (t.code) {
    case ScalarType::Bool: return b_.getInt1Ty();
    case ScalarType::UInt8: return b_.getInt8Ty();
    case ScalarType::UInt16: return b_.getInt16Ty();
    case ScalarType::Int32: return b_.getInt32Ty();
    case ScalarType::Float32: return b_.getFloatTy();
    case ScalarType::Float64: return b_.getDoubleTy();
    case ScalarType::Int8: return b_.getInt8Ty();
    case ScalarType::Int16: return b_.getInt16Ty();
    case ScalarType::UInt32: return b_.getInt32Ty();
    case ScalarType::Float16: return b_.getFloatTy();  // its exact f32 widening
  }
  return nullptr;
}

llvm::Type* CodeGen::memory_type(Type t) {
  if (t.is_bool()) return b_.getInt8Ty();
  if (t.is_f16()) return b_.getInt16Ty();
  return value_type(t);
}

llvm::AllocaInst* CodeGen::entry_alloca(llvm::Type* t, const std::string& name,
                                        llvm::Value* count) {
  // Allocas in the entry block are static: a loop around their use does not grow the stack.
  llvm::BasicBlock& entry = fn_->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.begin());
  llvm::AllocaInst* a = eb.CreateAlloca(t, count, name);
  // At least the alignment loads and stores of `t` assume (64 bytes for a 16-lane f32
  // vector: an aligned vector store to a less aligned slot faults).
  a->setAlignment(std::max(llvm::Align(32), module_.getDataLayout().getPrefTypeAlign(t)));
  return a;
}

llvm::BasicBlock* CodeGen::new_block(const std::string& name) {
  return llvm::BasicBlock::Create(ctx_, name, fn_);
}

llvm::FunctionCallee CodeGen::runtime(const std::string& name) {
  llvm::Type* i8p = b_.getInt8PtrTy();
  llvm::Type* i32t = b_.getInt32Ty();
  llvm::Type* i64t = b_.getInt64Ty();
  llvm::Type* f64p = b_.getDoubleTy()->getPointerTo();
  llvm::FunctionType* ft = nullptr;
  if (name == "stipple_parallel_for") {
    ft = llvm::FunctionType::get(i32t, {i8p, i8p, i32t, i32t}, false);
  } else if (name == "stipple_malloc") {
    ft = llvm::FunctionType::get(i8p, {i64t}, false);
  } else if (name == "stipple_free") {
    ft = llvm::FunctionType::get(b_.getVoidTy(), {i8p}, false);
  } else if (name == "stipple_libm_lanes") {
    ft = llvm::FunctionType::get(b_.getVoidTy(), {i32t, i32t, i8p, i8p, i8p, i32t}, false);
  } else if (name == "stipple_median_f64") {
    ft = llvm::FunctionType::get(b_.getDoubleTy(), {f64p, i64t}, false);
  }
  STIPPLE_INTERNAL_CHECK(ft != nullptr, "unknown runtime function " + name);
  return module_.getOrInsertFunction(name, ft);
}

void CodeGen::set_status(int32_t code) { b_.CreateStore(i32(code), status_); }

llvm::Value* CodeGen::find_var(const std::string& name) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return nullptr;
}

const BufferInfo& CodeGen::find_buffer(const std::string& name) const {
  for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) {
    if (it->name == name) return *it;
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: no buffer named '" + name + "' in scope");
}

llvm::Value* CodeGen::element_pointer(const BufferInfo& buf,
                                      const std::vector<llvm::Value*>& coords) {
  STIPPLE_INTERNAL_CHECK(static_cast<int>(coords.size()) == buf.dims,
                         "codegen: access to '" + buf.name + "' with " +
                             std::to_string(coords.size()) + " indices, it has " +
                             std::to_string(buf.dims) + " dimensions");
  // The constant part of each coordinate goes last: the taps of a stencil, `f(x + i, y +
  // j)`, then address one element per row plus `i` (and `j * stride`, loop-invariant), and
  // the instruction selector folds `i` into the loads' displacements, so the 25 reads of a
  // 5x5 window keep 5 pointers live rather than 25 indices. Added where it lies inside the
  // coordinate, each tap had its own index register (and the 5x5 median's spilled).
  llvm::Value* index = i64(0);
  llvm::Value* runtime_offset = nullptr;
  uint64_t constant_offset = 0;  // wraps, as the i64 index would
  for (int d = 0; d < buf.dims; ++d) {
    auto [c, k] = split_constant_addend(coords[d]);
    if (!buf.is_input) c = b_.CreateSub(c, buf.min[d]);
    index = b_.CreateAdd(index, b_.CreateMul(c, buf.stride[d]));
    if (k == 0) continue;
    if (auto* stride = llvm::dyn_cast<llvm::ConstantInt>(buf.stride[d])) {
      constant_offset += static_cast<uint64_t>(k) * static_cast<uint64_t>(stride->getSExtValue());
    } else {
      llvm::Value* term = b_.CreateMul(i64(k), buf.stride[d]);
      runtime_offset = runtime_offset ? b_.CreateAdd(runtime_offset, term) : term;
    }
  }
  if (runtime_offset) index = b_.CreateAdd(index, runtime_offset);
  if (constant_offset != 0) index = b_.CreateAdd(index, i64(static_cast<int64_t>(constant_offset)));
  llvm::Type* et = memory_type(Type(buf.type));
  llvm::Value* base = b_.CreateBitCast(buf.host, et->getPointerTo());
  return b_.CreateInBoundsGEP(et, base, index);
}

std::pair<llvm::Value*, int64_t> CodeGen::split_constant_addend(llvm::Value* c) {
  // Along the i64 add/sub spine lane0_index builds (sext moved to the leaves), e.g.
  // `sext(x) + -2`; i64 arithmetic wraps alike in either order, so no flag is needed.
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(c);
  if (!bin || !c->getType()->isIntegerTy(64)) return {c, 0};
  const auto op = bin->getOpcode();
  if (op != llvm::Instruction::Add && op != llvm::Instruction::Sub) return {c, 0};
  llvm::Value* a = bin->getOperand(0);
  llvm::Value* b = bin->getOperand(1);
  if (op == llvm::Instruction::Add && llvm::isa<llvm::ConstantInt>(a)) std::swap(a, b);
  if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(b)) {
    auto [rest, ka] = split_constant_addend(a);
    const uint64_t kb = static_cast<uint64_t>(k->getSExtValue());
    const uint64_t sum = op == llvm::Instruction::Add ? static_cast<uint64_t>(ka) + kb
                                                      : static_cast<uint64_t>(ka) - kb;
    return {rest, static_cast<int64_t>(sum)};
  }
  auto [ra, ka] = split_constant_addend(a);
  auto [rb, kb] = split_constant_addend(b);
  if (ka == 0 && kb == 0) return {c, 0};
  const uint64_t sum = op == llvm::Instruction::Add
                           ? static_cast<uint64_t>(ka) + static_cast<uint64_t>(kb)
                           : static_cast<uint64_t>(ka) - static_cast<uint64_t>(kb);
  return {b_.CreateBinOp(op, ra, rb), static_cast<int64_t>(sum)};
}

void CodeGen::generate(const std::string& symbol) {
  llvm::Type* i8p = b_.getInt8PtrTy();
  llvm::FunctionType* ft =
      llvm::FunctionType::get(b_.getInt32Ty(), {i8p, b_.getDoubleTy()->getPointerTo()}, false);
  fn_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, symbol, module_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  status_ = entry_alloca(b_.getInt32Ty(), "status");
  set_status(kOk);

  // Every descriptor field is read once here, so loops see plain SSA values.
  llvm::Value* descs = fn_->getArg(0);
  llvm::Value* all_ok = b_.getTrue();
  auto field = [&](int64_t offset, llvm::Type* t) {
    llvm::Value* p = b_.CreateInBoundsGEP(b_.getInt8Ty(), descs, i64(offset));
    return b_.CreateLoad(t, b_.CreateBitCast(p, t->getPointerTo()));
  };
  size_t total = f_.inputs.size() + f_.buffers.size();
  for (size_t k = 0; k < total; ++k) {
    BufferInfo buf;
    if (k < f_.inputs.size()) {
      const InputDecl& in = f_.inputs[k];
      buf.name = in.name;
      buf.type = in.type.code;
      buf.dims = static_cast<int>(in.dim_names.size());
      buf.is_input = true;
      buf.decl = &in;
    } else {
      const ExternalBuffer& eb = f_.buffers[k - f_.inputs.size()];
      buf.name = eb.name;
      buf.type = eb.type.code;
      buf.dims = eb.dimensions;
    }
    STIPPLE_INTERNAL_CHECK(buf.dims >= 0 && buf.dims <= kMaxBufferDims,
                           "codegen: buffer '" + buf.name + "' has too many dimensions");
    const int64_t base = static_cast<int64_t>(k * sizeof(BufferDescriptor));
    buf.host = field(base, i8p);
    llvm::Value* type_ok =
        b_.CreateICmpEQ(field(base + 8, b_.getInt32Ty()), i32(static_cast<int>(buf.type)));
    llvm::Value* dims_ok = b_.CreateICmpEQ(field(base + 12, b_.getInt32Ty()), i32(buf.dims));
    all_ok = b_.CreateAnd(all_ok, b_.CreateAnd(type_ok, dims_ok));
    for (int d = 0; d < buf.dims; ++d) {
      const int64_t dim_base = base + 16 + 24 * d;
      buf.min.push_back(field(dim_base, b_.getInt64Ty()));
      buf.extent.push_back(field(dim_base + 8, b_.getInt64Ty()));
      buf.stride.push_back(field(dim_base + 16, b_.getInt64Ty()));
      if (d == 0) {
        // Dimension 0's stride is a constant the code is specialised to: 1 (dense, so vector
        // code loads and stores whole rows) unless the caller's buffer is interleaved.
        auto inner = f_.inner_strides.find(buf.name);
        if (inner != f_.inner_strides.end()) buf.inner_stride = inner->second;
        STIPPLE_INTERNAL_CHECK(buf.inner_stride >= 1,
                               "codegen: buffer '" + buf.name + "' has inner stride < 1");
        all_ok = b_.CreateAnd(all_ok, b_.CreateICmpEQ(buf.stride.back(), i64(buf.inner_stride)));
        buf.stride.back() = i64(buf.inner_stride);
      }
      // NAME.min.D, NAME.extent.D, NAME.stride.D: what lowering reads of a buffer's shape.
      const std::string prefix = buf.name + ".";
      const std::string suffix = "." + std::to_string(d);
      push_var(prefix + "min" + suffix, b_.CreateTrunc(buf.min.back(), b_.getInt32Ty()));
      push_var(prefix + "extent" + suffix, b_.CreateTrunc(buf.extent.back(), b_.getInt32Ty()));
      push_var(prefix + "stride" + suffix, b_.CreateTrunc(buf.stride.back(), b_.getInt32Ty()));
    }
    if (k >= f_.inputs.size()) {
      // The dimensions the loop nest was built for (the schedule's bound): exactly.
      for (const ExternalBuffer::FixedDim& fd : f_.buffers[k - f_.inputs.size()].fixed) {
        STIPPLE_INTERNAL_CHECK(fd.dim < buf.dims, "codegen: bound of a missing dimension");
        all_ok = b_.CreateAnd(all_ok, b_.CreateICmpEQ(buf.min[fd.dim], i64(fd.min)));
        all_ok = b_.CreateAnd(all_ok, b_.CreateICmpEQ(buf.extent[fd.dim], i64(fd.extent)));
      }
    }
    if (!buf.is_input) {
      llvm::Value* bytes = i64(bytes_of(buf.type));
      for (llvm::Value* e : buf.extent) bytes = b_.CreateMul(bytes, e);
      buf.stream = b_.CreateICmpSGT(bytes, i64(kStreamingStoreBytes));
    }
    note_buffer(buf);
    buffers_.push_back(std::move(buf));
  }
  for (const auto& [name, stride] : f_.inner_strides) {
    STIPPLE_INTERNAL_CHECK(std::any_of(buffers_.begin(), buffers_.end(),
                                       [&](const BufferInfo& b) { return b.name == name; }),
                           "codegen: inner stride of '" + name + "', which is no caller's buffer");
  }
  for (size_t k = 0; k < f_.params.size(); ++k) {
    llvm::Value* p =
        b_.CreateInBoundsGEP(b_.getDoubleTy(), fn_->getArg(1), i64(static_cast<int64_t>(k)));
    llvm::Value* v = b_.CreateLoad(b_.getDoubleTy(), p);
    // A param's value is its double converted as an f64 cast, as the evaluator does.
    params_[f_.params[k].name] = emit_cast(ScalarType::Float64, f_.params[k].type.code, v);
  }
  llvm::BasicBlock* body = new_block("body");
  llvm::BasicBlock* bad = new_block("bad_buffer");
  b_.CreateCondBr(all_ok, body, bad);
  invariant_block_ = b_.GetInsertBlock();
  b_.SetInsertPoint(bad);
  b_.CreateRet(i32(kErrorBufferMismatch));
  b_.SetInsertPoint(body);
  emit(f_.body);
  // Non-temporal stores are weakly ordered: a full fence makes them visible to the caller
  // (and, in parallel bodies below, before the task is reported done). Only functions that
  // have such stores pay for it.
  if (streaming_stores_) b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
  b_.CreateRet(b_.CreateLoad(b_.getInt32Ty(), status_));
  tag_buffer_accesses();

  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyModule(module_, &os)) {
    throw_internal_error(__FILE__, __LINE__, "codegen produced invalid LLVM IR: " + os.str());
  }
}

void CodeGen::emit(const Stmt& s) {
  switch (s.node_type()) {
    case IRNodeType::LetStmt: {
      const LetStmt* op = s.as<LetStmt>();
      push_var(op->name, emit(op->value));
      emit(op->body);
      pop_var();
      return;
    }
    case IRNodeType::For: emit_for(s.as<For>()); return;
    case IRNodeType::Provide: emit_provide(s.as<Provide>()); return;
    case IRNodeType::Allocate: emit_allocate(s.as<Allocate>()); return;
    case IRNodeType::Block: {
      // Iterative over the right-nested chain: a long list must not recurse deeply.
      Stmt cur = s;
      while (const Block* blk = cur.as<Block>()) {
        emit(blk->first);
        cur = blk->rest;
      }
      emit(cur);
      return;
    }
    case IRNodeType::IfThenElse: {
      const IfThenElse* op = s.as<IfThenElse>();
      if (true_guards_.count(op)) {
        emit(op->then_case);
        return;
      }
      llvm::Value* cond = emit(op->condition);
      if (cond->getType()->isVectorTy()) {
        emit_vector_if(op, cond);
        return;
      }
      llvm::BasicBlock* then_bb = new_block("then");
      llvm::BasicBlock* else_bb = op->else_case.defined() ? new_block("else") : nullptr;
      llvm::BasicBlock* after = new_block("endif");
      b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : after);
      b_.SetInsertPoint(then_bb);
      emit(op->then_case);
      b_.CreateBr(after);
      if (else_bb) {
        b_.SetInsertPoint(else_bb);
        emit(op->else_case);
        b_.CreateBr(after);
      }
      b_.SetInsertPoint(after);
      return;
    }
    case IRNodeType::Evaluate: emit(s.as<Evaluate>()->value); return;
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Cast:
    case IRNodeType::Variable:
    case IRNodeType::Param:
    case IRNodeType::InputExtent:
    case IRNodeType::Add:
    case IRNodeType::Sub:
    case IRNodeType::Mul:
    case IRNodeType::Div:
    case IRNodeType::Mod:
    case IRNodeType::Min:
    case IRNodeType::Max:
    case IRNodeType::EQ:
    case IRNodeType::NE:
    case IRNodeType::LT:
    case IRNodeType::LE:
    case IRNodeType::GT:
    case IRNodeType::GE:
    case IRNodeType::And:
    case IRNodeType::Or:
    case IRNodeType::Not:
    case IRNodeType::Select:
    case IRNodeType::Call:
    case IRNodeType::Reduce:
    case IRNodeType::Let: break;
  }
  throw_internal_error(__FILE__, __LINE__, "codegen: expression node in statement position");
}

void CodeGen::emit_counted_loop(const std::string& name, llvm::Value* min, llvm::Value* extent,
                                const std::function<void(llvm::Value*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::Value* end = b_.CreateAdd(min, extent);  // wraps like the loop counter
  llvm::BasicBlock* loop = new_block(name + ".loop");
  llvm::BasicBlock* after = new_block(name + ".end");
  b_.CreateCondBr(b_.CreateICmpSGT(extent, i32(0)), loop, after);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt32Ty(), 2, name);
  i->addIncoming(min, pre);
  body(i);
  llvm::Value* next = b_.CreateAdd(i, i32(1));
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpNE(next, end), loop, after);
  b_.SetInsertPoint(after);
}

void CodeGen::emit_inclusive_loop(const std::string& name, llvm::Value* lo, llvm::Value* hi,
                                  const std::function<void(llvm::Value*)>& body) {
  // The exit test comes before the increment, so hi == INT32_MAX cannot overflow.
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = new_block(name + ".loop");
  llvm::BasicBlock* after = new_block(name + ".end");
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt32Ty(), 2, name);
  i->addIncoming(lo, pre);
  body(i);
  llvm::Value* done = b_.CreateICmpEQ(i, hi);
  // Callers enter only when lo <= hi, so the increment is used (the back edge taken) only
  // while i < hi and never wraps there: nsw lets scalar evolution see i's sign extension
  // as affine in the loop (codegen_index.cpp).
  llvm::Value* next = b_.CreateAdd(i, i32(1), "", /*HasNUW=*/false, /*HasNSW=*/true);
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(done, after, loop);
  b_.SetInsertPoint(after);
}

void CodeGen::emit_for(const For* op) {
  llvm::Value* min = emit(op->min);
  llvm::Value* extent = emit(op->extent);
  switch (op->for_type) {
    case ForType::Parallel:
      if (!vector_mode()) {
        emit_parallel_for(op, min, extent);
        return;
      }
      break;
    case ForType::Vectorized:
      if (emit_vector_for(op, min, extent)) return;
      break;
    // Unrolled loops are plain loops with a constant trip count, which LLVM's unroller
    // fully unrolls when they are small.
    case ForType::Serial:
      if (emit_partitioned_loop(op, min, extent)) return;
      break;
    case ForType::Unrolled: break;
    // GPU loops on a CPU are serial loops: what the CUDA back end runs in parallel, the
    // CPU runs in order, to check a GPU schedule's lowering against the evaluator.
    case ForType::GpuBlock:
    case ForType::GpuThread: break;
  }
  emit_counted_loop(op->name, min, extent, [&](llvm::Value* i) {
    push_var(op->name, i);
    emit(op->body);
    pop_var();
  });
}

void CodeGen::emit_parallel_for(const For* op, llvm::Value* min, llvm::Value* extent) {
  // Capture every non-constant value in scope into a struct the closure reads back.
  std::vector<llvm::Value*> captured;
  std::map<llvm::Value*, size_t> slot;
  auto capture = [&](llvm::Value* v) {
    if (!v || llvm::isa<llvm::Constant>(v) || slot.count(v)) return;
    slot[v] = captured.size();
    captured.push_back(v);
  };
  for (auto& [name, v] : vars_) capture(v);
  for (const BufferInfo& buf : buffers_) {
    capture(buf.host);
    for (int d = 0; d < buf.dims; ++d) {
      capture(buf.min[d]);
      capture(buf.extent[d]);
      capture(buf.stride[d]);
    }
    capture(buf.stream);
  }
  for (auto& [name, v] : params_) capture(v);
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : captured) types.push_back(v->getType());
  llvm::StructType* st = llvm::StructType::get(ctx_, types);
  llvm::AllocaInst* data = entry_alloca(st, "closure");
  for (size_t k = 0; k < captured.size(); ++k) {
    b_.CreateStore(captured[k], b_.CreateStructGEP(st, data, static_cast<unsigned>(k)));
  }

  llvm::Type* i8p = b_.getInt8PtrTy();
  llvm::FunctionType* ft = llvm::FunctionType::get(b_.getInt32Ty(), {i8p, b_.getInt32Ty()}, false);
  llvm::Function* closure = llvm::Function::Create(
      ft, llvm::Function::InternalLinkage,
      fn_->getName() + "." + op->name + ".par" + std::to_string(closure_count_++), module_);

  // Generate the closure with its own function state, then come back.
  llvm::Function* saved_fn = fn_;
  llvm::AllocaInst* saved_status = status_;
  llvm::BasicBlock* saved_block = b_.GetInsertBlock();
  auto saved_vars = vars_;
  auto saved_buffers = buffers_;
  auto saved_params = params_;
  auto saved_magic = std::move(divisor_magic_);
  divisor_magic_.clear();
  llvm::BasicBlock* saved_invariant_block = invariant_block_;
  const bool saved_streaming = streaming_stores_;
  streaming_stores_ = false;

  fn_ = closure;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", closure));
  status_ = entry_alloca(b_.getInt32Ty(), "status");
  set_status(kOk);
  llvm::Value* d = b_.CreateBitCast(closure->getArg(0), st->getPointerTo());
  std::map<llvm::Value*, llvm::Value*> remap;
  for (size_t k = 0; k < captured.size(); ++k) {
    remap[captured[k]] =
        b_.CreateLoad(types[k], b_.CreateStructGEP(st, d, static_cast<unsigned>(k)));
  }
  auto r = [&](llvm::Value*& v) {
    auto it = remap.find(v);
    if (it != remap.end()) v = it->second;
  };
  for (auto& entry : vars_) r(entry.second);
  for (BufferInfo& buf : buffers_) {
    r(buf.host);
    note_buffer(buf);
    for (int k = 0; k < buf.dims; ++k) {
      r(buf.min[k]);
      r(buf.extent[k]);
      r(buf.stride[k]);
    }
    if (buf.stream) r(buf.stream);
  }
  for (auto& entry : params_) r(entry.second);
  // The closure's entry block, with the captured values, is where its own
  // function-invariant values go (divisor_magic).
  invariant_block_ = b_.GetInsertBlock();
  llvm::BasicBlock* body = new_block("body");
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  push_var(op->name, closure->getArg(1));
  emit(op->body);
  pop_var();
  if (streaming_stores_) b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
  streaming_stores_ = saved_streaming;
  b_.CreateRet(b_.CreateLoad(b_.getInt32Ty(), status_));

  fn_ = saved_fn;
  status_ = saved_status;
  vars_ = std::move(saved_vars);
  buffers_ = std::move(saved_buffers);
  params_ = std::move(saved_params);
  divisor_magic_ = std::move(saved_magic);
  invariant_block_ = saved_invariant_block;
  b_.SetInsertPoint(saved_block);

  llvm::Value* rc =
      b_.CreateCall(runtime("stipple_parallel_for"),
                    {b_.CreateBitCast(closure, i8p), b_.CreateBitCast(data, i8p), min, extent});
  llvm::Value* old = b_.CreateLoad(b_.getInt32Ty(), status_);
  b_.CreateStore(b_.CreateSelect(b_.CreateICmpNE(rc, i32(0)), rc, old), status_);
}

void CodeGen::emit_provide(const Provide* op) {
  const BufferInfo& buf = find_buffer(op->name);
  STIPPLE_INTERNAL_CHECK(!buf.is_input, "codegen: Provide to input '" + op->name + "'");
  STIPPLE_INTERNAL_CHECK(op->value.type() == Type(buf.type),
                         "codegen: Provide of " + to_string(op->value.type()) + " to '" + op->name +
                             "' of type " + to_string(Type(buf.type)));
  std::vector<llvm::Value*> coords;
  for (const Expr& a : op->args) {
    STIPPLE_INTERNAL_CHECK(a.type() == Int32(), "codegen: non-i32 Provide index");
    coords.push_back(emit_func_index(a));
  }
  // Reductions over one domain first, in one loop nest (codegen_reductions.cpp).
  emit_fused_reductions(op->value);
  llvm::Value* v = emit(op->value);
  fused_values_.clear();
  v = to_memory(op->value.type(), v);
  if (vector_mode()) {
    store_lanes(buf, coords, v);
    return;
  }
  for (llvm::Value*& c : coords) c = lane0_index(c);
  llvm::Value* p = element_pointer(buf, coords);
  b_.CreateStore(v, p);
}

void CodeGen::emit_allocate(const Allocate* op) {
  BufferInfo buf;
  buf.name = op->name;
  buf.type = op->type.code;
  buf.dims = static_cast<int>(op->extents.size());
  STIPPLE_INTERNAL_CHECK(op->type.lanes == 1 && buf.dims <= kMaxBufferDims,
                         "codegen: unsupported Allocate of '" + op->name + "'");
  llvm::Value* count = i64(1);
  bool constant_size = true;
  int64_t constant_count = 1;
  for (int d = 0; d < buf.dims; ++d) {
    const Expr& e = op->extents[d];
    STIPPLE_INTERNAL_CHECK(e.type() == Int32(), "codegen: non-i32 Allocate extent");
    llvm::Value* ext = b_.CreateSExt(emit(e), b_.getInt64Ty());
    ext = b_.CreateSelect(b_.CreateICmpSGT(ext, i64(0)), ext, i64(0));
    // The min of each dimension comes from NAME.min.D when lowering bound it, else 0.
    llvm::Value* m = find_var(op->name + ".min." + std::to_string(d));
    buf.min.push_back(m ? b_.CreateSExt(m, b_.getInt64Ty()) : i64(0));
    buf.extent.push_back(ext);
    buf.stride.push_back(count);
    count = b_.CreateMul(count, ext);
    if (const IntImm* imm = e.as<IntImm>()) {
      constant_count *= std::max<int64_t>(imm->value, 0);
    } else {
      constant_size = false;
    }
  }
  llvm::Type* et = memory_type(op->type);
  const int64_t elem_bytes = bytes_of(op->type.code);
  buf.narrow_offsets = true;
  // Elements narrower than 4 bytes get 4 bytes of room past the last one, which a gather
  // reads as i32 words (load_lanes).
  const int64_t padding = elem_bytes < 4 ? kGatherWordBytes / elem_bytes : 0;
  if (constant_size && constant_count * elem_bytes <= kMaxStackAllocation) {
    llvm::AllocaInst* a =
        entry_alloca(et, op->name, i32(std::max<int64_t>(constant_count + padding, 1)));
    buf.host = b_.CreateBitCast(a, b_.getInt8PtrTy());
    note_buffer(buf);
    buffers_.push_back(std::move(buf));
    emit(op->body);
    buffers_.pop_back();
    return;
  }
  // A func's buffer holds fewer than kMaxAllocationElements elements (its offsets are
  // i32: lane_pointers); a larger one fails as out of memory.
  llvm::Value* bytes = b_.CreateMul(b_.CreateAdd(count, i64(padding)), i64(elem_bytes));
  llvm::BasicBlock* too_large = new_block(op->name + ".too_large");
  llvm::BasicBlock* call = new_block(op->name + ".malloc");
  llvm::BasicBlock* called = new_block(op->name + ".called");
  b_.CreateCondBr(b_.CreateICmpULT(count, i64(kMaxAllocationElements)), call, too_large);
  b_.SetInsertPoint(too_large);
  b_.CreateBr(called);
  b_.SetInsertPoint(call);
  llvm::Value* allocated = b_.CreateCall(runtime("stipple_malloc"), {bytes});
  b_.CreateBr(called);
  b_.SetInsertPoint(called);
  llvm::PHINode* p = b_.CreatePHI(b_.getInt8PtrTy(), 2);
  p->addIncoming(allocated, call);
  p->addIncoming(llvm::ConstantPointerNull::get(b_.getInt8PtrTy()), too_large);
  llvm::BasicBlock* ok = new_block(op->name + ".allocated");
  llvm::BasicBlock* fail = new_block(op->name + ".oom");
  llvm::BasicBlock* after = new_block(op->name + ".freed");
  b_.CreateCondBr(b_.CreateIsNotNull(p), ok, fail);
  b_.SetInsertPoint(fail);
  set_status(kErrorOutOfMemory);
  b_.CreateBr(after);
  b_.SetInsertPoint(ok);
  buf.host = p;
  note_buffer(buf);
  buffers_.push_back(std::move(buf));
  emit(op->body);
  buffers_.pop_back();
  b_.CreateCall(runtime("stipple_free"), {p});
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
}

std::unique_ptr<llvm::Module> generate_module(const LoweredFunction& f, const std::string& symbol,
                                              llvm::LLVMContext& context,
                                              const CodeGenTarget& target) {
  auto module = std::make_unique<llvm::Module>(symbol, context);
  CodeGen cg(f, *module, target);
  cg.generate(symbol);
  return module;
}

BufferDescriptor describe(Buffer& buffer) {
  BufferDescriptor d;
  d.host = buffer.data();
  d.type = static_cast<int32_t>(buffer.type());
  d.dimensions = buffer.dimensions();
  STIPPLE_INTERNAL_CHECK(d.dimensions <= kMaxBufferDims, "buffer has too many dimensions");
  for (int i = 0; i < d.dimensions; ++i) d.dim[i] = buffer.dim(i);
  return d;
}

BufferDescriptor describe(const Buffer& buffer) {
  // Generated code never writes an input; the descriptor type is shared with outputs.
  return describe(const_cast<Buffer&>(buffer));
}

}  // namespace stipple::codegen
