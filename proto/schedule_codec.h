// Converting a Schedule (compiler_core/schedule/schedule.h) to and from
// stipple.proto.Schedule (proto/schedule.proto), and its byte form.
//
// Reading validates the message's shape, because the bytes may come from another host:
// unknown enum values, names that are not identifiers, directives that do not fit the
// directive table, incomplete levels, duplicate funcs or stages, arguments nested deeper
// than the text parser allows or numbers it could not read back all become a UserError.
// Whether the schedule fits a pipeline is check_schedule's job, not the codec's.
#pragma once

#include <string>
#include <string_view>

#include "compiler_core/schedule/schedule.h"
#include "proto/schedule.pb.h"

namespace stipple {

inline constexpr uint32_t kScheduleFormatVersion = 1;

proto::Schedule to_proto(const Schedule& s);
/// Validating conversion back: every malformed message is a UserError.
Schedule from_proto(const proto::Schedule& m);

std::string serialize_schedule(const Schedule& s);
/// Parses bytes from serialize_schedule; anything else is a UserError.
Schedule parse_schedule_bytes(std::string_view bytes);

}  // namespace stipple
