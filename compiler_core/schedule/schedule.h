// The schedule model: how and where each func of a pipeline is computed (Halide's
// vocabulary, Decoupling Algorithms from Schedules §3-4), with the compute
// level and the store level chosen separately (Schedule Synthesis through Reuse Analysis §3).
//
//   Schedule ──funcs──▶ FuncSchedule ── compute level, store level (Inline | Root | At)
//                                    └─ stages[k] ──▶ StageSchedule: ordered Directives
//
// A Directive is generic (a name and an argument tree), so that the text parser, the
// printer and the proto need no change when a directive is added: its shape goes into
// the table in schedule.cpp (kDirectiveSpecs) and its meaning into the checker and the
// lowering. How loops are named and resolved is in LOOPS.md beside this file; the
// lowering follows it, and schedule_loops.h implements it.
//
// Equality (operator==) is structural and ignores source locations, so that
// parse(print(s)) == s and proto round trips can be tested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/source.h"

namespace stipple {

/// One argument of a directive, as written: `x`, `8`, `0.25`, `grid(4, 1)`, `k = 3`,
/// `hist.update(0)`.
enum class ScheduleArgKind : uint8_t {
  Name,     // an identifier
  Int,      // an integer, possibly negative
  Float,    // a number with a '.' or exponent
  Call,     // name(args...)
  Keyword,  // name = value (args[0] is the value)
  Stage,    // func.update(k): name is the func, int_value is k
};

struct ScheduleArg {
  ScheduleArgKind kind = ScheduleArgKind::Name;
  std::string name;
  int64_t int_value = 0;
  double float_value = 0;
  std::vector<ScheduleArg> args;
  SourceLoc loc;  // not part of equality

  static ScheduleArg make_name(std::string name, SourceLoc loc = {});
  static ScheduleArg make_int(int64_t value, SourceLoc loc = {});
  bool operator==(const ScheduleArg& o) const;
};

/// A call in a stage's chain: `split(x, xo, xi, 8)`. Only directive names listed in
/// kDirectiveSpecs (schedule.cpp) with the right argument shapes get into a Schedule.
struct Directive {
  std::string name;
  std::vector<ScheduleArg> args;
  SourceLoc loc;  // of the directive's name; not part of equality

  /// A directive as the parser builds it (what generated schedules make too).
  static Directive make(std::string name, std::vector<ScheduleArg> args, SourceLoc loc = {});
  bool operator==(const Directive& o) const { return name == o.name && args == o.args; }
  /// The name of argument i; internal error unless it is a Name.
  const std::string& var(size_t i) const;
  /// The value of argument i; internal error unless it is an Int.
  int64_t integer(size_t i) const;
};

/// Where a func is computed or stored.
enum class LevelKind : uint8_t {
  Inline,  // computed where it is used (compute level only)
  Root,    // once, outside every loop
  At,      // inside loop `var` of stage `stage` of func `func`
};

struct LoopLevel {
  LevelKind kind = LevelKind::Root;
  std::string func;  // At
  int stage = 0;     // At: 0 = the pure definition, k + 1 = update(k) (Halide's numbering)
  std::string var;   // At
  SourceLoc loc;     // of the directive that set it; not part of equality

  static LoopLevel inlined(SourceLoc loc = {});
  static LoopLevel root(SourceLoc loc = {});
  static LoopLevel at(std::string func, int stage, std::string var, SourceLoc loc = {});
  bool operator==(const LoopLevel& o) const;
};

/// The directives of one stage (the pure definition or one update), in order.
struct StageSchedule {
  std::vector<Directive> directives;  // never empty inside a Schedule
  SourceLoc loc;                      // of the first line naming this stage

  bool operator==(const StageSchedule& o) const { return directives == o.directives; }
};

struct FuncSchedule {
  /// Unset: the default, inline for a pure func (no updates), root otherwise; the
  /// output is always at root.
  std::optional<LoopLevel> compute;
  /// Unset: the same as the compute level.
  std::optional<LoopLevel> store;
  /// Keyed by stage index (0 = pure definition, k + 1 = update(k)); only stages with
  /// directives have an entry.
  std::map<int, StageSchedule> stages;
  SourceLoc loc;  // of the func's name on the first line naming it

