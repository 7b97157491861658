// The nightly registry (pipelines registered for nightly regression tuning) and the
// history of the nightly runs.
#include <nlohmann/json.hpp>

#include "storage/database.h"
#include "storage/sqlite.h"

namespace stipple::storage {
namespace {

// The registration's columns, its pipeline's name and its set's photo count (distinct
// photos: one photo may be both the training and the test photo), in the order
// read_nightly reads them.
constexpr const char* kSelectNightly = R"sql(
  SELECT n.id, n.name, n.pipeline_id, n.dataset_id, p.name,
         (SELECT COUNT(DISTINCT i.sha256) FROM images i WHERE i.dataset_id = n.dataset_id),
         n.width, n.height, n.schedule, n.variant, n.run_id, n.created_at, n.source_run
  FROM nightly n JOIN pipelines p ON p.id = n.pipeline_id)sql";

NightlyRecord read_nightly(sqlite3* db, const Statement& stmt) {
  NightlyRecord r;
  r.id = stmt.column_int(0);
  r.name = stmt.column_text(1);
  r.pipeline_id = stmt.column_int(2);
  r.dataset_id = stmt.column_int(3);
  r.pipeline_name = stmt.column_text(4);
  r.images = stmt.column_int(5);
  r.width = static_cast<int>(stmt.column_int(6));
  r.height = static_cast<int>(stmt.column_int(7));
  r.schedule = stmt.column_text(8);
  r.variant = stmt.column_text(9);
  r.run_id = stmt.column_optional_int(10);
  r.created_at = stmt.column_text(11);
  r.source_run = stmt.column_optional_int(12);
  Statement targets(db, "SELECT target FROM nightly_targets WHERE nightly_id = ? ORDER BY target");
  targets.bind_int(1, r.id);
  while (targets.step()) r.targets.push_back(targets.column_text(0));
  return r;
}

constexpr const char* kSelectNight = R"sql(
  SELECT id, nightly_id, target, host, setup, stipple_version, llvm_version, started_at,
         COALESCE(finished_at, ''), outcome, message, retune_run
  FROM nightly_nights)sql";

NightRecord read_night(const Statement& stmt) {
  NightRecord r;
  r.id = stmt.column_int(0);
  r.nightly_id = stmt.column_int(1);
  r.target = stmt.column_text(2);
  r.host = stmt.column_text(3);
  r.setup = stmt.column_text(4);
  r.stipple_version = stmt.column_text(5);
  r.llvm_version = stmt.column_text(6);
  r.started_at = stmt.column_text(7);
  r.finished_at = stmt.column_text(8);
  r.outcome = stmt.column_text(9);
  r.message = stmt.column_text(10);
  r.retune_run = stmt.column_optional_int(11);
  return r;
}

void insert_targets(sqlite3* db, int64_t nightly_id, const std::vector<std::string>& targets) {
  // A target given twice is one target.
  Statement target(db, "INSERT OR IGNORE INTO nightly_targets (nightly_id, target) VALUES (?, ?)");
  for (const std::string& t : targets) target.bind_int(1, nightly_id).bind_text(2, t).run();
}

}  // namespace

