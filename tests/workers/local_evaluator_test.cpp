// LocalEvaluator with the real child process: results equal an in-process measurement of
// the same schedule, and every failure a candidate can have (a bad schedule, a crash, an
// abort, an exit, CPU spinning, a wall-clock hang, an allocation past the memory limit, an
// output of NaN, garbage on the protocol) becomes a failed result with its reason, after
// which the next candidate is measured normally in a fresh child. Crash, hang and the
// like come from the evaluator's test hook (STIPPLE_EVALUATOR_TEST_FAULTS); the
// out-of-memory of generated code, NaN and the bad schedule are real.
#include "workers/local_evaluator.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "compiler_core/ir/error.h"
#include "workers/measurement.h"
#include "workers/sanitizer.h"

namespace stipple::workers {
namespace {

std::string source_path(const std::string& rel) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

const char* kBlur = R"(pipeline blur3
input in : f32[x, y, c]
func bx(x, y, c) = (in(x - 1, y, c) + in(x, y, c) + in(x + 1, y, c)) / 3.0
func out(x, y, c) = (bx(x, y - 1, c) + bx(x, y, c) + bx(x, y + 1, c)) / 3.0
output out
)";

EvaluationSetup blur_setup() {
  EvaluationSetup s;
  s.pipeline_source = kBlur;
  s.pipeline_file = "blur3.stp";
  s.images["train"] = {source_path("datasets/fixtures/natural-high-64x48.png"),
                       source_path("datasets/fixtures/man-made-low-64x48.png")};
  s.images["test"] = {source_path("datasets/fixtures/people-256x192.png")};
  s.runs = 3;
  s.threads = 1;
  return s;
}

/// A setup whose reference would run for minutes: 9.2e11 points, under the work limit
/// that refuses bigger runs at once.
EvaluationSetup hanging_reference_setup() {
  EvaluationSetup s = blur_setup();
  s.pipeline_source = R"(pipeline hang
input in : f32[x, y, c]
func out(x, y, c) = sum(i in 0..100000000 : in(x, y, c))
output out
)";
  s.images = {{"train", {source_path("datasets/fixtures/natural-high-64x48.png")}}};
  return s;
}

LocalEvaluatorOptions options(double deadline = 30) {
  LocalEvaluatorOptions o;
  o.server_binary = STIPPLE_EVALUATOR;
  o.deadline_seconds = deadline;
  o.memory_limit_bytes = int64_t(4) << 30;
  return o;
}

class LocalEvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("STIPPLE_EVALUATOR_TEST_FAULTS", "1", 1); }
  void TearDown() override { unsetenv("STIPPLE_EVALUATOR_TEST_FAULTS"); }
};

TEST_F(LocalEvaluatorTest, MeasuresLikeAnInProcessMeasurement) {
  LocalEvaluator ev(blur_setup(), options());
  EXPECT_FALSE(ev.target().empty());
  EXPECT_FALSE(ev.host().empty());
  const std::string exact = "bx.compute_at(out, y).vectorize(x, 8)\n";
  const std::string perforated = "bx.compute_root().perforate(grid(2, 1), linear, precomputed)\n";
  std::vector<EvaluationResult> r = ev.evaluate({exact, perforated}, "train", 0);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].ok()) << r[0].reason;
  ASSERT_TRUE(r[1].ok()) << r[1].reason;
  ASSERT_EQ(r[0].images.size(), 2u);
  // An exact schedule has no error; the perforated one has some, as measured in process.
  EXPECT_EQ(r[0].error, 0);
  EXPECT_TRUE(std::isinf(r[0].psnr));
  Measurement local(blur_setup());
  EvaluationResult in_process = local.measure(perforated, "train");
  ASSERT_TRUE(in_process.ok());
  EXPECT_GT(r[1].error, 0);
  EXPECT_DOUBLE_EQ(r[1].error, in_process.error);
  EXPECT_DOUBLE_EQ(r[1].images[1].error, in_process.images[1].error);
  EXPECT_GT(r[0].compile_ms, 0);
  EXPECT_GT(r[0].time_ms, 0);
  EXPECT_DOUBLE_EQ(r[0].time_ms, (r[0].images[0].time_ms + r[0].images[1].time_ms) / 2);
  // The test split is its own photos.
  std::vector<EvaluationResult> t = ev.evaluate({exact}, "test", 0);
  ASSERT_TRUE(t[0].ok());
  EXPECT_EQ(t[0].images.size(), 1u);
  EXPECT_EQ(ev.children_started(), 1);
}

