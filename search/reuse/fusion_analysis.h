// Fusion analysis, Schedule Synthesis through Reuse Analysis §4.1: where each stage of a
// group is computed and where it is stored, as positions in the group output's loop
// order D_m (innermost 0).
//
// Algorithm 1 (stage_fusion): a stage no consumer reuses (W_i empty) is inlined.
// Otherwise c_i is the reused loop with the highest intra-tile order; the store level is
// the next loop out (a sliding window over c_i, folded to the overlap); when c_i is the
// innermost loop (the vector loop: prefetching wants whole rows) or a loop along which the
// consumer reuses everything (the paper's reduction rule; here any broadcast loop), the
// compute level moves out to the store level too. A reuse along no loop of D_m puts the
// stage at the innermost loop, (min(D_m), min(D_m)).
// Algorithm 2 (inline_trivial_stages): a trivial stage (no more arithmetic than loads) is
// inlined, and the producers it had inlined into it that are not trivial take its place.
// legalise_levels then makes the choice one the schedule checker accepts (LOOPS.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "search/reuse/loop_order.h"
#include "search/reuse/region_model.h"

namespace stipple::search::reuse {

struct FusionLevel {
  bool inlined = false;
  int compute = -1, store = -1;  // positions in D_m
  std::string rule;              // what decided it, for the explanation
};
using FusionLevels = std::map<int, FusionLevel>;

/// The position in `order` of the loop that iterates output dimension x within a tile:
/// x's intra-tile loop, or x's own loop when x is not tiled.
int dependency_loop(const LoopOrder& order, int x);

/// "next(D_m, i)" for stage s: the next loop out from i, passing over loops along output
/// dimensions that s does not depend on (computing or storing there only repeats the same
/// work); at most the outermost loop.
int next_level(const RegionModel& m, const LoopOrder& order, int stage, int i);

/// Algorithm 1 for `stages` (consumers first or in any order: each is decided alone).
FusionLevels stage_fusion(const RegionModel& m, const LoopOrder& order,
                          const std::vector<int>& stages);

/// Algorithm 2 on the result of Algorithm 1 (the stages in `levels`), consumers first.
void inline_trivial_stages(const RegionModel& m, FusionLevels& levels);

/// Makes the levels legal: every use of a stage is inside its compute level (compute
/// levels at or outside those of its consumers, through inlined ones), the store level
/// at or outside the compute level, neither outside the outermost loop (the parallel
/// one: a buffer stored outside it would be shared by its threads). Notes each change.
void legalise_levels(const RegionModel& m, const LoopOrder& order, FusionLevels& levels);

/// For tests and explanations: Algorithm 1 (and 2 when `inline_trivial`) for every func
/// of `p` computed inside its output (one group, no stage at root except those the model
/// always puts there), for loop order `order` of the output, by func name. Inlined funcs
/// have compute == "inline" and an empty store; root ones "root".
struct FusionChoice {
  std::string compute, store;
  std::string rule;
  bool operator==(const FusionChoice& o) const { return compute == o.compute && store == o.store; }
};
std::map<std::string, FusionChoice> fusion_levels(const Pipeline& p,
                                                  const std::vector<int64_t>& output_extents,
                                                  const LoopOrder& order,
                                                  bool inline_trivial = false);

}  // namespace stipple::search::reuse