std::optional<int64_t> Database::add_nightly(const NightlyRecord& r) {
  if (r.targets.empty()) throw StorageError("a nightly registration needs a target");
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  // A name taken is no row written (the UNIQUE constraint decides, race-free).
  Statement insert(db_, R"sql(
    INSERT INTO nightly (name, pipeline_id, dataset_id, width, height, schedule, variant,
                         source_run, run_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING)sql");
  insert.bind_text(1, r.name)
      .bind_int(2, r.pipeline_id)
      .bind_int(3, r.dataset_id)
      .bind_int(4, r.width)
      .bind_int(5, r.height)
      .bind_text(6, r.schedule)
      .bind_text(7, r.variant)
      .bind_optional_int(8, r.source_run)
      .bind_optional_int(9, r.run_id)
      .run();
  if (sqlite3_changes(db_) == 0) return std::nullopt;
  const int64_t id = sqlite3_last_insert_rowid(db_);
  insert_targets(db_, id, r.targets);
  txn.commit();
  return id;
}

bool Database::replace_nightly(const NightlyRecord& r) {
  if (r.targets.empty()) throw StorageError("a nightly registration needs a target");
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement update(db_, R"sql(
    UPDATE nightly SET pipeline_id = ?, dataset_id = ?, width = ?, height = ?, schedule = ?,
                       variant = ?, source_run = ?, run_id = ?
    WHERE name = ? RETURNING id)sql");
  update.bind_int(1, r.pipeline_id)
      .bind_int(2, r.dataset_id)
      .bind_int(3, r.width)
      .bind_int(4, r.height)
      .bind_text(5, r.schedule)
      .bind_text(6, r.variant)
      .bind_optional_int(7, r.source_run)
      .bind_optional_int(8, r.run_id)
      .bind_text(9, r.name);
  if (!update.step()) return false;
  const int64_t id = update.column_int(0);
  update.reset();
  Statement clear(db_, "DELETE FROM nightly_targets WHERE nightly_id = ?");
  clear.bind_int(1, id).run();
  insert_targets(db_, id, r.targets);
  txn.commit();
  return true;
}

void Database::set_nightly_run(int64_t nightly_id, int64_t run_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement update(db_, "UPDATE nightly SET run_id = ? WHERE id = ?");
  update.bind_int(1, run_id).bind_int(2, nightly_id).run();
  txn.commit();
}

int64_t Database::begin_night(const NightRecord& r) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement insert(db_, R"sql(
    INSERT INTO nightly_nights (nightly_id, target, host, setup, stipple_version, llvm_version)
    VALUES (?, ?, ?, ?, ?, ?))sql");
  insert.bind_int(1, r.nightly_id)
      .bind_text(2, r.target)
      .bind_text(3, r.host)
      .bind_text(4, r.setup)
      .bind_text(5, r.stipple_version)
      .bind_text(6, r.llvm_version)
      .run();
  const int64_t id = sqlite3_last_insert_rowid(db_);
  txn.commit();
  return id;
}

void Database::finish_night(int64_t night_id, const std::vector<NightVariantRecord>& variants,
                            const std::string& outcome, const std::string& message,
                            std::optional<int64_t> retune_run) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement insert(db_, R"sql(
    INSERT INTO nightly_variants (night_id, label, schedule, exact, status, reason, samples,
                                  error, output_digest, verdict, baseline_night, stats, object,
                                  symbol, baseline_samples)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (const NightVariantRecord& v : variants) {
    insert.bind_int(1, night_id)
        .bind_text(2, v.label)
        .bind_text(3, v.schedule)
        .bind_int(4, v.exact ? 1 : 0)
        .bind_text(5, v.status)
        .bind_text(6, v.reason)
        .bind_text(7, nlohmann::json(v.samples).dump())
        .bind_double(8, v.error)
        .bind_text(9, v.output_digest)
        .bind_text(10, v.verdict)
        .bind_optional_int(11, v.baseline_night)
        .bind_text(12, v.stats);
    if (v.object.empty()) {
      insert.bind_null(13);
    } else {
      insert.bind_blob(13, v.object);
    }
    insert.bind_text(14, v.symbol).bind_text(15, nlohmann::json(v.baseline_samples).dump()).run();
  }
  Statement update(db_, R"sql(
    UPDATE nightly_nights
    SET outcome = ?, message = ?, retune_run = ?,
        finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = ?)sql");
  update.bind_text(1, outcome)
      .bind_text(2, message)
      .bind_optional_int(3, retune_run)
      .bind_int(4, night_id)
      .run();
  txn.commit();
}

