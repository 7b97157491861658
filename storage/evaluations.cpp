// Evaluations (the cache of measured schedules), their per-image measurements, and the
// links that say which run asked for which evaluation.
#include <unordered_map>

#include "storage/database.h"
#include "storage/sqlite.h"

namespace stipple::storage {
namespace {

// The evaluation columns in the order read_evaluation reads them, from `e`.
constexpr const char* kEvaluationColumns = R"sql(
  e.id, e.pipeline_id, e.dataset_id, e.split, e.target, e.schedule, e.status, e.reason,
  e.host, e.compile_ms, e.time_ms, e.error, e.psnr, e.created_at)sql";
constexpr int kEvaluationColumnCount = 14;

EvaluationRecord read_evaluation(const Statement& stmt) {
  EvaluationRecord e;
  e.id = stmt.column_int(0);
  e.key.pipeline_id = stmt.column_int(1);
  e.key.dataset_id = stmt.column_int(2);
  e.key.split = stmt.column_text(3);
  e.key.target = stmt.column_text(4);
  e.key.schedule = stmt.column_text(5);
  const std::string status = stmt.column_text(6);
  const std::optional<EvaluationStatus> parsed = parse_evaluation_status(status);
  if (!parsed) {
    // The schema's CHECK keeps other words out; one here is a file edited by hand.
    throw StorageError("evaluation " + std::to_string(e.id) + " has an unknown status '" + status +
                       "'");
  }
  e.status = *parsed;
  e.reason = stmt.column_text(7);
  e.host = stmt.column_text(8);
  e.compile_ms = stmt.column_double(9);
  e.time_ms = stmt.column_double(10);
  e.error = stmt.column_double(11);
  e.psnr = stmt.column_double(12);
  e.created_at = stmt.column_text(13);
  return e;
}

MeasurementRecord read_measurement(const Statement& stmt, int first) {
  return {stmt.column_int(first), stmt.column_double(first + 1), stmt.column_double(first + 2),
          stmt.column_double(first + 3)};
}

// One evaluation by id, with its measurements; the caller holds the lock.
std::optional<EvaluationRecord> load_evaluation(sqlite3* db, int64_t id) {
  Statement stmt(db,
                 std::string("SELECT") + kEvaluationColumns + " FROM evaluations e WHERE e.id = ?");
  if (!stmt.bind_int(1, id).step()) return std::nullopt;
  EvaluationRecord e = read_evaluation(stmt);
  Statement rows(db, R"sql(
    SELECT image_id, time_ms, error, psnr FROM measurements
    WHERE evaluation_id = ? ORDER BY image_id)sql");
  rows.bind_int(1, id);
  while (rows.step()) e.measurements.push_back(read_measurement(rows, 0));
  return e;
}

std::optional<int64_t> find_id(Statement& find, const EvaluationKey& key) {
  find.bind_int(1, key.pipeline_id)
      .bind_int(2, key.dataset_id)
      .bind_text(3, key.split)
      .bind_text(4, key.target)
      .bind_text(5, key.schedule);
  std::optional<int64_t> id;
  if (find.step()) id = find.column_int(0);
  find.reset();
  return id;
}

constexpr const char* kFindByKey = R"sql(
  SELECT id FROM evaluations
  WHERE pipeline_id = ? AND dataset_id = ? AND split = ? AND target = ? AND schedule = ?)sql";

}  // namespace

std::optional<EvaluationRecord> Database::find_evaluation(const EvaluationKey& key) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement find(db_, kFindByKey);
  std::optional<int64_t> id = find_id(find, key);
  std::optional<EvaluationRecord> e;
  if (id) e = load_evaluation(db_, *id);
  txn.commit();
  return e;
}

std::optional<EvaluationRecord> Database::evaluation(int64_t id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kRead);
  std::optional<EvaluationRecord> e = load_evaluation(db_, id);
  txn.commit();
  return e;
}

