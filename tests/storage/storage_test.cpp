// The SQLite store: every record type written, the file closed and reopened, and read back
// equal; reuse of pipelines and image sets; the evaluation cache key and remeasuring; runs,
// links and fronts; migrations from an old file and refusal of a newer one; the
// connection settings; rollback of a failed batch; and a second connection and a second
// process on the same file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "compiler_core/support/host_probe.h"
#include "compiler_core/support/process_identity.h"
#include "storage/database.h"
#include "storage/migrations.h"

namespace stipple::storage {
namespace {

namespace fs = std::filesystem;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string hex64(char digit) { return std::string(64, digit); }

// Equal as stored values: NaN equals NaN (it is stored as NULL and read back as NaN).
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_same(const EvaluationRecord& got, const EvaluationRecord& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.key.pipeline_id, want.key.pipeline_id);
  EXPECT_EQ(got.key.dataset_id, want.key.dataset_id);
  EXPECT_EQ(got.key.split, want.key.split);
  EXPECT_EQ(got.key.target, want.key.target);
  EXPECT_EQ(got.key.schedule, want.key.schedule);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.reason, want.reason);
  EXPECT_EQ(got.host, want.host);
  EXPECT_TRUE(same(got.compile_ms, want.compile_ms)) << got.compile_ms << " " << want.compile_ms;
  EXPECT_TRUE(same(got.time_ms, want.time_ms)) << got.time_ms << " " << want.time_ms;
  EXPECT_TRUE(same(got.error, want.error)) << got.error << " " << want.error;
  EXPECT_TRUE(same(got.psnr, want.psnr)) << got.psnr << " " << want.psnr;
  EXPECT_EQ(got.created_at, want.created_at);
  ASSERT_EQ(got.measurements.size(), want.measurements.size());
  for (size_t i = 0; i < got.measurements.size(); ++i) {
    EXPECT_EQ(got.measurements[i].image_id, want.measurements[i].image_id);
    EXPECT_TRUE(same(got.measurements[i].time_ms, want.measurements[i].time_ms));
    EXPECT_TRUE(same(got.measurements[i].error, want.measurements[i].error));
    EXPECT_TRUE(same(got.measurements[i].psnr, want.measurements[i].psnr));
  }
}

// A raw connection for what the API does not show: row counts, column types, the schema.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) ADD_FAILURE() << sqlite3_errmsg(db_);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close(db_); }
  sqlite3* get() const { return db_; }
  void exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (message ? message : "");
    }
    sqlite3_free(message);
  }
  // The first column of the first row as text ("" when there is none or it is NULL).
  std::string text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
    } else if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  int64_t integer(const std::string& sql) { return std::stoll(text(sql)); }

 private:
  sqlite3* db_ = nullptr;
};

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("stipple-storage-" + std::to_string(getpid()) + "-" +
                                        info->test_suite_name() + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path() const { return (dir_ / "stipple.db").string(); }

  // A pipeline and a set of three images (two train, one test).
  struct Fixture {
    int64_t pipeline = 0, dataset = 0;
    std::vector<ImageRecord> images;
  };
  static Fixture fill(Database& db) {
    Fixture f;
    f.pipeline = db.put_pipeline("blur", "hash-blur", "pipeline blur\n");
    f.images = {{0, "/img/a.png", hex64('a'), 64, 48, "train"},
                {0, "/img/b.png", hex64('b'), 32, 24, "train"},
                {0, "/img/c.png", hex64('c'), 16, 12, "test"}};
    f.dataset = db.put_dataset("fixtures", f.images);
    return f;
  }
  static RunRecord make_run(const Fixture& f) {
    RunRecord r;
    r.pipeline_id = f.pipeline;
    r.dataset_id = f.dataset;
    r.target = "x86-64-avx512";
    r.strategy = "portfolio";
    r.budget_evaluations = 200;
    r.budget_seconds = 180.5;
    r.seed = 42;
    r.options_json = R"({"population":10})";
    return r;
  }
  // An ok evaluation on the two training images.
  static EvaluationRecord make_evaluation(const Fixture& f, const std::string& schedule,
                                          double time_ms = 2.0) {
    EvaluationRecord e;
    e.key = {f.pipeline, f.dataset, "train", "x86-64-avx512", schedule};
    e.host = "worker-1";
    e.compile_ms = 12.5;
    e.time_ms = time_ms;
    e.error = 0.75;
    e.psnr = 41.0;
    e.measurements = {{f.images[0].id, time_ms - 0.5, 0.5, 42.0},
                      {f.images[1].id, time_ms + 0.5, 1.0, 40.0}};
    return e;
  }

  fs::path dir_;
};

