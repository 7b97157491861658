// The schedule text form (the design, "The schedule language"): one stage per line of
// chained calls, `#` comments.
//
//   schedule  := line*
//   line      := FUNC ['.' 'update' '(' INT ')'] ('.' directive)+
//   directive := NAME '(' [arg (',' arg)*] ')'
//   arg       := NAME | ['-'] NUMBER | NAME '(' [arg, ...] ')' | NAME '=' arg
//              | FUNC '.' 'update' '(' INT ')'
//
// A chain ends where the next token is not '.', so a chain may continue on the next
// line (`.parallel(yo)`). Parsing is purely syntactic plus the directive table's shapes
// (schedule.h): names of funcs and loops are checked against a pipeline by
// check_schedule. Lines naming the same func accumulate in order; setting a func's
// compute or store level twice is an error.
#pragma once

#include <string>
#include <string_view>

#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// Arguments nested deeper than this (grid(grid(...))) are an error, which bounds the
/// parser's recursion; chains of any length are parsed without recursion.
inline constexpr int kMaxScheduleArgDepth = 32;
/// The largest k accepted in f.update(k).
inline constexpr int64_t kMaxUpdateIndex = 999999;

/// Parses a schedule; `file_name` is used in messages and kept in the result. Throws
/// CompileError (file:line:col) at the first error.
Schedule parse_schedule(std::string_view text, const std::string& file_name);

}  // namespace stipple
