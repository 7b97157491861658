// The SQLite store of pipelines, image sets, tuning runs, evaluations and fronts.
//
// One file holds everything a tuning run needs to be resumed or queried: the schema is in
// storage/migrations.cpp and storage/README.md. Connections run in WAL mode with
// synchronous=FULL, foreign keys on and a busy timeout; every write is one BEGIN
// IMMEDIATE transaction, a batch of results is one transaction.
//
// One writer: a process writes through one Database object. Other processes (and other
// Database objects) may read the same file at any time and see every committed
// transaction. A Database may be shared by threads: its calls are serialised.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/evaluation_status.h"

struct sqlite3;

namespace stipple::storage {

/// The schema version this build writes; PRAGMA user_version of a migrated database.
inline constexpr int kSchemaVersion = 7;

/// Every storage failure: SQLite's message, plus the SQL that failed when there is one.
class StorageError : public std::runtime_error {
 public:
  explicit StorageError(const std::string& message, std::string sql = {}, int code = 0);
  /// The message without the SQL.
  const std::string& message() const { return message_; }
  /// The statement that failed, "" when the error is not SQLite's.
  const std::string& sql() const { return sql_; }
  /// SQLite's extended result code, 0 when the error is not SQLite's.
  int code() const { return code_; }

 private:
  std::string message_, sql_;
  int code_ = 0;
};

struct PipelineRecord {
  int64_t id = 0;
  std::string name, ir_hash, source, created_at;
};

struct DatasetRecord {
  int64_t id = 0;
  std::string name, content_hash, created_at;
};

struct ImageRecord {
  int64_t id = 0;
  std::string path, sha256;  // sha256: 64 hex digits of the file's contents
  int width = 0, height = 0;
  std::string split;  // "train" or "test"
};

struct RunRecord {
  int64_t id = 0;
  int64_t pipeline_id = 0, dataset_id = 0;
  std::string pipeline_name;  // filled by queries
  std::string target, strategy;
  int64_t budget_evaluations = 0;
  double budget_seconds = 0;  // 0 = none
  uint64_t seed = 0;
  std::string options_json;             // free-form
  std::string state;                    // running | done | failed | cancelled
  std::string created_at, finished_at;  // finished_at "" while running
  std::optional<int64_t> baseline_evaluation_id;
  /// Training-photo evaluations linked (what the budget counts), filled by queries.
  int64_t evaluations = 0;
  /// The process that last set the run running (process_identity.h): set by create_run
  /// and set_run_state("running") to the calling process.
  std::string owner;
  /// Why the run ended, for a failed or cancelled one (a failure's reason, with the OS's
  /// where it has one); "" while running, for a done run and for runs from before schema 5.
  std::string message;
};

/// The owner of a released run (Database::release_run): no process.
inline constexpr const char* kReleasedOwner = "released";

/// A run whose state says running but whose owner is gone (killed, or its host rebooted)
/// or was released. (A run from before schema 3 has no owner recorded: it may be live.)
bool run_interrupted(const RunRecord& r);
/// What a user is shown: the state, or "interrupted" for a run_interrupted one.
std::string run_state_label(const RunRecord& r);
/// A run marked running whose owner is alive (on this host) or cannot be checked
/// (another host's process): it must not be resumed or deleted from here.
bool run_may_be_live(const RunRecord& r);

/// One image's numbers in an evaluation. NaN is stored as NULL and read back as NaN;
/// infinities are stored as they are (SQLite's REAL holds them).
struct MeasurementRecord {
  int64_t image_id = 0;
  double time_ms = 0, error = 0, psnr = 0;
};

/// The cache key: an evaluation of the same pipeline, image set and split, target and
/// schedule text (byte for byte) is measured once unless a remeasure is asked for.
struct EvaluationKey {
  int64_t pipeline_id = 0, dataset_id = 0;
  std::string split, target, schedule;
};

/// status: ok or a failure kind (evaluation_status.h; stored as its word). time_ms is the mean over
/// images of each image's median time; error and psnr are means over images. Doubles as in
/// MeasurementRecord (+inf kept, NaN <-> NULL).
struct EvaluationRecord {
  int64_t id = 0;
  EvaluationKey key;
  EvaluationStatus status = EvaluationStatus::Ok;
  std::string reason, host;
  double compile_ms = 0, time_ms = 0, error = 0, psnr = 0;
  std::vector<MeasurementRecord> measurements;  // ordered by image_id when read
  std::string created_at;                       // time of the (latest) measurement
  bool ok() const { return status == EvaluationStatus::Ok; }
};

/// An evaluation as one run asked for it: seq orders a run's requests, strategy names the
/// strategy that proposed it.
struct RunEvaluation {
  EvaluationRecord evaluation;
  int64_t seq = 0;
  std::string strategy;
  /// How the run came by it: "measured" (measured for this run's request), "shared"
  /// (another run's measurement of the same evaluation, made at the same time on the
  /// cluster), "stored" (already in the database); "" for links from before schema 4.
  /// Kept from the first link of the evaluation to the run.
  std::string origin;
};

/// A point of a run's front: its training evaluation and, once re-measured, the test one.
struct FrontPoint {
  int64_t evaluation_id = 0;
  std::optional<int64_t> test_evaluation_id;
};

/// A pipeline registered for nightly regression tuning (`stipple nightly add`): the variant
/// it ships, the photos it is measured on and the targets it ships to.
struct NightlyRecord {
  int64_t id = 0;
  std::string name;  // unique in the database: what the nightly run and its report call it
  int64_t pipeline_id = 0, dataset_id = 0;
  std::string pipeline_name;  // filled by queries
  int64_t images = 0;         // filled by queries: the photos of the set
  int width = 0, height = 0;  // each photo rendered at this size first; 0, 0: as it is
  std::string schedule;       // the shipped variant's schedule text
  /// Where the variant came from, for people: "schedule FILE" or "run R variant N".
  std::string variant;
  /// The run the variant is a point of: source_run as registered (none for a schedule
  /// file), run_id while that run is in the database (deleting it leaves the schedule
  /// registered, with run_id none).
  std::optional<int64_t> source_run, run_id;
  std::vector<std::string> targets;  // target keys (host_probe.h), sorted, at least one
  std::string created_at;
};

/// One nightly run of a registration on one target by one host (`stipple nightly run`).
struct NightRecord {
  int64_t id = 0;
  int64_t nightly_id = 0;
  std::string target, host;
  /// What it measured on: the pipeline, the photos and their size (a digest). A night of
  /// another setup is no baseline.
  std::string setup;
  std::string stipple_version, llvm_version;  // what built the code it measured
  std::string started_at, finished_at;        // UTC; finished_at empty while running
  /// "running", then "passed" (nothing regressed), "regressed" or "failed" (it could not
  /// measure: why is in message); "unsure": no regression, but a variant's answer was
  /// unknown; "accepted": a regression a person accepted.
  std::string outcome = "running";
  std::string message;
  std::optional<int64_t> retune_run;  // the night's re-tune, while that run is stored
};

/// A variant measured on a night: the shipped one ("shipped") or a point of the front
/// ("front N"), with what was decided against the baseline night.
struct NightVariantRecord {
  std::string label;
  std::string schedule;
  bool exact = true;            // the schedule approximates nothing: its output must not change
  std::string status;           // the evaluation status: "ok" or why it failed
  std::string reason;           // for a failure
  std::vector<double> samples;  // ms, one per round
  double error = 0;             // mean over the photos, against the reference
  std::string output_digest;    // of every photo's output
  /// The code timed (an object file for the host target, and its entry symbol): the next
  /// night times it again beside its own compile of the schedule.
  std::string object, symbol;
  /// The baseline night's code of this variant, timed tonight beside it (ms, one per
  /// round); empty when there was none to time.
  std::vector<double> baseline_samples;
  /// "new" (no baseline), "same", "slower", "faster", "unknown", "wrong output" (a
  /// correctness regression), "less accurate" or "failed".
  std::string verdict;
  std::optional<int64_t> baseline_night;
  std::string stats = "{}";  // the statistics behind the verdict, as JSON
};

struct OpenOptions {
  /// How long a write waits for another connection's write lock before failing.
  int busy_timeout_ms = 5000;
  /// Open only a database Stipple made: no file is created, and a file without the
  /// schema (an empty file, another program's SQLite) is refused rather than written
  /// into. For the commands that only read runs (runs, front, export).
  bool existing_only = false;
};

class Database {
 public:
  /// Opens (creating if needed, unless options.existing_only) and migrates the database at
  /// `path`. Throws StorageError when the file is not a database (or, existing_only, not
  /// one of Stipple's), WAL cannot be enabled, a migration fails, or the file's schema is
  /// newer than kSchemaVersion.
  static std::unique_ptr<Database> open(const std::string& path, const OpenOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int schema_version() const { return schema_version_; }
  const std::string& path() const { return path_; }
  /// The value of `PRAGMA name` on this connection, as text (e.g. "wal" for journal_mode).
  std::string pragma(const std::string& name);

  // --- pipelines and image sets ---------------------------------------------------------
  /// The pipeline's id; an existing row with the same ir_hash is reused as it is.
  int64_t put_pipeline(const std::string& name, const std::string& ir_hash,
                       const std::string& source);
  std::optional<PipelineRecord> pipeline(int64_t id);
  /// Stores an image set and fills each image's id. A set with the same content (the
  /// multiset of (split, sha256)) reuses its row and image rows, whatever the name; the
  /// stored paths are updated to the given ones (the content is the same, the files may
  /// have moved).
  int64_t put_dataset(const std::string& name, std::vector<ImageRecord>& images);
  std::optional<DatasetRecord> dataset(int64_t id);
  /// The set's images of one split ("" = all), ordered by id.
  std::vector<ImageRecord> dataset_images(int64_t dataset_id, const std::string& split = "");

  // --- runs -----------------------------------------------------------------------------
  /// Inserts a run (state "running" when r.state is empty) and returns its id. r.message
  /// is stored unless the run is running.
  int64_t create_run(const RunRecord& r);
  /// done, failed and cancelled also set finished_at and store `message` (why it ended);
  /// running clears both (a resumed run). One statement: a run is never marked failed
  /// without its reason.
  void set_run_state(int64_t run_id, const std::string& state, const std::string& message = "");
  /// A run left running by a process that goes on without it (a program's tune stopped
  /// by its callback): no process owns it any more, so it is interrupted at once, to be
  /// resumed by anyone, rather than running until that process exits. No-op for a run
  /// that is not running.
  void release_run(int64_t run_id);
  void set_run_baseline(int64_t run_id, int64_t evaluation_id);
  std::optional<RunRecord> find_run(int64_t run_id);
  /// Newest first, with pipeline_name and evaluations filled.
  std::vector<RunRecord> list_runs();
  /// Removes a run with its links and front; its evaluations stay (they are the cache of
  /// measurements every run shares). Throws StorageError when there is no such run.
  void delete_run(int64_t run_id);

  // --- the nightly registry -------------------------------------------------------------
  /// Registers a pipeline with its targets and returns its id; none when the name is
  /// taken. Throws StorageError when no target is given.
  std::optional<int64_t> add_nightly(const NightlyRecord& r);
  /// By name, with pipeline_name, images and targets filled.
  std::optional<NightlyRecord> find_nightly(const std::string& name);
  /// Every registration, by name.
  std::vector<NightlyRecord> list_nightly();
  /// Removes a registration with its targets (its pipeline, photos and runs stay); false
  /// when there is none of that name.
  bool remove_nightly(const std::string& name);
  /// Replaces what registration `r.name` ships, measures and targets (its id, and so its
  /// history, stay); false when there is none of that name.
  bool replace_nightly(const NightlyRecord& r);
  /// The run whose front the next night re-measures (the last re-tune's).
  void set_nightly_run(int64_t nightly_id, int64_t run_id);

  // --- the nightly history --------------------------------------------------------------
  /// Inserts a night ("running") and returns its id (started_at now).
  int64_t begin_night(const NightRecord& r);
  /// Stores the night's variants and how it ended (finished_at now), in one transaction.
  void finish_night(int64_t night_id, const std::vector<NightVariantRecord>& variants,
                    const std::string& outcome, const std::string& message,
                    std::optional<int64_t> retune_run);
  /// The last night before `night` of its registration, target, host and setup that
  /// passed, or whose regression was accepted (`stipple nightly accept`): a regression is
  /// reported every night until it is fixed or accepted.
  std::optional<NightRecord> baseline_night(const NightRecord& night);
  std::optional<NightRecord> night(int64_t night_id);
  /// Marks the registration's last regressed night on this target and host "accepted":
  /// the next nights there compare with it. Its id, or none when the last finished night
  /// there did not regress.
  std::optional<int64_t> accept_last_night(int64_t nightly_id, const std::string& target,
                                           const std::string& host);
  /// The registration's nights, oldest first.
  std::vector<NightRecord> list_nights(int64_t nightly_id);
  std::vector<NightVariantRecord> night_variants(int64_t night_id);

  // --- evaluations ----------------------------------------------------------------------
  std::optional<EvaluationRecord> find_evaluation(const EvaluationKey& key);  // with measurements
  std::optional<EvaluationRecord> evaluation(int64_t id);
  /// One transaction for the whole batch. Each evaluation whose key is new is inserted
  /// with its measurements. One whose key exists is, with `remeasure` and when the
  /// record is a new measurement (id 0), updated in place (same id, so links, fronts and
  /// baselines stay valid; measurements replaced, created_at set to now); otherwise the
  /// stored row is kept and the batch's record is overwritten with it, so a cache hit (a
  /// record loaded from the store, id set) or a duplicate result can go through here too,
  /// in the same batch as remeasured ones.
  /// Each evaluation is then linked to the run with its seq and strategy (a link that
  /// exists is left as it is) and its record's id is set. Nothing of the batch is stored
  /// when any of it fails.
  void put_evaluations(int64_t run_id, std::vector<RunEvaluation>& batch, bool remeasure = false);
  /// Links a stored evaluation to a run (a cache hit); an existing link is left as it is.
  void link_evaluation(int64_t run_id, int64_t evaluation_id, int64_t seq,
                       const std::string& strategy, const std::string& origin = "stored");
  /// The run's evaluations with their measurements, ordered by seq.
  std::vector<RunEvaluation> run_evaluations(int64_t run_id);

  // --- fronts ---------------------------------------------------------------------------
  /// Replaces the run's front as a whole; position is the index in `front`.
  void put_front(int64_t run_id, const std::vector<FrontPoint>& front);
  std::vector<FrontPoint> front(int64_t run_id);

 private:
  Database(sqlite3* db, std::string path);

  sqlite3* db_ = nullptr;
  std::string path_;
  int schema_version_ = 0;
  std::mutex mutex_;
};

}  // namespace stipple::storage
