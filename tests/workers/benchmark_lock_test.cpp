// The host's benchmark lock (workers/benchmark_lock.h) and evaluators sharing it: shared
// holders coexist and keep an exclusive one out, a waiter gets the lock when it frees, a
// killed holder's lock is dropped; evaluator children sharing the lock never time two
// candidates at once nor time while another compiles (checked against the children's own
// trace of when they held the lock), time spent waiting for the lock is not held against
// a candidate's deadline, a lock some stuck process keeps is waited for only so long, and
// one that cannot be opened is measured without.
#include "workers/benchmark_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "tests/workers/evaluator_trace.h"
#include "workers/local_evaluator.h"

namespace stipple::workers {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class BenchmarkLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/stipple-lock-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "benchmark.lock").string();
  }
  void TearDown() override {
    unsetenv("STIPPLE_EVALUATOR_TRACE");
    fs::remove_all(dir_);
  }

  EvaluationSetup setup() const {
    EvaluationSetup s;
    s.pipeline_file = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/blur3x3.stp";
    std::ifstream in(s.pipeline_file);
    s.pipeline_source.assign(std::istreambuf_iterator<char>(in), {});
    s.images["train"] = {std::string(STIPPLE_SOURCE_DIR) +
                         "/datasets/fixtures/natural-high-64x48.png"};
    s.runs = 3;
    s.threads = 1;
    return s;
  }
  LocalEvaluatorOptions options(double deadline = 30) const {
    LocalEvaluatorOptions o;
    o.server_binary = STIPPLE_EVALUATOR;
    o.deadline_seconds = deadline;
    o.memory_limit_bytes = int64_t(4) << 30;
    o.benchmark_lock = path_;
    return o;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(BenchmarkLockTest, SharedHoldersCoexistAndKeepAnExclusiveOneOut) {
  // Separate open files: flock conflicts between them as between processes.
  BenchmarkLock a(path_), b(path_), c(path_);
  EXPECT_TRUE(a.lock_shared(0));
  EXPECT_TRUE(b.lock_shared(0));
  EXPECT_FALSE(c.lock_exclusive(0.05));
  a.unlock();
  EXPECT_FALSE(c.lock_exclusive(0));  // b still holds it
  b.unlock();
  EXPECT_TRUE(c.lock_exclusive(0));
  EXPECT_FALSE(a.lock_shared(0.05));
  EXPECT_FALSE(b.lock_exclusive(0));
  c.unlock();
  EXPECT_TRUE(a.lock_shared(0));
  // Shared to exclusive while alone is allowed; then no one else gets in.
  EXPECT_TRUE(a.lock_exclusive(0));
  EXPECT_FALSE(b.lock_shared(0));
}

TEST_F(BenchmarkLockTest, AWaiterGetsTheLockWhenItFrees) {
  BenchmarkLock holder(path_), waiter(path_);
  ASSERT_TRUE(holder.lock_exclusive(0));
  const auto start = std::chrono::steady_clock::now();
  std::future<bool> got = std::async(std::launch::async, [&] { return waiter.lock_exclusive(30); });
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(got.wait_for(0s), std::future_status::timeout);
  holder.unlock();
  ASSERT_EQ(got.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(got.get());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_FALSE(holder.lock_shared(0));
}

TEST_F(BenchmarkLockTest, AKilledHoldersLockIsDropped) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    BenchmarkLock held(path_);
    const char ok = held.lock_exclusive(-1) ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  EXPECT_EQ(ok, 'y');
  BenchmarkLock mine(path_);
  EXPECT_FALSE(mine.lock_shared(0.1));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(mine.lock_exclusive(5));
  close(ready[0]);
  close(ready[1]);
}

// Two children measuring at once on one host: by their own trace of when they held the
// lock, no two timed phases overlap, and no timed phase overlaps the other's compile.
TEST_F(BenchmarkLockTest, EvaluatorsSharingTheLockTimeOneCandidateAtATime) {
  const std::string trace = (dir_ / "trace").string();
  setenv("STIPPLE_EVALUATOR_TRACE", trace.c_str(), 1);
  LocalEvaluator first(setup(), options()), second(setup(), options());
  const std::vector<std::string> schedules = {
      "blur_x.compute_root()\n", "blur_x.compute_at(blur_y, y)\n", "blur_y.vectorize(x, 8)\n",
      "blur_x.compute_root().vectorize(x, 4)\n", "blur_y.split(y, yo, yi, 8)\n"};
  auto measure = [&](LocalEvaluator& ev) { return ev.evaluate(schedules, "train", 0); };
  std::future<std::vector<EvaluationResult>> a =
      std::async(std::launch::async, measure, std::ref(first));
  std::future<std::vector<EvaluationResult>> b =
      std::async(std::launch::async, measure, std::ref(second));
  for (const EvaluationResult& r : a.get()) EXPECT_TRUE(r.ok()) << r.reason;
  for (const EvaluationResult& r : b.get()) EXPECT_TRUE(r.ok()) << r.reason;

  const std::vector<TraceRecord> records = read_evaluator_trace(trace);
  ASSERT_EQ(records.size(), 2 * schedules.size());
  // Both children left their records; which one wrote first or last is up to the lock.
  std::map<long, int> records_per_child;
  for (const TraceRecord& r : records) ++records_per_child[r.pid];
  ASSERT_EQ(records_per_child.size(), 2u);
  for (const auto& [pid, count] : records_per_child)
    EXPECT_EQ(count, static_cast<int>(schedules.size())) << pid;
  for (const TraceRecord& r : records) {
    EXPECT_LE(r.compile_start, r.compile_end);
    EXPECT_LE(r.compile_end, r.timing_start);
    EXPECT_LT(r.timing_start, r.timing_end);
    for (const TraceRecord& s : records) {
      if (s.pid == r.pid) continue;
      EXPECT_FALSE(intervals_overlap(r.timing_start, r.timing_end, s.timing_start, s.timing_end))
          << r.pid << " and " << s.pid << " timed at once";
      EXPECT_FALSE(intervals_overlap(r.timing_start, r.timing_end, s.compile_start, s.compile_end))
          << r.pid << " timed while " << s.pid << " compiled";
    }
  }
}

// A candidate queued behind the lock for longer than its deadline is not a timeout: the
// deadline counts from when it holds the lock.
TEST_F(BenchmarkLockTest, WaitingForTheLockIsNotHeldAgainstTheDeadline) {
  LocalEvaluator ev(setup(), options(/*deadline=*/2));
  BenchmarkLock host(path_);
  ASSERT_TRUE(host.lock_exclusive(0));
  std::future<std::vector<EvaluationResult>> result = std::async(
      std::launch::async, [&] { return ev.evaluate({"blur_x.compute_root()\n"}, "train", 0); });
  EXPECT_EQ(result.wait_for(3500ms), std::future_status::timeout);  // queued, not killed
  host.unlock();
  ASSERT_EQ(result.wait_for(30s), std::future_status::ready);
  const std::vector<EvaluationResult> r = result.get();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok()) << to_string(r[0].status) << ": " << r[0].reason;
  EXPECT_EQ(ev.children_started(), 1);
}