TEST_F(StorageTest, EveryRecordRoundTripsThroughTheFile) {
  Fixture f;
  RunRecord run;
  std::vector<RunEvaluation> batch;
  std::vector<FrontPoint> front;
  {
    auto db = Database::open(path());
    f = fill(*db);
    run = make_run(f);
    run.seed = 0xFEDCBA9876543210ull;  // above INT64_MAX: stored with the same bits
    run.id = db->create_run(run);

    EvaluationRecord exact = make_evaluation(f, "out.vectorize(x, 8)");
    // Every image's output was NaN: the error is +inf, the PSNR not a number.
    EvaluationRecord nan_output = make_evaluation(f, "out.perforate(grid(2))");
    nan_output.status = EvaluationStatus::NaN;
    nan_output.reason = "output has NaN at (3, 4, 0)";
    nan_output.error = kInf;
    nan_output.psnr = kNaN;
    nan_output.measurements = {{f.images[0].id, 1.0, kInf, -kInf},
                               {f.images[1].id, 1.5, kInf, kNaN}};
    EvaluationRecord crash = make_evaluation(f, "out.parallel(y)");
    crash.status = EvaluationStatus::Crash;
    crash.reason = "SIGSEGV";
    crash.time_ms = kNaN;
    crash.measurements.clear();
    EvaluationRecord test = make_evaluation(f, "out.vectorize(x, 8)");
    test.key.split = "test";
    test.measurements = {{f.images[2].id, 3.0, 0.25, 50.0}};
    batch = {{exact, 1, "reuse", "measured"},
             {nan_output, 2, "genetic", "measured"},
             {crash, 3, "hill", "measured"},
             {test, 4, "", "measured"}};
    db->put_evaluations(run.id, batch);
    for (const RunEvaluation& item : batch) {
      EXPECT_GT(item.evaluation.id, 0);
      EXPECT_FALSE(item.evaluation.created_at.empty());
    }
    db->set_run_baseline(run.id, batch[0].evaluation.id);
    front = {{batch[0].evaluation.id, batch[3].evaluation.id},
             {batch[1].evaluation.id, std::nullopt}};
    db->put_front(run.id, front);
    db->set_run_state(run.id, "done");
  }

  auto db = Database::open(path());
  EXPECT_EQ(db->schema_version(), kSchemaVersion);
  EXPECT_EQ(db->path(), path());

  std::optional<PipelineRecord> pipeline = db->pipeline(f.pipeline);
  ASSERT_TRUE(pipeline);
  EXPECT_EQ(pipeline->name, "blur");
  EXPECT_EQ(pipeline->ir_hash, "hash-blur");
  EXPECT_EQ(pipeline->source, "pipeline blur\n");
  EXPECT_FALSE(pipeline->created_at.empty());
  EXPECT_FALSE(db->pipeline(f.pipeline + 100));

  std::optional<DatasetRecord> dataset = db->dataset(f.dataset);
  ASSERT_TRUE(dataset);
  EXPECT_EQ(dataset->name, "fixtures");
  EXPECT_EQ(dataset->content_hash.size(), 64u);
  std::vector<ImageRecord> images = db->dataset_images(f.dataset);
  ASSERT_EQ(images.size(), 3u);
  for (size_t i = 0; i < images.size(); ++i) {
    EXPECT_EQ(images[i].id, f.images[i].id);
    EXPECT_EQ(images[i].path, f.images[i].path);
    EXPECT_EQ(images[i].sha256, f.images[i].sha256);
    EXPECT_EQ(images[i].width, f.images[i].width);
    EXPECT_EQ(images[i].height, f.images[i].height);
    EXPECT_EQ(images[i].split, f.images[i].split);
  }

  std::optional<RunRecord> got = db->find_run(run.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->pipeline_id, f.pipeline);
  EXPECT_EQ(got->dataset_id, f.dataset);
  EXPECT_EQ(got->pipeline_name, "blur");
  EXPECT_EQ(got->target, "x86-64-avx512");
  EXPECT_EQ(got->strategy, "portfolio");
  EXPECT_EQ(got->budget_evaluations, 200);
  EXPECT_EQ(got->budget_seconds, 180.5);
  EXPECT_EQ(got->seed, 0xFEDCBA9876543210ull);
  EXPECT_EQ(got->options_json, R"({"population":10})");
  EXPECT_EQ(got->state, "done");
  EXPECT_FALSE(got->finished_at.empty());
  EXPECT_LE(got->created_at, got->finished_at);
  EXPECT_EQ(got->baseline_evaluation_id, batch[0].evaluation.id);
  EXPECT_EQ(got->evaluations, 3);  // of the 4 linked, one is on the test split
  // ISO 8601 UTC with milliseconds, e.g. 2024-05-01T12:34:56.789Z.
  EXPECT_EQ(got->created_at.size(), 24u);
  EXPECT_EQ(got->created_at[10], 'T');
  EXPECT_EQ(got->created_at.back(), 'Z');

  std::vector<RunEvaluation> linked = db->run_evaluations(run.id);
  ASSERT_EQ(linked.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    SCOPED_TRACE(batch[i].evaluation.key.schedule);
    EXPECT_EQ(linked[i].seq, batch[i].seq);
    EXPECT_EQ(linked[i].strategy, batch[i].strategy);
    expect_same(linked[i].evaluation, batch[i].evaluation);
    std::optional<EvaluationRecord> by_id = db->evaluation(batch[i].evaluation.id);
    ASSERT_TRUE(by_id);
    expect_same(*by_id, batch[i].evaluation);
  }
  EXPECT_TRUE(std::isinf(linked[1].evaluation.error));
  EXPECT_TRUE(std::isnan(linked[1].evaluation.psnr));
  EXPECT_EQ(linked[1].evaluation.measurements[0].psnr, -kInf);
  EXPECT_FALSE(linked[1].evaluation.ok());
  EXPECT_TRUE(linked[0].evaluation.ok());

  std::vector<FrontPoint> stored = db->front(run.id);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].evaluation_id, front[0].evaluation_id);
  EXPECT_EQ(stored[0].test_evaluation_id, front[0].test_evaluation_id);
  EXPECT_EQ(stored[1].evaluation_id, front[1].evaluation_id);
  EXPECT_FALSE(stored[1].test_evaluation_id);
}

TEST_F(StorageTest, NonFiniteDoublesAreStoredAsDocumented) {
  // +inf and -inf are REAL values in SQLite; NaN becomes NULL.
  int64_t id = 0;
  {
    auto db = Database::open(path());
    Fixture f = fill(*db);
    int64_t run = db->create_run(make_run(f));
    EvaluationRecord e = make_evaluation(f, "s");
    e.error = kInf;
    e.psnr = -kInf;
    e.time_ms = kNaN;
    std::vector<RunEvaluation> batch = {{e, 0, "", "measured"}};
    db->put_evaluations(run, batch);
    id = batch[0].evaluation.id;
  }
  RawDb raw(path());
  std::string where = " FROM evaluations WHERE id = " + std::to_string(id);
  EXPECT_EQ(raw.text("SELECT typeof(error)" + where), "real");
  EXPECT_EQ(raw.text("SELECT error > 1e308" + where), "1");
  EXPECT_EQ(raw.text("SELECT psnr < -1e308" + where), "1");
  EXPECT_EQ(raw.text("SELECT typeof(time_ms)" + where), "null");
}

TEST_F(StorageTest, PipelineIsReusedByIrHash) {
  auto db = Database::open(path());
  int64_t a = db->put_pipeline("blur", "hash-1", "source 1");
  int64_t again = db->put_pipeline("blur renamed", "hash-1", "source 1 reformatted");
  int64_t b = db->put_pipeline("blur", "hash-2", "source 2");
  EXPECT_EQ(again, a);
  EXPECT_NE(b, a);
  // The first submission's row stands.
  EXPECT_EQ(db->pipeline(a)->name, "blur");
  EXPECT_EQ(db->pipeline(a)->source, "source 1");
  EXPECT_THROW(db->put_pipeline("x", "", "s"), StorageError);
}

