// Stage grouping, Schedule Synthesis through Reuse Analysis §4.3 (Algorithms 4 and 5): a
// group (segment) is a stage computed at root, its output, with the stages computed
// inside its tiles. The whole pipeline is first one group (every stage fused into the
// output or inlined); only when its working set does not fit in the last-level cache is
// it split:
// - Algorithm 4: stages with more than one reusing consumer become the outputs of their
//   own segments (with their producers);
// - Algorithm 5: a segment that still does not fit is split again, its first n stages
//   (in topological order) becoming a segment for n = 1, 2, ... while that segment fits,
//   the rest split recursively; every complete configuration is costed and the cheapest
//   one whose segments all fit wins.
// Some stages are always roots of groups of their own, untiled: funcs with update
// definitions (their reduction domains do not shrink with a tile, and the checker allows
// no inlining), and stages that depend on no tiled output dimension (tables, constants:
// computed once instead of once per tile). A stage that would be computed inside two
// groups becomes a root too (every use of a func must be inside the loop it is computed
// at).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "search/reuse/machine_model.h"
#include "search/reuse/pipeline_analysis.h"
#include "search/reuse/region_model.h"
#include "search/reuse/tiling.h"

namespace stipple::search::reuse {

struct Group {
  int output = -1;
  bool tiled = true;        // false: a root stage scheduled alone (updates, tables)
  std::vector<int> stages;  // the other stages evaluated inside it, producers first
  std::string why;          // why its output is a root
};

struct Grouping {
  std::vector<Group> groups;
  std::vector<bool> root;
  std::vector<bool> inlined;
};

/// The groups when `extra_roots` are segment outputs besides the ones the model always
/// makes (the pipeline's output, funcs with updates, tables, and stages two groups need).
Grouping form_groups(const PipelineAnalysis& a, const std::set<int>& extra_roots);

/// The extents a group's output is computed over: the pipeline's output extents, or the
/// region its consumers need of a segment output.
std::vector<int64_t> group_extents(const PipelineAnalysis& a, const Group& g);
/// The region model of a group.
RegionModel group_region_model(const PipelineAnalysis& a, const Group& g);

/// Whether the model always computes stage i at root in a group of its own, and why.
bool forced_root(const PipelineAnalysis& a, int i, std::string* why);

struct GroupedSchedule {
  Grouping grouping;
  std::vector<GroupTiling> tilings;  // per group (found == false for untiled groups)
  double cost = 0;
  bool fits = true;        // every group's working set fits the last-level cache
  int configurations = 0;  // evaluated by Algorithms 4 and 5
  std::string notes;       // what the grouping did
};

/// Algorithms 4 and 5 around Algorithm 3.
GroupedSchedule group_stages(const PipelineAnalysis& a, const MachineModel& mm);

/// Algorithm 3 for every tiled group of `g` (no splitting).
GroupedSchedule schedule_groups(const PipelineAnalysis& a, const Grouping& g,
                                const MachineModel& mm);

}  // namespace stipple::search::reuse
