#include "search/genome.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_loops.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple::search {

namespace {

// The reduction variables of an expression, in the order they are met.
class ReductionVariables : public IRVisitor {
 public:
  std::vector<std::string> names;
  using IRVisitor::visit;
  void visit(const Reduce* op) override {
    for (const ReductionVariable& v : op->domain) {
      if (std::find(names.begin(), names.end(), v.name) == names.end()) names.push_back(v.name);
    }
    IRVisitor::visit(op);
  }
};

// Directive arguments of the schedule model (schedule.h), as the parser would build them.
ScheduleArg name_arg(const std::string& name) { return ScheduleArg::make_name(name); }
ScheduleArg int_arg(int64_t v) { return ScheduleArg::make_int(v); }

// A float rounded to four significant digits: short in the printed text (the printer
// writes the shortest form that reads back the same value), and the texts, which key the
// store's evaluations, the same as when decode spelled them with "%.4g".
ScheduleArg float_arg(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  ScheduleArg a;
  a.kind = ScheduleArgKind::Float;
  a.float_value = std::strtod(buf, nullptr);
  return a;
}

ScheduleArg call_arg(const std::string& name, std::vector<ScheduleArg> args) {
  ScheduleArg a = name_arg(name);
  a.kind = ScheduleArgKind::Call;
  a.args = std::move(args);
  return a;
}

ScheduleArg keyword_arg(const std::string& name, ScheduleArg value) {
  ScheduleArg a = name_arg(name);
  a.kind = ScheduleArgKind::Keyword;
  a.args.push_back(std::move(value));
  return a;
}

ScheduleArg reconstruction_arg(const PerforationGene& g) {
  switch (g.reconstruction) {
    case ReconstructionKind::Nearest: return name_arg("nearest");
    case ReconstructionKind::Linear: return name_arg("linear");
    case ReconstructionKind::Gaussian:
      return call_arg("gaussian", {keyword_arg("sigma", float_arg(g.sigma))});
    case ReconstructionKind::VaryingGaussian:
      return call_arg("varying_gaussian", {keyword_arg("sigma0", float_arg(g.sigma))});
  }
  return name_arg("linear");
}

template <typename Values>
auto pick(std::mt19937_64& rng, const Values& values) {
  std::uniform_int_distribution<size_t> d(0, std::size(values) - 1);
  return *(std::begin(values) + d(rng));
}

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  return pick<std::initializer_list<T>>(rng, values);
}

bool chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<>(0, 1)(rng) < p;
}

// The next larger or smaller value of a ladder (the value itself when at an end or absent).
int step_in(const std::vector<int>& ladder, int v, bool up) {
  auto it = std::find(ladder.begin(), ladder.end(), v);
  if (it == ladder.end()) return ladder[ladder.size() / 2];
  if (up) return std::next(it) == ladder.end() ? v : *std::next(it);
  return it == ladder.begin() ? v : *std::prev(it);
}

const std::vector<int> kTileX = {0, 16, 32, 64, 128, 256};
const std::vector<int> kTileY = {0, 4, 8, 16, 32, 64};
const std::vector<int> kSpacingX = {1, 2, 3, 4, 8};
const std::vector<int> kSpacingY = {1, 2, 4};

// Loop names a tile adds to a func's variables: x -> xo, xi (suffixed until they are new).
std::pair<std::string, std::string> split_names(const Func& f, const std::string& v) {
  std::string suffix;
  for (;;) {
    std::string o = v + "o" + suffix, i = v + "i" + suffix;
    bool clash = false;
    for (const std::string& a : f.args) clash = clash || a == o || a == i;
    if (!clash) return {o, i};
    suffix += "_";
  }
}

}  // namespace

std::vector<int> vector_width_ladder(int vector_bytes) {
  // In lanes of 32 bits, the reuse model's unit too (search/reuse/tiling.h); never one
  // lane, which is no vector.
  const int lanes = std::max(2, vector_bytes / 4);
  return {0, std::max(2, lanes / 2), lanes, 2 * lanes, 4 * lanes};
}