TEST_F(StorageTest, DatasetIsReusedByContent) {
  auto db = Database::open(path());
  Fixture f = fill(*db);

  // The same images in another order, under another name, in other folders, with the
  // hashes in capitals: the same set.
  std::vector<ImageRecord> moved = {{0, "/new/c.png", hex64('C'), 16, 12, "test"},
                                    {0, "/new/a.png", hex64('A'), 64, 48, "train"},
                                    {0, "/new/b.png", hex64('b'), 32, 24, "train"}};
  EXPECT_EQ(db->put_dataset("renamed", moved), f.dataset);
  EXPECT_EQ(moved[0].id, f.images[2].id);
  EXPECT_EQ(moved[1].id, f.images[0].id);
  EXPECT_EQ(moved[2].id, f.images[1].id);
  EXPECT_EQ(moved[0].sha256, hex64('c'));
  EXPECT_EQ(db->dataset(f.dataset)->name, "fixtures");
  // The paths follow the files.
  std::vector<ImageRecord> train = db->dataset_images(f.dataset, "train");
  ASSERT_EQ(train.size(), 2u);
  EXPECT_EQ(train[0].path, "/new/a.png");
  EXPECT_EQ(train[1].path, "/new/b.png");
  std::vector<ImageRecord> test = db->dataset_images(f.dataset, "test");
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test[0].id, f.images[2].id);

  // Another split of the same files, or a subset, is another set.
  std::vector<ImageRecord> resplit = {{0, "a", hex64('a'), 64, 48, "train"},
                                      {0, "b", hex64('b'), 32, 24, "test"},
                                      {0, "c", hex64('c'), 16, 12, "test"}};
  int64_t other = db->put_dataset("resplit", resplit);
  EXPECT_NE(other, f.dataset);
  EXPECT_NE(resplit[0].id, f.images[0].id);
  std::vector<ImageRecord> subset = {{0, "a", hex64('a'), 64, 48, "train"}};
  int64_t smaller = db->put_dataset("subset", subset);
  EXPECT_NE(smaller, f.dataset);
  EXPECT_NE(smaller, other);
  EXPECT_EQ(db->dataset_images(smaller).size(), 1u);
}

TEST_F(StorageTest, DatasetRejectsBadImagesAndStoresNothing) {
  auto db = Database::open(path());
  std::vector<ImageRecord> bad_split = {{0, "a", hex64('a'), 1, 1, "validation"}};
  EXPECT_THROW(db->put_dataset("bad", bad_split), StorageError);
  std::vector<ImageRecord> bad_hash = {{0, "a", hex64('a'), 1, 1, "train"},
                                       {0, "b", "not-a-hash", 1, 1, "train"}};
  EXPECT_THROW(db->put_dataset("bad", bad_hash), StorageError);
  EXPECT_EQ(bad_hash[0].id, 0);
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM datasets"), 0);
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM images"), 0);
}

TEST_F(StorageTest, EvaluationIsFoundByItsWholeKeyOnly) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  std::vector<RunEvaluation> batch = {
      {make_evaluation(f, "out.vectorize(x, 8)"), 0, "reuse", "measured"}};
  db->put_evaluations(run, batch);
  const EvaluationKey key = batch[0].evaluation.key;

  std::optional<EvaluationRecord> hit = db->find_evaluation(key);
  ASSERT_TRUE(hit);
  expect_same(*hit, batch[0].evaluation);

  int64_t other_pipeline = db->put_pipeline("other", "hash-other", "");
  std::vector<ImageRecord> other_images = {{0, "d", hex64('d'), 1, 1, "train"}};
  int64_t other_dataset = db->put_dataset("other", other_images);
  EvaluationKey k = key;
  k.pipeline_id = other_pipeline;
  EXPECT_FALSE(db->find_evaluation(k));
  k = key;
  k.dataset_id = other_dataset;
  EXPECT_FALSE(db->find_evaluation(k));
  k = key;
  k.split = "test";
  EXPECT_FALSE(db->find_evaluation(k));
  k = key;
  k.target = "aarch64-neon";
  EXPECT_FALSE(db->find_evaluation(k));
  k = key;
  k.schedule = "out.vectorize(x, 8) ";  // the text is compared byte for byte
  EXPECT_FALSE(db->find_evaluation(k));
}

TEST_F(StorageTest, SameKeyWithoutRemeasureKeepsTheStoredResult) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  std::vector<RunEvaluation> first = {{make_evaluation(f, "s", 2.0), 0, "genetic", "measured"}};
  db->put_evaluations(run, first);
  // A duplicate result (or a cache hit passed through the batch) with other numbers.
  std::vector<RunEvaluation> second = {{make_evaluation(f, "s", 9.0), 1, "hill", "measured"}};
  db->put_evaluations(run, second);
  expect_same(second[0].evaluation, first[0].evaluation);
  EXPECT_EQ(db->find_evaluation(first[0].evaluation.key)->time_ms, 2.0);
  // The link made first stands.
  std::vector<RunEvaluation> linked = db->run_evaluations(run);
  ASSERT_EQ(linked.size(), 1u);
  EXPECT_EQ(linked[0].seq, 0);
  EXPECT_EQ(linked[0].strategy, "genetic");
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM evaluations"), 1);
}

TEST_F(StorageTest, RemeasureReplacesValuesInPlace) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  std::vector<RunEvaluation> first = {{make_evaluation(f, "s", 2.0), 0, "genetic", "measured"}};
  db->put_evaluations(run, first);
  const int64_t id = first[0].evaluation.id;
  db->set_run_baseline(run, id);
  db->put_front(run, {{id, std::nullopt}});

  EvaluationRecord again = make_evaluation(f, "s", 5.0);
  again.status = EvaluationStatus::Timeout;
  again.reason = "past the 10 s deadline";
  again.host = "worker-2";
  again.measurements = {{f.images[1].id, 5.0, 0.0, kInf}};
  std::vector<RunEvaluation> second = {{again, 7, "hill", "measured"}};
  db->put_evaluations(run, second, /*remeasure=*/true);
  EXPECT_EQ(second[0].evaluation.id, id);

  std::optional<EvaluationRecord> stored = db->find_evaluation(again.key);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->id, id);
  EXPECT_EQ(stored->status, EvaluationStatus::Timeout);
  EXPECT_EQ(stored->reason, "past the 10 s deadline");
  EXPECT_EQ(stored->host, "worker-2");
  EXPECT_EQ(stored->time_ms, 5.0);
  EXPECT_GE(stored->created_at, first[0].evaluation.created_at);
  ASSERT_EQ(stored->measurements.size(), 1u);
  EXPECT_EQ(stored->measurements[0].image_id, f.images[1].id);
  EXPECT_EQ(stored->measurements[0].psnr, kInf);
  expect_same(*stored, second[0].evaluation);

  // One row per key; every reference still points at it.
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM evaluations"), 1);
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM measurements"), 1);
  EXPECT_EQ(db->find_run(run)->baseline_evaluation_id, id);
  EXPECT_EQ(db->front(run)[0].evaluation_id, id);
  std::vector<RunEvaluation> linked = db->run_evaluations(run);
  ASSERT_EQ(linked.size(), 1u);
  EXPECT_EQ(linked[0].seq, 0);  // the existing link is left as it was
  EXPECT_EQ(linked[0].evaluation.status, EvaluationStatus::Timeout);
}

