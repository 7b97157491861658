// Checks a Schedule against the Pipeline it schedules, and rejects, with the reason,
// every schedule the lowering could not implement exactly (LOOPS.md lists the rules):
// unknown funcs, stages and loops; bad splits, tiles, reorders and widths; vectorising,
// parallelising or reordering along a dependence of an update; compute and store levels
// that name a loop where not every use of the func is, a store level inside the compute
// level, storage shared by the threads of a parallel loop, inlining a func that has
// updates or is the output, compute_at cycles.
//
// The checker is conservative: it accepts only what keeps results bit-identical to the
// reference evaluator (compiler_core/interp/), and each schedule it accepts lowers.
#pragma once

#include <string>
#include <string_view>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/source.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// What the schedule is for. A GPU target (the CUDA back end) also needs every stage of a
/// func that is not inlined to run in a GPU kernel: the stage has GPU block loops, or the
/// func is computed inside another stage's GPU loop (LOOPS.md, "GPU loops"); the host code
/// around the kernels cannot reach the GPU's memory.
enum class ScheduleTarget { Cpu, Gpu };

/// Throws a CompileError for the first problem found, at the location of the directive
/// (or argument) at fault. Checks run in phases (funcs and stages, then each stage's
/// directives, then levels), and within a phase in the order of the text. `source`
/// (the schedule's text) is used only to show the line in the message; without it the
/// message has the location and the reason but an empty source line.
/// A stage the GPU rule finds on the host is reported at its line in the schedule, or, when
/// the schedule does not name the func, as a UserError naming the schedule file.
void check_schedule(const Schedule& s, const Pipeline& p, const SourceText* source = nullptr,
                    ScheduleTarget target = ScheduleTarget::Cpu);

/// parse_schedule, resolve_vector_widths for a target whose native vector registers are
/// `vector_bytes` wide (0: this host's, host_probe.h's host_vector_bytes), then
/// check_schedule, with the source line in messages.
Schedule compile_schedule(std::string_view text, const std::string& file_name, const Pipeline& p,
                          ScheduleTarget target = ScheduleTarget::Cpu, int vector_bytes = 0);

/// Reads a schedule file and compiles it against p; a missing file is a UserError.
Schedule load_schedule_file(const std::string& path, const Pipeline& p,
                            ScheduleTarget target = ScheduleTarget::Cpu, int vector_bytes = 0);

}  // namespace stipple