// The nightly run's A/B: code compiled by one child, kept, and timed by another (a fresh
// evaluator, as the next night's process is) computes the same outputs; stored code that
// is not an object file is a failed result, not a dead evaluator.
TEST_F(LocalEvaluatorTest, StoredCodeRunsInAnotherProcessAndComputesTheSame) {
  const std::string schedule = "bx.compute_at(out, y).vectorize(x, 8)\n";
  EvaluationSetup setup = blur_setup();
  setup.output_digests = true;
  EvaluationResult compiled;
  {
    LocalEvaluator first(setup, options());
    std::vector<EvaluationResult> r = first.evaluate_code({{schedule, {}, {}, true}}, "train");
    ASSERT_TRUE(r[0].ok()) << r[0].reason;
    compiled = r[0];
  }
  ASSERT_FALSE(compiled.object.empty());
  ASSERT_FALSE(compiled.symbol.empty());
  ASSERT_EQ(compiled.images.size(), 2u);
  EXPECT_EQ(compiled.images[0].output_digest.size(), 64u);
  EXPECT_NE(compiled.images[0].output_digest, compiled.images[1].output_digest);
  EXPECT_GT(compiled.images[0].min_time_ms, 0);
  EXPECT_LE(compiled.images[0].min_time_ms, compiled.images[0].time_ms);

  LocalEvaluator second(setup, options());
  std::vector<EvaluationResult> r =
      second.evaluate_code({{schedule, compiled.object, compiled.symbol, false},
                            {schedule, "not an object file", compiled.symbol, false},
                            {schedule, {}, {}, false}},
                           "train");
  ASSERT_TRUE(r[0].ok()) << r[0].reason;
  EXPECT_TRUE(r[0].object.empty());  // not asked for
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r[0].images[i].output_digest, compiled.images[i].output_digest);
  }
  EXPECT_EQ(r[0].error, 0);
  EXPECT_EQ(r[1].status, EvaluationStatus::CompileError);
  EXPECT_NE(r[1].reason.find("cannot load stored code"), std::string::npos) << r[1].reason;
  ASSERT_TRUE(r[2].ok()) << r[2].reason;
  EXPECT_EQ(r[2].images[0].output_digest, compiled.images[0].output_digest);
  EXPECT_EQ(second.children_started(), 1);
}

// Measuring a schedule again in the same process compiles nothing: the code and the compile
// time it took are kept (the nightly run's rounds, a front's test photos after its
// training ones).
TEST_F(LocalEvaluatorTest, ASecondMeasurementOfAScheduleReusesItsCode) {
  Measurement m(blur_setup());
  const std::string schedule = "bx.compute_at(out, y).vectorize(x, 8)\n";
  EvaluationResult first = m.measure(schedule, "train");
  EvaluationResult again = m.measure(schedule, "test");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_GT(first.compile_ms, 0);
  EXPECT_EQ(again.compile_ms, first.compile_ms);       // a compile would take its own time
  EXPECT_TRUE(first.images[0].output_digest.empty());  // digests only when asked
}

