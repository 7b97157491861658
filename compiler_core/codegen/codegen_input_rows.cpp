// Loop versioning of input reads in vector reductions. A vector read of an input row checks,
// per read, whether the whole row lies inside the image and takes a plain load or per-lane
// boundary handling (emit_input_load). Inside a reduction that check runs at every point of
// the domain: for a 17-tap blur, 17 checks and branches per vector, which cost more than the
// taps themselves. When a read's coordinates are affine in the reduction's variables, its
// extreme coordinates over the domain are at the domain's corners, so one check of every
// corner before the loops decides for all points. The reduction is emitted twice: a copy in
// which those reads are plain row loads, taken when every corner is inside, and the general
// copy otherwise (near the image's edges). Halide gets the same effect from loop
// partitioning of its boundary conditions.
#include <set>
#include <string>
#include <vector>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::codegen {

namespace {

/// At most this many reduction variables (2^n corners are checked).
constexpr size_t kMaxVersionedDimensions = 3;

/// The input reads of a reduction body whose coordinates are affine in the reduction's
/// variables (sums of the variables times integer constants and of terms that mention no
/// name bound in the body), so that their extremes over the domain are at its corners.
class AffineInputReads : public IRVisitor {
 public:
  explicit AffineInputReads(const Reduce* op) {
    for (const ReductionVariable& rv : op->domain) reduction_vars_.insert(rv.name);
  }
  std::set<const Call*> reads;

  void visit(const Call* op) override {
    if (op->call_type == CallType::Input) {
      bool ok = true;
      for (const Expr& a : op->args) ok = ok && affine(a);
      if (ok) reads.insert(op);
    }
    IRVisitor::visit(op);
  }
  void visit(const Let* op) override {
    op->value.accept(this);
    const bool fresh = inner_.insert(op->name).second;
    op->body.accept(this);
    if (fresh) inner_.erase(op->name);
  }
  void visit(const Reduce* op) override {
    std::vector<std::string> fresh;
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
    }
    for (const ReductionVariable& rv : op->domain) {
      if (inner_.insert(rv.name).second) fresh.push_back(rv.name);
    }
    op->body.accept(this);
    for (const std::string& n : fresh) inner_.erase(n);
  }

 private:
  bool affine(const Expr& e) const {
    switch (e.node_type()) {
      case IRNodeType::IntImm: return true;
      case IRNodeType::Variable: return inner_.count(e.as<Variable>()->name) == 0;
      case IRNodeType::Add: return affine(e.as<Add>()->a) && affine(e.as<Add>()->b);
      case IRNodeType::Sub: return affine(e.as<Sub>()->a) && affine(e.as<Sub>()->b);
      case IRNodeType::Mul: {
        const Mul* m = e.as<Mul>();
        return (m->a.as<IntImm>() && affine(m->b)) || (m->b.as<IntImm>() && affine(m->a));
      }
      default: {
        // Anything else must be constant over the domain.
        std::set<std::string> bound = inner_;
        bound.insert(reduction_vars_.begin(), reduction_vars_.end());
        return !mentions(e, bound, /*or_loads=*/true);
      }
    }
  }

  std::set<std::string> reduction_vars_;
  std::set<std::string> inner_;  // names bound inside the body
};

}  // namespace

