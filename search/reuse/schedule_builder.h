// From the reuse model's decisions to a Schedule in the language of
// compiler_core/schedule (LOOPS.md), §4.4 of Schedule Synthesis through Reuse Analysis:
// each tiled group's output is tiled in the chosen order, its innermost intra-tile loop
// vectorised with the machine's vector width and its outermost loop parallel when there
// is more than one core; every stage computed inside it gets compute_at / store_at at its
// levels and a vectorised innermost loop; untiled roots are vectorised and parallelised
// where that is legal. The result is exact (no approximation directives) and checked
// with check_schedule; a rejected stage falls back to compute_root, stage by stage.
#pragma once

#include <string>
#include <vector>

#include "compiler_core/schedule/schedule.h"
#include "search/reuse/grouping.h"
#include "search/reuse/machine_model.h"

namespace stipple::search::reuse {

struct BuiltSchedule {
  Schedule schedule;
  std::vector<std::string> lines;  // per group and stage: what was chosen and why
  int degraded = 0;                // stages moved to root because the checker refused
  bool fell_back_to_default = false;
};

BuiltSchedule build_schedule(const PipelineAnalysis& a, const GroupedSchedule& g,
                             const MachineModel& mm);

/// check_schedule, moving compute_at stages to root one at a time until it passes (the
/// default schedule as the last resort). Returns the number of stages moved; notes each.
int legalise_schedule(const Pipeline& p, Schedule& s, std::vector<std::string>& notes,
                      bool* fell_back_to_default = nullptr);

}  // namespace stipple::search::reuse