std::optional<NightRecord> Database::baseline_night(const NightRecord& night) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement stmt(db_, std::string(kSelectNight) + R"sql(
    WHERE nightly_id = ? AND target = ? AND host = ? AND setup = ? AND id < ?
      AND outcome IN ('passed', 'accepted')
    ORDER BY id DESC LIMIT 1)sql");
  stmt.bind_int(1, night.nightly_id)
      .bind_text(2, night.target)
      .bind_text(3, night.host)
      .bind_text(4, night.setup)
      .bind_int(5, night.id);
  if (!stmt.step()) return std::nullopt;
  return read_night(stmt);
}

std::optional<NightRecord> Database::night(int64_t night_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement stmt(db_, std::string(kSelectNight) + " WHERE id = ?");
  stmt.bind_int(1, night_id);
  if (!stmt.step()) return std::nullopt;
  return read_night(stmt);
}

std::optional<int64_t> Database::accept_last_night(int64_t nightly_id, const std::string& target,
                                                   const std::string& host) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement last(db_, R"sql(
    SELECT id, outcome FROM nightly_nights
    WHERE nightly_id = ? AND target = ? AND host = ? AND outcome != 'running'
    ORDER BY id DESC LIMIT 1)sql");
  last.bind_int(1, nightly_id).bind_text(2, target).bind_text(3, host);
  if (!last.step() || last.column_text(1) != "regressed") return std::nullopt;
  const int64_t id = last.column_int(0);
  last.reset();
  Statement accept(db_, "UPDATE nightly_nights SET outcome = 'accepted' WHERE id = ?");
  accept.bind_int(1, id).run();
  txn.commit();
  return id;
}

std::vector<NightRecord> Database::list_nights(int64_t nightly_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement stmt(db_, std::string(kSelectNight) + " WHERE nightly_id = ? ORDER BY id");
  stmt.bind_int(1, nightly_id);
  std::vector<NightRecord> out;
  while (stmt.step()) out.push_back(read_night(stmt));
  return out;
}

std::vector<NightVariantRecord> Database::night_variants(int64_t night_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement stmt(db_, R"sql(
    SELECT label, schedule, exact, status, reason, samples, error, output_digest, verdict,
           baseline_night, stats, object, symbol, baseline_samples
    FROM nightly_variants WHERE night_id = ? ORDER BY label = 'shipped' DESC, rowid)sql");
  stmt.bind_int(1, night_id);
  std::vector<NightVariantRecord> out;
  while (stmt.step()) {
    NightVariantRecord v;
    v.label = stmt.column_text(0);
    v.schedule = stmt.column_text(1);
    v.exact = stmt.column_int(2) != 0;
    v.status = stmt.column_text(3);
    v.reason = stmt.column_text(4);
    v.samples = nlohmann::json::parse(stmt.column_text(5)).get<std::vector<double>>();
    v.error = stmt.column_double(6);
    v.output_digest = stmt.column_text(7);
    v.verdict = stmt.column_text(8);
    v.baseline_night = stmt.column_optional_int(9);
    v.stats = stmt.column_text(10);
    v.object = stmt.column_blob(11);
    v.symbol = stmt.column_text(12);
    v.baseline_samples = nlohmann::json::parse(stmt.column_text(13)).get<std::vector<double>>();
    out.push_back(std::move(v));
  }
  return out;
}

std::optional<NightlyRecord> Database::find_nightly(const std::string& name) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement stmt(db_, std::string(kSelectNightly) + " WHERE n.name = ?");
  stmt.bind_text(1, name);
  if (!stmt.step()) return std::nullopt;
  return read_nightly(db_, stmt);
}

std::vector<NightlyRecord> Database::list_nightly() {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement stmt(db_, std::string(kSelectNightly) + " ORDER BY n.name");
  std::vector<NightlyRecord> out;
  while (stmt.step()) out.push_back(read_nightly(db_, stmt));
  return out;
}

bool Database::remove_nightly(const std::string& name) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  // The targets go with it (ON DELETE CASCADE).
  Statement remove(db_, "DELETE FROM nightly WHERE name = ?");
  remove.bind_text(1, name).run();
  const bool removed = sqlite3_changes(db_) > 0;
  txn.commit();
  return removed;
}

}  // namespace stipple::storage
