// Constant sizes for the allocations inside GPU kernels (see bound_gpu_allocations.h).
#include "compiler_core/lowering/bound_gpu_allocations.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/lowering/region_analyzer.h"

namespace stipple::lowering {

namespace {

class BoundGpuAllocations : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const For* op) override {
    const bool kernel = op->for_type == ForType::GpuBlock;
    kernel_depth_ += kernel;
    Stmt s = IRMutator::visit(op);
    kernel_depth_ -= kernel;
    return s;
  }

  Stmt visit(const LetStmt* op) override {
    lets_.emplace_back(op->name, op->value);
    Stmt s = IRMutator::visit(op);
    lets_.pop_back();
    return s;
  }

  Stmt visit(const Allocate* op) override {
    Stmt body = mutate(op->body);
    std::vector<Expr> extents = op->extents;
    bool changed = !body.same_as(op->body);
    if (kernel_depth_ > 0) {
      for (Expr& e : extents) {
        if (e.as<IntImm>()) continue;
        // The lets around the Allocate define the region's ends; names bound outside
        // them (the kernel's loop variables, the buffers' shapes) are the atoms.
        RegionAnalyzer an;
        for (const auto& [name, value] : lets_) an.define(name, value);
        const std::optional<int64_t> bound = an.upper_bound(e);
        if (!bound || *bound > kMaxBoundedGpuExtent) continue;
        e = IntImm::make(Int32(), std::max<int64_t>(*bound, 0));
        changed = true;
      }
    }
    if (!changed) return op;
    return Allocate::make(op->name, op->type, std::move(extents), std::move(body));
  }

 private:
  int kernel_depth_ = 0;
  std::vector<std::pair<std::string, Expr>> lets_;
};

}  // namespace

Stmt bound_gpu_allocations(const Stmt& s) { return BoundGpuAllocations().mutate(s); }

}  // namespace stipple::lowering