TEST_F(StorageTest, ARemeasuredBatchLeavesItsCacheHitsAsStored) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  EvaluationRecord cached = make_evaluation(f, "cached", 2.0);
  cached.measurements = {{f.images[0].id, 2.0, 0.5, 40.0}};
  std::vector<RunEvaluation> first = {{cached, 0, "genetic", "measured"},
                                      {make_evaluation(f, "again", 3.0), 1, "genetic", "measured"}};
  db->put_evaluations(run, first);
  const EvaluationRecord before = *db->find_evaluation(first[0].evaluation.key);
  // Created in an earlier second, so that a rewrite would show in created_at.
  RawDb(path()).exec("UPDATE evaluations SET created_at = '2000-01-01T00:00:00.000Z'");

  // One batch of --remeasure: "again" measured anew (id 0), "cached" a record loaded
  // from the store (as the session passes a schedule it already measured in this process).
  std::vector<RunEvaluation> second = {
      {*db->find_evaluation(first[0].evaluation.key), 2, "hill", "measured"},
      {make_evaluation(f, "again", 7.0), 3, "hill", "measured"}};
  db->put_evaluations(run, second, /*remeasure=*/true);

  const EvaluationRecord kept = *db->find_evaluation(first[0].evaluation.key);
  EXPECT_EQ(kept.created_at, "2000-01-01T00:00:00.000Z");
  EXPECT_EQ(kept.time_ms, before.time_ms);
  ASSERT_EQ(kept.measurements.size(), 1u);
  EXPECT_EQ(kept.measurements[0].error, 0.5);
  const EvaluationRecord remeasured = *db->find_evaluation(first[1].evaluation.key);
  EXPECT_EQ(remeasured.id, first[1].evaluation.id);
  EXPECT_EQ(remeasured.time_ms, 7.0);
  EXPECT_NE(remeasured.created_at, "2000-01-01T00:00:00.000Z");
}

TEST_F(StorageTest, RunEvaluationsAreOrderedBySeqAndCachedOnesAreLinked) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run1 = db->create_run(make_run(f));
  std::vector<RunEvaluation> batch = {{make_evaluation(f, "c"), 3, "hill", "measured"},
                                      {make_evaluation(f, "a"), 1, "genetic", "measured"},
                                      {make_evaluation(f, "b"), 2, "reuse", "shared"}};
  db->put_evaluations(run1, batch);
  std::vector<RunEvaluation> linked = db->run_evaluations(run1);
  ASSERT_EQ(linked.size(), 3u);
  EXPECT_EQ(linked[0].evaluation.key.schedule, "a");
  EXPECT_EQ(linked[1].evaluation.key.schedule, "b");
  EXPECT_EQ(linked[2].evaluation.key.schedule, "c");
  EXPECT_EQ(linked[0].seq, 1);
  EXPECT_EQ(linked[2].strategy, "hill");
  EXPECT_EQ(linked[0].origin, "measured");
  EXPECT_EQ(linked[1].origin, "shared");
  EXPECT_EQ(linked[1].evaluation.measurements.size(), 2u);

  // A second run finds "b" in the cache and links it instead of measuring it.
  int64_t run2 = db->create_run(make_run(f));
  std::optional<EvaluationRecord> cached = db->find_evaluation(batch[2].evaluation.key);
  ASSERT_TRUE(cached);
  db->link_evaluation(run2, cached->id, 0, "genetic");
  db->link_evaluation(run2, cached->id, 5, "hill");  // already linked: left as it is
  std::vector<RunEvaluation> fresh = {{make_evaluation(f, "d"), 1, "genetic", "measured"}};
  db->put_evaluations(run2, fresh);

  std::vector<RunEvaluation> linked2 = db->run_evaluations(run2);
  ASSERT_EQ(linked2.size(), 2u);
  EXPECT_EQ(linked2[0].evaluation.id, cached->id);
  EXPECT_EQ(linked2[0].seq, 0);
  EXPECT_EQ(linked2[0].strategy, "genetic");
  EXPECT_EQ(linked2[0].origin, "stored");
  expect_same(linked2[0].evaluation, *cached);
  EXPECT_EQ(linked2[1].evaluation.key.schedule, "d");
  EXPECT_EQ(db->run_evaluations(run1).size(), 3u);
  EXPECT_EQ(db->find_run(run2)->evaluations, 2);
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM evaluations"), 4);
}

TEST_F(StorageTest, RunStateAndListing) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t first = db->create_run(make_run(f));
  int64_t second = db->create_run(make_run(f));
  EXPECT_EQ(db->find_run(first)->state, "running");
  EXPECT_TRUE(db->find_run(first)->finished_at.empty());
  EXPECT_FALSE(db->find_run(first)->baseline_evaluation_id);

  db->set_run_state(first, "cancelled");
  EXPECT_EQ(db->find_run(first)->state, "cancelled");
  EXPECT_FALSE(db->find_run(first)->finished_at.empty());
  db->set_run_state(first, "running");  // resumed
  EXPECT_TRUE(db->find_run(first)->finished_at.empty());
  db->set_run_state(first, "failed");
  EXPECT_EQ(db->find_run(first)->state, "failed");

  EXPECT_THROW(db->set_run_state(first, "paused"), StorageError);
  EXPECT_THROW(db->set_run_state(second + 10, "done"), StorageError);
  EXPECT_THROW(db->set_run_baseline(second + 10, 1), StorageError);
  EXPECT_FALSE(db->find_run(second + 10));

  // The count is of training evaluations (what the budget counts), not of test ones.
  EvaluationRecord tested = make_evaluation(f, "a");
  tested.key.split = "test";
  tested.measurements.clear();
  std::vector<RunEvaluation> batch = {{make_evaluation(f, "a"), 0, "", "measured"},
                                      {tested, 1, "front", "measured"}};
  db->put_evaluations(second, batch);
  std::vector<RunRecord> runs = db->list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, second);  // newest first
  EXPECT_EQ(runs[1].id, first);
  EXPECT_EQ(runs[0].evaluations, 1);
  EXPECT_EQ(runs[1].evaluations, 0);
  EXPECT_EQ(runs[0].pipeline_name, "blur");
}

