// The canonical text form of schedules. Numbers print so that the lexer reads back the
// same value: integers in decimal, floats in their shortest round-trip form with a '.'
// or exponent so they stay floats.
#include "compiler_core/schedule/schedule_printer.h"

#include <charconv>
#include <set>

namespace stipple {

namespace {

std::string format_float(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

void print_func(std::string& out, const std::string& name, const FuncSchedule& fs) {
  std::string head;
  if (fs.compute) head += "." + level_directive(*fs.compute, false);
  if (fs.store) head += "." + level_directive(*fs.store, true);
  auto pure = fs.stages.find(0);
  if (pure != fs.stages.end()) {
    for (const Directive& d : pure->second.directives) head += "." + to_string(d);
  }
  if (!head.empty()) out += name + head + "\n";
  for (const auto& [stage, st] : fs.stages) {
    if (stage == 0 || st.directives.empty()) continue;
    out += stage_name(name, stage);
    for (const Directive& d : st.directives) out += "." + to_string(d);
    out += "\n";
  }
}

}  // namespace

std::string to_string(const ScheduleArg& a) {
  switch (a.kind) {
    case ScheduleArgKind::Name: return a.name;
    case ScheduleArgKind::Int: return std::to_string(a.int_value);
    case ScheduleArgKind::Float: return format_float(a.float_value);
    case ScheduleArgKind::Keyword:
      return a.name + " = " + (a.args.empty() ? std::string("?") : to_string(a.args[0]));
    case ScheduleArgKind::Stage: return a.name + ".update(" + std::to_string(a.int_value) + ")";
    case ScheduleArgKind::Call: {
      std::string s = a.name + "(";
      for (size_t i = 0; i < a.args.size(); ++i) s += (i ? ", " : "") + to_string(a.args[i]);
      return s + ")";
    }
  }
  return "?";
}

std::string to_string(const Directive& d) {
  std::string s = d.name + "(";
  for (size_t i = 0; i < d.args.size(); ++i) s += (i ? ", " : "") + to_string(d.args[i]);
  return s + ")";
}

std::string level_directive(const LoopLevel& level, bool store) {
  switch (level.kind) {
    case LevelKind::Inline: return store ? "store_inline()" : "compute_inline()";
    case LevelKind::Root: return store ? "store_root()" : "compute_root()";
    case LevelKind::At:
      return std::string(store ? "store_at(" : "compute_at(") +
             stage_name(level.func, level.stage) + ", " + level.var + ")";
  }
  return "?";
}

std::string print_schedule(const Schedule& s) {
  std::string out;
  for (const auto& [name, fs] : s.funcs) print_func(out, name, fs);
  return out;
}

std::string print_schedule(const Schedule& s, const Pipeline& p) {
  std::string out;
  std::set<std::string> done;
  for (const Func& f : p.funcs) {
    if (const FuncSchedule* fs = s.find(f.name)) {
      print_func(out, f.name, *fs);
      done.insert(f.name);
    }
  }
  for (const auto& [name, fs] : s.funcs) {
    if (!done.count(name)) print_func(out, name, fs);
  }
  return out;
}

}  // namespace stipple
