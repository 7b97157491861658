// The nightly registry: pipelines registered for nightly regression tuning.
#include "storage/database.h"
#include "storage/sqlite.h"

namespace stipple::storage {
namespace {

// The registration's columns, its pipeline's name and its set's photo count, in the order
// read_nightly reads them.
constexpr const char* kSelectNightly = R"sql(
  SELECT n.id, n.name, n.pipeline_id, n.dataset_id, p.name,
         (SELECT COUNT(*) FROM images i WHERE i.dataset_id = n.dataset_id),
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
  // A target given twice is one target.
  Statement target(db_, "INSERT OR IGNORE INTO nightly_targets (nightly_id, target) VALUES (?, ?)");
  for (const std::string& t : r.targets) target.bind_int(1, id).bind_text(2, t).run();
  txn.commit();
  return id;
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
