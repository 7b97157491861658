// The worker daemon (workers/worker_daemon.h) against the real coordinator service on a
// loopback gRPC server in this process, with the real evaluator child: jobs submitted to
// the pool come back measured as a LocalEvaluator measures them, photos land in the cache
// by hash (and a corrupted one is fetched again), a worker started before its coordinator
// connects when it comes up, a restarted coordinator that forgot the worker gets it
// registered again (and its result of a job in flight across the restart accepted), a
// crashing candidate is a reported failure, stopping finishes the job in hand, two slots
// compile a batch at once and time one job at a time, the cache stays under its limit,
// and a wrong token ends the daemon with exit code 2. Every wait is bounded.
#include "workers/worker_daemon.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <set>
#include <thread>

#include "compiler_core/support/content_hash.h"
#include "search/coordinator/coordinator_service.h"
#include "search/coordinator/remote_evaluator.h"
#include "search/coordinator/worker_pool.h"
#include "tests/workers/evaluator_trace.h"
#include "workers/host_capabilities.h"

namespace stipple::workers {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
// The real coordinator's pool, which the daemon under test leases from.
using coordinator::AwaitReply;
using coordinator::AwaitStatus;
using coordinator::JobResult;
using coordinator::PoolJob;
using coordinator::PoolSnapshot;
using coordinator::WorkerInfo;
using coordinator::WorkerPool;
using coordinator::WorkerPoolOptions;

const std::string kSource = STIPPLE_SOURCE_DIR;
const std::string kToken = "worker-test-token";
const std::string kPhoto = kSource + "/datasets/fixtures/natural-high-64x48.png";
const std::string kExact = "A.compute_root().vectorize(x, 8)\n";
const std::string kPerforated = "A.compute_root().perforate(grid(2, 1))\n";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const HostCapabilities& host() {
  static const HostCapabilities c = detect_host_capabilities();
  return c;
}

EvaluationSetup blur_setup() {
  EvaluationSetup s;
  s.pipeline_file = kSource + "/datasets/pipelines/two_pass_blur.stp";
  s.pipeline_source = read_file(s.pipeline_file);
  s.images["train"] = {kPhoto};
  s.runs = 1;
  s.threads = 1;
  return s;
}

LocalEvaluatorOptions evaluator_options() {
  LocalEvaluatorOptions o;
  o.server_binary = STIPPLE_EVALUATOR;
  o.deadline_seconds = 30;
  o.memory_limit_bytes = int64_t(4) << 30;
  return o;
}

// A port no one listens on now (the kernel's next ephemeral one, released again).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A coordinator as the real one is built: the worker pool and the service on a server.
struct Coordinator {
  explicit Coordinator(int port = 0) {
    WorkerPoolOptions po;
    po.lease_duration = 30s;
    po.heartbeat_timeout = 6s;  // heartbeats every 2 s
    pool = std::make_unique<WorkerPool>(po);
    coordinator::CoordinatorServiceOptions so;
    so.token = kToken;
    so.pool = po;
    so.max_lease_wait = 1s;
    service = std::make_unique<coordinator::CoordinatorService>(*pool, so);
    setup_id = service->add_setup(blur_setup());
    service->bind_run("1", setup_id);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                             &this->port);
    coordinator::configure_server(builder);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
  }
  ~Coordinator() {
    pool->shut_down();  // wakes the long polls
    if (server) server->Shutdown(std::chrono::system_clock::now() + 2s);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  /// Submits the schedules as jobs of run 1 for this host's target; returns their ids.
  std::vector<std::string> submit(const std::vector<std::string>& schedules) {
    std::vector<PoolJob> jobs;
    for (const std::string& s : schedules) {
      PoolJob j;
      j.id = coordinator::RemoteEvaluator::job_id(1, setup_id, "train", s);
      j.target = host().target;
      j.split = "train";
      j.schedule = s;
      jobs.push_back(j);
    }
    pool->submit("1", jobs);
    std::vector<std::string> ids;
    for (const PoolJob& j : jobs) ids.push_back(j.id);
    return ids;
  }

  std::unique_ptr<WorkerPool> pool;
  std::unique_ptr<coordinator::CoordinatorService> service;
  std::unique_ptr<grpc::Server> server;
  std::string setup_id;
  int port = 0;
};

// A daemon on its own thread; stopped (SIGTERM's path: the flag) and joined when it goes
// out of scope, within a bound.
class RunningDaemon {
 public:
  explicit RunningDaemon(WorkerDaemonOptions options) : daemon_(std::move(options)) {
    std::packaged_task<int()> task([this] { return daemon_.run(stop_); });
    exit_code_ = task.get_future();
    thread_ = std::thread(std::move(task));
  }
  ~RunningDaemon() { stop(); }
  /// run()'s exit code once it returns by itself within `timeout`; -1 if it did not.
  int wait(std::chrono::seconds timeout) {
    if (exit_code_.wait_for(timeout) != std::future_status::ready) return -1;
    join();
    return code_ = exit_code_.get();
  }
  /// Sets the stop flag; returns run()'s exit code (it must come within 15 s).
  int stop() {
    if (!thread_.joinable()) return code_;
    stop_ = true;
    if (exit_code_.wait_for(15s) != std::future_status::ready) {
      std::fprintf(stderr, "the worker daemon did not stop within 15 s\n");
      std::_Exit(1);  // a hung test must not hang the suite
    }
    join();
    return code_ = exit_code_.get();
  }
  int64_t jobs_reported() const { return daemon_.jobs_reported(); }