// min_timed_ms: a fast schedule is timed for at least that long per photo (its one timed
// run takes some 20 us on a 64x48 photo, so 10 ms is some 500 runs, under the cap of
// kMaxTimedRuns), and not without it.
TEST_F(LocalEvaluatorTest, AMinimumTimedTimeRunsAFastScheduleLonger) {
  EvaluationSetup setup = blur_setup();
  setup.runs = 1;
  const std::string schedule = "bx.compute_at(out, y).vectorize(x, 8)\n";
  auto seconds = [&](double min_timed_ms) {
    setup.min_timed_ms = min_timed_ms;
    Measurement m(setup);
    m.measure(schedule, "train");  // compiled here, so the next is timing alone
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(m.measure(schedule, "train").ok());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  EXPECT_GE(seconds(10), 0.02);  // 10 ms on each of the two photos
  EXPECT_LT(seconds(0), 0.015);
}

TEST_F(LocalEvaluatorTest, EveryFailureIsARecordedResultAndTheNextCandidateRuns) {
  LocalEvaluator ev(blur_setup(), options(/*deadline=*/3));
  struct Case {
    std::string schedule, status, reason_has;
    bool restarts;
  };
  std::vector<Case> cases = {
      {"bx.compute_at(out, nowhere)\n", "compile_error", "nowhere", false},
      {"# fault: segv\n", "crash", "SIGSEGV", true},
      {"# fault: abort\n", "crash", "SIGABRT", true},
      {"# fault: exit\n", "crash", "exited with status 3", true},
      {"# fault: sleep\n", "timeout", "deadline", true},
      {"# fault: garbage\n", "error", "garbage", true},
  };
  int children = 1;
  for (const Case& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<EvaluationResult> r = ev.evaluate({c.schedule, "bx.compute_root()\n"}, "train", 0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(to_string(r[0].status), c.status) << c.schedule << r[0].reason;
    // AddressSanitizer turns a SIGSEGV into its own report and an abort.
    if (!address_sanitizer_active() || c.reason_has != "SIGSEGV") {
      EXPECT_NE(r[0].reason.find(c.reason_has), std::string::npos) << r[0].reason;
    }
    EXPECT_TRUE(r[0].images.empty());
    EXPECT_TRUE(r[1].ok()) << c.schedule << ": the next candidate: " << r[1].reason;
    children += c.restarts ? 1 : 0;
    EXPECT_EQ(ev.children_started(), children) << c.schedule;
    EXPECT_LT(s, 30) << c.schedule;
  }
}

TEST_F(LocalEvaluatorTest, CpuTimeLimitStopsASpinningCandidate) {
  LocalEvaluatorOptions o = options(/*deadline=*/60);
  o.cpu_seconds = 1;  // the CPU limit, not the wall-clock deadline, must end it
  LocalEvaluator ev(blur_setup(), o);
  const auto t0 = std::chrono::steady_clock::now();
  EvaluationResult r = ev.evaluate({"# fault: spin\n"}, "train", 0)[0];
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, EvaluationStatus::Timeout) << r.reason;
  EXPECT_NE(r.reason.find("SIGXCPU"), std::string::npos) << r.reason;
  EXPECT_LT(s, 30);
}

TEST_F(LocalEvaluatorTest, AllocationsPastTheMemoryLimitAreOutOfMemory) {
  if (address_sanitizer_active())
    GTEST_SKIP() << "the address-space limit is off under AddressSanitizer";
  LocalEvaluatorOptions o = options();
  o.memory_limit_bytes = int64_t(2) << 30;
  LocalEvaluator ev(blur_setup(), o);
  // The candidate's own allocations (the test hook), and generated code whose buffer does
  // not fit: bx is read 5000 times further out than out's box.
  EvaluationResult hook = ev.evaluate({"# fault: allocate\n"}, "train", 0)[0];
  EXPECT_EQ(hook.status, EvaluationStatus::OutOfMemory) << hook.reason;

  EvaluationSetup huge = blur_setup();
  huge.pipeline_source = R"(pipeline huge
input in : f32[x, y, c]
func big(x, y, c) = in(x, y, c) * 2.0
func out(x, y, c) = big(x * 5000, y * 5000, c)
output out
)";
  // The reference (big inlined) fits; computing big at root does not.
  LocalEvaluator ev2(huge, o);
  EvaluationResult real =
      ev2.evaluate({"big.compute_root()\n", "big.compute_inline()\n"}, "train", 0)[0];
  EXPECT_EQ(real.status, EvaluationStatus::OutOfMemory) << real.reason;
}

