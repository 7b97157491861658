#include "storage/migrations.h"

#include <array>
#include <string>

#include "storage/sqlite.h"

namespace stipple::storage {
namespace {

// Version 1: the tables. Timestamps are ISO 8601 UTC with milliseconds. REAL columns that
// hold measured numbers are nullable: NULL is how a NaN is stored (SQLite turns NaN into
// NULL), while +/-inf are stored as they are.
constexpr const char* kTables = R"sql(
CREATE TABLE pipelines (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  ir_hash TEXT NOT NULL UNIQUE,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE datasets (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  content_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE images (
  id INTEGER PRIMARY KEY,
  dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  split TEXT NOT NULL CHECK (split IN ('train', 'test'))
);
CREATE INDEX images_by_dataset ON images(dataset_id, split);

CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY,
  pipeline_id INTEGER NOT NULL REFERENCES pipelines(id),
  dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  split TEXT NOT NULL CHECK (split IN ('train', 'test')),
  target TEXT NOT NULL,
  schedule TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'crash', 'timeout',
                                         'out_of_memory', 'nan', 'error')),
  reason TEXT NOT NULL DEFAULT '',
  compile_ms REAL,
  time_ms REAL,
  error REAL,
  psnr REAL,
  host TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (pipeline_id, dataset_id, split, target, schedule)
);

CREATE TABLE measurements (
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  image_id INTEGER NOT NULL REFERENCES images(id),
  time_ms REAL,
  error REAL,
  psnr REAL,
  PRIMARY KEY (evaluation_id, image_id)
) WITHOUT ROWID;

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  pipeline_id INTEGER NOT NULL REFERENCES pipelines(id),
  dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  target TEXT NOT NULL,
  strategy TEXT NOT NULL,
  budget_evaluations INTEGER NOT NULL DEFAULT 0,
  budget_seconds REAL NOT NULL DEFAULT 0,
  seed INTEGER NOT NULL DEFAULT 0,
  options_json TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'running'
    CHECK (state IN ('running', 'done', 'failed', 'cancelled')),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at TEXT,
  baseline_evaluation_id INTEGER REFERENCES evaluations(id)
);

CREATE TABLE run_evaluations (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
  seq INTEGER NOT NULL,
  strategy TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, evaluation_id)
) WITHOUT ROWID;

CREATE TABLE fronts (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
  test_evaluation_id INTEGER REFERENCES evaluations(id),
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
)sql";

// Version 2: indexes for the per-run views (a run's evaluations in request order, newest
// runs first) and for the reverse lookups foreign-key checks make.
constexpr const char* kRunIndexes = R"sql(
CREATE INDEX run_evaluations_by_seq ON run_evaluations(run_id, seq);
CREATE INDEX run_evaluations_by_evaluation ON run_evaluations(evaluation_id);
CREATE INDEX runs_by_created ON runs(created_at);
CREATE INDEX fronts_by_evaluation ON fronts(evaluation_id);
)sql";

// Version 3: the process that runs a run (process_identity.h), so that a run whose
// process was killed shows as interrupted rather than running forever.
constexpr const char* kRunOwner = R"sql(
ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql";

// Version 4: how each of a run's evaluations was come by (RunEvaluation::origin), so that
// the measurements made can be counted apart from the results shared between runs.
constexpr const char* kLinkOrigin = R"sql(
ALTER TABLE run_evaluations ADD COLUMN origin TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: why a run ended (failed, cancelled), so that a restarted coordinator or another
// process reading the file can still say why, not only that it failed.
constexpr const char* kRunMessage = R"sql(
ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT '';
)sql";

// Version 6: the pipelines registered for nightly regression tuning (`stipple nightly add`):
// what ships (a schedule's text, and the run whose front is re-measured with it), on which
// photos at which size, to which targets. A run deleted from under a registration leaves its
// schedule registered, without the front: run_id goes, source_run (no key) says it was one.
constexpr const char* kNightly = R"sql(
CREATE TABLE nightly (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  pipeline_id INTEGER NOT NULL REFERENCES pipelines(id),
  dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  width INTEGER NOT NULL DEFAULT 0,
  height INTEGER NOT NULL DEFAULT 0,
  schedule TEXT NOT NULL,
  variant TEXT NOT NULL,
  source_run INTEGER,
  run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX nightly_by_run ON nightly(run_id);

CREATE TABLE nightly_targets (
  nightly_id INTEGER NOT NULL REFERENCES nightly(id) ON DELETE CASCADE,
  target TEXT NOT NULL,
  PRIMARY KEY (nightly_id, target)
) WITHOUT ROWID;
)sql";

