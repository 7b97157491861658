// The cluster under faults in the reference outputs (issue #25, items 1, 2 and 7): real
// coordinator and worker processes on loopback (cluster_fixture.h), with a photo whose
// reference output is larger than a candidate may write, a pipeline whose reference
// hangs, and a worker killed while its evaluator computes a reference.
#include <sys/file.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cluster_fixture.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/runtime/buffer.h"

namespace stipple::testing_cli {
namespace {

namespace fs = std::filesystem;

/// A reduction of 1e8 terms per output point: on a 64x48 colour photo 9.2e11 points, under
/// the work limit (1e12) that would refuse it at once, and minutes of CPU.
constexpr const char* kHangingPipeline = R"(pipeline hang
input in : f32[x, y, c]
func out(x, y, c) = sum(i in 0..100000000 : in(x, y, c))
output out
)";

/// A 3x3 box blur of a colour photo: an output of three f32 channels, 12 bytes a pixel,
/// cheap enough to compute for 9 MP in a second (two_pass_blur's default schedule, its
/// Gaussian taps inlined, takes minutes there).
constexpr const char* kBoxBlur = R"(pipeline box3
input in : f32[x, y, c]
func bx(x, y, c) = (in(x - 1, y, c) + in(x, y, c) + in(x + 1, y, c)) / 3.0
func out(x, y, c) = (bx(x, y - 1, c) + bx(x, y, c) + bx(x, y + 1, c)) / 3.0
output out
)";

/// The pids of `parent`'s children that run `comm` (the kernel keeps 15 characters).
std::vector<pid_t> children_named(pid_t parent, const std::string& comm) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(e.path().string() + "/stat");
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));  // "S PPID ..."
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && stat.substr(open + 1, close - open - 1) == comm.substr(0, 15))
      out.push_back(pid_t(std::stoi(name)));
  }
  return out;
}

/// Whether `pid` is a live process (not gone, not a zombie waiting for init).
bool alive(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X';
}

/// Whether the host's benchmark lock file can be taken exclusively right now (released at
/// once): what a second evaluator's timed run on the host needs.
bool lock_free(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // releases it
  return free;
}

class ClusterFaultsTest : public ClusterTest {
 protected:
  void TearDown() override {
    for (pid_t pid : strays_) {
      if (alive(pid)) ::kill(pid, SIGKILL);  // an orphan the fix should have taken down
    }
    ClusterTest::TearDown();
  }

  /// Submits `pipeline` on `train` (the small test photo for the front); returns the run.
  int64_t submit_pipeline(const std::string& address, const std::string& pipeline,
                          const std::string& train, int budget) {
    Result r =
        stipple("submit " + pipeline + " --coordinator " + address + " --images " + train +
                " --test-images " + kTest + " --budget " + std::to_string(budget) + " --runs 1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const size_t at = r.output.find("run ");
    return at == std::string::npos ? 0 : std::stoll(r.output.substr(at + 4));
  }

  /// The evaluator child of `worker`, once it has one (0 if none in `timeout`).
  pid_t evaluator_of(const Process& worker, std::chrono::milliseconds timeout) {
    pid_t found = 0;
    wait_until(
        [&] {
          const std::vector<pid_t> children = children_named(worker.pid, "stipple-evaluator");
          if (!children.empty()) found = children.front();
          return found != 0;
        },
        timeout);
    if (found) strays_.push_back(found);
    return found;
  }

  std::vector<pid_t> strays_;
};

// Item 1: a 3000x3000 colour photo's reference output (9 MP, three f32 channels: 103 MiB)
// is over the 64 MiB a candidate may write. It is written to the worker's cache at start,
// before that limit applies: the run completes, and no temporary file is left behind.
TEST_F(ClusterFaultsTest, ARunOnA9MegapixelPhotoCompletes) {
  Buffer photo(ScalarType::UInt8, {3000, 3000, 3});
  uint8_t* p = photo.data_as<uint8_t>();
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < 3000; ++y) {
      for (int64_t x = 0; x < 3000; ++x)
        p[x + 3000 * (y + 3000 * c)] = uint8_t((x * (c + 1) + y * (3 - c)) * 255 / 12000);
    }
  }
  write_png(path("gradient.png"), photo);

  const std::string pipeline = write("box3.stp", kBoxBlur);
  const std::string address = start_coordinator();
  start_worker(address, {"--compile-jobs", "1", "--benchmark-lock", path("benchmark.lock")});
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  const int64_t run = submit_pipeline(address, pipeline, path("gradient.png"), 2);
  ASSERT_GT(run, 0);
  EXPECT_EQ(wait_for_run(c, run, 30s), "done")
      << read_file(coordinator_.err) << read_file(path("worker1.err"));
  EXPECT_EQ(train_evaluations(run).size(), 2u);

  int references = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(path("cache/references"))) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
    references += e.path().filename().string().find(".tmp.") == std::string::npos;
  }
  EXPECT_GE(references, 2);  // the big photo's and the test photo's
}

