// A tuning run on one machine: a strategy proposes schedules, the Evaluator measures them
// on the training photos, every result is committed to SQLite as it arrives (one
// transaction per batch), and at the end the Pareto front of time versus error is
// re-measured on the test photos and stored (Image Perforation §5: fronts are found
// on training images, reported on test images).
//
// Nothing is measured twice: before a candidate is measured, the store is asked for an
// evaluation of the same (pipeline, photos, split, target, schedule), and a stored one is
// linked into the run instead (unless `remeasure`). That makes resuming a run simple and
// exact: the strategies are deterministic given their seed and the outcomes they see, so
// `resume` replays the run from the start, every evaluation committed before the
// interruption answers its proposal again from the store, and measuring goes on from the
// first one that was not committed.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "search/reuse/machine_model.h"
#include "search/strategy.h"
#include "search/tune_options.h"
#include "storage/database.h"
#include "workers/evaluator.h"

namespace stipple::search {

struct TuneProgress {
  int64_t evaluations = 0;   // linked to the run so far (measured or found in the store)
  int64_t budget = 0;        // evaluations
  double time_budget_s = 0;  // 0: none
  int64_t measured = 0;      // measured by this process
  int64_t failures = 0;
  double elapsed_s = 0;
  double per_second = 0;  // measured evaluations per second
  double eta_s = -1;      // -1: unknown
  double baseline_ms = 0;
  /// The pipeline's error metric as fronts label it ("dE" or "RMSE"), the levels of
  /// interest above exact (TuneOptions::thresholds without 0), and the best speedup over
  /// the baseline at mean error <= each (0: none yet).
  std::string metric = "error";
  std::vector<double> thresholds;
  std::vector<double> speedup_at;
  std::string phase;  // "baseline", "search", "test", "done"
};

/// One point of a stored front with both measurements.
struct FrontEntry {
  storage::EvaluationRecord train;
  std::optional<storage::EvaluationRecord> test;
  bool baseline = false;
  /// The run's baseline shown beside a front that dominates it (for the speedups): no
  /// point of the front.
  bool beside_front = false;
};

/// The baseline's training time in a loaded front, what its speedups are against (0: the
/// front has no baseline).
double baseline_time_ms(const std::vector<FrontEntry>& front);

/// What a stored pipeline is known by (PipelineRecord::ir_hash): its structure's hash.
std::string pipeline_ir_hash(const Pipeline& pipeline);
/// Stores the pipeline (its row is reused when one of the same structure is there) and
/// returns its id.
int64_t store_pipeline(storage::Database& db, const Pipeline& pipeline, const std::string& source);
/// Stores the photos as an image set (each file's SHA-256 and size; a set of the same
/// content is reused) and returns its id. Throws for a photo that cannot be read.
int64_t store_photos(storage::Database& db, const std::vector<std::string>& train,
                     const std::vector<std::string>& test);

/// The run's front, the baseline marked: the one the session stored when the run is done;
/// for a run not done (running, interrupted, failed, cancelled) the front of its training
/// evaluations so far, each with its test measurement where one exists (front_is_partial).
std::vector<FrontEntry> load_front(storage::Database& db, int64_t run_id);
inline bool front_is_partial(const storage::RunRecord& run) { return run.state != "done"; }
/// The training evaluation of variant `variant` of load_front's front (numbered as
/// `stipple front` numbers them), for `stipple export`, `stipple nightly add` and the
/// embedding library. Throws UserError naming the variants there are.
storage::EvaluationRecord front_variant(storage::Database& db, int64_t run_id, int variant);

/// UserError unless run `run_id` tuned `pipeline` (the same structure; comments and layout
/// aside): a run continued with another program would file that one's measurements
/// under its own. `file` names the program in the message.
void check_run_pipeline(storage::Database& db, int64_t run_id, const Pipeline& pipeline,
                        const std::string& file);

/// The name of the error the pipeline's front is in: "dE" (Lab) or "RMSE"; "error" when
/// the stored pipeline no longer compiles (an older version of the language).
std::string error_metric_name(storage::Database& db, int64_t pipeline_id);

class TuningSession {
 public:
  using ProgressCallback = std::function<void(const TuneProgress&)>;

  TuningSession(storage::Database& db, workers::Evaluator& evaluator, const Pipeline& pipeline,
                std::string pipeline_source, TuneOptions options);

  /// Creates the run's records and returns its id.
  int64_t create_run();
  /// Continues run `run_id` (created by create_run with the same options). UserError when
  /// the run tuned another program, or was measured on another target.
  void attach(int64_t run_id);
  /// Runs to the budget (or until the strategies finish), then stores the front with its
  /// test measurements and marks the run done. Progress is reported after each batch.
  void run(const ProgressCallback& progress = {});

  int64_t run_id() const { return run_id_; }
  /// How long the reuse model took to schedule the pipeline (0 when it was not used).
  double reuse_model_ms() const { return reuse_model_ms_; }
  /// When *flag becomes true, run() returns after the batch being measured (or, raised at
  /// the "test" report, before the test photos are measured), without a front; the run
  /// stays "running", to be resumed.
  void set_stop_flag(const std::atomic<bool>* flag) { stop_ = flag; }
  bool stopped() const { return stop_ && *stop_; }
  /// The machine the run's target is (default: this host, where a local evaluator
  /// measures): the reuse model's cores, caches and vector width and the vector widths
  /// the searches draw. Before run().
  void set_machine(const MachineModel& machine) { machine_ = machine; }

 private:
  storage::Database& db_;
  workers::Evaluator& evaluator_;
  const Pipeline& pipeline_;
  std::string source_;
  TuneOptions options_;
  int64_t pipeline_id_ = 0, dataset_id_ = 0, run_id_ = 0;
  int64_t next_seq_ = 1;
  double reuse_model_ms_ = 0;
  std::set<std::string> remeasured_;  // split + schedule measured by this process
  TuneProgress progress_;
  std::unique_ptr<SearchSpace> space_;       // the strategies' space (they keep a reference)
  const std::atomic<bool>* stop_ = nullptr;  // set_stop_flag's
  MachineModel machine_ = MachineModel::host();

  std::unique_ptr<Strategy> make_strategy(const std::string& baseline_text);
  /// Finds or measures each schedule on `split`, commits them (one transaction) linked to
  /// the run, and returns the records in order.
  std::vector<storage::EvaluationRecord> evaluate(const std::vector<Candidate>& batch,
                                                  const std::string& split);
};

}  // namespace stipple::search