// References past the memory limit: a func with an update is computed at root under the
// default schedule, over 1000x1000 times the photo (34 GiB of f32 for a 64x48 photo's three
// channels, over the 2 GiB limit; 9e9 points, under the work limit), so the reference's
// allocation fails. That is
// the setup's out_of_memory, as a candidate's would be, not an `error` (a bad setup).
TEST_F(LocalEvaluatorTest, ReferencesPastTheMemoryLimitAreOutOfMemory) {
  if (address_sanitizer_active())
    GTEST_SKIP() << "the address-space limit is off under AddressSanitizer";
  LocalEvaluatorOptions o = options();
  o.memory_limit_bytes = int64_t(2) << 30;
  EvaluationSetup huge = blur_setup();
  huge.pipeline_source = R"(pipeline hugeref
input in : f32[x, y, c]
func big(x, y, c) = in(x, y, c) * 2.0
big(x, y, c) += 1.0
func out(x, y, c) = big(x * 1000, y * 1000, c)
output out
)";
  try {
    LocalEvaluator ev(huge, o);
    ADD_FAILURE() << "the references were computed";
  } catch (const SetupFailed& e) {
    EXPECT_EQ(e.result.status, EvaluationStatus::OutOfMemory) << e.result.reason;
    EXPECT_NE(e.result.reason.find("reference"), std::string::npos) << e.result.reason;
  }
}

TEST_F(LocalEvaluatorTest, NanOutputsAreFailures) {
  EvaluationSetup s = blur_setup();
  s.pipeline_source = R"(pipeline nan
input in : f32[x, y, c]
func out(x, y, c) = sqrt(in(x, y, c) - 2.0)
output out
)";
  LocalEvaluator ev(s, options());
  EvaluationResult r = ev.evaluate({"out.vectorize(x, 8)\n"}, "train", 0)[0];
  EXPECT_EQ(r.status, EvaluationStatus::NaN);
}

TEST_F(LocalEvaluatorTest, GivingUpTimesASlowCandidateByOneRun) {
  EvaluationSetup s = blur_setup();
  s.runs = 1000;
  LocalEvaluator ev(s, options());
  // With a give-up time below any run, the photo is timed by its warm-up alone; without,
  // by 1000 more runs, which take far longer than the compile.
  auto timed = [&](double give_up_ms, EvaluationResult* r) {
    const auto t0 = std::chrono::steady_clock::now();
    *r = ev.evaluate({"bx.compute_inline()\n"}, "test", give_up_ms)[0];
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  EvaluationResult slow, full;
  const double full_s = timed(0, &full);
  const double slow_s = timed(1e-6, &slow);
  ASSERT_TRUE(slow.ok());
  ASSERT_TRUE(full.ok());
  EXPECT_LT(slow_s * 3, full_s) << slow_s << " s against " << full_s << " s";
  EXPECT_EQ(slow.error, full.error);
}

TEST_F(LocalEvaluatorTest, BadSetupIsBadInput) {
  EvaluationSetup s = blur_setup();
  s.pipeline_source = "pipeline broken\nfunc out(x) = \n";
  EXPECT_THROW(LocalEvaluator(s, options()), UserError);
  s = blur_setup();
  s.images["train"] = {"/nonexistent/photo.png"};
  EXPECT_THROW(LocalEvaluator(s, options()), UserError);
}

TEST_F(LocalEvaluatorTest, TheChildDiesWithTheEvaluator) {
  pid_t child = -1;
  {
    LocalEvaluator ev(blur_setup(), options());
    EXPECT_TRUE(ev.evaluate({"bx.compute_root()\n"}, "train", 0)[0].ok());
    // The child's process group is its pid; it exists now.
    child = ev.child_pid();
    EXPECT_EQ(kill(child, 0), 0);
  }
  EXPECT_NE(kill(child, 0), 0);  // reaped: no such process
}

// A child that died between jobs is found by the write of the next one: an error return
// (EPIPE), a fresh child, the candidate measured; and the process's SIGPIPE disposition is
// untouched (here the default, which would end this test were SIGPIPE to reach it).
TEST_F(LocalEvaluatorTest, AChildThatDiedBetweenJobsIsReplacedWithoutSigpipe) {
  struct sigaction before {};
  sigaction(SIGPIPE, nullptr, &before);
  ASSERT_EQ(before.sa_handler, SIG_DFL);
  LocalEvaluator ev(blur_setup(), options());
  EXPECT_TRUE(ev.evaluate({"bx.compute_root()\n"}, "train", 0)[0].ok());
  const pid_t first = ev.child_pid();
  ASSERT_EQ(kill(first, SIGKILL), 0);
  // Dead (a zombie until the evaluator reaps it): its end of the pipe is closed.
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(first) + "/stat");
    std::string pid, name, state;
    stat >> pid >> name >> state;
    if (state == "Z") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ev.evaluate({"bx.compute_at(out, y)\n"}, "train", 0)[0].ok());
  EXPECT_NE(ev.child_pid(), first);
  EXPECT_EQ(ev.children_started(), 2);
  struct sigaction after {};
  sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "a SIGPIPE left pending";
}

