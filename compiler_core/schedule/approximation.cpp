// Reading and checking approximation directives (approximation.h).
#include "compiler_core/schedule/approximation.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler_core/bounds/interval.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple {

const char* sampling_kind_name(SamplingKind k) {
  switch (k) {
    case SamplingKind::Grid: return "grid";
    case SamplingKind::Adaptive: return "adaptive";
    case SamplingKind::Importance: return "importance";
  }
  return "?";
}

const char* reconstruction_kind_name(ReconstructionKind k) {
  switch (k) {
    case ReconstructionKind::Nearest: return "nearest";
    case ReconstructionKind::Linear: return "linear";
    case ReconstructionKind::Gaussian: return "gaussian";
    case ReconstructionKind::VaryingGaussian: return "varying_gaussian";
  }
  return "?";
}

bool FuncApproximation::stores_samples() const {
  if (perforation) return true;
  return std::any_of(loops.begin(), loops.end(),
                     [](const LoopPerforation& l) { return !l.reduction; });
}

namespace {

// The reduction variables of the Reduce nodes of an expression.
class ReductionVars : public IRVisitor {
 public:
  std::set<std::string> names;
  using IRVisitor::visit;
  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) names.insert(rv.name);
    IRVisitor::visit(op);
  }
};

std::string q(const std::string& s) { return "'" + s + "'"; }

const StageSchedule* pure_stage(const Schedule& s, const std::string& func);

/// The integer type of a store_as(i8 | u8 | i16 | u16) directive, unchecked; nullopt for
/// any other directive (store_as(f16) included).
std::optional<Type> integer_storage(const Directive& d) {
  if (d.name != "store_as" || d.args.empty()) return std::nullopt;
  std::optional<Type> t = parse_type_name(d.args[0].name);
  if (!t || !t->is_int()) return std::nullopt;
  return t;
}

class ApproximationReader {
 public:
  ApproximationReader(const Pipeline& p, const Func& f, const SourceText& source,
                      const Schedule& schedule)
      : p_(p), f_(f), source_(source), schedule_(schedule) {
    ReductionVars rv;
    f.value.accept(&rv);
    reduction_vars_ = rv.names;
  }

  // The approximation directives of update(k): only perforate_reduction of a variable of
  // its domain (the update's iterations thinned; reduction_perforation.h).
  std::vector<ReductionPerforation> read_update(const StageSchedule& st, size_t k) {
    reduction_vars_.clear();
    for (const ReductionVariable& rv : f_.updates[k].domain) reduction_vars_.insert(rv.name);
    FuncApproximation a;
    for (const Directive& d : st.directives) {
      if (find_directive_spec(d.name)->scope != DirectiveScope::Approximation) continue;
      // The parser and the proto codec keep the others on stage 0 (whole_func_directive).
      STIPPLE_INTERNAL_CHECK(d.name == "perforate_reduction", d.name + " on an update");
      if (reduction_vars_.empty()) {
        error(d.loc,
              "update(" + std::to_string(k) + ") of " + q(f_.name) + " has no domain to perforate");
      }
      ReductionPerforation r = perforate_reduction(d, a);
      // A variable standing alone on the left side names the point the update writes:
      // thinning it would leave points unwritten (loop perforation, not an estimate).
      for (const Expr& arg : f_.updates[k].args) {
        const Variable* v = arg.as<Variable>();
        if (v && v->name == r.var) {
          error(d.args[0].loc, q(r.var) + " is where update(" + std::to_string(k) + ") of " +
                                   q(f_.name) +
                                   " writes (an argument of its left side): perforating it "
                                   "would leave those points unwritten; perforate a variable "
                                   "whose iterations add to one point");
        }
      }
      a.reductions.push_back(std::move(r));
    }
    return a.reductions;
  }