 private:
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  WorkerDaemon daemon_;
  std::atomic<bool> stop_{false};
  std::future<int> exit_code_;
  std::thread thread_;
  int code_ = -1;
};

class WorkerDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("stipple-worker-test-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cache_);
  }
  void TearDown() override { fs::remove_all(cache_); }

  WorkerDaemonOptions options(const std::string& address, const std::string& token = kToken) {
    WorkerDaemonOptions o;
    o.coordinator = address;
    o.security.token = token;
    o.cache_dir = cache_.string();
    o.evaluator = evaluator_options();
    o.capabilities = host();
    o.backoff_initial = 50ms;
    o.backoff_max = 500ms;
    o.lease_wait_seconds = 1;
    o.call_seconds = 5;
    return o;
  }

  /// The results of `ids`, awaited for at most `timeout`.
  static std::vector<JobResult> await(Coordinator& c, const std::vector<std::string>& ids,
                                      std::chrono::seconds timeout = 30s) {
    AwaitReply reply = c.pool->await(ids, nullptr, timeout);
    EXPECT_EQ(reply.status, AwaitStatus::Complete) << to_string(reply.status);
    std::vector<JobResult> out;
    for (auto& r : reply.results) {
      if (r) out.push_back(*r);
    }
    return out;
  }

  fs::path cache_;
};

// What the worker reports is what a LocalEvaluator on the same setup measures: the same
// status and error (deterministic; times are not), recorded with the worker's host.
TEST_F(WorkerDaemonTest, ReportsWhatALocalEvaluatorMeasures) {
  Coordinator c;
  ASSERT_TRUE(c.server);
  const std::vector<std::string> schedules = {kExact, kPerforated};
  const std::vector<std::string> ids = c.submit(schedules);
  RunningDaemon daemon(options(c.address()));
  const std::vector<JobResult> got = await(c, ids);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_EQ(daemon.jobs_reported(), 2);

  LocalEvaluator local(blur_setup(), evaluator_options());
  EXPECT_EQ(local.target(), host().target);
  const std::vector<EvaluationResult> want = local.evaluate(schedules, "train", 0);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(schedules[i]);
    ASSERT_TRUE(want[i].ok()) << want[i].reason;
    EXPECT_EQ(got[i].result.status, EvaluationStatus::Ok) << got[i].result.reason;
    ASSERT_EQ(got[i].result.images.size(), 1u);
    EXPECT_EQ(got[i].result.error, want[i].error);
    EXPECT_EQ(got[i].result.images[0].error, want[i].images[0].error);
    EXPECT_GT(got[i].result.time_ms, 0);
    EXPECT_EQ(got[i].host, host().host);
    EXPECT_EQ(got[i].host, local.host());
  }
  EXPECT_EQ(got[0].result.error, 0);  // exact
  EXPECT_GT(got[1].result.error, 0);  // perforated
}

