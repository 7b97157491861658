// The regions of a group's stages as functions of how much of the group's output one
// iteration of a loop covers: the footprints behind every buffer size and cost of
// Schedule Synthesis through Reuse Analysis §3 (Tx (Ty + 2) for blur_x per tile, equation 1).
//
// Regions are found by interval arithmetic from the output inwards, as bounds inference
// does, one output dimension at a time: a stage dimension driven by output dimension X
// (Drivers) depends only on how much of X is covered, so its extent is tabulated per
// (X, covered extent of X) and memoised; a dimension driven by no output dimension takes
// its extent for the whole output. The covered range is taken to start at 0, so
// `x / 2` regions are those of an even-aligned tile.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search/reuse/pipeline_analysis.h"

namespace stipple::search::reuse {

class RegionModel {
 public:
  /// A group: its output stage, the stages computed inside it (in_group[i], the output
  /// included), the output's extents. Stages the group reads but does not compute
  /// (inputs, other groups' outputs) get footprints but pass nothing on.
  RegionModel(const PipelineAnalysis& a, int output, std::vector<bool> in_group,
              std::vector<int64_t> extents);

  const PipelineAnalysis& analysis() const { return *a_; }
  int output() const { return output_; }
  const std::vector<int64_t>& extents() const { return extents_; }
  const Drivers& drivers() const { return drivers_; }
  bool in_group(int i) const { return in_group_[i]; }
  /// Whether some dimension of stage i is driven by output dimension x.
  bool depends_on(int i, int x) const;

  /// The extents of stage i's region when the output covers `covered` (one extent per
  /// output dimension). Inputs are clipped to their extents.
  std::vector<double> region(int i, const std::vector<int64_t>& covered) const;
  /// The extents of what `consumer` reads of `producer` when the output covers `covered`.
  std::vector<double> footprint(int consumer, int producer,
                                const std::vector<int64_t>& covered) const;
  /// The index of the (consumer, producer) edge, or -1 when consumer does not read it here.
  int edge(int consumer, int producer) const;
  std::vector<double> edge_footprint(int edge, int producer,
                                     const std::vector<int64_t>& covered) const;
  /// Stage i's region for the whole output.
  std::vector<double> whole_region(int i) const { return region(i, extents_); }

  static double volume(const std::vector<double>& extents);

 private:
  struct Propagation {
    std::vector<std::vector<Interval>> region;     // [node][dim]
    std::vector<std::vector<Interval>> footprint;  // [edge][dim]
  };
  Propagation propagate(const std::vector<Interval>& seed) const;
  const Propagation& table(int dim, int64_t extent) const;
  double clip(int node, int dim, const Interval& v) const;

  const PipelineAnalysis* a_;
  int output_;
  std::vector<bool> in_group_;
  std::vector<int64_t> extents_;
  Drivers drivers_;
  std::map<std::pair<int, int>, int> edges_;  // (consumer, producer) -> edge
  std::vector<int> order_;                    // consumers first
  Propagation whole_;
  std::vector<std::vector<double>> limit_;  // [node][dim]: an input's extent, else infinite
  mutable std::unordered_map<int64_t, Propagation> tables_;  // key: extent * 64 + dim
};

}  // namespace stipple::search::reuse