  FuncApproximation read(const StageSchedule& st) {
    FuncApproximation a;
    for (const Directive& d : st.directives) {
      if (find_directive_spec(d.name)->scope != DirectiveScope::Approximation) continue;
      if (!f_.updates.empty()) {
        error(d.loc, d.name + " applies to funcs without update definitions; " + q(f_.name) +
                         " has " + std::to_string(f_.updates.size()));
      }
      if (d.name == "perforate") {
        if (a.perforation) error(d.loc, q(f_.name) + " is perforated twice; perforate it once");
        a.perforation = perforate(d);
      } else if (d.name == "perforate_reduction") {
        a.reductions.push_back(perforate_reduction(d, a));
      } else if (d.name == "channels") {
        if (a.channels) error(d.loc, "the channels of " + q(f_.name) + " are set twice");
        a.channels = channels(d, a.channels_from);
        a.channels_loc = d.loc;
      } else if (d.name == "loop_perforate") {
        a.loops.push_back(loop_perforate(d, a));
      } else if (d.name == "store_as") {
        if (a.storage) error(d.loc, "the storage of " + q(f_.name) + " is set twice");
        a.storage = storage(d);
        a.storage_loc = d.loc;
      } else {
        STIPPLE_INTERNAL_CHECK(false, "approximation directive " + d.name + " not read");
      }
    }
    if (a.storage && (a.stores_samples() || a.channels)) {
      // Not yet: the samples, the reconstruction and the channels' copy each have a type
      // of their own to choose.
      error(a.storage_loc, "store_as and " +
                               std::string(a.channels ? "channels" : "perforation of its points") +
                               " on one func (" + q(f_.name) + ") are not supported; store a " +
                               "func that reads it, or one it reads, as f16 instead");
    }
    const bool perforated_sums =
        !a.reductions.empty() || std::any_of(a.loops.begin(), a.loops.end(),
                                             [](const LoopPerforation& l) { return l.reduction; });
    if (a.storage && *a.storage != ScalarType::Float16 && perforated_sums) {
      // The proof that the values fit is over the exact definition; a perforated sum
      // rescales its terms (and runs an empty domain once), which it does not cover.
      error(a.storage_loc, "store_as(" + to_string(Type(*a.storage)) +
                               ") and perforated reductions on one func (" + q(f_.name) +
                               ") are not supported: the proof that its values fit is over "
                               "its exact definition");
    }
    for (const LoopPerforation& l : a.loops) {
      if (!l.reduction && a.perforation) {
        error(l.loc,
              "loop_perforate of a pure variable and perforate both choose which points "
              "of " +
                  q(f_.name) + " are computed; use one of them");
      }
    }
    return a;
  }

 private:
  [[noreturn]] void error(SourceLoc loc, const std::string& message) const {
    source_.error(loc, message);
  }

