// Producers of perforated funcs computed at the sampled points only (sampled_producers.h).
#include "compiler_core/perforation/sampled_producers.h"

#include <map>
#include <optional>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/ir/substitute.h"

namespace stipple::perforation {

namespace {

std::string sampled_name(const std::string& f) { return f + "$sampled"; }

/// One dimension of a producer sampled: its index is modulus * v + residue.
struct Phase {
  int64_t modulus = 1;
  int64_t residue = 0;
};

// The reads of one func inside an expression.
class CollectReads : public IRVisitor {
 public:
  explicit CollectReads(const std::string& func) : func_(func) {}
  using IRVisitor::visit;
  void visit(const Call* op) override {
    IRVisitor::visit(op);
    if (op->call_type == CallType::Func && op->name == func_) reads.push_back(op->args);
  }
  std::vector<std::vector<Expr>> reads;

 private:
  const std::string& func_;
};

// Reads of `from` become reads of `to` at the exact quotients of the phased dimensions.
class RetargetReads : public IRMutator {
 public:
  RetargetReads(const std::string& from, const std::string& to, const std::vector<Phase>& phases)
      : from_(from), to_(to), phases_(phases) {}
  using IRMutator::visit;
  Expr visit(const Call* op) override {
    Expr e = IRMutator::visit(op);
    if (op->call_type != CallType::Func || op->name != from_) return e;
    std::vector<Expr> args = e.as<Call>()->args;
    for (size_t k = 0; k < args.size(); ++k) {
      if (phases_[k].modulus > 1)
        args[k] = exact_quotient(args[k], phases_[k].residue, phases_[k].modulus);
    }
    return Call::make(op->type, to_, std::move(args), CallType::Func);
  }

 private:
  const std::string& from_;
  const std::string& to_;
  const std::vector<Phase>& phases_;
};

// The phase of dimension k of every read in `reads`: the spacing of the one sampled
// variable of `reader` the index depends on, and the index's residue modulo it, the same
// for every read; modulus 1 where there is none.
Phase common_phase(const std::vector<std::vector<Expr>>& reads, size_t k, const Func& reader,
                   const std::vector<int64_t>& spacing, CongruenceProver& prover) {
  std::optional<Phase> common;
  for (const std::vector<Expr>& args : reads) {
    std::optional<int64_t> modulus;
    for (const std::string& v : variable_names(args[k])) {
      for (size_t d = 0; d < reader.args.size(); ++d) {
        if (reader.args[d] != v || spacing[d] <= 1) continue;
        if (modulus) return {};  // two sampled variables
        modulus = spacing[d];
      }
    }
    if (!modulus) return {};
    std::optional<int64_t> residue = prover.residue(args[k], *modulus);
    if (!residue) return {};
    Phase p{*modulus, *residue};
    if (common && (common->modulus != p.modulus || common->residue != p.residue)) return {};
    common = p;
  }
  return common.value_or(Phase{});
}

bool is_realised(const Schedule& t, const std::string& f) {
  const FuncSchedule* fs = t.find(f);
  return fs && fs->compute && fs->compute->kind != LevelKind::Inline;
}

// Whether any func of q but `reader` reads f.
bool read_elsewhere(const Pipeline& q, const std::string& f, const std::string& reader) {
  if (q.output.func == f) return true;
  for (const Func& g : q.funcs) {
    if (g.name != reader && called_funcs(g).count(f)) return true;
  }
  return false;
}

}  // namespace

void sample_producers(Pipeline& q, Schedule& t, const std::vector<SampledFunc>& sampled,
                      const std::set<std::string>& keep, CongruenceProver& prover) {
  std::vector<SampledFunc> work = sampled;
  while (!work.empty()) {
    SampledFunc f = std::move(work.back());
    work.pop_back();
    std::set<std::string> producers;
    {
      const Func* reader = q.find_func(f.name);
      STIPPLE_INTERNAL_CHECK(reader, "no func " + f.name);
      add_called_funcs(reader->value, producers);
    }
    for (const std::string& name : producers) {
      const Func* reader = q.find_func(f.name);
      const Func* p = q.find_func(name);
      if (!p || name == f.name || keep.count(name) || !p->updates.empty() ||
          !is_realised(t, name) || read_elsewhere(q, name, f.name))
        continue;
      CollectReads collect(name);
      reader->value.accept(&collect);
      std::vector<Phase> phases(p->args.size());
      bool any = false;
      for (size_t k = 0; k < p->args.size(); ++k) {
        phases[k] = common_phase(collect.reads, k, *reader, f.spacing, prover);
        any = any || phases[k].modulus > 1;
      }
      if (!any) continue;

      // P$sampled: P at the phased points, with P's schedule; P is inlined into it.
      const std::string to = sampled_name(name);
      Func g;
      g.name = to;
      g.args = p->args;
      g.type = p->type;
      std::map<std::string, Expr> at;
      SampledFunc next{to, std::vector<int64_t>(p->args.size(), 1)};
      for (size_t k = 0; k < p->args.size(); ++k) {
        if (phases[k].modulus == 1) continue;
        at[p->args[k]] = Add::make(
            Mul::make(Variable::make(p->args[k]), IntImm::make(Int32(), phases[k].modulus)),
            IntImm::make(Int32(), phases[k].residue));
        next.spacing[k] = phases[k].modulus;
      }
      g.value = substitute(p->value, at);
      RetargetReads retarget(name, to, phases);
      for (Func& h : q.funcs) {
        if (h.name == f.name) h.value = retarget.mutate(h.value);
      }
      t.funcs[to] = t.funcs[name];
      t.funcs.erase(name);
      // Funcs computed in P's loops are computed in P$sampled's.
      for (auto& [h, fs] : t.funcs) {
        for (std::optional<LoopLevel>* l : {&fs.compute, &fs.store}) {
          if (*l && (*l)->kind == LevelKind::At && (*l)->func == name) (*l)->func = to;
        }
      }
      q.funcs.push_back(std::move(g));
      work.push_back(std::move(next));
    }
  }
}

}  // namespace stipple::perforation
