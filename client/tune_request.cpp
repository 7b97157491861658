#include "client/tune_request.h"

#include <filesystem>

#include "client/photo_args.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/support/process_identity.h"

namespace stipple::cli {

search::TuneOptions tune_options(const TuneRequest& r, const std::string& images_option,
                                 const std::string& test_images_option) {
  namespace fs = std::filesystem;
  search::TuneOptions to;
  to.pipeline_file = r.pipeline_on_disk ? fs::absolute(r.pipeline).string() : r.pipeline;
  const PhotoSets photos =
      choose_photos(r.images, r.test_images, images_option, test_images_option);
  // Absolute: a run is resumed from wherever its user is then.
  for (const std::string& photo : photos.train) to.train_images.push_back(fs::absolute(photo));
  for (const std::string& photo : photos.test) to.test_images.push_back(fs::absolute(photo));
  to.strategy = r.strategy;
  to.budget = r.budget > 0 ? r.budget : (r.time_s > 0 ? search::kNoBudget : kDefaultBudget);
  to.time_budget_s = r.time_s > 0 ? r.time_s : r.budget > 0 ? 0 : kDefaultSearchSeconds;
  to.seed = r.seed;
  to.exact_only = r.exact;
  to.runs = r.runs;
  to.threads = r.threads;
  to.deadline_s = r.deadline;
  to.population = r.population;
  to.generations = r.generations;
  if (!r.thresholds.empty()) to.thresholds = search::with_exact_threshold(r.thresholds);
  if (r.baseline.empty()) {
    const fs::path hand = fs::path(r.pipeline).replace_extension(".sched");
    if (r.pipeline_on_disk && fs::exists(hand)) to.baseline_schedule = hand.string();
  } else if (r.baseline != "default") {
    to.baseline_schedule = fs::absolute(r.baseline);
  }
  return to;
}

RunToResume run_to_resume(storage::Database& db, int64_t run_id) {
  const std::optional<storage::RunRecord> run = db.find_run(run_id);
  if (!run) throw UserError("no run " + std::to_string(run_id) + " in " + db.path());
  RunToResume r;
  if (run->state == "done") {
    r.done = true;
    return r;
  }
  if (storage::run_may_be_live(*run)) {
    throw UserError("run " + std::to_string(run->id) + " is still running (process " +
                    identity_pid(run->owner) + " on " + identity_host(run->owner) +
                    "); two processes never tune one run");
  }
  r.options = search::TuneOptions::from_json(run->options_json);
  const std::optional<storage::PipelineRecord> tuned = db.pipeline(run->pipeline_id);
  if (!tuned || tuned->source.empty()) {
    throw UserError("run " + std::to_string(run_id) + " has no stored program to continue");
  }
  r.source = tuned->source;
  return r;
}

}  // namespace stipple::cli