// A killed `stipple tune` left its run "running" forever; the run now names its process,
// and one whose process is gone is interrupted.
TEST_F(StorageTest, ARunWhoseProcessIsGoneIsInterrupted) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  const int64_t id = db->create_run(make_run(f));
  RunRecord r = *db->find_run(id);
  EXPECT_EQ(r.owner, this_process_identity());
  EXPECT_EQ(process_liveness(r.owner), ProcessLiveness::Alive);
  EXPECT_FALSE(run_interrupted(r));
  EXPECT_TRUE(run_may_be_live(r));
  EXPECT_EQ(run_state_label(r), "running");

  // This host, this pid, another start time: the pid was reused, the owner is gone.
  const std::string me = this_process_identity();
  const std::string reused = me.substr(0, me.rfind(' ')) + " 1";
  EXPECT_EQ(process_liveness(reused), ProcessLiveness::Gone);
  // A child that has exited and been reaped.
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  const std::string gone = host_name() + " " + std::to_string(child) + " 12345";
  RawDb(path()).exec("UPDATE runs SET owner = '" + gone + "' WHERE id = " + std::to_string(id));
  r = *db->find_run(id);
  EXPECT_TRUE(run_interrupted(r));
  EXPECT_FALSE(run_may_be_live(r));
  EXPECT_EQ(run_state_label(r), "interrupted");
  // Another host's process cannot be checked from here: it may be live.
  RawDb(path()).exec("UPDATE runs SET owner = 'elsewhere.example 1 1' WHERE id = " +
                     std::to_string(id));
  r = *db->find_run(id);
  EXPECT_EQ(process_liveness(r.owner), ProcessLiveness::Unknown);
  EXPECT_FALSE(run_interrupted(r));
  EXPECT_TRUE(run_may_be_live(r));
  // Resuming claims it for this process; releasing it leaves it to anyone, at once.
  db->set_run_state(id, "running");
  EXPECT_EQ(db->find_run(id)->owner, this_process_identity());
  EXPECT_TRUE(run_may_be_live(*db->find_run(id)));
  db->release_run(id);
  EXPECT_TRUE(run_interrupted(*db->find_run(id)));
  EXPECT_FALSE(run_may_be_live(*db->find_run(id)));
  EXPECT_EQ(run_state_label(*db->find_run(id)), "interrupted");
  db->set_run_state(id, "running");
  // A finished run is never interrupted, nor changed by a release.
  RawDb(path()).exec("UPDATE runs SET owner = '" + gone + "' WHERE id = " + std::to_string(id));
  db->set_run_state(id, "done");
  EXPECT_FALSE(run_interrupted(*db->find_run(id)));
  EXPECT_EQ(run_state_label(*db->find_run(id)), "done");
  db->release_run(id);
  EXPECT_EQ(db->find_run(id)->owner, gone);
}

TEST_F(StorageTest, DeletingARunKeepsItsEvaluations) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  const int64_t run = db->create_run(make_run(f)), other = db->create_run(make_run(f));
  std::vector<RunEvaluation> batch = {{make_evaluation(f, "a"), 0, "", "measured"},
                                      {make_evaluation(f, "b"), 1, "", "measured"}};
  db->put_evaluations(run, batch);
  std::vector<RunEvaluation> shared = {{make_evaluation(f, "a"), 0, "", "measured"}};
  db->put_evaluations(other, shared);
  db->put_front(run, {{batch[0].evaluation.id, std::nullopt}});
  db->delete_run(run);
  EXPECT_FALSE(db->find_run(run));
  EXPECT_TRUE(db->run_evaluations(run).empty());
  EXPECT_TRUE(db->front(run).empty());
  // The measurements stay, for the other run and as the cache.
  EXPECT_TRUE(db->evaluation(batch[0].evaluation.id));
  EXPECT_TRUE(db->evaluation(batch[1].evaluation.id));
  EXPECT_EQ(db->run_evaluations(other).size(), 1u);
  EXPECT_THROW(db->delete_run(run), StorageError);
}

TEST_F(StorageTest, NightlyRegistrationsRoundTripAndGoWithTheirTargets) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  const int64_t run = db->create_run(make_run(f));
  NightlyRecord shipped;
  shipped.name = "blur-prod";
  shipped.pipeline_id = f.pipeline;
  shipped.dataset_id = f.dataset;
  shipped.width = 1920;
  shipped.height = 1080;
  shipped.schedule = "blur.compute_root()\n";
  shipped.variant = "run 1 variant 0";
  shipped.source_run = shipped.run_id = run;
  shipped.targets = {"x86-64-b", "x86-64-a", "x86-64-b"};
  const int64_t id = db->add_nightly(shipped).value();
  NightlyRecord hand = shipped;
  hand.name = "blur-hand";
  hand.width = hand.height = 0;
  hand.variant = "schedule blur.sched";
  hand.source_run.reset();
  hand.run_id.reset();
  hand.targets = {"aarch64-x"};
  db->add_nightly(hand);

  std::optional<NightlyRecord> got = db->find_nightly("blur-prod");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->id, id);
  EXPECT_EQ(got->pipeline_name, "blur");
  EXPECT_EQ(got->images, 3);
  EXPECT_EQ(got->width, 1920);
  EXPECT_EQ(got->height, 1080);
  EXPECT_EQ(got->schedule, "blur.compute_root()\n");
  EXPECT_EQ(got->variant, "run 1 variant 0");
  EXPECT_EQ(got->run_id, std::optional<int64_t>(run));
  EXPECT_EQ(got->source_run, std::optional<int64_t>(run));
  EXPECT_EQ(got->targets, (std::vector<std::string>{"x86-64-a", "x86-64-b"}));  // sorted, once
  EXPECT_FALSE(got->created_at.empty());
  std::vector<NightlyRecord> all = db->list_nightly();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "blur-hand");  // by name
  EXPECT_FALSE(all[0].run_id);
  EXPECT_EQ(all[1].name, "blur-prod");

  // A name is registered once; a registration needs a target.
  EXPECT_FALSE(db->add_nightly(shipped));
  hand.name = "no-target";
  hand.targets.clear();
  EXPECT_THROW(db->add_nightly(hand), StorageError);
  EXPECT_FALSE(db->find_nightly("no-target"));

  // Deleting the run keeps the registration and its schedule, without the run.
  db->delete_run(run);
  EXPECT_FALSE(db->find_nightly("blur-prod")->run_id);
  EXPECT_EQ(db->find_nightly("blur-prod")->source_run, std::optional<int64_t>(run));
  EXPECT_EQ(db->find_nightly("blur-prod")->schedule, "blur.compute_root()\n");

  // Removing one takes its targets with it and leaves the pipeline and the photos.
  EXPECT_TRUE(db->remove_nightly("blur-prod"));
  EXPECT_FALSE(db->remove_nightly("blur-prod"));
  EXPECT_FALSE(db->find_nightly("blur-prod"));
  EXPECT_EQ(db->list_nightly().size(), 1u);
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM nightly_targets"), 1);
  EXPECT_TRUE(db->pipeline(f.pipeline));
  EXPECT_EQ(db->dataset_images(f.dataset).size(), 3u);
}

