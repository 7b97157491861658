// Schedule <-> stipple.proto.Schedule. Decoding accepts exactly the schedules that the
// text parser can produce, so that whatever is read also prints and parses back equal.
#include "proto/schedule_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <cmath>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/schedule_parser.h"

namespace stipple {

namespace {

[[noreturn]] void fail(const std::string& message) {
  throw UserError("invalid schedule proto: " + message);
}

bool is_identifier(const std::string& s) {
  if (s.empty() || s.size() > 1024) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string shown(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "'" + out + "'";
}

void require_identifier(const std::string& s, const std::string& what) {
  if (!is_identifier(s)) fail(what + " " + shown(s) + " is not an identifier");
}

// ---------------------------------------------------------------------------------------
// Encoding

proto::ScheduleArgKind encode(ScheduleArgKind k) {
  switch (k) {
    case ScheduleArgKind::Name: return proto::SCHEDULE_ARG_KIND_NAME;
    case ScheduleArgKind::Int: return proto::SCHEDULE_ARG_KIND_INT;
    case ScheduleArgKind::Float: return proto::SCHEDULE_ARG_KIND_FLOAT;
    case ScheduleArgKind::Call: return proto::SCHEDULE_ARG_KIND_CALL;
    case ScheduleArgKind::Keyword: return proto::SCHEDULE_ARG_KIND_KEYWORD;
    case ScheduleArgKind::Stage: return proto::SCHEDULE_ARG_KIND_STAGE;
  }
  return proto::SCHEDULE_ARG_KIND_UNSPECIFIED;
}

proto::LevelKind encode(LevelKind k) {
  switch (k) {
    case LevelKind::Inline: return proto::LEVEL_KIND_INLINE;
    case LevelKind::Root: return proto::LEVEL_KIND_ROOT;
    case LevelKind::At: return proto::LEVEL_KIND_AT;
  }
  return proto::LEVEL_KIND_UNSPECIFIED;
}

void encode_arg(const ScheduleArg& a, proto::ScheduleArg* m) {
  m->set_kind(encode(a.kind));
  m->set_name(a.name);
  m->set_int_value(a.int_value);
  m->set_float_value(a.float_value);
  for (const ScheduleArg& c : a.args) encode_arg(c, m->add_args());
}

void encode_level(const LoopLevel& l, proto::LoopLevel* m) {
  m->set_kind(encode(l.kind));
  if (l.kind != LevelKind::At) return;
  m->set_func(l.func);
  m->set_stage(l.stage);
  m->set_var(l.var);
}

// ---------------------------------------------------------------------------------------
// Decoding

ScheduleArg decode_arg(const proto::ScheduleArg& m, int depth) {
  if (depth >= kMaxScheduleArgDepth) {
    fail("arguments nested more than " + std::to_string(kMaxScheduleArgDepth) + " deep");
  }
  ScheduleArg a;
  auto no_children = [&] {
    if (m.args_size() != 0) fail("a name or number argument with arguments");
  };
  auto no_number = [&] {
    if (m.int_value() != 0 || m.float_value() != 0 || std::signbit(m.float_value())) {
      fail("argument " + shown(m.name()) + " carries a number");
    }
  };
  switch (m.kind()) {
    case proto::SCHEDULE_ARG_KIND_NAME:
      a.kind = ScheduleArgKind::Name;
      require_identifier(m.name(), "name");
      no_children();
      no_number();
      break;
    case proto::SCHEDULE_ARG_KIND_INT:
      a.kind = ScheduleArgKind::Int;
      if (!m.name().empty()) fail("an integer argument with a name");
      no_children();
      // The text form reads integers of at most 32 bits (and a sign).
      if (m.int_value() < -2147483648LL || m.int_value() > 2147483648LL) {
        fail("integer argument " + std::to_string(m.int_value()) + " does not fit in 32 bits");
      }
      if (m.float_value() != 0 || std::signbit(m.float_value()))
        fail("an integer argument with a float value");
      break;
    case proto::SCHEDULE_ARG_KIND_FLOAT:
      a.kind = ScheduleArgKind::Float;
      if (!m.name().empty()) fail("a float argument with a name");
      no_children();
      if (!std::isfinite(m.float_value())) fail("float argument is not finite");
      if (m.int_value() != 0) fail("a float argument with an integer value");
      break;
    case proto::SCHEDULE_ARG_KIND_CALL:
    case proto::SCHEDULE_ARG_KIND_KEYWORD:
      a.kind = m.kind() == proto::SCHEDULE_ARG_KIND_CALL ? ScheduleArgKind::Call
                                                         : ScheduleArgKind::Keyword;
      require_identifier(m.name(), "argument name");
      no_number();
      if (a.kind == ScheduleArgKind::Keyword && m.args_size() != 1) {
        fail("keyword argument " + shown(m.name()) + " needs exactly one value");
      }
      break;
    case proto::SCHEDULE_ARG_KIND_STAGE:
      a.kind = ScheduleArgKind::Stage;
      require_identifier(m.name(), "func name");
      no_children();
      if (m.int_value() < 0 || m.int_value() > kMaxUpdateIndex) {
        fail("update index " + std::to_string(m.int_value()) + " out of range");
      }
      if (m.float_value() != 0 || std::signbit(m.float_value()))
        fail("a stage argument with a float value");
      break;
    default: fail("unknown argument kind " + std::to_string(static_cast<int>(m.kind())));
  }
  a.name = m.name();
  a.int_value = m.int_value();
  a.float_value = m.float_value();
  for (const proto::ScheduleArg& c : m.args()) a.args.push_back(decode_arg(c, depth + 1));
  return a;
}

LoopLevel decode_level(const proto::LoopLevel& m, bool store) {
  switch (m.kind()) {
    case proto::LEVEL_KIND_INLINE:
    case proto::LEVEL_KIND_ROOT:
      if (store && m.kind() == proto::LEVEL_KIND_INLINE) fail("an inline store level");
      if (!m.func().empty() || m.stage() != 0 || !m.var().empty()) {
        fail("an inline or root level that names a loop");
      }
      return m.kind() == proto::LEVEL_KIND_ROOT ? LoopLevel::root() : LoopLevel::inlined();
    case proto::LEVEL_KIND_AT:
      require_identifier(m.func(), "level func");
      require_identifier(m.var(), "level loop");
      if (m.stage() < 0 || m.stage() > kMaxUpdateIndex + 1) {
        fail("level stage " + std::to_string(m.stage()) + " out of range");
      }
      return LoopLevel::at(m.func(), m.stage(), m.var());
    default: fail("unknown level kind " + std::to_string(static_cast<int>(m.kind())));
  }
}

Directive decode_directive(const proto::Directive& m, int stage) {
  Directive d;
  require_identifier(m.name(), "directive name");
  d.name = m.name();
  for (const proto::ScheduleArg& a : m.args()) d.args.push_back(decode_arg(a, 0));
  int bad = -1;
  std::string problem = directive_shape_error(d, &bad);
  if (!problem.empty()) fail(problem);
  DirectiveScope scope = find_directive_spec(d.name)->scope;
  if (scope == DirectiveScope::Func) fail(d.name + " is a level, not a stage directive");
  if (whole_func_directive(scope, d.name) && stage != 0) {
    fail(d.name + " applies to the whole func; it belongs to stage 0");
  }
  return d;
}

}  // namespace

proto::Schedule to_proto(const Schedule& s) {
  proto::Schedule m;
  m.set_format_version(kScheduleFormatVersion);
  for (const auto& [name, fs] : s.funcs) {
    proto::FuncSchedule* f = m.add_funcs();
    f->set_func(name);
    if (fs.compute) encode_level(*fs.compute, f->mutable_compute());
    if (fs.store) encode_level(*fs.store, f->mutable_store());
    for (const auto& [stage, st] : fs.stages) {
      proto::StageSchedule* sm = f->add_stages();
      sm->set_stage(stage);
      for (const Directive& d : st.directives) {
        proto::Directive* dm = sm->add_directives();
        dm->set_name(d.name);
        for (const ScheduleArg& a : d.args) encode_arg(a, dm->add_args());
      }
    }
  }
  return m;
}

Schedule from_proto(const proto::Schedule& m) {
  if (m.format_version() != kScheduleFormatVersion) {
    fail("format version " + std::to_string(m.format_version()) + ", expected " +
         std::to_string(kScheduleFormatVersion));
  }
  Schedule s;
  for (const proto::FuncSchedule& f : m.funcs()) {
    require_identifier(f.func(), "func name");
    if (s.funcs.count(f.func())) fail("func " + shown(f.func()) + " scheduled twice");
    FuncSchedule fs;
    if (f.has_compute()) fs.compute = decode_level(f.compute(), false);
    if (f.has_store()) fs.store = decode_level(f.store(), true);
    for (const proto::StageSchedule& st : f.stages()) {
      if (st.stage() < 0 || st.stage() > kMaxUpdateIndex + 1) {
        fail("stage " + std::to_string(st.stage()) + " out of range");
      }
      if (fs.stages.count(st.stage())) fail("stage " + std::to_string(st.stage()) + " given twice");
      if (st.directives_size() == 0)
        fail("stage " + std::to_string(st.stage()) + " without directives");
      StageSchedule& out = fs.stages[st.stage()];
      for (const proto::Directive& d : st.directives())
        out.directives.push_back(decode_directive(d, st.stage()));
    }
    if (!fs.compute && !fs.store && fs.stages.empty())
      fail("func " + shown(f.func()) + " with nothing scheduled");
    s.funcs[f.func()] = std::move(fs);
  }
  return s;
}

std::string serialize_schedule(const Schedule& s) {
  std::string bytes;
  STIPPLE_INTERNAL_CHECK(to_proto(s).SerializeToString(&bytes), "schedule failed to serialise");
  return bytes;
}

Schedule parse_schedule_bytes(std::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) fail("message larger than 2 GiB");
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  proto::Schedule m;
  google::protobuf::LogSilencer quiet;
  if (!m.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    fail("bytes do not parse as a stipple.proto.Schedule");
  }
  return from_proto(m);
}

}  // namespace stipple