const char* perforation_kind_name(PerforationKind k) {
  switch (k) {
    case PerforationKind::None: return "none";
    case PerforationKind::Grid: return "grid";
    case PerforationKind::Adaptive: return "adaptive";
    case PerforationKind::Importance: return "importance";
    case PerforationKind::Reduction: return "reduction";
    case PerforationKind::Channels: return "channels";
    case PerforationKind::StoreF16: return "store_f16";
  }
  return "?";
}

std::string Genome::key() const {
  std::string k;
  char buf[160];
  for (const StageGene& s : stages) {
    const FusionGene& f = s.fusion;
    const PerforationGene& p = s.perforation;
    std::snprintf(buf, sizeof buf, "%s:%d.%d.%d.%dx%d.v%d%s%s", s.func.c_str(), int(f.compute),
                  f.compute_loop, f.store_outward, f.tile_x, f.tile_y, f.vector_width,
                  f.parallel ? "p" : "", f.channels_inside ? "c" : "");
    if (f.narrow) k += "n";
    k += buf;
    if (p.kind != PerforationKind::None) {
      std::snprintf(buf, sizeof buf, "/%s.%dx%d.k%d.f%.4g.r%d.%d.%s.%.4g%s",
                    perforation_kind_name(p.kind), p.spacing_x, p.spacing_y, p.k, p.fraction,
                    p.reduction_var, p.reduction_stride, reconstruction_kind_name(p.reconstruction),
                    p.sigma, p.on_demand ? "o" : "");
      k += buf;
    }
    k += ";";
  }
  return k;
}

SearchSpace::SearchSpace(const Pipeline& p, Options options)
    : p_(p), options_(options), vector_widths_(vector_width_ladder(options.vector_bytes)) {
  for (const Func& f : p.funcs) {
    FuncInfo info;
    info.func = &f;
    info.is_output = f.name == p.output.func;
    info.pure = f.updates.empty();
    ReductionVariables rv;
    if (f.value.defined()) f.value.accept(&rv);
    info.reduction_vars = rv.names;
    funcs_.push_back(info);
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < p.funcs.size(); ++i) index[p.funcs[i].name] = i;
  for (const Func* f : consumers_first(p)) consumers_first_.push_back(index.at(f->name));
  find_narrow_types();
}

void SearchSpace::find_narrow_types() {
  // Producers first, each with every narrower producer already narrowed, so that a chain
  // (camera_pipe's raw, denoised, deinterleaved) is proved stage by stage as the checker
  // proves it. Fewest bits first; unsigned before signed at one width.
  Schedule narrowed;
  narrowed.file_name = "<narrowing>";
  for (auto it = consumers_first_.rbegin(); it != consumers_first_.rend(); ++it) {
    FuncInfo& info = funcs_[*it];
    if (info.is_output || !info.pure || !info.func->type.is_int()) continue;
    for (Type t : {UInt8(), Int8(), UInt16(), Int16()}) {
      if (t.bits() >= info.func->type.bits()) break;
      std::vector<Directive>& chain = narrowed.funcs[info.func->name].stages[0].directives;
      chain = {Directive::make("store_as", {name_arg(to_string(t))})};
      try {
        check_schedule(narrowed, p_);
        info.narrow_type = t;
        break;
      } catch (const CompileError&) {
        narrowed.funcs.erase(info.func->name);
      }
    }
  }
}

Genome SearchSpace::exact_genome() const {
  Genome g;
  for (const FuncInfo& f : funcs_) {
    StageGene s;
    s.func = f.func->name;
    s.fusion.compute = ComputeChoice::Root;
    if (f.is_output || f.func->args.size() >= 2) {
      s.fusion.tile_x = 64;
      s.fusion.tile_y = 16;
      s.fusion.vector_width = vector_widths_[2];  // one native register
      s.fusion.parallel = true;
    }
    g.stages.push_back(s);
  }
  return g;
}