TEST_F(StorageTest, VersionFiveDatabaseGetsTheNightlyRegistry) {
  {
    RawDb raw(path());
    EXPECT_EQ(migrate(raw.get(), 5), 5);
    EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'nightly'"), 0);
  }
  auto db = Database::open(path());
  EXPECT_EQ(db->schema_version(), kSchemaVersion);
  EXPECT_TRUE(db->list_nightly().empty());
}

TEST_F(StorageTest, NightsKeepTheirVariantsAndTheBaselineIsTheLastPassedOrAcceptedNight) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  NightlyRecord reg;
  reg.name = "blur";
  reg.pipeline_id = f.pipeline;
  reg.dataset_id = f.dataset;
  reg.schedule = "blur.compute_root()\n";
  reg.variant = "schedule blur.sched";
  reg.targets = {"x86-64-a"};
  const int64_t id = db->add_nightly(reg).value();

  auto night = [&](const std::string& host) {
    NightRecord n;
    n.nightly_id = id;
    n.target = "x86-64-a";
    n.host = host;
    n.setup = "s1";
    n.stipple_version = "0.1";
    n.llvm_version = "14.0.6";
    return db->begin_night(n);
  };
  NightVariantRecord v;
  v.label = "shipped";
  v.schedule = reg.schedule;
  v.status = "ok";
  v.samples = {1.5, 1.25, 1.75};
  v.error = 0;
  v.output_digest = "abc";
  v.object = std::string(
      "\x7f"
      "ELF\0\0code",
      10);  // bytes, zeros included
  v.symbol = "stipple_fn_0";
  v.verdict = "new";
  const int64_t first = night("h1");
  EXPECT_EQ(db->list_nights(id)[0].outcome, "running");
  db->finish_night(first, {v}, "passed", "", std::nullopt);
  const int64_t other_host = night("h2");
  db->finish_night(other_host, {v}, "passed", "", std::nullopt);
  const int64_t second = night("h1");
  v.verdict = "slower";
  v.baseline_samples = {1.0, 1.1};
  v.baseline_night = first;
  db->finish_night(second, {v}, "regressed", "", std::nullopt);

  const std::vector<NightVariantRecord> got = db->night_variants(second);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].samples, (std::vector<double>{1.5, 1.25, 1.75}));
  EXPECT_EQ(got[0].baseline_samples, (std::vector<double>{1.0, 1.1}));
  EXPECT_EQ(got[0].object, v.object);
  EXPECT_EQ(got[0].symbol, "stipple_fn_0");
  EXPECT_EQ(got[0].baseline_night, std::optional<int64_t>(first));
  EXPECT_EQ(got[0].verdict, "slower");

  // The baseline of a third night on h1: the first (the second regressed; h2 is another
  // host). Accepting the regression makes the second the baseline; a failed night is no
  // regression to accept.
  const int64_t third = night("h1");
  NightRecord tonight = *db->night(third);
  EXPECT_EQ(db->baseline_night(tonight)->id, first);
  NightRecord elsewhere = tonight;
  elsewhere.host = "h2";
  EXPECT_EQ(db->baseline_night(elsewhere)->id, other_host);
  elsewhere.target = "x86-64-b";
  EXPECT_FALSE(db->baseline_night(elsewhere));
  NightRecord other_photos = tonight;
  other_photos.setup = "s2";  // registered again with other photos: no baseline
  EXPECT_FALSE(db->baseline_night(other_photos));
  EXPECT_FALSE(db->accept_last_night(id, "x86-64-a", "h2"));  // h2's last night passed
  EXPECT_EQ(db->accept_last_night(id, "x86-64-a", "h1"), std::optional<int64_t>(second));
  EXPECT_EQ(db->baseline_night(tonight)->id, second);
  db->finish_night(third, {}, "failed", "the evaluator died", std::nullopt);
  EXPECT_FALSE(db->accept_last_night(id, "x86-64-a", "h1"));  // the last failed: nothing to accept
  const int64_t fourth = night("h1");
  db->finish_night(fourth, {v}, "regressed", "", std::nullopt);
  EXPECT_EQ(db->accept_last_night(id, "x86-64-a", "h1"), std::optional<int64_t>(fourth));
  tonight.id = fourth + 1;
  EXPECT_EQ(db->baseline_night(tonight)->id, fourth);
  const std::vector<NightRecord> nights = db->list_nights(id);
  ASSERT_EQ(nights.size(), 5u);
  EXPECT_EQ(nights[3].outcome, "failed");
  EXPECT_EQ(nights[3].message, "the evaluator died");
  EXPECT_FALSE(nights[0].finished_at.empty());

  // Registering again keeps the id and with it the history; removing takes it all.
  reg.schedule = "blur.compute_root().vectorize(x, 8)\n";
  reg.targets = {"x86-64-b"};
  EXPECT_TRUE(db->replace_nightly(reg));
  EXPECT_EQ(db->find_nightly("blur")->id, id);
  EXPECT_EQ(db->find_nightly("blur")->targets, (std::vector<std::string>{"x86-64-b"}));
  reg.name = "nosuch";
  EXPECT_FALSE(db->replace_nightly(reg));
  EXPECT_TRUE(db->remove_nightly("blur"));
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM nightly_nights"), 0);
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM nightly_variants"), 0);
}

