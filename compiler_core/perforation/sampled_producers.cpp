// Producers of perforated funcs computed at the sampled points only (sampled_producers.h).
#include "compiler_core/perforation/sampled_producers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

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

// The funcs of q that read f (definitions and updates).
std::vector<std::string> readers_of(const Pipeline& q, const std::string& f) {
  std::vector<std::string> readers;
  for (const Func& g : q.funcs) {
    if (called_funcs(g).count(f)) readers.push_back(g.name);
  }
  return readers;
}

// The reads of `producer` by each of its readers.
using ReadsByReader = std::vector<std::pair<const Func*, std::vector<std::vector<Expr>>>>;
ReadsByReader reads_of(const Pipeline& q, const std::vector<std::string>& readers,
                       const std::string& producer) {
  ReadsByReader reads;
  for (const std::string& r : readers) {
    const Func* reader = q.find_func(r);
    CollectReads collect(producer);
    reader->value.accept(&collect);
    reads.emplace_back(reader, std::move(collect.reads));
  }
  return reads;
}

// The phase of dimension k that every reader's reads share (modulus 1: none).
Phase shared_phase(const ReadsByReader& reads, size_t k,
                   const std::map<std::string, std::vector<int64_t>>& spacing_of,
                   CongruenceProver& prover) {
  std::optional<Phase> shared;
  for (const auto& [reader, args] : reads) {
    Phase p = common_phase(args, k, *reader, spacing_of.at(reader->name), prover);
    if (p.modulus == 1 ||
        (shared && (shared->modulus != p.modulus || shared->residue != p.residue)))
      return Phase{};
    shared = p;
  }
  return shared.value_or(Phase{});
}

}  // namespace

void sample_producers(Pipeline& q, Schedule& t, const std::vector<SampledFunc>& sampled,
                      const std::set<std::string>& keep, CongruenceProver& prover) {
  std::map<std::string, std::vector<int64_t>> spacing_of;
  for (const SampledFunc& f : sampled) spacing_of[f.name] = f.spacing;
  std::vector<std::string> work;
  for (const SampledFunc& f : sampled) work.push_back(f.name);
  while (!work.empty()) {
    const std::string f = std::move(work.back());
    work.pop_back();
    std::set<std::string> producers;
    {
      const Func* reader = q.find_func(f);
      STIPPLE_INTERNAL_CHECK(reader, "no func " + f);
      add_called_funcs(reader->value, producers);
    }
    for (const std::string& name : producers) {
      const Func* p = q.find_func(name);
      if (!p || keep.count(name) || spacing_of.count(name) || !p->updates.empty() ||
          !is_realised(t, name) || q.output.func == name)
        continue;
      // Every reader computes strided points (a reader that is not sampled yet may be
      // later, and P is looked at again from it then).
      const std::vector<std::string> readers = readers_of(q, name);
      bool all_sampled = true;
      for (const std::string& r : readers) all_sampled = all_sampled && spacing_of.count(r);
      if (!all_sampled) continue;
      const ReadsByReader reads = reads_of(q, readers, name);
      std::vector<Phase> phases(p->args.size());
      bool any = false;
      for (size_t k = 0; k < p->args.size(); ++k) {
        phases[k] = shared_phase(reads, k, spacing_of, prover);
        any = any || phases[k].modulus > 1;
      }
      if (!any) continue;

      // P$sampled: P at the phased points, with P's schedule, in P's place: P's readers
      // read it instead, and P, read by nothing now, is gone.
      const std::string to = sampled_name(name);
      STIPPLE_INTERNAL_CHECK(!q.find_func(to) && !t.funcs.count(to), to + " exists already");
      Func g;
      g.name = to;
      g.args = p->args;
      g.type = p->type;
      std::map<std::string, Expr> at;
      std::vector<int64_t> spacing(p->args.size(), 1);
      for (size_t k = 0; k < p->args.size(); ++k) {
        if (phases[k].modulus == 1) continue;
        Expr index =
            Mul::make(Variable::make(p->args[k]), IntImm::make(Int32(), phases[k].modulus));
        if (phases[k].residue != 0)
          index = Add::make(index, IntImm::make(Int32(), phases[k].residue));
        at[p->args[k]] = index;
        spacing[k] = phases[k].modulus;
      }
      g.value = substitute(p->value, at);
      RetargetReads retarget(name, to, phases);
      for (Func& h : q.funcs) {
        if (std::find(readers.begin(), readers.end(), h.name) != readers.end())
          h.value = retarget.mutate(h.value);
      }
      auto schedule = t.funcs.find(name);
      t.funcs[to] = schedule->second;
      t.funcs.erase(name);
      // Funcs computed in P's loops are computed in P$sampled's.
      for (auto& [h, fs] : t.funcs) {
        for (std::optional<LoopLevel>* l : {&fs.compute, &fs.store}) {
          if (*l && (*l)->kind == LevelKind::At && (*l)->func == name) (*l)->func = to;
        }
      }
      q.funcs.erase(std::find_if(q.funcs.begin(), q.funcs.end(),
                                 [&](const Func& h) { return h.name == name; }));
      q.funcs.push_back(std::move(g));
      spacing_of[to] = std::move(spacing);
      work.push_back(to);
    }
  }
}

}  // namespace stipple::perforation
