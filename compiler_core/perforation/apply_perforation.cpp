// Image perforation as a pipeline rewrite (apply_perforation.h).
#include "compiler_core/perforation/apply_perforation.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/substitute.h"
#include "compiler_core/perforation/adaptive_sampling.h"
#include "compiler_core/perforation/grid_reconstruction.h"
#include "compiler_core/perforation/importance_sampling.h"
#include "compiler_core/perforation/irregular_reconstruction.h"
#include "compiler_core/perforation/reduction_perforation.h"
#include "compiler_core/perforation/sampled_producers.h"
#include "compiler_core/perforation/stage_templates.h"
#include "compiler_core/perforation/storage_lowering.h"
#include "compiler_core/schedule/approximation.h"

namespace stipple::perforation {

std::string output_samples_name(const std::string& output) { return output + "$samples"; }

namespace {

Expr i32(int64_t v) { return IntImm::make(Int32(), v); }

Expr zero_of(Type t) { return t.is_float() ? FloatImm::make(t, 0.0) : IntImm::make(t, 0); }

// A func with f's variables and type.
Func func_like(const Func& f, const std::string& name, Expr value) {
  Func g;
  g.name = name;
  g.args = f.args;
  g.type = f.type;
  g.value = std::move(value);
  return g;
}

std::vector<Expr> pure_vars(const Func& f) {
  std::vector<Expr> vars;
  for (const std::string& a : f.args) vars.push_back(Variable::make(a));
  return vars;
}

// The spacing along dimension d of the points f computes (1: every point).
int64_t computed_spacing(const FuncApproximation& a, const Func& f, size_t d) {
  if (a.perforation) {
    return a.perforation->sampling == SamplingKind::Grid ? a.perforation->spacing[d] : 1;
  }
  for (const LoopPerforation& l : a.loops) {
    if (!l.reduction && l.kind == LoopPerforationKind::Stride && l.var == f.args[d])
      return l.stride;
  }
  return 1;
}

// Names of the funcs of f's irregular sampling: `<f>$adaptive$...`, `<f>$importance$...`.
std::string irregular_prefix(const std::string& f, const Perforation& p) {
  return f + "$" + sampling_kind_name(p.sampling);
}

// How reads of one approximated func are rewritten.
struct ReadRule {
  const Func* func = nullptr;  // the original definition
  FuncApproximation approximation;
  std::string samples;  // the func holding the computed points
  std::string dense;    // precomputed reconstruction, or empty
};

// A compacted sparse stage (see below): the func computing the points of one row side by
// side, and what it needs.
struct Compaction {
  std::string func;    // the perforated func (its points are computed compacted)
  std::string prefix;  // of its irregular sampling's funcs
  Expr body;           // its value at (x, y, ...), before compaction
  int64_t k = 0;       // adaptive: coarse points come from the coarse grid
};

// Compaction of the points of a row (prefix$compact$pos: how many points lie left of x;
// prefix$compact$list: their x, in order), from the mask less the coarse grid.
constexpr const char* kCompaction = R"(
pipeline compaction
input mask : u8[x, y]
func chosen(x, y) = select(mask(x, y) != 0 && !(@ON_GRID@) && y >= 0 && y < mask.height, 1, 0)
func pos(x, y) = 0
pos(x, y) = pos(x - 1, y) + chosen(x - 1, y) for x in 1..mask.width
func list(x, y) = 0
# Rows as a reduction variable too: a pure y may not appear in x's position.
list(clamp(select(chosen(x, r) != 0, pos(x, r), mask.width), 0, mask.width), r) = x
    for x in 0..mask.width - 1, r in 0..mask.height - 1
output list
)";

constexpr const char* kCompactionSchedule = R"(
pos.compute_root().vectorize(x, 16)
pos.update(0).parallel(y)
list.compute_root().vectorize(x, 16).parallel(y)
)";

class Rewriter {
 public:
  Rewriter(const Pipeline& p, const PerforationOptions& options, CongruenceProver* prover)
      : p_(p), prover_(options.congruence ? prover : nullptr) {}

  // The value of the approximated func at `args`: what its readers see.
  Expr read(const ReadRule& r, const std::vector<Expr>& args) const {
    return with_channels(r, args, [&](const std::vector<Expr>& a) {
      if (!r.dense.empty()) return Call::make(r.func->type, r.dense, a, CallType::Func);
      return points(r, a);
    });
  }

