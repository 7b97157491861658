#include "client/tune_request.h"

#include <filesystem>

#include "client/photo_args.h"

namespace stipple::cli {

search::TuneOptions tune_options(const TuneRequest& r, const std::string& images_option,
                                 const std::string& test_images_option) {
  namespace fs = std::filesystem;
  search::TuneOptions to;
  to.pipeline_file = r.pipeline;
  const PhotoSets photos =
      choose_photos(r.images, r.test_images, images_option, test_images_option);
  to.train_images = photos.train;
  to.test_images = photos.test;
  to.strategy = r.strategy;
  to.budget = r.budget > 0 ? r.budget : (r.time_s > 0 ? INT64_MAX / 2 : kDefaultBudget);
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
    to.baseline_schedule = r.baseline;
  }
  return to;
}

}  // namespace stipple::cli