void SearchSpace::randomize_fusion_gene(const FuncInfo& f, FusionGene& g,
                                        std::mt19937_64& rng) const {
  const double r = std::uniform_real_distribution<>(0, 1)(rng);
  if (f.is_output) {
    g.compute = ComputeChoice::Root;
  } else if (f.pure && r < 0.3) {
    g.compute = ComputeChoice::Inline;
  } else {
    g.compute = r < 0.65 ? ComputeChoice::Root : ComputeChoice::At;
  }
  g.compute_loop = std::uniform_int_distribution<int>(0, 4)(rng);
  g.store_outward = pick(rng, {0, 0, 1, 2});
  g.tile_x = pick(rng, {0, 16, 32, 64, 128, 256});
  g.tile_y = pick(rng, {0, 4, 8, 16, 32, 64});
  g.vector_width = pick(rng, vector_widths_);
  g.parallel = chance(rng, 0.5);
  g.channels_inside = chance(rng, 0.3);
  g.narrow = f.narrow_type && chance(rng, 0.5);
}

void SearchSpace::randomize_fusion(StageGene& s, std::mt19937_64& rng) const {
  for (const FuncInfo& f : funcs_) {
    if (f.func->name == s.func) randomize_fusion_gene(f, s.fusion, rng);
  }
}

void SearchSpace::randomize_perforation(StageGene& s, std::mt19937_64& rng) const {
  const FuncInfo* info = nullptr;
  for (const FuncInfo& f : funcs_) {
    if (f.func->name == s.func) info = &f;
  }
  PerforationGene& g = s.perforation;
  g = PerforationGene{};
  if (!info || !options_.allow_perforation || !info->pure || info->func->args.empty()) return;
  std::vector<PerforationKind> kinds = {PerforationKind::Grid, PerforationKind::Grid};
  const size_t dims = info->func->args.size();
  if (dims >= 2) {
    kinds.push_back(PerforationKind::Adaptive);
    kinds.push_back(PerforationKind::Importance);
  }
  if (!info->reduction_vars.empty()) kinds.push_back(PerforationKind::Reduction);
  if (dims == 3) kinds.push_back(PerforationKind::Channels);
  // StoreF16 is decoded and encoded (a seed's store_as survives, unless the same func's
  // reductions are perforated too: one approximation per gene) but not drawn yet: on the
  // machines measured so far halves paid on no stage (bench/README.md, "Issue #28"), and
  // drawn at random they cost the genetic search at budget 36 its step past the seed in 1
  // of 4 runs of TuningSessionTest.GeneticImprovesOverItsSeed (0 of 6 without them).
  g.kind = kinds[std::uniform_int_distribution<size_t>(0, kinds.size() - 1)(rng)];
  g.spacing_x = pick(rng, {1, 2, 2, 3, 4, 8});
  g.spacing_y = pick(rng, {1, 2, 2, 4});
  if (g.spacing_x == 1 && g.spacing_y == 1) g.spacing_x = 2;
  g.k = pick(rng, {2, 3, 4});
  g.fraction = std::uniform_real_distribution<>(0.1, 0.9)(rng);
  g.reduction_var =
      info->reduction_vars.empty()
          ? 0
          : std::uniform_int_distribution<int>(0, int(info->reduction_vars.size()) - 1)(rng);
  g.reduction_stride = pick(rng, {2, 2, 3, 4});
  g.reconstruction = pick(
      rng, {ReconstructionKind::Nearest, ReconstructionKind::Linear, ReconstructionKind::Linear,
            ReconstructionKind::Gaussian, ReconstructionKind::VaryingGaussian});
  g.sigma = std::uniform_real_distribution<>(0.6, 2.0)(rng);
  g.on_demand = chance(rng, 0.5);
}

Genome SearchSpace::random_genome(std::mt19937_64& rng) const {
  Genome g;
  for (const FuncInfo& f : funcs_) {
    StageGene s;
    s.func = f.func->name;
    randomize_fusion_gene(f, s.fusion, rng);
    if (options_.allow_perforation && chance(rng, options_.perforation_probability)) {
      randomize_perforation(s, rng);
    }
    g.stages.push_back(s);
  }
  return g;
}