  // Binds a call's arguments (positional, then name = value) to its parameters; absent
  // ones are nullptr.
  std::vector<const ScheduleArg*> bind(const ScheduleArg& call,
                                       const std::vector<std::string>& params,
                                       const std::string& usage) const {
    std::vector<const ScheduleArg*> bound(params.size(), nullptr);
    bool keywords = false;
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ScheduleArg& a = call.args[i];
      if (a.kind == ScheduleArgKind::Keyword) {
        keywords = true;
        auto it = std::find(params.begin(), params.end(), a.name);
        if (it == params.end()) {
          error(a.loc, call.name + " has no parameter " + q(a.name) + ": " + usage);
        }
        size_t k = static_cast<size_t>(it - params.begin());
        if (bound[k]) error(a.loc, q(a.name) + " is given twice: " + usage);
        bound[k] = &a.args[0];
        continue;
      }
      if (keywords) error(a.loc, "a positional argument after name = value: " + usage);
      if (i >= params.size()) {
        error(a.loc, call.name + " takes at most " + std::to_string(params.size()) + " argument" +
                         (params.size() == 1 ? "" : "s") + ": " + usage);
      }
      bound[i] = &a;
    }
    return bound;
  }

  const ScheduleArg& required(const std::vector<const ScheduleArg*>& bound, size_t i,
                              const ScheduleArg& call, const std::string& param,
                              const std::string& usage) const {
    if (!bound[i]) error(call.loc, call.name + " needs " + q(param) + ": " + usage);
    return *bound[i];
  }

  int64_t integer(const ScheduleArg& a, const std::string& what, int64_t lo, int64_t hi) const {
    if (a.kind != ScheduleArgKind::Int) error(a.loc, what + " must be an integer");
    if (a.int_value < lo || a.int_value > hi) {
      error(a.loc, what + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                       ", found " + std::to_string(a.int_value));
    }
    return a.int_value;
  }

  // A number in (lo, hi] (or [lo, hi] when lo_inclusive).
  double number(const ScheduleArg& a, const std::string& what, double lo, double hi,
                bool lo_inclusive) const {
    double v = 0;
    if (a.kind == ScheduleArgKind::Int) {
      v = static_cast<double>(a.int_value);
    } else if (a.kind == ScheduleArgKind::Float) {
      v = a.float_value;
    } else {
      error(a.loc, what + " must be a number");
    }
    bool ok = std::isfinite(v) && (lo_inclusive ? v >= lo : v > lo) && v <= hi;
    if (!ok) {
      error(a.loc, what + " must be in " + std::string(lo_inclusive ? "[" : "(") +
                       format_number(lo) + ", " + format_number(hi) + "], found " + to_string(a));
    }
    return v;
  }

  static std::string format_number(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  const ScheduleArg& call_arg(const Directive& d, size_t i, const std::string& what,
                              const std::string& choices) const {
    const ScheduleArg& a = d.args[i];
    if (a.kind != ScheduleArgKind::Call && a.kind != ScheduleArgKind::Name) {
      error(a.loc, what + " of " + d.name + " must be one of " + choices);
    }
    return a;
  }

  Perforation perforate(const Directive& d) const {
    Perforation p;
    p.loc = d.loc;
    const std::string choices = "grid(s1, ..., sk), adaptive(k, f), importance(f)";
    const ScheduleArg& s = call_arg(d, 0, "the sampling", choices);
    const int dims = static_cast<int>(f_.args.size());
    if (s.name == "grid") {
      p.sampling = SamplingKind::Grid;
      const std::string usage = "grid(s1, ..., sk), one spacing per dimension of " + q(f_.name);
      if (s.kind != ScheduleArgKind::Call || s.args.empty()) {
        error(s.loc, "grid needs a spacing: " + usage);
      }
      if (static_cast<int>(s.args.size()) > dims) {
        error(s.args[dims].loc, q(f_.name) + " has " + std::to_string(dims) + " dimension" +
                                    (dims == 1 ? "" : "s") + ", so grid takes at most " +
                                    std::to_string(dims) + " spacings");
      }
      for (size_t i = 0; i < s.args.size(); ++i) {
        if (s.args[i].kind == ScheduleArgKind::Keyword) {
          error(s.args[i].loc, "grid takes spacings only: " + usage);
        }
        p.spacing.push_back(integer(s.args[i], "a grid spacing", 1, 4096));
      }
      p.spacing.resize(static_cast<size_t>(dims), 1);
    } else if (s.name == "adaptive" || s.name == "importance") {
      bool adaptive = s.name == "adaptive";
      p.sampling = adaptive ? SamplingKind::Adaptive : SamplingKind::Importance;
      const std::string usage = adaptive ? "adaptive(k = spacing, f = fraction)"
                                         : "importance(f = fraction[, map = func])";
      if (dims < 2) {
        error(s.loc, s.name + " sampling places points in two dimensions; " + q(f_.name) + " has " +
                         std::to_string(dims));
      }
      if (s.kind != ScheduleArgKind::Call) error(s.loc, s.name + " needs arguments: " + usage);
      std::vector<std::string> params =
          adaptive ? std::vector<std::string>{"k", "f"} : std::vector<std::string>{"f", "map"};
      auto bound = bind(s, params, usage);
      if (adaptive) {
        p.k = integer(required(bound, 0, s, "k", usage), "adaptive's k", 2, 64);
        p.fraction = number(required(bound, 1, s, "f", usage), "adaptive's f", 0, 1, false);
      } else {
        p.fraction = number(required(bound, 0, s, "f", usage), "importance's f", 0, 1, false);
        if (bound[1]) p.importance_map = importance_map(*bound[1]);
      }
      p.reconstruction = ReconstructionKind::VaryingGaussian;
      p.on_demand = false;
    } else {
      error(s.loc, "unknown sampling " + q(s.name) + "; the samplings are " + choices);
    }

    if (d.args.size() > 1) reconstruction(d.args[1], p);
    if (d.args.size() > 2) {
      const ScheduleArg& m = d.args[2];
      if (m.name == "on_demand") {
        if (p.sampling != SamplingKind::Grid) {
          error(m.loc,
                "on-demand reconstruction needs grid sampling (irregular samples are "
                "reconstructed once, Image Perforation §3.3)");
        }
        if (p.reconstruction != ReconstructionKind::Nearest &&
            p.reconstruction != ReconstructionKind::Linear) {
          error(m.loc, std::string("on-demand reconstruction is nearest or linear; ") +
                           reconstruction_kind_name(p.reconstruction) + " is precomputed");
        }
        p.on_demand = true;
      } else if (m.name == "precomputed") {
        p.on_demand = false;
      } else if (m.name == "compacted") {
        if (p.sampling == SamplingKind::Grid) {
          error(m.loc,
                "compacted computation lists the points of adaptive or importance sampling; "
                "grid samples are stored dense already");
        }
        p.compacted = true;
      } else {
        error(m.loc, "expected on_demand, precomputed or compacted, found " + q(m.name));
      }
    } else if (p.reconstruction != ReconstructionKind::Nearest &&
               p.reconstruction != ReconstructionKind::Linear) {
      p.on_demand = false;
    }
    return p;
  }

  // importance(f, map = m): m is a func of (x, y) that does not read the perforated func.
  std::string importance_map(const ScheduleArg& a) const {
    if (a.kind != ScheduleArgKind::Name) {
      error(a.loc, "importance's map must name a func of the pipeline");
    }
    const Func* m = p_.find_func(a.name);
    if (!m) error(a.loc, "importance's map " + q(a.name) + " is not a func of the pipeline");
    if (m->args.size() != 2) {
      error(a.loc, "importance's map " + q(a.name) + " must have 2 dimensions (x, y); it has " +
                       std::to_string(m->args.size()));
    }
    if (m->type.is_bool()) error(a.loc, "importance's map " + q(a.name) + " must be a number");
    // The map is computed before the points it places: it may not read them.
    if (reads(*m, f_.name)) {
      error(a.loc, "importance's map " + q(a.name) + " reads " + q(f_.name) +
                       ", the func whose points it places");
    }
    return a.name;
  }

  // Whether g is `target` or reads it, directly or through other funcs.
  bool reads(const Func& g, const std::string& target) const {
    std::vector<const Func*> todo{&g};
    std::set<std::string> seen;
    while (!todo.empty()) {
      const Func* h = todo.back();
      todo.pop_back();
      if (!seen.insert(h->name).second) continue;
      if (h->name == target) return true;
      for (const std::string& c : called_funcs(*h)) {
        if (const Func* k = p_.find_func(c)) todo.push_back(k);
      }
    }
    return false;
  }

  void reconstruction(const ScheduleArg& r, Perforation& p) const {
    const std::string choices = "nearest, linear, gaussian(sigma), varying_gaussian(sigma0)";
    if (r.kind != ScheduleArgKind::Name && r.kind != ScheduleArgKind::Call) {
      error(r.loc, "the reconstruction must be one of " + choices);
    }
    if (r.name == "nearest" || r.name == "linear") {
      if (r.kind == ScheduleArgKind::Call) error(r.loc, r.name + " takes no arguments");
      p.reconstruction =
          r.name == "nearest" ? ReconstructionKind::Nearest : ReconstructionKind::Linear;
      return;
    }
    if (r.name != "gaussian" && r.name != "varying_gaussian") {
      error(r.loc, "unknown reconstruction " + q(r.name) + "; the reconstructions are " + choices);
    }
    bool varying = r.name == "varying_gaussian";
    p.reconstruction = varying ? ReconstructionKind::VaryingGaussian : ReconstructionKind::Gaussian;
    p.sigma = 1;
    if (r.kind == ScheduleArgKind::Call) {
      std::string param = varying ? "sigma0" : "sigma";
      std::string usage = r.name + "(" + param + " = value)";
      auto bound = bind(r, {param}, usage);
      if (bound[0]) p.sigma = number(*bound[0], r.name + "'s " + param, 0, 1000, false);
    }
  }

  ReductionPerforation perforate_reduction(const Directive& d, const FuncApproximation& a) const {
    ReductionPerforation r;
    r.loc = d.loc;
    r.var = reduction_var(d);
    for (const ReductionPerforation& o : a.reductions) {
      if (o.var == r.var) error(d.args[0].loc, q(r.var) + " is perforated twice");
    }
    const ScheduleArg& how = call_arg(d, 1, "the second argument", "grid(s), fraction(p)");
    if (how.kind != ScheduleArgKind::Call || how.args.size() != 1) {
      error(how.loc, "expected grid(s) or fraction(p)");
    }
    if (how.name == "grid") {
      r.stride = integer(how.args[0], "the reduction's spacing", 1, 4096);
    } else if (how.name == "fraction") {
      r.fraction = number(how.args[0], "the fraction of iterations kept", 0, 1, false);
    } else {
      error(how.loc, "expected grid(s) or fraction(p), found " + q(how.name));
    }
    return r;
  }

  std::string reduction_var(const Directive& d) const {
    const std::string& v = d.var(0);
    if (!reduction_vars_.count(v)) {
      std::string known;
      for (const std::string& n : reduction_vars_) known += (known.empty() ? "" : ", ") + n;
      error(d.args[0].loc, q(f_.name) + " has no reduction variable " + q(v) +
                               (known.empty() ? std::string("; its definition has none")
                                              : "; its reduction variables are " + known));
    }
    return v;
  }

  ScalarType storage(const Directive& d) const {
    const ScheduleArg& t = d.args[0];
    const std::optional<Type> to =
        t.kind == ScheduleArgKind::Name ? parse_type_name(t.name) : std::nullopt;
    const bool known = to && (*to == Float16() || (to->is_int() && to->bits() <= 16));
    if (!known) {
      error(t.loc,
            "store_as takes the storage type: store_as(f16) (IEEE binary16) for an f32 func, "
            "store_as(i8), (u8), (i16) or (u16) for a narrower integer one");
    }
    if (f_.name == p_.output.func) {
      error(d.loc, q(f_.name) + " is the output, whose type is what the pipeline returns; " +
                       "store_as lowers the precision of the funcs before it");
    }
    if (*to == Float16()) {
      if (f_.type != Float32()) {
        error(d.loc, "store_as(f16) stores an f32 func as f16; " + q(f_.name) + " is " +
                         to_string(f_.type));
      }
      return ScalarType::Float16;
    }
    const std::string directive = "store_as(" + to_string(*to) + ")";
    if (!f_.type.is_int() || f_.type.bits() <= to->bits()) {
      error(d.loc, directive + " narrows an integer func wider than " + to_string(*to) + "; " +
                       q(f_.name) + " is " + to_string(f_.type));
    }
    // Narrowing must not change a value: the values the definition can compute, whatever
    // the inputs, params and coordinates, must all be values of the narrower type.
    const bounds::Interval v = definition_values();
    if (v.is_empty() || (v.min >= to->min_value() && v.max <= to->max_value())) return to->code;
    auto end = [](double e) {
      return std::isinf(e) ? std::string(e < 0 ? "-inf" : "inf")
                           : std::to_string(static_cast<int64_t>(e));
    };
    error(d.loc,
          directive + " needs every value of " + q(f_.name) + " in [" + end(to->min_value()) +
              ", " + end(to->max_value()) + "], but its definition is only known to lie in [" +
              end(v.min) + ", " + end(v.max) +
              "] (loads of inputs and funcs span their element types: narrow the funcs it reads, " +
              "clamp the value, or store it in a wider type)");
  }

  /// Every value f_'s definition can compute: its coordinates anything, each param any
  /// value of its type (a run may override it), each input of any size, and each load
  /// anything of its element type (bounds::interval_of).
  bounds::Interval definition_values() const {
    class AnyValue : public bounds::IntervalConstants {
     public:
      bounds::Interval param(const std::string&, Type t) const override {
        return bounds::Interval::of_type(t);
      }
      bounds::Interval input_extent(const std::string&, int) const override {
        return bounds::Interval::range(0, 2147483647.0);
      }
      bounds::Interval free_variable(const std::string&) const override {
        return bounds::Interval::everything();
      }
    } any;
    bounds::IntervalScope scope;
    for (const std::string& a : f_.args) scope.emplace_back(a, bounds::Interval::everything());
    return bounds::interval_of(narrowed_reads(f_.value), scope, any);
  }

  /// e with each read of a func this schedule narrows (store_as of an integer type) read
  /// at that type and widened, as the lowering will (storage_lowering.h): a chain of
  /// narrowed stages proves itself stage by stage. Sound by induction over the funcs'
  /// order, as they read one another without cycles (a func reading itself has updates,
  /// where store_as is refused); a narrowing that is itself refused refuses the schedule.
  Expr narrowed_reads(const Expr& e) const {
    class Narrowed : public IRMutator {
     public:
      explicit Narrowed(const Schedule& s) : s_(s) {}
      using IRMutator::visit;
      Expr visit(const Call* op) override {
        Expr c = IRMutator::visit(op);
        if (op->call_type != CallType::Func) return c;
        const StageSchedule* st = pure_stage(s_, op->name);
        if (!st) return c;
        for (const Directive& d : st->directives) {
          std::optional<Type> t = integer_storage(d);
          if (!t || !op->type.is_int()) continue;
          const Call* read = c.as<Call>();
          return Cast::make(op->type, Call::make(*t, read->name, read->args, read->call_type));
        }
        return c;
      }

     private:
      const Schedule& s_;
    } narrowed(schedule_);
    return narrowed.mutate(e);
  }

  int64_t channels(const Directive& d, std::string& from) const {
    const int dims = static_cast<int>(f_.args.size());
    if (dims < 2) {
      error(d.loc, "channels(c) needs a func whose last dimension is its channels; " + q(f_.name) +
                       " has " + std::to_string(dims) + " dimension" + (dims == 1 ? "" : "s"));
    }
    int64_t c = integer(d.args[0], "the channel count", 1, 64);
    if (d.args.size() > 1) {
      // channels(c, from = g): g's other channels (a YUV image the func filters, say).
      const ScheduleArg& a = d.args[1];
      const ScheduleArg& g = a.kind == ScheduleArgKind::Keyword ? a.args[0] : a;
      if ((a.kind == ScheduleArgKind::Keyword && a.name != "from") ||
          g.kind != ScheduleArgKind::Name) {
        error(a.loc, "expected from = func: the func the other channels come from");
      }
      const Func* source = p_.find_func(g.name);
      if (!source) error(g.loc, q(g.name) + " is not a func of the pipeline");
      if (source->args.size() != f_.args.size()) {
        error(g.loc, q(g.name) + " has " + std::to_string(source->args.size()) +
                         " dimensions; the channels of " + q(f_.name) + " need " +
                         std::to_string(dims));
      }
      if (reads(*source, f_.name)) {
        error(g.loc, q(g.name) + " reads " + q(f_.name) + ", whose channels it would give");
      }
      from = g.name;
      return c;
    }
    const InputDecl* source = channel_source(p_, f_);
    if (!source) {
      error(d.loc, "channels(c) copies the other channels from an input of " + q(f_.name) +
                       "'s type and dimensions (" + to_string(f_.type) + ", " +
                       std::to_string(dims) + "); the pipeline has none");
    }
    return c;
  }

  LoopPerforation loop_perforate(const Directive& d, const FuncApproximation& a) const {
    LoopPerforation l;
    l.loc = d.loc;
    l.var = d.var(0);
    bool pure = std::find(f_.args.begin(), f_.args.end(), l.var) != f_.args.end();
    if (!pure) {
      if (!reduction_vars_.count(l.var)) {
        std::string known;
        for (const std::string& n : f_.args) known += (known.empty() ? "" : ", ") + n;
        for (const std::string& n : reduction_vars_) known += (known.empty() ? "" : ", ") + n;
        error(d.args[0].loc,
              q(f_.name) + " has no loop over " + q(l.var) + "; its variables are " + known);
      }
      l.reduction = true;
    }
    for (const LoopPerforation& o : a.loops) {
      if (o.var == l.var)
        error(d.args[0].loc, "the loop over " + q(l.var) + " is perforated twice");
    }
    for (const ReductionPerforation& o : a.reductions) {
      if (o.var == l.var) {
        error(d.args[0].loc, q(l.var) + " is already perforated by perforate_reduction");
      }
    }
    if (!l.reduction) {
      size_t dim =
          static_cast<size_t>(std::find(f_.args.begin(), f_.args.end(), l.var) - f_.args.begin());
      if (dim >= p_.output.extents.size()) {
        error(d.args[0].loc,
              "loop_perforate of a pure variable needs its extent, the "
              "output's extent in the same dimension; the output has " +
                  std::to_string(p_.output.extents.size()) + " dimensions");
      }
    }
    const std::string kinds = "stride(s), truncate(fraction, first | last) or random(fraction)";
    const ScheduleArg& how = call_arg(d, 1, "the second argument", kinds);
    if (how.kind != ScheduleArgKind::Call) error(how.loc, "expected " + kinds);
    if (how.name == "stride") {
      auto bound = bind(how, {"s"}, "stride(s)");
      l.kind = LoopPerforationKind::Stride;
      l.stride = integer(required(bound, 0, how, "s", "stride(s)"), "the stride", 1, 4096);
    } else if (how.name == "truncate") {
      const std::string usage = "truncate(fraction, first | last)";
      auto bound = bind(how, {"fraction", "end"}, usage);
      l.fraction = number(required(bound, 0, how, "fraction", usage),
                          "the fraction of iterations skipped", 0, 0.999, true);
      l.kind = LoopPerforationKind::TruncateLast;
      if (bound[1]) {
        const ScheduleArg& e = *bound[1];
        if (e.kind != ScheduleArgKind::Name || (e.name != "first" && e.name != "last")) {
          error(e.loc, "expected first or last");
        }
        if (e.name == "first") l.kind = LoopPerforationKind::TruncateFirst;
      }
    } else if (how.name == "random") {
      auto bound = bind(how, {"fraction"}, "random(fraction)");
      l.fraction = number(required(bound, 0, how, "fraction", "random(fraction)"),
                          "the fraction of iterations skipped", 0, 0.999, true);
      l.kind = LoopPerforationKind::Random;
      if (!l.reduction) {
        error(how.loc, "random skips apply to reduction variables; " + q(l.var) +
                           " is a pure variable, whose points are stored densely, so "
                           "skipping them at random would save nothing (use stride or "
                           "truncate)");
      }
    } else {
      error(how.loc, "expected " + kinds + ", found " + q(how.name));
    }
    return l;
  }

  const Pipeline& p_;
  const Func& f_;
  const SourceText& source_;
  const Schedule& schedule_;
  std::set<std::string> reduction_vars_;
};