// A lock that some stopped process keeps for ever: the candidate is measured without it
// after lock_wait_seconds, never lost.
TEST_F(BenchmarkLockTest, ALockKeptForEverIsWaitedForOnlySoLong) {
  LocalEvaluatorOptions o = options();
  o.lock_wait_seconds = 0.5;
  LocalEvaluator ev(setup(), o);
  BenchmarkLock stuck(path_);
  ASSERT_TRUE(stuck.lock_exclusive(0));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<EvaluationResult> r = ev.evaluate({"blur_x.compute_root()\n"}, "train", 0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok()) << to_string(r[0].status) << ": " << r[0].reason;
  // Two waits (compile, then timing) of 0.5 s each, and the measuring itself.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);
}

// A lock file that cannot be opened is the host's problem: the candidate is measured
// without the lock (a warning on stderr), never failed as a bad setup.
TEST_F(BenchmarkLockTest, ALockFileThatCannotBeOpenedMeasuresWithoutIt) {
  LocalEvaluatorOptions o = options();
  o.benchmark_lock = (dir_ / "no" / "such" / "folder" / "lock").string();
  LocalEvaluator ev(setup(), o);
  const std::vector<EvaluationResult> r = ev.evaluate({"blur_x.compute_root()\n"}, "train", 0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok()) << to_string(r[0].status) << ": " << r[0].reason;
}

}  // namespace
}  // namespace stipple::workers