  // The reconstruction alone (the definition of a precomputed f$dense).
  Expr points(const ReadRule& r, const std::vector<Expr>& args) const {
    const FuncApproximation& a = r.approximation;
    if (a.perforation) {
      GridSamples g{r.samples, r.func->type, a.perforation->spacing, a.perforation->reconstruction};
      return reconstruct_from_grid(g, args, prover_);
    }
    Expr keep;
    std::vector<Expr> index = args;
    for (const LoopPerforation& l : a.loops) {
      if (l.reduction) continue;
      size_t d = dim_of(*r.func, l.var);
      Expr cond;
      if (l.kind == LoopPerforationKind::Stride) {
        cond = EQ::make(Mod::make(args[d], i32(l.stride)), i32(0));
        index[d] = Div::make(args[d], i32(l.stride));
      } else {
        Expr extent = p_.output.extents[d];
        Expr skipped = Cast::make(Int32(), Mul::make(Cast::make(Float32(), extent),
                                                     FloatImm::make(Float32(), l.fraction)));
        if (l.kind == LoopPerforationKind::TruncateLast) {
          Expr last = Sub::make(Sub::make(extent, skipped), i32(1));
          cond = LE::make(args[d], last);
          index[d] = Min::make(args[d], last);
        } else {
          cond = GE::make(args[d], skipped);
          index[d] = Max::make(args[d], skipped);
        }
      }
      keep = keep.defined() ? And::make(keep, cond) : cond;
    }
    Expr value = Call::make(r.func->type, r.samples, index, CallType::Func);
    return keep.defined() ? Select::make(keep, value, zero_of(r.func->type)) : value;
  }

  Expr with_channels(const ReadRule& r, const std::vector<Expr>& args,
                     const std::function<Expr(const std::vector<Expr>&)>& inner) const {
    if (!r.approximation.channels) return inner(args);
    const size_t last = args.size() - 1;
    const int64_t c = *r.approximation.channels;
    std::vector<Expr> computed = args;
    computed[last] = Min::make(args[last], i32(c - 1));
    Expr copied;
    if (const std::string& from = r.approximation.channels_from; !from.empty()) {
      const Func* g = p_.find_func(from);
      STIPPLE_INTERNAL_CHECK(g, "no func " + from);
      copied = Call::make(g->type, from, args, CallType::Func);
      if (g->type != r.func->type) copied = Cast::make(r.func->type, copied);
    } else {
      const InputDecl* source = channel_source(p_, *r.func);
      STIPPLE_INTERNAL_CHECK(source, "no channel source for " + r.func->name);
      copied = Call::make(source->type, source->name, args, CallType::Input);
    }
    return Select::make(LT::make(args[last], i32(c)), inner(computed), copied);
  }

 private:
  static size_t dim_of(const Func& f, const std::string& var) {
    for (size_t d = 0; d < f.args.size(); ++d) {
      if (f.args[d] == var) return d;
    }
    STIPPLE_INTERNAL_CHECK(false, "'" + f.name + "' has no variable " + var);
  }

  const Pipeline& p_;
  CongruenceProver* prover_;
};

// Rewrites every read of an approximated func by its rule; the arguments first, and the
// rewritten read is not visited again (it reads the samples, by the same name).
class RewriteReads : public IRMutator {
 public:
  RewriteReads(const Rewriter& rewriter, const std::map<std::string, ReadRule>& rules)
      : rewriter_(rewriter), rules_(rules) {}

  using IRMutator::visit;

  Expr visit(const Call* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate_exprs(op->args, &changed);
    if (op->call_type == CallType::Func) {
      auto it = rules_.find(op->name);
      if (it != rules_.end()) return rewriter_.read(it->second, args);
    }
    if (!changed) return op;
    if (op->call_type == CallType::Intrinsic) return Call::make_intrinsic(op->intrinsic, args);
    return Call::make(op->type, op->name, args, op->call_type);
  }

 private:
  const Rewriter& rewriter_;
  const std::map<std::string, ReadRule>& rules_;
};

Schedule without_approximations(const Schedule& s) {
  Schedule t = s;
  for (auto it = t.funcs.begin(); it != t.funcs.end();) {
    FuncSchedule& fs = it->second;
    for (auto st = fs.stages.begin(); st != fs.stages.end();) {
      auto& ds = st->second.directives;
      ds.erase(std::remove_if(ds.begin(), ds.end(),
                              [](const Directive& d) {
                                return find_directive_spec(d.name)->scope ==
                                       DirectiveScope::Approximation;
                              }),
               ds.end());
      st = ds.empty() ? fs.stages.erase(st) : std::next(st);
    }
    bool empty = !fs.compute && !fs.store && fs.stages.empty();
    it = empty ? t.funcs.erase(it) : std::next(it);
  }
  return t;
}

