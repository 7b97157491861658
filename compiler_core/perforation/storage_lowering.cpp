// Funcs stored in a narrower type than they compute in (storage_lowering.h).
#include "compiler_core/perforation/storage_lowering.h"

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"

namespace stipple::perforation {

namespace {

/// Reads of the lowered funcs, widened back to the type they had.
class WidenReads : public IRMutator {
 public:
  explicit WidenReads(const std::map<std::string, Type>& storage) : storage_(storage) {}

  using IRMutator::visit;
  Expr visit(const Call* op) override {
    Expr e = IRMutator::visit(op);
    if (op->call_type != CallType::Func) return e;
    auto it = storage_.find(op->name);
    if (it == storage_.end()) return e;
    const Call* read = e.as<Call>();
    return Cast::make(op->type, Call::make(it->second, read->name, read->args, read->call_type));
  }

 private:
  const std::map<std::string, Type>& storage_;
};

}  // namespace

Pipeline lower_storage(const Pipeline& p, const std::map<std::string, Type>& storage) {
  if (storage.empty()) return p;
  Pipeline q = p;
  WidenReads widen(storage);
  for (Func& f : q.funcs) {
    f.value = widen.mutate(f.value);
    mutate_updates(f, widen);
    auto it = storage.find(f.name);
    if (it == storage.end()) continue;
    const bool narrows = it->second == Float16() ? f.type == Float32()
                                                 : f.type.is_int() && it->second.is_int() &&
                                                       it->second.bits() < f.type.bits();
    STIPPLE_INTERNAL_CHECK(narrows && f.updates.empty() && f.name != p.output.func,
                           "store_as on '" + f.name + "', which the checker refuses");
    f.type = it->second;
    f.value = Cast::make(it->second, f.value);
  }
  return q;
}

}  // namespace stipple::perforation