// Photos are cached as CACHE/images/<sha256> with their bytes; a second worker over the
// same cache finds a corrupted file, fetches the photo again and measures correctly.
TEST_F(WorkerDaemonTest, CachesPhotosByHashAndRefetchesACorruptedOne) {
  Coordinator c;
  ASSERT_TRUE(c.server);
  const std::string bytes = read_file(kPhoto);
  const fs::path cached = cache_ / "images" / sha256_hex(bytes);
  {
    RunningDaemon daemon(options(c.address()));
    ASSERT_EQ(await(c, c.submit({kExact})).size(), 1u);
    EXPECT_EQ(daemon.stop(), 0);
  }
  ASSERT_TRUE(fs::is_regular_file(cached));
  EXPECT_EQ(read_file(cached.string()), bytes);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(cache_ / "images")) ++files;
  EXPECT_EQ(files, 1);  // no temporary file left behind

  // Same size, other bytes: only the hash can tell.
  std::string corrupted = bytes;
  corrupted[corrupted.size() / 2] ^= 0x5a;
  std::ofstream(cached, std::ios::binary | std::ios::trunc) << corrupted;
  ASSERT_NE(read_file(cached.string()), bytes);

  RunningDaemon daemon(options(c.address()));
  const std::vector<JobResult> got = await(c, c.submit({kPerforated}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_EQ(got[0].result.status, EvaluationStatus::Ok) << got[0].result.reason;
  EXPECT_GT(got[0].result.error, 0);
  EXPECT_EQ(read_file(cached.string()), bytes);
}

// A worker started while no coordinator listens keeps retrying; when the coordinator comes
// up on that port it registers and completes a job within a bounded time.
TEST_F(WorkerDaemonTest, ConnectsToACoordinatorThatComesUpLater) {
  const int port = free_port();
  RunningDaemon daemon(options("127.0.0.1:" + std::to_string(port)));
  std::this_thread::sleep_for(1500ms);  // a few failed attempts
  Coordinator c(port);
  ASSERT_TRUE(c.server) << "port " << port << " was taken meanwhile";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<JobResult> got = await(c, c.submit({kExact}), 20s);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].result.status, EvaluationStatus::Ok) << got[0].result.reason;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(daemon.stop(), 0);
}

// A coordinator restarted on the same port has a new pool that never heard of the worker:
// the lease answers NOT_FOUND, and the worker registers again and goes on.
TEST_F(WorkerDaemonTest, RegistersAgainWithARestartedCoordinator) {
  auto first = std::make_unique<Coordinator>();
  ASSERT_TRUE(first->server);
  const int port = first->port;
  RunningDaemon daemon(options(first->address()));
  ASSERT_EQ(await(*first, first->submit({kExact})).size(), 1u);
  first.reset();

  Coordinator second(port);
  ASSERT_TRUE(second.server);
  const std::vector<JobResult> got = await(second, second.submit({kPerforated}), 20s);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].result.status, EvaluationStatus::Ok) << got[0].result.reason;
  EXPECT_EQ(second.pool->snapshot().workers.size(), 1u);
  EXPECT_EQ(daemon.stop(), 0);
}