// The output's reconstruction (recon.back() is the output): rows of 32 in parallel, the
// channels inside them, vectorised along the first dimension; the separable stages
// before it computed per row chunk (and channel), so that each row of samples is
// interpolated along the first dimension once per chunk rather than once per output row.
void schedule_output_reconstruction(Schedule& t, const Func& f, const std::vector<Func>& recon) {
  const std::vector<std::string>& v = f.args;
  FuncSchedule last;
  std::vector<Directive>& ds = last.stages[0].directives;
  std::string inner = v[0];
  if (v.size() >= 2) {
    const std::string rows = v[1] + "$i";
    ds.push_back(
        Directive::make("split", {ScheduleArg::make_name(v[1]), ScheduleArg::make_name(v[1]),
                                  ScheduleArg::make_name(rows), ScheduleArg::make_int(32)}));
    inner = v[1];
    if (v.size() == 3) {
      ds.push_back(
          Directive::make("reorder", {ScheduleArg::make_name(rows), ScheduleArg::make_name(v[2]),
                                      ScheduleArg::make_name(v[1])}));
      inner = v[2];
    }
    ds.push_back(Directive::make("parallel", {ScheduleArg::make_name(v[1])}));
  }
  ds.push_back(
      Directive::make("vectorize", {ScheduleArg::make_name(v[0]), ScheduleArg::make_int(16)}));
  const std::string& out = recon.back().name;
  for (size_t i = 0; i + 1 < recon.size(); ++i) {
    FuncSchedule fs;
    fs.compute = v.size() >= 2 ? LoopLevel::at(out, 0, inner) : LoopLevel::root();
    fs.stages[0].directives.push_back(
        Directive::make("vectorize", {ScheduleArg::make_name(v[0]), ScheduleArg::make_int(16)}));
    t.funcs[recon[i].name] = std::move(fs);
  }
  t.funcs[out] = std::move(last);
}

// Computes the points of compaction `c` compacted: `samples` (the func that has the
// perforated func's schedule) becomes, at (x, y, ...), the point of row y numbered x, so
// that its vectors hold 16 points to compute (and its tiles beyond a row's count do
// nothing); a dense func puts them in place (and adaptive sampling's coarse points, from
// the coarse grid). Returns the name of the dense func.
std::string add_compaction(Pipeline& q, Schedule& t, const Compaction& c,
                           const std::string& samples, const std::vector<Expr>& extents) {
  const std::string on_grid =
      c.k > 0 ? "x % " + std::to_string(c.k) + " == 0 && y % " + std::to_string(c.k) + " == 0"
              : "1 == 0";
  const std::string list = add_template_stages(
      q, t, fill_template(kCompaction, {{"ON_GRID", on_grid}}), kCompactionSchedule,
      c.prefix + "$compact", {{"mask", {c.prefix + "$mask", {extents[0], extents[1]}}}});
  const std::string pos = c.prefix + "$compact$pos";
  Func* g = nullptr;
  for (Func& h : q.funcs) {
    if (h.name == samples) g = &h;
  }
  STIPPLE_INTERNAL_CHECK(g, "no func " + samples);
  std::vector<Expr> vars = pure_vars(*g);
  const Expr& x = vars[0];
  const Expr& y = vars[1];
  const Expr last = Sub::make(extents[0], i32(1));
  auto clamp_x = [&](Expr e) { return Max::make(Min::make(std::move(e), last), i32(0)); };
  Expr count = Call::make(Int32(), pos, {extents[0], y}, CallType::Func);
  Expr point = clamp_x(Call::make(Int32(), list, {x, y}, CallType::Func));
  g->value =
      Select::make(LT::make(x, count), substitute(c.body, {{g->args[0], point}}), zero_of(g->type));

  std::vector<Expr> at = vars;
  at[0] = clamp_x(Call::make(Int32(), pos, {x, y}, CallType::Func));
  Expr value = Call::make(g->type, samples, at, CallType::Func);
  if (c.k > 0) {
    std::vector<Expr> coarse = vars;
    coarse[0] = Div::make(x, i32(c.k));
    coarse[1] = Div::make(y, i32(c.k));
    Expr grid = And::make(EQ::make(Mod::make(x, i32(c.k)), i32(0)),
                          EQ::make(Mod::make(y, i32(c.k)), i32(0)));
    value = Select::make(grid, Call::make(g->type, c.prefix + "$coarse", coarse, CallType::Func),
                         value);
  }
  Func dense = func_like(*g, c.prefix + "$scattered", value);
  FuncSchedule fs;
  fs.compute = LoopLevel::root();
  fs.stages[0].directives.push_back(Directive::make(
      "vectorize", {ScheduleArg::make_name(g->args[0]), ScheduleArg::make_int(16)}));
  fs.stages[0].directives.push_back(
      Directive::make("parallel", {ScheduleArg::make_name(g->args[1])}));
  t.funcs[dense.name] = std::move(fs);
  const std::string name = dense.name;
  q.funcs.push_back(std::move(dense));
  return name;
}

}  // namespace