void SearchSpace::mutate(Genome& g, std::mt19937_64& rng) const {
  if (g.stages.empty()) return;
  const size_t i = std::uniform_int_distribution<size_t>(0, g.stages.size() - 1)(rng);
  StageGene& s = g.stages[i];
  const FuncInfo& info = funcs_[i];
  if (!options_.allow_perforation || chance(rng, 0.5)) {
    FusionGene& f = s.fusion;
    // A tenth case, the narrow flag, only for funcs that can be narrowed: the others draw
    // from the nine cases they always had, so their searches are what they were.
    switch (std::uniform_int_distribution<int>(0, info.narrow_type ? 9 : 8)(rng)) {
      case 0: {
        FusionGene fresh = f;
        randomize_fusion_gene(info, fresh, rng);
        f.compute = fresh.compute;
        break;
      }
      case 1: f.compute_loop = std::max(0, f.compute_loop + (chance(rng, 0.5) ? 1 : -1)); break;
      case 2: f.store_outward = std::uniform_int_distribution<int>(0, 2)(rng); break;
      case 3: f.tile_x = step_in(kTileX, f.tile_x, chance(rng, 0.5)); break;
      case 4: f.tile_y = step_in(kTileY, f.tile_y, chance(rng, 0.5)); break;
      case 5: f.vector_width = step_in(vector_widths_, f.vector_width, chance(rng, 0.5)); break;
      case 6: f.parallel = !f.parallel; break;
      case 7: f.channels_inside = !f.channels_inside; break;
      case 9: f.narrow = !f.narrow; break;
      default: randomize_fusion_gene(info, f, rng); break;
    }
    return;
  }
  PerforationGene& p = s.perforation;
  if (p.kind == PerforationKind::None || chance(rng, 0.3)) {
    // The method: a new one, or none (about one time in four).
    if (p.kind != PerforationKind::None && chance(rng, 0.25)) {
      p = PerforationGene{};
    } else {
      randomize_perforation(s, rng);
    }
    return;
  }
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0:
      p.spacing_x = step_in(kSpacingX, p.spacing_x, chance(rng, 0.5));
      p.spacing_y =
          chance(rng, 0.5) ? step_in(kSpacingY, p.spacing_y, chance(rng, 0.5)) : p.spacing_y;
      p.k = std::clamp(p.k + (chance(rng, 0.5) ? 1 : -1), 2, 6);
      p.reduction_stride = std::clamp(p.reduction_stride + (chance(rng, 0.5) ? 1 : -1), 2, 6);
      break;
    case 1:
      p.fraction = std::clamp(p.fraction + std::normal_distribution<>(0, 0.1)(rng), 0.05, 0.95);
      break;
    case 2: {
      StageGene tmp = s;
      randomize_perforation(tmp, rng);
      p.reconstruction = tmp.perforation.reconstruction;
      break;
    }
    case 3:
      p.sigma = std::clamp(p.sigma * std::exp(std::normal_distribution<>(0, 0.25)(rng)), 0.4, 4.0);
      break;
    default: p.on_demand = !p.on_demand; break;
  }
}

std::pair<Genome, Genome> SearchSpace::crossover(const Genome& a, const Genome& b,
                                                 std::mt19937_64& rng) const {
  Genome c = a, d = b;
  const size_t n = std::min(a.stages.size(), b.stages.size());
  if (n < 2) return {c, d};
  size_t i = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  size_t j = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  if (i > j) std::swap(i, j);
  for (size_t k = i; k <= j; ++k) std::swap(c.stages[k], d.stages[k]);
  return {c, d};
}