// A job in measurement when its coordinator restarts: the restarted coordinator's resumed
// run submits it again (the same job id), and the worker's result, reported under a new
// registration, completes it without a second measurement. Here the candidate hangs until
// its 3 s deadline, so the restart happens while it is measured, and its result is that
// timeout.
TEST_F(WorkerDaemonTest, AJobInFlightAcrossACoordinatorRestartIsNotMeasuredAgain) {
  setenv("STIPPLE_EVALUATOR_TEST_FAULTS", "1", 1);
  auto first = std::make_unique<Coordinator>();
  ASSERT_TRUE(first->server);
  const int port = first->port;
  WorkerDaemonOptions o = options(first->address());
  o.evaluator.deadline_seconds = 3;
  RunningDaemon daemon(std::move(o));
  const std::string hanging = "# fault: sleep\n" + kExact;
  const std::vector<std::string> ids = first->submit({hanging});
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (first->pool->snapshot().counters.leased == 0 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(first->pool->snapshot().counters.leased, 1);
  first.reset();

  Coordinator second(port);
  ASSERT_TRUE(second.server);
  ASSERT_EQ(second.submit({hanging}), ids);  // the resumed run's job: the same id
  const std::vector<JobResult> got = await(second, ids, 20s);
  unsetenv("STIPPLE_EVALUATOR_TEST_FAULTS");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].result.status, EvaluationStatus::Timeout) << got[0].result.reason;
  const PoolSnapshot snapshot = second.pool->snapshot();
  ASSERT_EQ(snapshot.workers.size(), 1u);
  EXPECT_EQ(got[0].worker_id, snapshot.workers[0].id);
  EXPECT_EQ(snapshot.counters.redispatched, 0);
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_EQ(daemon.jobs_reported(), 1);  // measured once, reported once
}

// A candidate that crashes the evaluator child is a reported failure; the worker goes on
// and measures the next one.
TEST_F(WorkerDaemonTest, ReportsACrashingCandidateAndGoesOn) {
  setenv("STIPPLE_EVALUATOR_TEST_FAULTS", "1", 1);
  Coordinator c;
  ASSERT_TRUE(c.server);
  RunningDaemon daemon(options(c.address()));
  const std::vector<JobResult> got = await(c, c.submit({"# fault: segv\n" + kExact, kPerforated}));
  unsetenv("STIPPLE_EVALUATOR_TEST_FAULTS");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].result.status, EvaluationStatus::Crash) << got[0].result.reason;
  EXPECT_EQ(got[1].result.status, EvaluationStatus::Ok) << got[1].result.reason;
  EXPECT_EQ(daemon.stop(), 0);
}

// Two slots: the worker leases two jobs at once, measures them in two children that share
// the host's benchmark lock, and by the children's trace never times two at once nor
// times while the other compiles. Reference outputs land in CACHE/references, once.
TEST_F(WorkerDaemonTest, CompilesABatchAtOnceAndTimesOneJobAtATime) {
  Coordinator c;
  ASSERT_TRUE(c.server);
  const std::string trace = (cache_ / "trace").string();
  fs::create_directories(cache_);
  setenv("STIPPLE_EVALUATOR_TRACE", trace.c_str(), 1);
  const std::vector<std::string> schedules = {kExact,
                                              kPerforated,
                                              "A.compute_root()\n",
                                              "A.compute_root().vectorize(x, 4)\n",
                                              "A.compute_root().perforate(grid(1, 2))\n",
                                              "A.compute_root().perforate(grid(2, 2))\n"};
  const std::vector<std::string> ids = c.submit(schedules);
  WorkerDaemonOptions o = options(c.address());
  o.compile_jobs = 2;
  o.evaluator.benchmark_lock = (cache_ / "benchmark.lock").string();
  int most_leased = 0;
  {
    RunningDaemon daemon(o);
    std::future<std::vector<JobResult>> got =
        std::async(std::launch::async, [&] { return await(c, ids); });
    while (got.wait_for(5ms) != std::future_status::ready) {
      for (const WorkerInfo& w : c.pool->snapshot().workers) {
        most_leased = std::max(most_leased, w.leases);
      }
    }
    const std::vector<JobResult> results = got.get();
    ASSERT_EQ(results.size(), schedules.size());
    for (const JobResult& r : results)
      EXPECT_EQ(r.result.status, EvaluationStatus::Ok) << r.result.reason;
    EXPECT_EQ(daemon.stop(), 0);
  }
  unsetenv("STIPPLE_EVALUATOR_TRACE");
  EXPECT_EQ(most_leased, 2);

  const std::vector<TraceRecord> records = read_evaluator_trace(trace);
  ASSERT_EQ(records.size(), schedules.size());
  std::set<long> pids;
  for (const TraceRecord& r : records) pids.insert(r.pid);
  EXPECT_EQ(pids.size(), 2u);  // one child per slot
  for (const TraceRecord& r : records) {
    for (const TraceRecord& q : records) {
      if (q.pid == r.pid) continue;
      EXPECT_FALSE(intervals_overlap(r.timing_start, r.timing_end, q.timing_start, q.timing_end));
      EXPECT_FALSE(intervals_overlap(r.timing_start, r.timing_end, q.compile_start, q.compile_end));
    }
  }

  // The reference output of the one photo, cached once, whichever slot computed it first.
  const fs::path references = cache_ / "references";
  ASSERT_TRUE(fs::is_directory(references));
  std::set<std::string> entries;
  for (const auto& e : fs::directory_iterator(references)) entries.insert(e.path().filename());
  EXPECT_EQ(entries.size(), 1u) << "one photo, one setup";
}