// Version 7: the nightly runs' history (`stipple nightly run`). A night is one registration
// measured on one target by one host, with the versions that built what it measured and
// what it measured on (setup: the pipeline, photos and size, which `nightly add --replace`
// may change; nights of another setup are no baseline); its
// variants are the shipped one and the front's, each with its timing samples (JSON array
// of ms), error, output digest, its code (the object file and entry symbol it was timed
// as: the next night on the host times it again beside its own), the samples of the
// baseline night's code timed beside it, the verdict against the baseline night and the
// statistics behind it (JSON).
constexpr const char* kNightlyHistory = R"sql(
CREATE TABLE nightly_nights (
  id INTEGER PRIMARY KEY,
  nightly_id INTEGER NOT NULL REFERENCES nightly(id) ON DELETE CASCADE,
  target TEXT NOT NULL,
  host TEXT NOT NULL,
  setup TEXT NOT NULL,
  stipple_version TEXT NOT NULL,
  llvm_version TEXT NOT NULL,
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at TEXT,
  outcome TEXT NOT NULL DEFAULT 'running',
  message TEXT NOT NULL DEFAULT '',
  retune_run INTEGER REFERENCES runs(id) ON DELETE SET NULL
);
CREATE INDEX nightly_nights_by_registration
  ON nightly_nights(nightly_id, target, host, setup, id);

CREATE TABLE nightly_variants (
  night_id INTEGER NOT NULL REFERENCES nightly_nights(id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  schedule TEXT NOT NULL,
  exact INTEGER NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  samples TEXT NOT NULL,
  error REAL NOT NULL,
  output_digest TEXT NOT NULL,
  object BLOB,
  symbol TEXT NOT NULL DEFAULT '',
  baseline_samples TEXT NOT NULL DEFAULT '[]',
  verdict TEXT NOT NULL,
  baseline_night INTEGER,
  stats TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (night_id, label)
);
)sql";

constexpr std::array<Migration, 7> kMigrations = {{
    {1, "tables", kTables},
    {2, "run indexes", kRunIndexes},
    {3, "run owner", kRunOwner},
    {4, "link origin", kLinkOrigin},
    {5, "run message", kRunMessage},
    {6, "nightly registry", kNightly},
    {7, "nightly history", kNightlyHistory},
}};
static_assert(kMigrations.size() == kSchemaVersion, "one migration step per schema version");

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

int user_version(sqlite3* db) {
  Statement stmt(db, "PRAGMA user_version");
  stmt.step();
  return static_cast<int>(stmt.column_int(0));
}

void check_not_newer(sqlite3* db, int version) {
  if (version <= kSchemaVersion) return;
  throw StorageError("the database '" + std::string(sqlite3_db_filename(db, "main")) +
                     "' has schema version " + std::to_string(version) +
                     ", newer than the version " + std::to_string(kSchemaVersion) +
                     " this build of Stipple knows; open it with a newer Stipple");
}

int migrate(sqlite3* db, int target_version) {
  // An up-to-date file is only read, so opening never waits for another process's writes.
  int version = user_version(db);
  check_not_newer(db, version);
  if (version >= target_version) return version;

  // The version is read again inside the write transaction, so two processes opening an
  // old file at once cannot both apply the same step.
  Transaction txn(db, Transaction::Kind::kWrite);
  version = user_version(db);
  check_not_newer(db, version);
  for (const Migration& step : kMigrations) {
    if (step.version <= version || step.version > target_version) continue;
    try {
      exec(db, step.sql);
    } catch (const StorageError& e) {
      throw StorageError("migration to schema version " + std::to_string(step.version) + " (" +
                             step.description + ") failed: " + e.message(),
                         e.sql(), e.code());
    }
    version = step.version;
  }
  // PRAGMA takes no parameters; the value is an integer of ours.
  exec(db, "PRAGMA user_version = " + std::to_string(version));
  txn.commit();
  return version;
}

}  // namespace stipple::storage