TEST_F(StorageTest, FrontIsReplacedAsAWhole) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  int64_t other_run = db->create_run(make_run(f));
  std::vector<RunEvaluation> batch = {{make_evaluation(f, "a"), 0, "", "measured"},
                                      {make_evaluation(f, "b"), 1, "", "measured"},
                                      {make_evaluation(f, "c"), 2, "", "measured"}};
  db->put_evaluations(run, batch);
  int64_t a = batch[0].evaluation.id, b = batch[1].evaluation.id, c = batch[2].evaluation.id;
  db->put_front(run, {{a, std::nullopt}, {b, std::nullopt}, {c, std::nullopt}});
  db->put_front(other_run, {{a, std::nullopt}});
  db->put_front(run, {{c, b}, {a, std::nullopt}});

  std::vector<FrontPoint> front = db->front(run);
  ASSERT_EQ(front.size(), 2u);
  EXPECT_EQ(front[0].evaluation_id, c);
  EXPECT_EQ(front[0].test_evaluation_id, b);
  EXPECT_EQ(front[1].evaluation_id, a);
  EXPECT_EQ(db->front(other_run).size(), 1u);  // other runs' fronts are untouched
  db->put_front(run, {});
  EXPECT_TRUE(db->front(run).empty());
}

// Why a run ended is stored with its state, in the same call, read back by find_run and
// list_runs, and cleared when the run is resumed; a new run, a done one and a run created
// running have none.
TEST_F(StorageTest, RunMessageIsStoredWithItsStateAndClearedOnResume) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  const int64_t run = db->create_run(make_run(f));
  EXPECT_EQ(db->find_run(run)->message, "");
  const std::string reason = "SQLite error 13: database or disk is full (No space left on device)";
  db->set_run_state(run, "failed", reason);
  EXPECT_EQ(db->find_run(run)->state, "failed");
  EXPECT_EQ(db->find_run(run)->message, reason);
  EXPECT_EQ(db->list_runs()[0].message, reason);
  {
    auto reopened = Database::open(path());
    EXPECT_EQ(reopened->find_run(run)->message, reason);
  }
  db->set_run_state(run, "running");  // resumed: the old reason no longer holds
  EXPECT_EQ(db->find_run(run)->message, "");
  db->set_run_state(run, "cancelled", "cancelled by a client");
  EXPECT_EQ(db->find_run(run)->message, "cancelled by a client");
  db->set_run_state(run, "done");
  EXPECT_EQ(db->find_run(run)->message, "");

  RunRecord ended = make_run(f);
  ended.state = "failed";
  ended.message = "its files are gone";
  EXPECT_EQ(db->find_run(db->create_run(ended))->message, "its files are gone");
  RunRecord running = make_run(f);
  running.message = "not a running run's";
  EXPECT_EQ(db->find_run(db->create_run(running))->message, "");
}

// A file of schema version 4 (before runs.message) keeps its runs, with message "", and
// takes messages once migrated.
TEST_F(StorageTest, VersionFourDatabaseGetsRunMessages) {
  {
    RawDb raw(path());
    EXPECT_EQ(migrate(raw.get(), 4), 4);
    EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name = 'message'"),
              0);
    raw.exec(R"sql(
      INSERT INTO pipelines (id, name, ir_hash, source) VALUES (1, 'old', 'h', 'src');
      INSERT INTO datasets (id, name, content_hash) VALUES (1, 'd', 'x');
      INSERT INTO runs (id, pipeline_id, dataset_id, target, strategy, state, finished_at)
        VALUES (1, 1, 1, 't', 'genetic', 'failed', '2024-05-01T12:00:00.000Z');
      INSERT INTO runs (id, pipeline_id, dataset_id, target, strategy) VALUES (2, 1, 1, 't', 'random');
    )sql");
  }
  auto db = Database::open(path());
  EXPECT_EQ(db->schema_version(), kSchemaVersion);
  std::optional<RunRecord> failed = db->find_run(1);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, "failed");
  EXPECT_EQ(failed->finished_at, "2024-05-01T12:00:00.000Z");
  EXPECT_EQ(failed->message, "");  // failed before reasons were kept
  EXPECT_EQ(db->find_run(2)->strategy, "random");
  EXPECT_EQ(db->find_run(2)->message, "");
  db->set_run_state(2, "failed", "the baseline failed");
  EXPECT_EQ(db->find_run(2)->message, "the baseline failed");
}

TEST_F(StorageTest, MigrationStepsAreConsecutive) {
  std::span<const Migration> steps = migrations();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSchemaVersion));
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].version, static_cast<int>(i) + 1);
}

TEST_F(StorageTest, OldDatabaseIsMigratedOnOpen) {
  {
    // A file as the first release wrote it: version 1, with data in it.
    RawDb raw(path());
    EXPECT_EQ(migrate(raw.get(), 1), 1);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), 1);
    EXPECT_EQ(
        raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'run_evaluations_by_seq'"), 0);
    raw.exec(R"sql(
      INSERT INTO pipelines (id, name, ir_hash, source) VALUES (1, 'old', 'h', 'src');
      INSERT INTO datasets (id, name, content_hash) VALUES (1, 'd', 'x');
      INSERT INTO images (id, dataset_id, path, sha256, width, height, split)
        VALUES (1, 1, 'p.png', 'aa', 2, 2, 'train');
      INSERT INTO runs (id, pipeline_id, dataset_id, target, strategy) VALUES (1, 1, 1, 't', 'genetic');
      INSERT INTO evaluations (id, pipeline_id, dataset_id, split, target, schedule, status, time_ms)
        VALUES (1, 1, 1, 'train', 't', 'sched', 'ok', 3.5);
      INSERT INTO measurements (evaluation_id, image_id, time_ms, error, psnr) VALUES (1, 1, 3.5, 0, 99);
      INSERT INTO run_evaluations (run_id, evaluation_id, seq, strategy) VALUES (1, 1, 0, 'genetic');
    )sql");
  }
  auto db = Database::open(path());
  EXPECT_EQ(db->schema_version(), kSchemaVersion);
  EXPECT_EQ(db->pragma("user_version"), std::to_string(kSchemaVersion));
  std::vector<RunEvaluation> linked = db->run_evaluations(1);
  ASSERT_EQ(linked.size(), 1u);
  EXPECT_EQ(linked[0].origin, "");  // a link from before version 4
  EXPECT_EQ(linked[0].evaluation.key.schedule, "sched");
  EXPECT_EQ(linked[0].evaluation.time_ms, 3.5);
  ASSERT_EQ(linked[0].evaluation.measurements.size(), 1u);
  EXPECT_EQ(linked[0].evaluation.measurements[0].psnr, 99);
  EXPECT_EQ(db->find_run(1)->pipeline_name, "old");
  // A run from before owners were recorded: no owner, so never taken for interrupted.
  EXPECT_EQ(db->find_run(1)->owner, "");
  EXPECT_EQ(run_state_label(*db->find_run(1)), "running");
  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'run_evaluations_by_seq'"),
            1);
}

