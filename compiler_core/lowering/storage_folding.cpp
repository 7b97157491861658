// Storage folding (see storage_folding.h): shrinks the Allocate of a slid func along its
// sliding dimension and indexes that dimension modulo the fold.
#include "compiler_core/lowering/storage_folding.h"

#include <string>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::lowering {

namespace {

Expr i32(int64_t v) { return IntImm::make(Int32(), v); }

// Whether every Provide to and Call of `func` in a statement is inside loop `loop`, and the
// loop is there at all.
class AccessesInsideLoop : public IRVisitor {
 public:
  AccessesInsideLoop(const std::string& func, const std::string& loop) : func_(func), loop_(loop) {}
  bool ok() const { return seen_loop_ && !outside_; }

  using IRVisitor::visit;
  void visit(const For* op) override {
    op->min.accept(this);
    op->extent.accept(this);
    bool is_loop = op->name == loop_;
    seen_loop_ = seen_loop_ || is_loop;
    depth_ += is_loop;
    op->body.accept(this);
    depth_ -= is_loop;
  }
  void visit(const Provide* op) override {
    if (op->name == func_ && depth_ == 0) outside_ = true;
    IRVisitor::visit(op);
  }
  void visit(const Call* op) override {
    if (op->call_type == CallType::Func && op->name == func_ && depth_ == 0) outside_ = true;
    IRVisitor::visit(op);
  }

 private:
  const std::string& func_;
  const std::string& loop_;
  int depth_ = 0;
  bool seen_loop_ = false, outside_ = false;
};

// Dimension `dim` of every access of `func` becomes min + (index - min) % fold.
class FoldAccesses : public IRMutator {
 public:
  FoldAccesses(std::string func, int dim, int64_t fold)
      : func_(std::move(func)), dim_(dim), fold_(fold) {}

  using IRMutator::visit;
  Expr visit(const Call* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate_exprs(op->args, &changed);
    if (op->call_type != CallType::Func || op->name != func_) {
      if (!changed) return op;
      return op->call_type == CallType::Intrinsic
                 ? Call::make_intrinsic(op->intrinsic, args)
                 : Call::make(op->type, op->name, args, op->call_type);
    }
    args[dim_] = fold(args[dim_]);
    return Call::make(op->type, op->name, args, op->call_type);
  }
  Stmt visit(const Provide* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate_exprs(op->args, &changed);
    Expr value = mutate(op->value);
    if (op->name == func_) {
      args[dim_] = fold(args[dim_]);
      changed = true;
    }
    if (!changed && value.same_as(op->value)) return op;
    return Provide::make(op->name, value, args, op->atomic);
  }

 private:
  Expr fold(const Expr& index) const {
    Expr min = Variable::make(func_ + ".min." + std::to_string(dim_));
    return Add::make(min, Mod::make(Sub::make(index, min), i32(fold_)));
  }

  std::string func_;
  int dim_;
  int64_t fold_;
};

class Folder : public IRMutator {
 public:
  explicit Folder(const std::vector<SlidingWindow>& slid) : slid_(slid) {}

  using IRMutator::visit;
  Stmt visit(const Allocate* op) override {
    Stmt body = mutate(op->body);
    for (const SlidingWindow& w : slid_) {
      if (w.func != op->name || w.dim < 0 || w.window <= 0) continue;
      AccessesInsideLoop inside(w.func, w.loop);
      body.accept(&inside);
      if (!inside.ok()) continue;
      int64_t fold = 1;
      while (fold < w.window) fold *= 2;
      std::vector<Expr> extents = op->extents;
      extents[w.dim] = Min::make(extents[w.dim], i32(fold));
      return Allocate::make(op->name, op->type, extents,
                            FoldAccesses(w.func, w.dim, fold).mutate(body));
    }
    return body.same_as(op->body) ? Stmt(op)
                                  : Allocate::make(op->name, op->type, op->extents, body);
  }

 private:
  const std::vector<SlidingWindow>& slid_;
};

}  // namespace

Stmt storage_folding(const Stmt& s, const std::vector<SlidingWindow>& slid) {
  if (slid.empty()) return s;
  return Folder(slid).mutate(s);
}

}  // namespace stipple::lowering
