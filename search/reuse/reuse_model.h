// The analytical reuse model of Schedule Synthesis through Reuse Analysis (Sioutas et al.,
// §3-4) as a schedule generator: one exact schedule for a pipeline on a machine, in
// milliseconds, without measuring anything.
//
//   MachineModel m = MachineModel::host();
//   ReuseModelResult r = reuse_model_schedule(pipeline, m, {1920, 1080, 3});
//   print_schedule(r.schedule, pipeline);  // passes check_schedule
//
// The steps (README.md beside this file maps each algorithm to its code):
// pipeline_analysis (the DAG, reuse and overlaps) -> grouping (Algorithms 4 and 5) ->
// tiling (Algorithm 3, with fusion_analysis's Algorithms 1 and 2 per loop order and the
// cost model w * load + recompute) -> schedule_builder (directives, checked).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"
#include "search/reuse/machine_model.h"

namespace stipple::search {

struct ReuseModelResult {
  Schedule schedule;
  double cost = 0;  // the model's C_total over all groups
  double optimisation_ms = 0;
  /// Per group and stage: the chosen compute and store levels, tile, loop order and the
  /// rule that decided each; fallbacks and degradations. For logs and tests.
  std::string explanation;
  int degraded = 0;  // stages the checker made the generator move to root
};

/// The reuse model's schedule for `p` computing its output over `output_extents` (one
/// extent per output dimension) on machine `m`. Never throws for a pipeline that passes
/// the checker; the schedule always passes check_schedule.
ReuseModelResult reuse_model_schedule(const Pipeline& p, const MachineModel& m,
                                      const std::vector<int64_t>& output_extents);

}  // namespace stipple::search
