#include "search/reuse/reuse_model.h"

#include <chrono>
#include <sstream>

#include "search/reuse/grouping.h"
#include "search/reuse/pipeline_analysis.h"
#include "search/reuse/schedule_builder.h"

namespace stipple::search {

ReuseModelResult reuse_model_schedule(const Pipeline& p, const MachineModel& m,
                                      const std::vector<int64_t>& output_extents) {
  auto start = std::chrono::steady_clock::now();
  reuse::PipelineAnalysis a(p, output_extents);
  reuse::GroupedSchedule g = reuse::group_stages(a, m);
  reuse::BuiltSchedule built = reuse::build_schedule(a, g, m);
  std::vector<std::string> notes;
  bool fell_back = false;
  int degraded = reuse::legalise_schedule(p, built.schedule, notes, &fell_back);

  ReuseModelResult r;
  r.schedule = std::move(built.schedule);
  r.cost = g.cost;
  r.degraded = degraded;
  std::ostringstream os;
  os << "reuse model for " << p.name << " over ";
  for (size_t d = 0; d < a.output_extents().size(); ++d) {
    os << (d ? " x " : "") << a.output_extents()[d];
  }
  os << " on " << m.describe() << "\n";
  os << "grouping: " << g.grouping.groups.size() << " group(s); " << g.notes << "\n";
  for (const std::string& line : built.lines) os << line << "\n";
  for (const std::string& line : notes) os << line << "\n";
  os << "degraded stages: " << degraded << (fell_back ? " (fell back to the default schedule)" : "")
     << "\n";
  r.optimisation_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  os << "optimisation time: " << r.optimisation_ms << " ms\n";
  r.explanation = os.str();
  return r;
}

}  // namespace stipple::search