TEST_F(StorageTest, NewerDatabaseIsRefused) {
  {
    RawDb raw(path());
    raw.exec("CREATE TABLE future (x); PRAGMA user_version = " +
             std::to_string(kSchemaVersion + 1));
  }
  try {
    Database::open(path());
    FAIL() << "a database from a newer version was opened";
  } catch (const StorageError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("schema version " + std::to_string(kSchemaVersion + 1)),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
    EXPECT_NE(message.find(path()), std::string::npos) << message;
  }
  RawDb raw(path());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), kSchemaVersion + 1);  // untouched
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'pipelines'"), 0);
}

TEST_F(StorageTest, FileThatIsNotADatabaseIsAnError) {
  std::ofstream(path()) << "this is not an SQLite database, just some text that is long enough "
                           "to fill a header of one hundred bytes and then a little more.";
  try {
    Database::open(path());
    FAIL() << "a text file was opened as a database";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find(path()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a database"), std::string::npos) << e.what();
  }
}

TEST_F(StorageTest, ConnectionSettingsAreInEffect) {
  auto db = Database::open(path());
  EXPECT_EQ(db->pragma("journal_mode"), "wal");
  EXPECT_EQ(db->pragma("synchronous"), "2");  // FULL
  EXPECT_EQ(db->pragma("foreign_keys"), "1");
  EXPECT_EQ(db->pragma("busy_timeout"), "5000");
  EXPECT_THROW(db->pragma("user_version = 7"), StorageError);
  auto quick = Database::open(path(), {.busy_timeout_ms = 250});
  EXPECT_EQ(quick->pragma("busy_timeout"), "250");
  // WAL is a property of the file: a plain connection sees it too.
  RawDb raw(path());
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
}

TEST_F(StorageTest, FailedBatchRollsBackEntirely) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  EvaluationRecord unknown_image = make_evaluation(f, "c");
  unknown_image.measurements.push_back({999999, 1, 1, 1});  // no such image
  std::vector<RunEvaluation> batch = {{make_evaluation(f, "a"), 0, "genetic", "measured"},
                                      {make_evaluation(f, "b"), 1, "genetic", "measured"},
                                      {unknown_image, 2, "genetic", "measured"}};
  try {
    db->put_evaluations(run, batch);
    FAIL() << "a measurement of an unknown image was stored";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("FOREIGN KEY"), std::string::npos) << e.what();
    EXPECT_NE(e.sql().find("INSERT INTO measurements"), std::string::npos) << e.sql();
  }
  EXPECT_EQ(batch[0].evaluation.id, 0);  // the records are left as they were
  EXPECT_TRUE(db->run_evaluations(run).empty());
  EXPECT_FALSE(db->find_evaluation(batch[0].evaluation.key));

  EvaluationRecord bad_status = make_evaluation(f, "b");
  // A value outside the enum writes a word ("?") that the schema's CHECK refuses.
  bad_status.status = static_cast<EvaluationStatus>(99);
  std::vector<RunEvaluation> second = {{make_evaluation(f, "a"), 0, "", "measured"},
                                       {bad_status, 1, "", "measured"}};
  EXPECT_THROW(db->put_evaluations(run, second), StorageError);

  RawDb raw(path());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM evaluations"), 0);
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM measurements"), 0);
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM run_evaluations"), 0);

  // The connection is usable afterwards: the next batch commits.
  batch.pop_back();
  db->put_evaluations(run, batch);
  EXPECT_EQ(db->run_evaluations(run).size(), 2u);
}

TEST_F(StorageTest, SecondConnectionReadsWhatTheFirstCommitted) {
  auto writer = Database::open(path());
  auto reader = Database::open(path());
  Fixture f = fill(*writer);
  int64_t run = writer->create_run(make_run(f));
  std::vector<RunEvaluation> batch = {{make_evaluation(f, "a"), 0, "", "measured"}};
  writer->put_evaluations(run, batch);
  // Both are open: the WAL is not checkpointed into the main file yet.
  EXPECT_TRUE(fs::exists(path() + "-wal"));
  std::optional<EvaluationRecord> seen = reader->find_evaluation(batch[0].evaluation.key);
  ASSERT_TRUE(seen);
  expect_same(*seen, batch[0].evaluation);
  EXPECT_EQ(reader->find_run(run)->evaluations, 1);
  EXPECT_EQ(reader->dataset_images(f.dataset).size(), 3u);
}

TEST_F(StorageTest, SecondProcessReadsWhatTheFirstCommitted) {
  auto db = Database::open(path());
  Fixture f = fill(*db);
  int64_t run = db->create_run(make_run(f));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child writes through its own connection and leaves without running destructors
    // (the parent's connection must not be closed from here).
    int status = 1;
    try {
      auto own = Database::open(path());
      std::vector<RunEvaluation> batch = {
          {make_evaluation(f, "from child"), 0, "child", "measured"}};
      own->put_evaluations(run, batch);
      own.reset();
      status = 0;
    } catch (...) {
    }
    _exit(status);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::vector<RunEvaluation> linked = db->run_evaluations(run);
  ASSERT_EQ(linked.size(), 1u);
  EXPECT_EQ(linked[0].evaluation.key.schedule, "from child");
  EXPECT_EQ(linked[0].strategy, "child");
}

TEST_F(StorageTest, WriterWaitsForTheLockUpToTheBusyTimeout) {
  auto db = Database::open(path(), {.busy_timeout_ms = 100});
  RawDb other(path());
  other.exec("BEGIN IMMEDIATE");
  try {
    db->put_pipeline("p", "h", "s");
    FAIL() << "wrote while another connection held the write lock";
  } catch (const StorageError& e) {
    EXPECT_EQ(e.code() & 0xff, SQLITE_BUSY) << e.what();
  }
  other.exec("ROLLBACK");

  // With a longer timeout the writer waits for the lock to be released, then writes.
  auto patient = Database::open(path(), {.busy_timeout_ms = 5000});
  other.exec("BEGIN IMMEDIATE");
  std::atomic<bool> released = false;
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    released = true;
    other.exec("COMMIT");
  });
  int64_t id = patient->put_pipeline("p", "h", "s");
  EXPECT_TRUE(released);
  release.join();
  EXPECT_EQ(db->pipeline(id)->name, "p");
}

}  // namespace
}  // namespace stipple::storage
