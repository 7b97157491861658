// The schedule model's equality, the directive table and the default levels.
#include "compiler_core/schedule/schedule.h"

#include <cstring>

#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/approximation.h"

namespace stipple {

ScheduleArg ScheduleArg::make_name(std::string name, SourceLoc loc) {
  ScheduleArg a;
  a.kind = ScheduleArgKind::Name;
  a.name = std::move(name);
  a.loc = loc;
  return a;
}

ScheduleArg ScheduleArg::make_int(int64_t value, SourceLoc loc) {
  ScheduleArg a;
  a.kind = ScheduleArgKind::Int;
  a.int_value = value;
  a.loc = loc;
  return a;
}

Directive Directive::make(std::string name, std::vector<ScheduleArg> args, SourceLoc loc) {
  Directive d;
  d.name = std::move(name);
  d.args = std::move(args);
  d.loc = loc;
  return d;
}

bool ScheduleArg::operator==(const ScheduleArg& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case ScheduleArgKind::Name: return name == o.name;
    case ScheduleArgKind::Int: return int_value == o.int_value;
    // Bitwise, so that -0.0 and 0.0 differ as they print differently.
    case ScheduleArgKind::Float:
      return std::memcmp(&float_value, &o.float_value, sizeof float_value) == 0;
    case ScheduleArgKind::Call:
    case ScheduleArgKind::Keyword: return name == o.name && args == o.args;
    case ScheduleArgKind::Stage: return name == o.name && int_value == o.int_value;
  }
  return false;
}

const std::string& Directive::var(size_t i) const {
  STIPPLE_INTERNAL_CHECK(i < args.size() && args[i].kind == ScheduleArgKind::Name,
                         "directive " + name + " has no name argument " + std::to_string(i));
  return args[i].name;
}

int64_t Directive::integer(size_t i) const {
  STIPPLE_INTERNAL_CHECK(i < args.size() && args[i].kind == ScheduleArgKind::Int,
                         "directive " + name + " has no integer argument " + std::to_string(i));
  return args[i].int_value;
}

LoopLevel LoopLevel::inlined(SourceLoc loc) {
  LoopLevel l;
  l.kind = LevelKind::Inline;
  l.loc = loc;
  return l;
}

LoopLevel LoopLevel::root(SourceLoc loc) {
  LoopLevel l;
  l.kind = LevelKind::Root;
  l.loc = loc;
  return l;
}

LoopLevel LoopLevel::at(std::string func, int stage, std::string var, SourceLoc loc) {
  LoopLevel l;
  l.kind = LevelKind::At;
  l.func = std::move(func);
  l.stage = stage;
  l.var = std::move(var);
  l.loc = loc;
  return l;
}

bool LoopLevel::operator==(const LoopLevel& o) const {
  if (kind != o.kind) return false;
  if (kind != LevelKind::At) return true;
  return func == o.func && stage == o.stage && var == o.var;
}