// A reference that would run for minutes (9.2e11 points, under the work limit that refuses
// bigger runs at once) is stopped at the deadline: SetupFailed, a timeout, not a wait of
// minutes for a child that never answers.
TEST_F(LocalEvaluatorTest, AHangingReferenceFailsTheSetupAtTheDeadline) {
  EvaluationSetup s = hanging_reference_setup();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    LocalEvaluator ev(s, options(/*deadline=*/2));
    ADD_FAILURE() << "the evaluator started";
  } catch (const SetupFailed& e) {
    EXPECT_EQ(e.result.status, EvaluationStatus::Timeout);
    EXPECT_NE(e.result.reason.find("reference outputs"), std::string::npos) << e.result.reason;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);
}

// The cancel flag, set from another thread, stops a candidate that would run to the
// deadline, and a reference computation the same way: the child is killed at once and
// EvaluationCancelled thrown; the next candidate runs in a fresh child.
TEST_F(LocalEvaluatorTest, TheCancelFlagStopsTheWorkInProgressAtOnce) {
  std::atomic<bool> cancel{false};
  LocalEvaluatorOptions o = options(/*deadline=*/60);
  o.cancel = &cancel;
  LocalEvaluator ev(blur_setup(), o);
  const pid_t child = ev.child_pid();
  ASSERT_GT(child, 0);
  std::chrono::steady_clock::time_point cancelled_at;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the sleep
    cancelled_at = std::chrono::steady_clock::now();
    cancel = true;
  });
  EXPECT_THROW(ev.evaluate({"# fault: sleep\n"}, "train", 0), EvaluationCancelled);
  const double stopped_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count();
  canceller.join();
  EXPECT_LT(stopped_after, 0.5);
  EXPECT_EQ(ev.child_pid(), -1);
  EXPECT_NE(kill(child, 0), 0) << "the child was not killed and reaped";
  cancel = false;
  EXPECT_TRUE(ev.evaluate({"bx.compute_root()\n"}, "train", 0)[0].ok());
  EXPECT_EQ(ev.children_started(), 2);

  // While computing a reference that would run for minutes: the constructor throws.
  EvaluationSetup hang = hanging_reference_setup();
  std::thread again([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    cancelled_at = std::chrono::steady_clock::now();
    cancel = true;
  });
  EXPECT_THROW(LocalEvaluator(hang, o), EvaluationCancelled);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count(),
            0.5);
  again.join();
}

// The child dies with the thread that started it (PR_SET_PDEATHSIG): here a thread that
// ends while the evaluator it made lives on; for a worker killed outright, the same.
TEST_F(LocalEvaluatorTest, TheChildDiesWithItsParent) {
  std::unique_ptr<LocalEvaluator> ev;
  std::thread([&] { ev = std::make_unique<LocalEvaluator>(blur_setup(), options()); }).join();
  const pid_t child = ev->child_pid();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto zombie = [&] {
    std::ifstream in("/proc/" + std::to_string(child) + "/stat");
    std::stringstream stat;
    stat << in.rdbuf();
    const std::string text = stat.str();
    const size_t close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
  };
  while (!zombie() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(zombie()) << "the child outlived the thread that started it";
}

}  // namespace
}  // namespace stipple::workers