  bool operator==(const FuncSchedule& o) const {
    return compute == o.compute && store == o.store && stages == o.stages;
  }
};

struct Schedule {
  std::map<std::string, FuncSchedule> funcs;  // only funcs named in the schedule
  std::string file_name = "<schedule>";       // for messages; not part of equality

  bool operator==(const Schedule& o) const { return funcs == o.funcs; }
  const FuncSchedule* find(const std::string& func) const;
};

// ---------------------------------------------------------------------------------------
// The directive table

enum class DirectiveScope : uint8_t {
  Func,   // compute_root, compute_at, ...: sets a level of the whole func
  Stage,  // split, tile, ...: transforms one stage's loops
  /// perforate, channels, ...: changes what the func computes (approximation.h). Kept
  /// in stage 0's directives, in the order written, so that the text form and the proto
  /// carry them as they carry stage directives; only on the pure definition's line.
  Approximation,
  /// bound: fixes the region a func is computed over in one of its dimensions (Halide's
  /// Func::bound). Kept in stage 0's directives like approximations; no loop changes.
  Region,
};

/// Approximations and bound: directives of the whole func, kept in stage 0's directive
/// list (the pure definition's line); the parser and the proto codec refuse them on an
/// update. perforate_reduction is the exception: on an update's line it thins that
/// update's domain (approximation.h).
inline bool whole_func_directive(DirectiveScope s, const std::string& name) {
  return (s == DirectiveScope::Approximation || s == DirectiveScope::Region) &&
         name != "perforate_reduction";
}

/// What one argument position accepts.
enum class ArgShape : uint8_t {
  Name,   // an identifier
  Int,    // an integer
  Level,  // a func name or func.update(k)
  Width,  // a vector width: an integer (lanes) or a call (vectors(k), registers)
  Any,    // any argument (for directives whose values the checker interprets)
};

struct DirectiveSpec {
  const char* name;
  DirectiveScope scope;
  std::vector<ArgShape> params;  // the required arguments
  std::vector<ArgShape> optional_params;
  bool variadic;      // the last required shape repeats (reorder)
  const char* usage;  // shown in arity errors: "split(var, outer, inner, factor[, tail])"
};

/// The entry for `name`, or nullptr.
const DirectiveSpec* find_directive_spec(const std::string& name);
/// "compute_at, compute_inline, ..." for the unknown-directive message.
std::string known_directive_names();

/// Checks a directive against its spec. Returns an empty string when it fits, otherwise
/// the message; *bad_arg is then the index of the offending argument, or -1 when the
/// directive as a whole is wrong (unknown name, wrong count).
std::string directive_shape_error(const Directive& d, int* bad_arg);

/// Tail strategies of split and tile (the optional last argument). Auto, the default,
/// never changes results: see LOOPS.md.
enum class TailStrategy : uint8_t { Auto, RoundUp, GuardWithIf, ShiftInwards };
const char* tail_strategy_name(TailStrategy t);  // "auto", "round_up", ...
std::optional<TailStrategy> parse_tail_strategy(const std::string& name);

// ---------------------------------------------------------------------------------------
// Defaults

/// The number of stages of f: 1 + its update count.
int stage_count(const Func& f);
/// The compute level that applies to f under s (the default when unset).
LoopLevel effective_compute_level(const Schedule& s, const Pipeline& p, const Func& f);
/// The store level that applies (the compute level when unset).
LoopLevel effective_store_level(const Schedule& s, const Pipeline& p, const Func& f);

/// `f` for stage 0, `f.update(k)` for stage k + 1.
std::string stage_name(const std::string& func, int stage);

/// `bound(v, min, extent)` of a func: it is computed over exactly min..min + extent - 1
/// along its pure variable v, a constant the lowering builds its loops and its consumers'
/// regions from (Halide's Func::bound; `bound(c, 0, 3)` of an RGB output lets channel
/// loops be unrolled without guards). For the output this is a promise about the
/// caller's buffer, checked when the pipeline is called (LOOPS.md).
struct RegionBound {
  std::string var;
  int64_t min = 0, extent = 0;
  SourceLoc loc;
};
/// The bounds of `func` under s, in the order written (the checker allows one per
/// variable).
std::vector<RegionBound> region_bounds(const Schedule& s, const std::string& func);

}  // namespace stipple