const StageSchedule* pure_stage(const Schedule& s, const std::string& func) {
  const FuncSchedule* fs = s.find(func);
  if (!fs) return nullptr;
  auto it = fs->stages.find(0);
  return it == fs->stages.end() ? nullptr : &it->second;
}

}  // namespace

const InputDecl* channel_source(const Pipeline& p, const Func& f) {
  for (const InputDecl& in : p.inputs) {
    if (in.type == f.type && in.dim_names.size() == f.args.size()) return &in;
  }
  return nullptr;
}

const InputDecl* importance_source(const Pipeline& p) {
  for (const InputDecl& in : p.inputs) {
    if (in.dim_names.size() == 2 || in.dim_names.size() == 3) return &in;
  }
  return nullptr;
}

FuncApproximation func_approximation(const Schedule& s, const Pipeline& p, const Func& f,
                                     const SourceText& source) {
  const FuncSchedule* fs = s.find(f.name);
  if (!fs) return {};
  FuncApproximation a;
  const StageSchedule* st = pure_stage(s, f.name);
  if (st) a = ApproximationReader(p, f, source, s).read(*st);
  for (const auto& [stage, ust] : fs->stages) {
    if (stage == 0 || static_cast<size_t>(stage) > f.updates.size()) continue;
    std::vector<ReductionPerforation> r =
        ApproximationReader(p, f, source, s).read_update(ust, static_cast<size_t>(stage - 1));
    if (!r.empty()) a.update_reductions[stage - 1] = std::move(r);
  }
  return a;
}

bool has_approximation(const Schedule& s) {
  for (const auto& [name, fs] : s.funcs) {
    for (const auto& [stage, st] : fs.stages) {
      for (const Directive& d : st.directives) {
        const DirectiveSpec* spec = find_directive_spec(d.name);
        if (spec && spec->scope == DirectiveScope::Approximation) return true;
      }
    }
  }
  return false;
}

bool approximates(const Schedule& s) {
  for (const auto& [name, fs] : s.funcs) {
    for (const auto& [stage, st] : fs.stages) {
      for (const Directive& d : st.directives) {
        const DirectiveSpec* spec = find_directive_spec(d.name);
        if (spec && spec->scope == DirectiveScope::Approximation && !integer_storage(d)) {
          return true;
        }
      }
    }
  }
  return false;
}

bool stores_samples(const Schedule& s, const Func& f) {
  const StageSchedule* st = pure_stage(s, f.name);
  if (!st) return false;
  for (const Directive& d : st->directives) {
    if (d.name == "perforate") return true;
    if (d.name == "loop_perforate" && !d.args.empty() &&
        std::find(f.args.begin(), f.args.end(), d.args[0].name) != f.args.end()) {
      return true;
    }
  }
  return false;
}

}  // namespace stipple