std::vector<llvm::Value*> CodeGen::versioned_for_input_rows(
    const std::vector<const Reduce*>& group,
    const std::function<std::vector<llvm::Value*>()>& emit_copy) {
  // The group's reductions share one domain (codegen_reductions.cpp); each names its
  // variables its own way.
  const std::vector<ReductionVariable>& domain = group[0]->domain;
  if (!vector_mode() || domain.empty() || domain.size() > kMaxVersionedDimensions) {
    return emit_copy();
  }
  std::set<const Call*> reads;
  for (const Reduce* op : group) {
    AffineInputReads affine(op);
    op->body.accept(&affine);
    reads.insert(affine.reads.begin(), affine.reads.end());
  }
  // Reads a partitioned loop's interior already knows inside need no check here either,
  // and in its general copy, which runs at the image's edges, a reduction over only
  // partitioned reads is not worth a second copy.
  for (const Call* read : inside_rows_) reads.erase(read);
  if (reads.empty()) return emit_copy();
  bool all_at_edges = true;
  for (const Call* read : reads) all_at_edges = all_at_edges && edge_reads_.count(read) > 0;
  if (all_at_edges) return emit_copy();
  // Not under a mask: partial vectors (loop tails) are rare, and a second copy there would
  // cost compile time for little. emit_vector_if gives the body an unmasked copy instead,
  // where this reduction is versioned.
  if (mask_) {
    ++unversioned_under_mask_;
    return emit_copy();
  }

  // Every corner of the domain: each read's row inside the image (lanes 0..W-1 along
  // dimension 0, the other coordinates uniform). Reads that turn out not to be rows (their
  // dimension 0 does not advance by one per lane) keep their per-read check.
  std::vector<llvm::Value*> lo, hi;
  for (const ReductionVariable& rv : domain) {
    lo.push_back(emit(rv.min));
    hi.push_back(emit(rv.max));
  }
  std::set<const Call*> rows = reads;
  llvm::Value* inside = b_.getTrue();
  const size_t corners = size_t{1} << domain.size();
  for (size_t corner = 0; corner < corners; ++corner) {
    for (const Reduce* op : group) {
      for (size_t v = 0; v < domain.size(); ++v) {
        push_var(op->domain[v].name, (corner >> v) & 1 ? hi[v] : lo[v]);
      }
    }
    for (const Call* read : reads) {
      if (!rows.count(read)) continue;
      const BufferInfo& buf = find_buffer(read->name);
      std::vector<llvm::Value*> coords;
      for (const Expr& a : read->args) coords.push_back(emit(a));
      if (row_stride(buf, coords) == 0) {
        rows.erase(read);
        continue;
      }
      inside = b_.CreateAnd(inside, row_inside(buf, coords));
    }
    for (size_t i = 0; i < group.size() * domain.size(); ++i) pop_var();
  }
  if (rows.empty()) return emit_copy();

  llvm::BasicBlock* plain = new_block("rows.inside");
  llvm::BasicBlock* general = new_block("rows.edge");
  llvm::BasicBlock* after = new_block("rows.end");
  b_.CreateCondBr(inside, plain, general);
  b_.SetInsertPoint(plain);
  const std::set<const Call*> saved = inside_rows_;
  inside_rows_.insert(rows.begin(), rows.end());
  std::vector<llvm::Value*> fast = emit_copy();
  inside_rows_ = saved;
  llvm::BasicBlock* plain_end = b_.GetInsertBlock();
  b_.CreateBr(after);
  b_.SetInsertPoint(general);
  std::vector<llvm::Value*> slow = emit_copy();
  llvm::BasicBlock* general_end = b_.GetInsertBlock();
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
  std::vector<llvm::Value*> merged;
  for (size_t i = 0; i < fast.size(); ++i) {
    llvm::PHINode* phi = b_.CreatePHI(fast[i]->getType(), 2);
    phi->addIncoming(fast[i], plain_end);
    phi->addIncoming(slow[i], general_end);
    merged.push_back(phi);
  }
  return merged;
}

llvm::Value* CodeGen::lanes_inside(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) {
  llvm::Value* lane0 =
      b_.CreateSExt(b_.CreateExtractElement(coords[0], uint64_t{0}), b_.getInt64Ty());
  // The last lane's coordinate (a row: row_stride(buf, coords) != 0, so the step is known).
  llvm::Value* last = b_.CreateAdd(lane0, i64((lanes_ - 1) * *lane_stride(coords[0])));
  return b_.CreateAnd(b_.CreateICmpSGE(lane0, i64(0)), b_.CreateICmpSLT(last, buf.extent[0]));
}

llvm::Value* CodeGen::row_inside(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) {
  llvm::Value* inside = lanes_inside(buf, coords);
  for (int d = 1; d < buf.dims; ++d) {
    llvm::Value* c = b_.CreateSExt(coords[d], b_.getInt64Ty());
    inside = b_.CreateAnd(inside, b_.CreateICmpULT(c, buf.extent[d]));
  }
  return inside;
}

}  // namespace stipple::codegen