PerforatedPipeline apply_perforation(const Pipeline& original, const Schedule& s,
                                     const PerforationOptions& options, CongruenceProver* prover) {
  if (!has_approximation(s)) return {original, s};
  std::unique_ptr<CongruenceProver> own;
  if (!prover && (options.congruence || options.sampled_producers)) {
    own = std::make_unique<CongruenceProver>();
    prover = own.get();
  }
  const SourceText no_source("", s.file_name);
  std::map<std::string, FuncApproximation> approximations;
  std::map<std::string, Type> storage;
  for (const Func& f : original.funcs) {
    FuncApproximation a = func_approximation(s, original, f, no_source);
    if (a.storage) storage[f.name] = Type(*a.storage);
    if (!a.empty()) approximations[f.name] = std::move(a);
  }
  // Precision first: the funcs it lowers are neither perforated nor channel-copied, so
  // what follows carries their widened reads along like any other expression.
  const Pipeline p = lower_storage(original, storage);

  PerforatedPipeline result{p, without_approximations(s)};
  Pipeline& q = result.pipeline;
  Schedule& t = result.schedule;
  const std::string& out = p.output.func;

  // The rules, from the original definitions.
  std::map<std::string, ReadRule> rules;
  for (const auto& [name, a] : approximations) {
    if (!a.stores_samples() && !a.channels) continue;
    ReadRule r;
    r.func = p.find_func(name);
    r.approximation = a;
    r.samples = name == out ? output_samples_name(out) : name;
    if (a.perforation && a.perforation->sampling != SamplingKind::Grid) {
      r.dense = irregular_prefix(name, *a.perforation) + "$r$recon";
    } else if (a.perforation && !a.perforation->on_demand && name != out) {
      r.dense = name + "$dense";
    }
    rules[name] = std::move(r);
  }
  Rewriter rewriter(p, options, prover);

  // Definitions: perforated reductions, computed points, rewritten reads. Funcs added
  // here and below read the computed points directly.
  RewriteReads rewrite_reads(rewriter, rules);
  std::vector<std::pair<Func, std::string>> coarse_grids;  // and the func each samples
  std::vector<Compaction> compactions;
  for (Func& f : q.funcs) {
    auto a = approximations.find(f.name);
    if (a != approximations.end()) {
      for (const auto& [k, reductions] : a->second.update_reductions)
        f.updates[k] = perforate_update(f.updates[k], f.name, reductions);
      f.value = perforate_reductions(f.value, a->second.reductions, a->second.loops);
      std::map<std::string, Expr> scaled;
      for (size_t d = 0; d < f.args.size(); ++d) {
        int64_t spacing = computed_spacing(a->second, f, d);
        if (spacing > 1) scaled[f.args[d]] = Mul::make(Variable::make(f.args[d]), i32(spacing));
      }
      f.value = substitute(f.value, scaled);
    }
    f.value = rewrite_reads.mutate(f.value);
    if (a != approximations.end() && a->second.perforation &&
        a->second.perforation->sampling != SamplingKind::Grid) {
      // Computed where the sampling mask is set, 0 elsewhere; adaptive sampling's coarse
      // points are read from the coarse grid computed first.
      const Perforation& pf = *a->second.perforation;
      const std::string prefix = irregular_prefix(f.name, pf);
      std::vector<Expr> vars = pure_vars(f);
      Expr body = f.value;
      if (pf.sampling == SamplingKind::Adaptive) {
        Func coarse = func_like(f, prefix + "$coarse",
                                substitute(body, {{f.args[0], Mul::make(vars[0], i32(pf.k))},
                                                  {f.args[1], Mul::make(vars[1], i32(pf.k))}}));
        std::vector<Expr> at = vars;
        at[0] = Div::make(vars[0], i32(pf.k));
        at[1] = Div::make(vars[1], i32(pf.k));
        Expr on_grid = And::make(EQ::make(Mod::make(vars[0], i32(pf.k)), i32(0)),
                                 EQ::make(Mod::make(vars[1], i32(pf.k)), i32(0)));
        body = Select::make(on_grid, Call::make(f.type, coarse.name, at, CallType::Func), body);
        coarse_grids.push_back({std::move(coarse), f.name});
      }
      Expr sampled =
          NE::make(Call::make(UInt8(), prefix + "$mask", {vars[0], vars[1]}, CallType::Func),
                   IntImm::make(UInt8(), 0));
      if (pf.compacted) {
        // A reduction at a quarter of the points, in vectors of 16 neighbours, still runs
        // in most vectors. Compacted, each row's points are computed side by side (their x
        // from a list), then put in place; the reads through the list gather, so it pays
        // where the body costs much more than its reads (the checker allows it for the
        // output only).
        compactions.push_back(
            {f.name, prefix, f.value, pf.sampling == SamplingKind::Adaptive ? pf.k : 0});
      } else {
        f.value = Select::make(sampled, body, zero_of(f.type));
      }
    }
    mutate_updates(f, rewrite_reads);
  }

  // Schedules of the computed points: realised, at root unless set.
  for (const auto& [name, a] : approximations) {
    if (a.stores_samples()) {
      FuncSchedule& fs = t.funcs[name];
      if (!fs.compute) fs.compute = LoopLevel::root();
    }
  }

  // The output's points are <out>$samples' from here on (the output itself is added
  // below, as what readers would see).
  if (rules.count(out)) {
    for (Func& g : q.funcs) {
      if (g.name == out) g.name = output_samples_name(out);
    }
  }
  // Adaptive sampling's coarse grids: at root, with the loops of the func they sample
  // (the same variables: its tiles, vectors and parallel loop).
  for (auto& [g, sampled] : coarse_grids) {
    FuncSchedule fs;
    if (const FuncSchedule* of = t.find(sampled)) fs.stages = of->stages;
    fs.compute = LoopLevel::root();
    t.funcs[g.name] = std::move(fs);
    q.funcs.push_back(std::move(g));
  }
  // Irregular sampling: the mask and the reconstruction, over the output's first two
  // dimensions (and its channels).
  for (const auto& [name, r] : rules) {
    if (!r.approximation.perforation || r.approximation.perforation->sampling == SamplingKind::Grid)
      continue;
    const Perforation& pf = *r.approximation.perforation;
    const Func& f = *r.func;
    const std::string prefix = irregular_prefix(name, pf);
    std::vector<Expr> extents(p.output.extents.begin(),
                              p.output.extents.begin() + std::min<size_t>(f.args.size(), 3));
    SampleMask m;
    if (pf.sampling == SamplingKind::Adaptive) {
      m = add_adaptive_sampling(q, t, prefix, prefix + "$coarse", f.type, f.args.size(), pf.k,
                                pf.fraction, pf.sigma, extents);
    } else {
      m = add_importance_sampling(q, t, prefix, pf.fraction, extents, pf.importance_map);
      // sigma(x) = sigma0 / M(x)^(1/2), M the remapped importance (§3.2).
      Func sigma;
      sigma.name = prefix + "$sigma";
      sigma.args = {"x", "y"};
      sigma.type = Float32();
      Expr density = Call::make(Float32(), m.density, {Variable::make("x"), Variable::make("y")},
                                CallType::Func);
      sigma.value = Div::make(FloatImm::make(Float32(), pf.sigma),
                              Call::make_intrinsic(Intrinsic::Sqrt, {density}));
      t.funcs[sigma.name].compute = LoopLevel::root();
      m.density = sigma.name;
      q.funcs.push_back(std::move(sigma));
    }
    STIPPLE_INTERNAL_CHECK(m.mask == prefix + "$mask", "mask named " + m.mask);
    // What the reconstruction reads: the samples, or where they are compacted, the
    // samples put back in place.
    std::string values = r.samples;
    for (const Compaction& c : compactions) {
      if (c.func == name) values = add_compaction(q, t, c, r.samples, extents);
    }
    IrregularSamples samples{values,    f.type, f.args.size(),           m.mask,
                             m.density, 0.0,    {extents[0], extents[1]}};
    // Adaptive sampling's sigma is 0.01 at fine points and sigma0 k elsewhere.
    if (pf.sampling == SamplingKind::Adaptive) {
      samples.max_sigma = std::max(0.01, pf.sigma * static_cast<double>(pf.k));
    }
    std::string dense = add_irregular_reconstruction(q, t, prefix + "$r", samples, pf);
    STIPPLE_INTERNAL_CHECK(dense == r.dense, "reconstruction named " + dense);
  }

  std::set<std::string> output_reconstruction;  // its schedule names the new output's loops
  for (const auto& [name, r] : rules) {
    const Func& f = *r.func;
    if (name == out) {
      // The output's points move to <out>$samples with the output's schedule; the output
      // becomes what readers would see.
      const std::string samples = r.samples;
      std::vector<Func> recon;
      if (r.approximation.perforation && r.dense.empty()) {
        // Grid samples: the separable dense reconstruction (behind the channels).
        const Perforation& pf = *r.approximation.perforation;
        GridSamples g{samples, f.type, pf.spacing, pf.reconstruction};
        const std::string last = r.approximation.channels ? out + "$recon" : out;
        recon = dense_reconstruction(g, f.args, last);
        if (r.approximation.channels) {
          recon.push_back(func_like(
              f, out, rewriter.with_channels(r, pure_vars(f), [&](const std::vector<Expr>& a) {
                return Call::make(f.type, last, a, CallType::Func);
              })));
        }
      } else {
        // What readers see: irregular samples' reconstruction, loop perforation, channels.
        recon.push_back(func_like(f, out, rewriter.read(r, pure_vars(f))));
      }

      FuncSchedule moved = t.funcs.count(out) ? t.funcs[out] : FuncSchedule{};
      moved.compute = LoopLevel::root();
      moved.store.reset();
      // bound(...) fixes the output's region: it stays with the output (whose readers'
      // regions, the samples' included, then follow from it as constants).
      std::vector<Directive> bounds;
      if (auto st = moved.stages.find(0); st != moved.stages.end()) {
        auto& ds = st->second.directives;
        auto is_bound = [](const Directive& d) {
          return find_directive_spec(d.name)->scope == DirectiveScope::Region;
        };
        std::copy_if(ds.begin(), ds.end(), std::back_inserter(bounds), is_bound);
        ds.erase(std::remove_if(ds.begin(), ds.end(), is_bound), ds.end());
      }
      t.funcs.erase(out);
      t.funcs[samples] = std::move(moved);
      schedule_output_reconstruction(t, f, recon);
      auto& out_directives = t.funcs[out].stages[0].directives;
      out_directives.insert(out_directives.begin(), bounds.begin(), bounds.end());
      for (Func& g : recon) {
        output_reconstruction.insert(g.name);
        q.funcs.push_back(std::move(g));
      }
    } else if (!r.dense.empty() && r.approximation.perforation->sampling == SamplingKind::Grid) {
      const Perforation& pf = *r.approximation.perforation;
      GridSamples g{name, f.type, pf.spacing, pf.reconstruction};
      // The reconstruction is computed where f was asked to be (f, its samples, is
      // computed there too, first).
      FuncSchedule fs;
      fs.compute = effective_compute_level(s, p, f);
      if (!(effective_store_level(s, p, f) == *fs.compute))
        fs.store = effective_store_level(s, p, f);
      for (Func& d : dense_reconstruction(g, f.args, r.dense)) {
        t.funcs[d.name] = fs;
        q.funcs.push_back(std::move(d));
      }
    }
  }
  // A level that named the output's loops names <out>$samples' now.
  if (rules.count(out)) {
    for (auto& [g, fs] : t.funcs) {
      for (std::optional<LoopLevel>* l : {&fs.compute, &fs.store}) {
        if (*l && (*l)->kind == LevelKind::At && (*l)->func == out &&
            !output_reconstruction.count(g)) {
          (*l)->func = output_samples_name(out);
        }
      }
    }
  }
  // The realised producers of funcs computed at strided points, computed at those points
  // only (sampled_producers.h).
  if (options.sampled_producers) {
    std::vector<SampledFunc> sampled;
    std::set<std::string> keep;
    for (const auto& [name, r] : rules) {
      keep.insert(name);
      if (!r.approximation.stores_samples()) continue;
      SampledFunc f{r.samples, {}};
      for (size_t d = 0; d < r.func->args.size(); ++d)
        f.spacing.push_back(computed_spacing(r.approximation, *r.func, d));
      sampled.push_back(std::move(f));
    }
    sample_producers(q, t, sampled, keep, *prover);
  }
  return result;
}

}  // namespace stipple::perforation