// Item 2: a reference that would run for minutes is stopped at the worker's deadline (5 s)
// and recorded as a timeout: the baseline fails, so the run does. While it computes, and
// after, the host's benchmark lock is free for another evaluator's timed runs.
TEST_F(ClusterFaultsTest, AHangingReferenceIsATimeoutWithinTheDeadline) {
  const std::string pipeline = write("hang.stp", kHangingPipeline);
  const std::string lock = path("benchmark.lock");
  const std::string address = start_coordinator();
  Process worker =
      start_worker(address, {"--compile-jobs", "1", "--deadline", "5", "--benchmark-lock", lock});
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  const auto start = std::chrono::steady_clock::now();
  const int64_t run = submit_pipeline(address, pipeline, kTest, 2);
  ASSERT_GT(run, 0);
  ASSERT_NE(evaluator_of(worker, 10s), 0);
  int lock_held = 0;
  const std::string state = [&] {
    std::string s = "running";
    wait_until(
        [&] {
          lock_held += !lock_free(lock);
          s = c.status(run).state();
          return s != "running";
        },
        20s);
    return s;
  }();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(state, "failed") << read_file(path("worker1.err"));
  EXPECT_LT(seconds, 5 + 6) << "the deadline is 5 s";
  EXPECT_EQ(lock_held, 0) << "the benchmark lock was held while computing the reference";
  EXPECT_TRUE(lock_free(lock));

  auto db = storage::Database::open(db_path());
  std::vector<storage::RunEvaluation> evaluations = db->run_evaluations(run);
  ASSERT_EQ(evaluations.size(), 1u);
  EXPECT_EQ(evaluations[0].evaluation.status, EvaluationStatus::Timeout);
  EXPECT_NE(evaluations[0].evaluation.reason.find("reference outputs"), std::string::npos)
      << evaluations[0].evaluation.reason;
  // Recorded once, not handed round: the job was not abandoned.
  EXPECT_EQ(read_file(path("worker1.err")).find("abandoned"), std::string::npos);
}

// Item 7: a worker killed with SIGKILL while its evaluator computes a reference takes the
// evaluator with it (PR_SET_PDEATHSIG), rather than leaving it to run under init.
TEST_F(ClusterFaultsTest, AKilledWorkersEvaluatorDiesWithIt) {
  const std::string pipeline = write("hang.stp", kHangingPipeline);
  const std::string address = start_coordinator();
  Process worker = start_worker(address, {"--compile-jobs", "1", "--deadline", "60",
                                          "--benchmark-lock", path("benchmark.lock")});
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  ASSERT_GT(submit_pipeline(address, pipeline, kTest, 2), 0);
  const pid_t evaluator = evaluator_of(worker, 10s);
  ASSERT_NE(evaluator, 0);
  std::this_thread::sleep_for(500ms);  // into the reference computation
  ASSERT_TRUE(alive(evaluator));
  ::kill(worker.pid, SIGKILL);  // the worker alone: the evaluator has a group of its own
  kill_process(worker, SIGKILL);
  EXPECT_TRUE(wait_until([&] { return !alive(evaluator); }, 2s))
      << "the evaluator " << evaluator << " outlived its worker";
}

// `stipple cancel` stops work in progress within a second: the coordinator answers the
// worker's held heartbeat with the run's revoked jobs, and the worker kills the evaluator
// child measuring it. Both places a job can be: a candidate's timed runs (the baseline
// schedule sleeps, through the evaluator's test hook), and the setup's reference outputs
// (a pipeline whose reference would run for minutes). The worker goes on: it is neither
// lost nor re-registered, and reports nothing for the cancelled job. Before: the child ran
// on to the 60 s deadline.
class ClusterCancelTest : public ClusterFaultsTest,
                          public ::testing::WithParamInterface<const char*> {};

TEST_P(ClusterCancelTest, ACancelStopsWorkInProgressWithinASecond) {
  const bool in_reference = std::string(GetParam()) == "reference";
  const std::string pipeline = write("p.stp", in_reference ? kHangingPipeline : kBoxBlur);
  const std::string baseline = in_reference ? "default" : write("p.sched", "# fault: sleep\n");
  setenv("STIPPLE_EVALUATOR_TEST_FAULTS", "1", 1);  // inherited by the worker's evaluator
  const std::string address = start_coordinator();
  Process worker = start_worker(address, {"--compile-jobs", "1", "--deadline", "60",
                                          "--benchmark-lock", path("benchmark.lock")});
  unsetenv("STIPPLE_EVALUATOR_TEST_FAULTS");
  auto c = client(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  Result r = stipple("submit " + pipeline + " --coordinator " + address + " --images " + kTest +
                     " --test-images " + kTest + " --budget 2 --runs 1 --baseline " + baseline);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int64_t run = std::stoll(r.output.substr(r.output.find("run ") + 4));
  const pid_t evaluator = evaluator_of(worker, 10s);
  ASSERT_NE(evaluator, 0);
  ASSERT_TRUE(wait_until([&] { return c.workers()[0].busy(); }, 10s));
  std::this_thread::sleep_for(1500ms);  // well into the sleep, or the reference
  ASSERT_TRUE(alive(evaluator));

  const auto cancelled_at = std::chrono::steady_clock::now();
  r = stipple("cancel " + std::to_string(run) + " --coordinator " + address);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(wait_until([&] { return !alive(evaluator); }, 1s))
      << "the evaluator " << evaluator << " still runs a second after the cancel";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count();
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(c.status(run).state(), "cancelled");
  EXPECT_TRUE(wait_until(
      [&] {
        return read_file(path("worker1.err")).find("stopped, its run was cancelled") !=
               std::string::npos;
      },
      5s))
      << read_file(path("worker1.err"));
  const std::string log = read_file(path("worker1.err"));
  EXPECT_EQ(log.find("abandoned"), std::string::npos) << log;
  EXPECT_EQ(log.find("registering again"), std::string::npos) << log;
  const std::vector<proto::WorkerStatus> workers = c.workers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_FALSE(workers[0].lost());
  EXPECT_TRUE(wait_until([&] { return !c.workers()[0].busy(); }, 5s));
  EXPECT_TRUE(alive(worker.pid));
}

INSTANTIATE_TEST_SUITE_P(Where, ClusterCancelTest, ::testing::Values("candidate", "reference"));

}  // namespace
}  // namespace stipple::testing_cli
