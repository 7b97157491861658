// Buffer alias information for LLVM: every load and store of a buffer (a func's
// allocation, an input, an output) carries a TBAA tag of that buffer's own, a sibling of
// every other buffer's under one root, so LLVM knows that accesses to different buffers
// never overlap (Halide's CodeGen_LLVM tags its buffers the same way).
//
// Without it a store into one func's buffer may, for all LLVM can tell, change any other:
// buffers are heap blocks or caller memory reached through pointers loaded at run time
// (from the descriptors, or from a parallel closure's captured state), which LLVM's own
// analyses cannot tell apart. Then a table read in a loop that stores elsewhere (a LUT
// index, the slice of a pyramid level) is loaded again every iteration instead of hoisted,
// and loads cannot be reordered past stores.
//
// The contract this relies on, as Halide's does: the buffers a pipeline is called with do
// not overlap each other (no input is also an output), and lowering gives every
// allocation a name of its own. Accesses of one buffer share a tag, so they are ordered
// as written. Memory that is not a buffer (locals, a median's scratch, closure state) is
// left untagged, which LLVM treats as possibly aliasing anything.
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Operator.h>

#include "compiler_core/codegen/codegen_internal.h"

namespace stipple::codegen {

namespace {

/// The object a (vector of) pointer(s) is computed from: through GEPs and casts, which
/// getUnderlyingObject does for scalar pointers only (a gather's lane pointers are a GEP of
/// one base by a vector of indices).
const llvm::Value* underlying_object(const llvm::Value* p) {
  while (p->getType()->isVectorTy()) {
    if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(p)) {
      p = gep->getPointerOperand();
    } else if (const auto* cast = llvm::dyn_cast<llvm::BitCastOperator>(p)) {
      p = cast->getOperand(0);
    } else {
      return p;
    }
  }
  return llvm::getUnderlyingObject(p);
}

/// The pointer operand of a memory access this tags, or nullptr.
const llvm::Value* accessed_pointer(const llvm::Instruction& inst) {
  if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) return load->getPointerOperand();
  if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
    return store->getPointerOperand();
  }
  if (const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) {
    switch (call->getIntrinsicID()) {
      case llvm::Intrinsic::masked_load:
      case llvm::Intrinsic::masked_gather: return call->getArgOperand(0);
      case llvm::Intrinsic::masked_store:
      case llvm::Intrinsic::masked_scatter: return call->getArgOperand(1);
      default: return nullptr;
    }
  }
  return nullptr;
}

}  // namespace

void CodeGen::note_buffer(const BufferInfo& buf) {
  buffer_objects_[llvm::getUnderlyingObject(buf.host)] = buf.name;
}

void CodeGen::tag_buffer_accesses() {
  llvm::MDBuilder md(ctx_);
  llvm::MDNode* root = md.createTBAARoot("stipple buffers");
  std::map<std::string, llvm::MDNode*> tags;
  for (llvm::Function& fn : module_) {
    for (llvm::BasicBlock& block : fn) {
      for (llvm::Instruction& inst : block) {
        const llvm::Value* p = accessed_pointer(inst);
        if (!p) continue;
        auto buffer = buffer_objects_.find(underlying_object(p));
        if (buffer == buffer_objects_.end()) continue;
        llvm::MDNode*& tag = tags[buffer->second];
        if (!tag) {
          llvm::MDNode* type = md.createTBAAScalarTypeNode("buffer " + buffer->second, root);
          tag = md.createTBAAStructTagNode(type, type, 0);
        }
        inst.setMetadata(llvm::LLVMContext::MD_tbaa, tag);
      }
    }
  }
}

}  // namespace stipple::codegen