const FuncSchedule* Schedule::find(const std::string& func) const {
  auto it = funcs.find(func);
  return it == funcs.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------
// The directive table. Adding a directive is one entry here plus its meaning in the
// checker (schedule_loops.cpp for stage directives) and the lowering.

namespace {

using S = ArgShape;

const std::vector<DirectiveSpec>& specs() {
  static const std::vector<DirectiveSpec> kDirectiveSpecs = {
      {"compute_root", DirectiveScope::Func, {}, {}, false, "compute_root()"},
      {"compute_inline", DirectiveScope::Func, {}, {}, false, "compute_inline()"},
      {"compute_at",
       DirectiveScope::Func,
       {S::Level, S::Name},
       {},
       false,
       "compute_at(func, loop) or compute_at(func.update(k), loop)"},
      {"store_root", DirectiveScope::Func, {}, {}, false, "store_root()"},
      {"store_at",
       DirectiveScope::Func,
       {S::Level, S::Name},
       {},
       false,
       "store_at(func, loop) or store_at(func.update(k), loop)"},
      {"split",
       DirectiveScope::Stage,
       {S::Name, S::Name, S::Name, S::Int},
       {S::Name},
       false,
       "split(loop, outer, inner, factor[, tail])"},
      {"tile",
       DirectiveScope::Stage,
       {S::Name, S::Name, S::Name, S::Name, S::Name, S::Name, S::Int, S::Int},
       {S::Name},
       false,
       "tile(x, y, xo, yo, xi, yi, xfactor, yfactor[, tail])"},
      {"reorder",
       DirectiveScope::Stage,
       {S::Name, S::Name},
       {},
       true,
       "reorder(innermost, ..., outermost)"},
      // The width: lanes, or vectors(k) registers (natural_vectors.h, resolved before the
      // checker sees it).
      {"vectorize",
       DirectiveScope::Stage,
       {S::Name, S::Width},
       {},
       false,
       "vectorize(loop, lanes) or vectorize(loop, vectors(registers))"},
      {"parallel", DirectiveScope::Stage, {S::Name}, {}, false, "parallel(loop)"},
      {"unroll", DirectiveScope::Stage, {S::Name, S::Int}, {}, false, "unroll(loop, factor)"},
      // GPU kernels (Decoupling Algorithms from Schedules §4, `gpu` and `gpuTile`): block
      // loops are the grid, thread loops the block; LOOPS.md, "GPU loops".
      {"gpu_blocks",
       DirectiveScope::Stage,
       {S::Name},
       {S::Name, S::Name},
       false,
       "gpu_blocks(x[, y[, z]])"},
      {"gpu_threads",
       DirectiveScope::Stage,
       {S::Name},
       {S::Name, S::Name},
       false,
       "gpu_threads(x[, y[, z]])"},
      {"gpu_tile",
       DirectiveScope::Stage,
       {S::Name, S::Name, S::Name, S::Name, S::Name, S::Name, S::Int, S::Int},
       {S::Name},
       false,
       "gpu_tile(x, y, xo, yo, xi, yi, xfactor, yfactor[, tail])"},
      // An update whose iterations may write the same site, summed atomically so that
      // its loops can map to GPU blocks and threads (Halide's `atomic()`); LOOPS.md,
      // "Atomic updates".
      {"atomic", DirectiveScope::Stage, {}, {}, false, "atomic()"},
      // One GPU thread of one block runs the stage (Halide's gpu_single_thread): for what
      // has no loop to map, a 0-d func such as a kernel's normalising sum.
      {"gpu_single_thread", DirectiveScope::Stage, {}, {}, false, "gpu_single_thread()"},
      {"bound",
       DirectiveScope::Region,
       {S::Name, S::Int, S::Int},
       {},
       false,
       "bound(var, min, extent)"},
      {"perforate",
       DirectiveScope::Approximation,
       {S::Any},
       {S::Any, S::Name},
       false,
       "perforate(sampling[, reconstruction[, on_demand | precomputed | compacted]])"},
      {"perforate_reduction",
       DirectiveScope::Approximation,
       {S::Name, S::Any},
       {},
       false,
       "perforate_reduction(r, grid(s)) or perforate_reduction(r, fraction(p))"},
      {"channels",
       DirectiveScope::Approximation,
       {S::Int},
       {S::Any},
       false,
       "channels(count[, from = func])"},
      {"loop_perforate",
       DirectiveScope::Approximation,
       {S::Name, S::Any},
       {},
       false,
       "loop_perforate(var, stride(s) | truncate(fraction, first | last) | random(fraction))"},
      // Precision lowering (VizGen, "Array storage alteration" and §9.2): the func's values
      // stored as IEEE binary16, rounded once where they are computed.
      {"store_as", DirectiveScope::Approximation, {S::Name}, {}, false, "store_as(f16)"},
  };
  return kDirectiveSpecs;
}

const char* shape_noun(ArgShape s) {
  switch (s) {
    case ArgShape::Name: return "a loop name";
    case ArgShape::Int: return "an integer";
    case ArgShape::Level: return "a func name or func.update(k)";
    case ArgShape::Width: return "an integer (lanes) or vectors(k) (registers)";
    case ArgShape::Any: return "an argument";
  }
  return "?";
}

bool fits(const ScheduleArg& a, ArgShape s) {
  switch (s) {
    case ArgShape::Name: return a.kind == ScheduleArgKind::Name;
    case ArgShape::Int: return a.kind == ScheduleArgKind::Int;
    case ArgShape::Level:
      return a.kind == ScheduleArgKind::Name || a.kind == ScheduleArgKind::Stage;
    case ArgShape::Width: return a.kind == ScheduleArgKind::Int || a.kind == ScheduleArgKind::Call;
    case ArgShape::Any: return true;
  }
  return false;
}

// "the third argument", "argument 12".
std::string argument_name(size_t i) {
  static const char* kWords[] = {"first", "second",  "third",  "fourth", "fifth",
                                 "sixth", "seventh", "eighth", "ninth"};
  if (i < 9) return std::string("the ") + kWords[i] + " argument";
  return "argument " + std::to_string(i + 1);
}

}  // namespace

const DirectiveSpec* find_directive_spec(const std::string& name) {
  for (const DirectiveSpec& s : specs()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

std::string known_directive_names() {
  std::string out;
  for (const DirectiveSpec& s : specs()) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

std::string directive_shape_error(const Directive& d, int* bad_arg) {
  *bad_arg = -1;
  const DirectiveSpec* spec = find_directive_spec(d.name);
  if (!spec) {
    return "unknown directive '" + d.name + "'; the directives are " + known_directive_names();
  }
  size_t required = spec->params.size();
  size_t most = spec->variadic ? SIZE_MAX : required + spec->optional_params.size();
  if (d.args.size() < required || d.args.size() > most) {
    return d.name + " takes " +
           (spec->variadic ? "at least " + std::to_string(required)
            : most == required
                ? std::to_string(required)
                : std::to_string(required) + (most == required + 1 ? " or " : " to ") +
                      std::to_string(most)) +
           " argument" + (most == 1 || (required == 1 && spec->variadic) ? "" : "s") + ", found " +
           std::to_string(d.args.size()) + ": " + spec->usage;
  }
  for (size_t i = 0; i < d.args.size(); ++i) {
    ArgShape shape = i < required     ? spec->params[i]
                     : spec->variadic ? spec->params.back()
                                      : spec->optional_params[i - required];
    if (!fits(d.args[i], shape)) {
      *bad_arg = static_cast<int>(i);
      return argument_name(i) + " of " + d.name + " must be " + shape_noun(shape) + ": " +
             spec->usage;
    }
  }
  return "";
}

const char* tail_strategy_name(TailStrategy t) {
  switch (t) {
    case TailStrategy::Auto: return "auto";
    case TailStrategy::RoundUp: return "round_up";
    case TailStrategy::GuardWithIf: return "guard_with_if";
    case TailStrategy::ShiftInwards: return "shift_inwards";
  }
  return "?";
}

std::optional<TailStrategy> parse_tail_strategy(const std::string& name) {
  for (TailStrategy t : {TailStrategy::Auto, TailStrategy::RoundUp, TailStrategy::GuardWithIf,
                         TailStrategy::ShiftInwards}) {
    if (name == tail_strategy_name(t)) return t;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Defaults

int stage_count(const Func& f) { return 1 + static_cast<int>(f.updates.size()); }

std::vector<RegionBound> region_bounds(const Schedule& s, const std::string& func) {
  std::vector<RegionBound> bounds;
  const FuncSchedule* fs = s.find(func);
  if (!fs) return bounds;
  auto it = fs->stages.find(0);
  if (it == fs->stages.end()) return bounds;
  for (const Directive& d : it->second.directives) {
    if (d.name == "bound") bounds.push_back({d.var(0), d.integer(1), d.integer(2), d.loc});
  }
  return bounds;
}

LoopLevel effective_compute_level(const Schedule& s, const Pipeline& p, const Func& f) {
  if (f.name == p.output.func) return LoopLevel::root();
  const FuncSchedule* fs = s.find(f.name);
  if (fs && fs->compute) return *fs->compute;
  // A perforated func keeps its samples (approximation.h).
  if (f.updates.empty() && !stores_samples(s, f)) return LoopLevel::inlined();
  return LoopLevel::root();
}

LoopLevel effective_store_level(const Schedule& s, const Pipeline& p, const Func& f) {
  const FuncSchedule* fs = s.find(f.name);
  if (f.name != p.output.func && fs && fs->store) return *fs->store;
  return effective_compute_level(s, p, f);
}

std::string stage_name(const std::string& func, int stage) {
  if (stage == 0) return func;
  return func + ".update(" + std::to_string(stage - 1) + ")";
}

}  // namespace stipple