Decoded SearchSpace::decode(const Genome& input) const {
  Decoded out;
  out.genome = input;
  // Genes for funcs the genome does not cover (it came from another pipeline version)
  // are the default: computed at root.
  if (out.genome.stages.size() != funcs_.size()) {
    Genome fixed;
    for (const FuncInfo& f : funcs_) {
      StageGene s;
      s.func = f.func->name;
      for (const StageGene& old : input.stages) {
        if (old.func == s.func) s = old;
      }
      fixed.stages.push_back(s);
    }
    out.genome = fixed;
  }

  // The schedule accepted so far. Each choice is made on it in place, checked, and undone
  // when the checker rejects it; a func whose last choice is undone leaves the model, so
  // that the model stays what parsing its printed text gives.
  Schedule model;
  model.file_name = "<genome>";
  auto accepts = [&] {
    try {
      check_schedule(model, p_);
      return true;
    } catch (const CompileError&) {
      return false;
    }
  };
  auto forget_if_empty = [&](const std::string& func) {
    const FuncSchedule& fs = model.funcs.at(func);
    if (!fs.compute && !fs.store && fs.stages.empty()) model.funcs.erase(func);
  };
  // Sets func's compute (or store) level if the checker accepts the result.
  auto try_level = [&](const std::string& func, bool store, LoopLevel level) {
    FuncSchedule& fs = model.funcs[func];
    std::optional<LoopLevel>& slot = store ? fs.store : fs.compute;
    slot = std::move(level);
    if (accepts()) return true;
    slot.reset();
    forget_if_empty(func);
    ++out.dropped;
    return false;
  };
  // Appends d to the directives of func's pure definition if the checker accepts the
  // result (a directive of the wrong shape is rejected as the parser would).
  auto try_add = [&](const std::string& func, Directive d) {
    int bad_arg = 0;
    const bool well_formed = directive_shape_error(d, &bad_arg).empty();
    std::vector<Directive>& chain = model.funcs[func].stages[0].directives;
    chain.push_back(std::move(d));
    if (well_formed && accepts()) return true;
    chain.pop_back();
    if (chain.empty()) model.funcs.at(func).stages.erase(0);
    forget_if_empty(func);
    ++out.dropped;
    return false;
  };
  const SourceText no_source("", "<genome>");
  std::vector<std::string> output_loops;  // of the output's nest, innermost first

  for (size_t i : consumers_first_) {
    const FuncInfo& info = funcs_[i];
    const Func& f = *info.func;
    StageGene& gene = out.genome.stages[i];
    FusionGene& fg = gene.fusion;
    PerforationGene& pg = gene.perforation;

    // The level.
    if (info.is_output) {
      fg.compute = ComputeChoice::Root;
    } else if (fg.compute == ComputeChoice::Inline) {
      if (!info.pure || !try_level(f.name, false, LoopLevel::inlined()))
        fg.compute = ComputeChoice::Root;
    }
    if (fg.compute == ComputeChoice::At) {
      bool placed = false;
      if (!output_loops.empty()) {
        const int n = int(output_loops.size());
        const int c = fg.compute_loop % n;
        placed = try_level(f.name, false, LoopLevel::at(p_.output.func, 0, output_loops[c]));
        if (placed) {
          fg.compute_loop = c;
          const int st = std::min(n - 1, c + fg.store_outward);
          if (st != c &&
              !try_level(f.name, true, LoopLevel::at(p_.output.func, 0, output_loops[st]))) {
            fg.store_outward = 0;
          } else {
            fg.store_outward = st - c;
          }
        }
      }
      if (!placed) fg.compute = ComputeChoice::Root;
    }
    if (fg.compute != ComputeChoice::At) {
      fg.compute_loop = 0;
      fg.store_outward = 0;
    }
    if (fg.compute == ComputeChoice::Root && !info.is_output &&
        !try_level(f.name, false, LoopLevel::root())) {
      fg.compute = ComputeChoice::Inline;  // only the default level is legal
    }

    // The loops (none for an inlined func).
    if (fg.compute == ComputeChoice::Inline) {
      const bool narrow = fg.narrow;  // an inlined func's storage still bounds its readers
      fg = FusionGene{ComputeChoice::Inline};
      fg.narrow = narrow;
    } else {
      const size_t dims = f.args.size();
      std::string inner_x = dims ? f.args[0] : "", outer_y = dims >= 2 ? f.args[1] : "";
      bool tiled = false;
      if (dims >= 2 && fg.tile_x > 0 && fg.tile_y > 0) {
        auto [xo, xi] = split_names(f, f.args[0]);
        auto [yo, yi] = split_names(f, f.args[1]);
        tiled = try_add(
            f.name, Directive::make("tile", {name_arg(f.args[0]), name_arg(f.args[1]), name_arg(xo),
                                             name_arg(yo), name_arg(xi), name_arg(yi),
                                             int_arg(fg.tile_x), int_arg(fg.tile_y)}));
        if (tiled) {
          inner_x = xi;
          outer_y = yo;
          if (fg.channels_inside && dims >= 3 &&
              !try_add(f.name,
                       Directive::make("reorder", {name_arg(xi), name_arg(yi), name_arg(f.args[2]),
                                                   name_arg(xo), name_arg(yo)}))) {
            fg.channels_inside = false;
          }
        }
      }
      if (!tiled) {
        fg.tile_x = fg.tile_y = 0;
        fg.channels_inside = false;
      }
      if (fg.vector_width > 0 &&
          (inner_x.empty() ||
           !try_add(f.name,
                    Directive::make("vectorize", {name_arg(inner_x), int_arg(fg.vector_width)})))) {
        fg.vector_width = 0;
      }
      if (fg.parallel &&
          (outer_y.empty() || !try_add(f.name, Directive::make("parallel", {name_arg(outer_y)})))) {
        fg.parallel = false;
      }
    }

    // The approximation.
    std::optional<Directive> approx;
    switch (pg.kind) {
      case PerforationKind::None: break;
      case PerforationKind::Grid: {
        std::vector<ScheduleArg> spacing = {int_arg(pg.spacing_x)};
        if (f.args.size() >= 2) spacing.push_back(int_arg(pg.spacing_y));
        approx = Directive::make("perforate",
                                 {call_arg("grid", std::move(spacing)), reconstruction_arg(pg),
                                  name_arg(pg.on_demand ? "on_demand" : "precomputed")});
        break;
      }
      case PerforationKind::Adaptive:
        approx = Directive::make("perforate",
                                 {call_arg("adaptive", {keyword_arg("k", int_arg(pg.k)),
                                                        keyword_arg("f", float_arg(pg.fraction))}),
                                  reconstruction_arg(pg)});
        break;
      case PerforationKind::Importance:
        approx = Directive::make(
            "perforate", {call_arg("importance", {keyword_arg("f", float_arg(pg.fraction))}),
                          reconstruction_arg(pg)});
        break;
      case PerforationKind::Reduction:
        if (!info.reduction_vars.empty()) {
          pg.reduction_var %= int(info.reduction_vars.size());
          approx = Directive::make("perforate_reduction",
                                   {name_arg(info.reduction_vars[pg.reduction_var]),
                                    call_arg("grid", {int_arg(pg.reduction_stride)})});
        }
        break;
      case PerforationKind::Channels: approx = Directive::make("channels", {int_arg(1)}); break;
      case PerforationKind::StoreF16:
        approx = Directive::make("store_as", {name_arg("f16")});
        break;
    }
    if (pg.kind != PerforationKind::None && (!approx || !try_add(f.name, std::move(*approx)))) {
      pg = PerforationGene{};
    }

    if (info.is_output) {
      StageLoopNest nest = stage_loop_nest(model, p_, f, 0, no_source);
      for (const Loop& l : nest.loops) {
        if (l.name.find('.') == std::string::npos) output_loops.push_back(l.name);
      }
    }
  }
  // Narrowed storage, producers first: a func's proof may rest on its producers' narrower
  // values (find_narrow_types), which must be in the model before it is checked.
  for (auto it = consumers_first_.rbegin(); it != consumers_first_.rend(); ++it) {
    const FuncInfo& info = funcs_[*it];
    FusionGene& fg = out.genome.stages[*it].fusion;
    if (!fg.narrow) continue;
    if (!info.narrow_type ||
        !try_add(info.func->name,
                 Directive::make("store_as", {name_arg(to_string(*info.narrow_type))}))) {
      fg.narrow = false;
    }
  }
  out.text = print_schedule(model, p_);
  out.schedule = std::move(model);  // every step was accepted
  return out;
}