void Database::put_evaluations(int64_t run_id, std::vector<RunEvaluation>& batch, bool remeasure) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement find(db_, kFindByKey);
  Statement insert(db_, R"sql(
    INSERT INTO evaluations (pipeline_id, dataset_id, split, target, schedule, status, reason,
                             host, compile_ms, time_ms, error, psnr)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
    RETURNING id, created_at)sql");
  // A remeasure keeps the row (and so every reference to it) and replaces its numbers.
  Statement update(db_, R"sql(
    UPDATE evaluations SET status = ?6, reason = ?7, host = ?8, compile_ms = ?9,
                           time_ms = ?10, error = ?11, psnr = ?12,
                           created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = ?13
    RETURNING id, created_at)sql");
  Statement clear(db_, "DELETE FROM measurements WHERE evaluation_id = ?");
  Statement measure(db_, R"sql(
    INSERT INTO measurements (evaluation_id, image_id, time_ms, error, psnr)
    VALUES (?, ?, ?, ?, ?))sql");
  Statement link(db_, R"sql(
    INSERT INTO run_evaluations (run_id, evaluation_id, seq, strategy, origin)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (run_id, evaluation_id) DO NOTHING)sql");

  // What each record becomes, applied only after the commit so that a failed batch
  // leaves the caller's records as they were.
  std::vector<EvaluationRecord> results;
  results.reserve(batch.size());
  for (const RunEvaluation& item : batch) {
    EvaluationRecord e = item.evaluation;
    std::optional<int64_t> existing = find_id(find, e.key);
    if (existing && (!remeasure || e.id != 0)) {
      // Already measured: the stored result stands (a cache hit, a duplicate result, or
      // in a remeasured batch a record that was loaded from the store, not measured).
      e = *load_evaluation(db_, *existing);
    } else {
      Statement& write = existing ? update : insert;
      write.bind_int(1, e.key.pipeline_id)
          .bind_int(2, e.key.dataset_id)
          .bind_text(3, e.key.split)
          .bind_text(4, e.key.target)
          .bind_text(5, e.key.schedule)
          .bind_text(6, to_string(e.status))
          .bind_text(7, e.reason)
          .bind_text(8, e.host)
          .bind_double(9, e.compile_ms)
          .bind_double(10, e.time_ms)
          .bind_double(11, e.error)
          .bind_double(12, e.psnr);
      if (existing) write.bind_int(13, *existing);
      write.step();
      e.id = write.column_int(0);
      e.created_at = write.column_text(1);
      write.run();  // finishes the statement and resets it
      if (existing) clear.bind_int(1, e.id).run();
      for (const MeasurementRecord& m : e.measurements) {
        measure.bind_int(1, e.id)
            .bind_int(2, m.image_id)
            .bind_double(3, m.time_ms)
            .bind_double(4, m.error)
            .bind_double(5, m.psnr)
            .run();
      }
    }
    link.bind_int(1, run_id)
        .bind_int(2, e.id)
        .bind_int(3, item.seq)
        .bind_text(4, item.strategy)
        .bind_text(5, item.origin);
    link.run();
    results.push_back(std::move(e));
  }
  txn.commit();
  for (size_t i = 0; i < batch.size(); ++i) batch[i].evaluation = std::move(results[i]);
}

void Database::link_evaluation(int64_t run_id, int64_t evaluation_id, int64_t seq,
                               const std::string& strategy, const std::string& origin) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement link(db_, R"sql(
    INSERT INTO run_evaluations (run_id, evaluation_id, seq, strategy, origin)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (run_id, evaluation_id) DO NOTHING)sql");
  link.bind_int(1, run_id)
      .bind_int(2, evaluation_id)
      .bind_int(3, seq)
      .bind_text(4, strategy)
      .bind_text(5, origin);
  link.run();
  txn.commit();
}

std::vector<RunEvaluation> Database::run_evaluations(int64_t run_id) {
  std::lock_guard lock(mutex_);
  // Two queries (evaluations, then all their measurements) in one read transaction, so
  // both see the same snapshot.
  Transaction txn(db_, Transaction::Kind::kRead);
  Statement rows(db_,
                 std::string("SELECT") + kEvaluationColumns + R"sql(, l.seq, l.strategy, l.origin
    FROM run_evaluations l JOIN evaluations e ON e.id = l.evaluation_id
    WHERE l.run_id = ? ORDER BY l.seq, l.evaluation_id)sql");
  rows.bind_int(1, run_id);
  std::vector<RunEvaluation> out;
  std::unordered_map<int64_t, size_t> index;
  while (rows.step()) {
    RunEvaluation item{read_evaluation(rows), rows.column_int(kEvaluationColumnCount),
                       rows.column_text(kEvaluationColumnCount + 1),
                       rows.column_text(kEvaluationColumnCount + 2)};
    index.emplace(item.evaluation.id, out.size());
    out.push_back(std::move(item));
  }
  Statement measurements(db_, R"sql(
    SELECT m.evaluation_id, m.image_id, m.time_ms, m.error, m.psnr
    FROM run_evaluations l JOIN measurements m ON m.evaluation_id = l.evaluation_id
    WHERE l.run_id = ? ORDER BY m.evaluation_id, m.image_id)sql");
  measurements.bind_int(1, run_id);
  while (measurements.step()) {
    out[index.at(measurements.column_int(0))].evaluation.measurements.push_back(
        read_measurement(measurements, 1));
  }
  txn.commit();
  return out;
}

}  // namespace stipple::storage