// A cache limit of zero: what a batch fetched or computed is removed once it is done, and
// the next job fetches the photo again and measures the same.
TEST_F(WorkerDaemonTest, TheCacheIsKeptUnderItsLimit) {
  Coordinator c;
  ASSERT_TRUE(c.server);
  WorkerDaemonOptions o = options(c.address());
  o.cache_max_bytes = 0;
  o.compile_jobs = 1;
  o.max_evaluators = 1;
  RunningDaemon daemon(o);
  const std::vector<JobResult> first = await(c, c.submit({kPerforated}));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(daemon.stop(), 0);
  auto files = [&](const char* folder) {
    int n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(cache_ / folder, ec), end; !ec && it != end; it.increment(ec)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(files("images"), 0);
  EXPECT_EQ(files("references"), 0);
  RunningDaemon again(o);
  const std::vector<JobResult> second = await(c, c.submit({kExact}));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].result.status, EvaluationStatus::Ok) << second[0].result.reason;
  EXPECT_EQ(second[0].result.error, 0);
  EXPECT_GT(first[0].result.error, 0);
  EXPECT_EQ(again.stop(), 0);
  EXPECT_EQ(files("images"), 0);
}

// Stopping (SIGTERM's flag) while a job is measured: the worker leases nothing more but
// finishes the job in hand (here a hanging candidate, killed at its 2 s deadline) and
// reports it before run() returns 0.
TEST_F(WorkerDaemonTest, StopFinishesAndReportsTheJobInHand) {
  setenv("STIPPLE_EVALUATOR_TEST_FAULTS", "1", 1);
  Coordinator c;
  ASSERT_TRUE(c.server);
  WorkerDaemonOptions o = options(c.address());
  o.evaluator.deadline_seconds = 2;
  RunningDaemon daemon(std::move(o));
  const std::vector<std::string> ids = c.submit({"# fault: sleep\n" + kExact});
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (c.pool->snapshot().counters.leased == 0 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(c.pool->snapshot().counters.leased, 1);
  c.submit({kPerforated});  // queued behind the stop: never leased
  EXPECT_EQ(daemon.stop(), 0);
  unsetenv("STIPPLE_EVALUATOR_TEST_FAULTS");
  EXPECT_EQ(daemon.jobs_reported(), 1);
  AwaitReply reply = c.pool->await(ids, nullptr, 0s);
  ASSERT_EQ(reply.status, AwaitStatus::Complete);
  EXPECT_EQ(reply.results[0]->result.status, EvaluationStatus::Timeout)
      << reply.results[0]->result.reason;
  EXPECT_EQ(c.pool->snapshot().counters.queued, 1);
}

// A token the coordinator refuses is bad input: run() returns 2 instead of retrying.
TEST_F(WorkerDaemonTest, WrongTokenExitsWithCode2) {
  Coordinator c;
  ASSERT_TRUE(c.server);
  RunningDaemon daemon(options(c.address(), "not-the-token"));
  EXPECT_EQ(daemon.wait(10s), kWorkerBadInput);
  EXPECT_TRUE(c.pool->snapshot().workers.empty());
}

}  // namespace
}  // namespace stipple::workers