Genome SearchSpace::encode(const Schedule& s) const {
  Genome g;
  const SourceText no_source("", "<schedule>");
  std::vector<std::string> output_loops;
  if (const Func* out = p_.find_func(p_.output.func)) {
    for (const Loop& l : stage_loop_nest(s, p_, *out, 0, no_source).loops) {
      if (l.name.find('.') == std::string::npos) output_loops.push_back(l.name);
    }
  }
  auto loop_index = [&](const std::string& name) {
    auto it = std::find(output_loops.begin(), output_loops.end(), name);
    return it == output_loops.end() ? -1 : int(it - output_loops.begin());
  };
  for (const FuncInfo& info : funcs_) {
    const Func& f = *info.func;
    StageGene gene;
    gene.func = f.name;
    FusionGene& fg = gene.fusion;
    LoopLevel compute = effective_compute_level(s, p_, f);
    LoopLevel store = effective_store_level(s, p_, f);
    fg.compute = compute.kind == LevelKind::Inline ? ComputeChoice::Inline
                 : compute.kind == LevelKind::Root ? ComputeChoice::Root
                                                   : ComputeChoice::At;
    if (fg.compute == ComputeChoice::At) {
      const int c = compute.func == p_.output.func ? loop_index(compute.var) : -1;
      if (c < 0) {
        fg.compute = ComputeChoice::Root;
      } else {
        fg.compute_loop = c;
        const int st = store.kind == LevelKind::At && store.func == p_.output.func
                           ? loop_index(store.var)
                           : int(output_loops.size()) - 1;
        fg.store_outward = std::max(0, st - c);
      }
    }
    if (const FuncSchedule* fs = s.find(f.name)) {
      auto stage = fs->stages.find(0);
      if (stage != fs->stages.end()) {
        for (const Directive& d : stage->second.directives) {
          if (d.name == "tile" && d.args.size() >= 8 && d.args[6].kind == ScheduleArgKind::Int &&
              d.args[7].kind == ScheduleArgKind::Int) {
            fg.tile_x = int(d.args[6].int_value);
            fg.tile_y = int(d.args[7].int_value);
          } else if (d.name == "vectorize" && d.args.size() >= 2 &&
                     d.args[1].kind == ScheduleArgKind::Int) {
            fg.vector_width = int(d.args[1].int_value);
          } else if (d.name == "parallel") {
            fg.parallel = true;
          } else if (d.name == "reorder" && f.args.size() >= 3) {
            // The channel loop inside the tile loops: it comes before an outer tile loop.
            for (size_t k = 0; k < d.args.size(); ++k) {
              if (d.args[k].name == f.args[2]) fg.channels_inside = k + 2 < d.args.size();
            }
          }
        }
      }
    }
    // a.update_reductions has no gene (genome.h): it is not kept.
    FuncApproximation a = func_approximation(s, p_, f, SourceText("", "<schedule>"));
    PerforationGene& pg = gene.perforation;
    if (a.perforation) {
      const Perforation& pf = *a.perforation;
      pg.kind = pf.sampling == SamplingKind::Grid       ? PerforationKind::Grid
                : pf.sampling == SamplingKind::Adaptive ? PerforationKind::Adaptive
                                                        : PerforationKind::Importance;
      if (!pf.spacing.empty()) pg.spacing_x = int(pf.spacing[0]);
      pg.spacing_y = pf.spacing.size() >= 2 ? int(pf.spacing[1]) : 1;
      pg.k = int(std::max<int64_t>(2, pf.k));
      pg.fraction = pf.fraction;
      pg.reconstruction = pf.reconstruction;
      pg.sigma = pf.sigma;
      pg.on_demand = pf.on_demand;
    } else if (!a.reductions.empty() && a.reductions[0].stride > 1) {
      pg.kind = PerforationKind::Reduction;
      auto it =
          std::find(info.reduction_vars.begin(), info.reduction_vars.end(), a.reductions[0].var);
      pg.reduction_var =
          it == info.reduction_vars.end() ? 0 : int(it - info.reduction_vars.begin());
      pg.reduction_stride = int(a.reductions[0].stride);
    } else if (a.channels) {
      pg.kind = PerforationKind::Channels;
    } else if (a.storage == ScalarType::Float16) {
      pg.kind = PerforationKind::StoreF16;
    }
    // Any integer storage is the narrow gene, which decodes to the narrowest type the
    // space proves (a seed's store_as(u16) of a func that fits in u8 comes back as u8).
    fg.narrow = a.storage && *a.storage != ScalarType::Float16 && info.narrow_type;
    g.stages.push_back(gene);
  }
  return g;
}

}  // namespace stipple::search
