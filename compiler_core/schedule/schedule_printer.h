// Prints a Schedule in the canonical text form that parse_schedule reads back to an
// equal Schedule: one line per func with a level or pure-definition directives
// (`A.compute_at(out, yi).store_at(out, yo).vectorize(x, 8)`: compute level, then store
// level, then the directives in order), then one line per update stage with directives
// (`hist.update(0).parallel(y)`).
#pragma once

#include <string>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// Funcs in name order.
std::string print_schedule(const Schedule& s);
/// Funcs in the pipeline's definition order; funcs the pipeline lacks follow in name order.
std::string print_schedule(const Schedule& s, const Pipeline& p);

/// One argument or directive as written: `grid(4, 1)`, `split(x, xo, xi, 8)`.
std::string to_string(const ScheduleArg& a);
std::string to_string(const Directive& d);
/// `compute_at(out, yi)`, `store_root()`, `compute_inline()`.
std::string level_directive(const LoopLevel& level, bool store);

}  // namespace stipple
