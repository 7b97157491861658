// Tuning runs and their fronts.
#include <bit>

#include "compiler_core/support/process_identity.h"
#include "storage/database.h"
#include "storage/sqlite.h"

namespace stipple::storage {
namespace {

constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

bool is_run_state(const std::string& state) {
  return state == "running" || state == "done" || state == "failed" || state == "cancelled";
}

void check_run_state(const std::string& state) {
  if (!is_run_state(state)) {
    throw StorageError("a run's state must be running, done, failed or cancelled, not '" + state +
                       "'");
  }
}

// The run's columns, the pipeline's name and the number of linked evaluations, in the
// order read_run reads them.
constexpr const char* kSelectRuns = R"sql(
  SELECT r.id, r.pipeline_id, r.dataset_id, p.name, r.target, r.strategy,
         r.budget_evaluations, r.budget_seconds, r.seed, r.options_json, r.state,
         r.created_at, r.finished_at, r.baseline_evaluation_id,
         (SELECT COUNT(*) FROM run_evaluations l JOIN evaluations e ON e.id = l.evaluation_id
           WHERE l.run_id = r.id AND e.split = 'train'),
         r.owner, r.message
  FROM runs r JOIN pipelines p ON p.id = r.pipeline_id)sql";

RunRecord read_run(const Statement& stmt) {
  RunRecord r;
  r.id = stmt.column_int(0);
  r.pipeline_id = stmt.column_int(1);
  r.dataset_id = stmt.column_int(2);
  r.pipeline_name = stmt.column_text(3);
  r.target = stmt.column_text(4);
  r.strategy = stmt.column_text(5);
  r.budget_evaluations = stmt.column_int(6);
  r.budget_seconds = stmt.column_double(7);
  // SQLite integers are signed: a seed is stored as the int64 with the same bits.
  r.seed = std::bit_cast<uint64_t>(stmt.column_int(8));
  r.options_json = stmt.column_text(9);
  r.state = stmt.column_text(10);
  r.created_at = stmt.column_text(11);
  r.finished_at = stmt.column_text(12);
  r.baseline_evaluation_id = stmt.column_optional_int(13);
  r.evaluations = stmt.column_int(14);
  r.owner = stmt.column_text(15);
  r.message = stmt.column_text(16);
  return r;
}

// Throws unless the last statement changed a row: updates of a missing run are mistakes.
void expect_changed(sqlite3* db, int64_t run_id) {
  if (sqlite3_changes(db) == 0) throw StorageError("there is no run " + std::to_string(run_id));
}

}  // namespace

bool run_interrupted(const RunRecord& r) {
  return r.state == "running" &&
         (r.owner == kReleasedOwner || process_liveness(r.owner) == ProcessLiveness::Gone);
}

std::string run_state_label(const RunRecord& r) {
  return run_interrupted(r) ? "interrupted" : r.state;
}

bool run_may_be_live(const RunRecord& r) { return r.state == "running" && !run_interrupted(r); }

int64_t Database::create_run(const RunRecord& r) {
  std::string state = r.state.empty() ? "running" : r.state;
  check_run_state(state);
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement insert(db_, std::string(R"sql(
    INSERT INTO runs (pipeline_id, dataset_id, target, strategy, budget_evaluations,
                      budget_seconds, seed, options_json, state, baseline_evaluation_id,
                      owner, message, finished_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
            CASE WHEN ?9 = 'running' THEN '' ELSE ?12 END,
            CASE WHEN ?9 = 'running' THEN NULL ELSE )sql") +
                            kNow + " END)");
  insert.bind_int(1, r.pipeline_id)
      .bind_int(2, r.dataset_id)
      .bind_text(3, r.target)
      .bind_text(4, r.strategy)
      .bind_int(5, r.budget_evaluations)
      .bind_double(6, r.budget_seconds)
      .bind_int(7, std::bit_cast<int64_t>(r.seed))
      .bind_text(8, r.options_json)
      .bind_text(9, state)
      .bind_optional_int(10, r.baseline_evaluation_id)
      .bind_text(11, state == "running" ? this_process_identity() : r.owner)
      .bind_text(12, r.message)
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  txn.commit();
  return id;
}

void Database::set_run_state(int64_t run_id, const std::string& state, const std::string& message) {
  check_run_state(state);
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement update(db_, std::string(R"sql(
    UPDATE runs SET state = ?1,
                    owner = CASE WHEN ?1 = 'running' THEN ?3 ELSE owner END,
                    message = CASE WHEN ?1 = 'running' THEN '' ELSE ?4 END,
                    finished_at = CASE WHEN ?1 = 'running' THEN NULL ELSE )sql") +
                            kNow + " END WHERE id = ?2");
  update.bind_text(1, state)
      .bind_int(2, run_id)
      .bind_text(3, this_process_identity())
      .bind_text(4, message)
      .run();
  expect_changed(db_, run_id);
  txn.commit();
}

void Database::release_run(int64_t run_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement(db_, "UPDATE runs SET owner = ? WHERE id = ? AND state = 'running'")
      .bind_text(1, kReleasedOwner)
      .bind_int(2, run_id)
      .run();
  txn.commit();
}

void Database::set_run_baseline(int64_t run_id, int64_t evaluation_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement update(db_, "UPDATE runs SET baseline_evaluation_id = ? WHERE id = ?");
  update.bind_int(1, evaluation_id).bind_int(2, run_id).run();
  expect_changed(db_, run_id);
  txn.commit();
}

std::optional<RunRecord> Database::find_run(int64_t run_id) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, std::string(kSelectRuns) + " WHERE r.id = ?");
  if (!stmt.bind_int(1, run_id).step()) return std::nullopt;
  return read_run(stmt);
}

std::vector<RunRecord> Database::list_runs() {
  std::lock_guard lock(mutex_);
  // Ids break ties between runs created in the same millisecond.
  Statement stmt(db_, std::string(kSelectRuns) + " ORDER BY r.created_at DESC, r.id DESC");
  std::vector<RunRecord> runs;
  while (stmt.step()) runs.push_back(read_run(stmt));
  return runs;
}

void Database::delete_run(int64_t run_id) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  // The links and the front go with the run (ON DELETE CASCADE).
  Statement remove(db_, "DELETE FROM runs WHERE id = ?");
  remove.bind_int(1, run_id).run();
  expect_changed(db_, run_id);
  txn.commit();
}

void Database::put_front(int64_t run_id, const std::vector<FrontPoint>& front) {
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement clear(db_, "DELETE FROM fronts WHERE run_id = ?");
  clear.bind_int(1, run_id).run();
  Statement insert(db_, R"sql(
    INSERT INTO fronts (run_id, position, evaluation_id, test_evaluation_id)
    VALUES (?, ?, ?, ?))sql");
  for (size_t i = 0; i < front.size(); ++i) {
    insert.bind_int(1, run_id)
        .bind_int(2, static_cast<int64_t>(i))
        .bind_int(3, front[i].evaluation_id)
        .bind_optional_int(4, front[i].test_evaluation_id)
        .run();
  }
  txn.commit();
}

std::vector<FrontPoint> Database::front(int64_t run_id) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, R"sql(
    SELECT evaluation_id, test_evaluation_id FROM fronts WHERE run_id = ? ORDER BY position)sql");
  stmt.bind_int(1, run_id);
  std::vector<FrontPoint> points;
  while (stmt.step()) points.push_back({stmt.column_int(0), stmt.column_optional_int(1)});
  return points;
}

}  // namespace stipple::storage
