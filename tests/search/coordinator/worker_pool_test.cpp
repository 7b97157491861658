// The coordinator's worker pool. With a fake clock, deterministically: jobs go only to
// workers of their target; an expired lease is re-dispatched to another worker and
// counted; a heartbeat renews leases; a worker lost by heartbeat timeout has its jobs
// queued again; reports are idempotent (duplicate, late after a re-dispatch where the
// first wins, unknown job, unknown worker, a worker that never held the job); runs share
// a worker round-robin; completed ids are not queued again; cancel and release; jobs of one
// key in several runs measured once, a follower queued when its leader is cancelled or
// released; a worker gone ends its leases at once; jobs kept for a host go only to its
// workers, with their code requests and results. Then many
// threads leasing, dying and reporting while two runs await: every job ends with exactly
// one stored result.
#include "search/coordinator/worker_pool.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <thread>

#include "tests/search/coordinator/pool_waits.h"

namespace stipple::coordinator {
namespace {

using namespace std::chrono_literals;
using workers::EvaluationResult;
using TimePoint = std::chrono::steady_clock::time_point;

const char* kX86 = "x86_64-znver4-1a2b3c4d";
const char* kArm = "aarch64-neoverse-n1-5e6f7a8b";

/// Pool time that moves only when told to; thread-safe so a driver thread can move it.
struct FakeClock {
  std::atomic<int64_t> ms{1'000'000};
  TimePoint now() const { return TimePoint(std::chrono::milliseconds(ms.load())); }
  void advance(std::chrono::milliseconds d) { ms += d.count(); }
  PoolClock fn() {
    return [this] { return now(); };
  }
};

HostCapabilities caps(const std::string& host, const std::string& target) {
  HostCapabilities c;
  c.host = host;
  c.arch = target.substr(0, target.find('-'));
  c.isa_features = {"avx2", "avx512f"};
  c.cores = 2;
  c.l2_bytes = 1 << 20;
  c.llc_bytes = 32 << 20;
  c.target = target;
  return c;
}

std::vector<PoolJob> jobs(const std::string& prefix, int n, const std::string& target = kX86) {
  std::vector<PoolJob> v;
  for (int i = 0; i < n; ++i)
    v.push_back({prefix + std::to_string(i),
                 "",
                 target,
                 "train",
                 "out.vectorize(x, 8)\n",
                 250,
                 "",
                 "",
                 {}});
  return v;
}

EvaluationResult result(double time_ms, const std::string& reason = "") {
  EvaluationResult r;
  r.time_ms = time_ms;
  r.reason = reason;
  return r;
}

std::vector<std::string> ids(const LeaseReply& reply) {
  std::vector<std::string> v;
  for (const Lease& l : reply.leases) v.push_back(l.job.id);
  return v;
}

WorkerPoolOptions options(std::chrono::milliseconds lease, std::chrono::milliseconds heartbeat) {
  WorkerPoolOptions o;
  o.lease_duration = lease;
  o.heartbeat_timeout = heartbeat;
  return o;
}

TEST(WorkerPool, RegistrationGivesFreshIdsEvenForTheSameHost) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string a = pool.register_worker(caps("hostA", kX86));
  std::string b = pool.register_worker(caps("hostA", kX86));  // restarted, or a second process
  EXPECT_EQ(a, "w1");
  EXPECT_EQ(b, "w2");
  PoolSnapshot s = pool.snapshot();
  ASSERT_EQ(s.workers.size(), 2u);
  EXPECT_EQ(s.workers[0].capabilities.host, "hostA");
  EXPECT_EQ(s.workers[0].capabilities.target, kX86);
  EXPECT_EQ(s.workers[0].capabilities.llc_bytes, 32 << 20);
  EXPECT_FALSE(s.workers[0].busy());
  EXPECT_FALSE(s.workers[0].lost);
  EXPECT_EQ(s.workers[0].last_heard, clock.now());
  EXPECT_FALSE(pool.heartbeat("w9"));
  EXPECT_TRUE(pool.lease("w9", 1).unknown_worker);
}

TEST(WorkerPool, JobsGoOnlyToWorkersOfTheirTarget) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string arm = pool.register_worker(caps("pi", kArm));
  pool.submit("r1", jobs("x", 3, kX86));

  // The only worker polling is of another target: it waits and gets nothing.
  auto start = std::chrono::steady_clock::now();
  LeaseReply none = pool.lease(arm, 5, 30ms);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  EXPECT_FALSE(none.unknown_worker);
  EXPECT_TRUE(none.leases.empty());
  EXPECT_EQ(pool.snapshot().counters.queued, 3);

  pool.submit("r2", jobs("a", 2, kArm));
  std::string x86 = pool.register_worker(caps("zen", kX86));
  EXPECT_EQ(ids(pool.lease(x86, 10)), (std::vector<std::string>{"x0", "x1", "x2"}));
  EXPECT_EQ(ids(pool.lease(arm, 10)), (std::vector<std::string>{"a0", "a1"}));
  EXPECT_TRUE(pool.lease(x86, 10).leases.empty());
  PoolCounters c = pool.snapshot().counters;
  EXPECT_EQ(c.queued, 0);
  EXPECT_EQ(c.leased, 5);
}

TEST(WorkerPool, JobsKeptForAHostGoOnlyToItsWorkersAndCarryTheirCodeResults) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  const std::string alpha = pool.register_worker(caps("alpha", kX86));
  const std::string beta = pool.register_worker(caps("beta", kX86));
  std::vector<PoolJob> kept = jobs("k", 2);
  for (PoolJob& j : kept) {
    j.host = "beta";
    j.code = {{"out.vectorize(x, 8)\n", "", "", true, 0},
              {"",
               "\x7f"
               "ELF",
               "f", false, 0}};
  }
  pool.submit("night", kept);
  pool.submit("run", jobs("any", 1));

  // alpha gets the target's job but none kept for beta, waiting for them in vain.
  EXPECT_EQ(ids(pool.lease(alpha, 5, 20ms)), (std::vector<std::string>{"any0"}));
  EXPECT_TRUE(pool.lease(alpha, 5, 20ms).leases.empty());
  // Not leased, and of another host: its result of a "forgotten" lease is not taken.
  EXPECT_EQ(pool.report(alpha, "k0", result(1.0), /*forgotten_lease=*/true),
            ReportOutcome::NotLeased);
  const LeaseReply to_beta = pool.lease(beta, 5);
  ASSERT_EQ(ids(to_beta), (std::vector<std::string>{"k0", "k1"}));
  ASSERT_EQ(to_beta.leases[0].job.code.size(), 2u);
  EXPECT_EQ(to_beta.leases[0].job.code[1].symbol, "f");
  EXPECT_TRUE(to_beta.leases[0].job.code[0].keep_code);

  EvaluationResult now = result(2.0), before = result(3.0);
  now.object = "code";
  // Parts that do not match the requests (one short, or any for a schedule's job) are
  // not taken.
  EXPECT_EQ(pool.report(beta, "k0", EvaluationResult{}, false, {now}), ReportOutcome::Mismatched);
  EXPECT_EQ(pool.report(alpha, "any0", result(1.0), false, {now}), ReportOutcome::Mismatched);
  EXPECT_EQ(pool.report(alpha, "any0", result(1.0)), ReportOutcome::Accepted);
  EXPECT_EQ(pool.report(beta, "k0", EvaluationResult{}, false, {now, before}),
            ReportOutcome::Accepted);
  EXPECT_EQ(pool.report(beta, "k1", EvaluationResult{}, false, {before, now}),
            ReportOutcome::Accepted);
  AwaitReply got = pool.await({"k0", "k1"}, nullptr, 0s);
  ASSERT_EQ(got.status, AwaitStatus::Complete);
  ASSERT_EQ(got.results[0]->code_results.size(), 2u);
  EXPECT_EQ(got.results[0]->code_results[0].time_ms, 2.0);
  EXPECT_EQ(got.results[0]->code_results[0].object, "code");
  EXPECT_EQ(got.results[1]->code_results[0].time_ms, 3.0);
  EXPECT_EQ(got.results[1]->host, "beta");
}

TEST(WorkerPool, AnExpiredLeaseIsRedispatchedToAnotherWorkerAndCounted) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  pool.submit("r", jobs("j", 1));

  LeaseReply first = pool.lease(w1, 1);
  ASSERT_EQ(ids(first), (std::vector<std::string>{"j0"}));
  EXPECT_EQ(first.leases[0].deadline, clock.now() + 10s);
  EXPECT_EQ(first.leases[0].job.run_id, "r");
  EXPECT_EQ(first.leases[0].job.schedule, "out.vectorize(x, 8)\n");
  EXPECT_EQ(first.leases[0].job.give_up_ms, 250);

  clock.advance(9999ms);
  EXPECT_TRUE(pool.lease(w2, 1).leases.empty());  // still w1's
  EXPECT_EQ(pool.expire_leases(), 0);
  clock.advance(1ms);
  LeaseReply second = pool.lease(w2, 1);  // lazily expired inside lease()
  ASSERT_EQ(ids(second), (std::vector<std::string>{"j0"}));
  EXPECT_EQ(second.leases[0].deadline, clock.now() + 10s);

  PoolSnapshot s = pool.snapshot();
  EXPECT_EQ(s.counters.redispatched, 1);
  EXPECT_EQ(s.counters.leased, 1);
  EXPECT_EQ(s.counters.queued, 0);
  EXPECT_FALSE(info(s, w1).busy());
  EXPECT_TRUE(info(s, w2).busy());
  EXPECT_EQ(pool.run_counters("r").redispatched, 1);

  // expire_leases() alone re-queues, at the front of its run's queue.
  pool.submit("r", jobs("k", 1));
  clock.advance(10s);
  EXPECT_EQ(pool.expire_leases(), 1);
  EXPECT_EQ(ids(pool.lease(w1, 2)), (std::vector<std::string>{"j0", "k0"}));
  EXPECT_EQ(pool.snapshot().counters.redispatched, 2);
}

TEST(WorkerPool, GivenBackJobsAreQueuedAgainAtOnce) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  pool.submit("r", jobs("j", 3));
  ASSERT_EQ(ids(pool.lease(w1, 2)), (std::vector<std::string>{"j0", "j1"}));
  ASSERT_EQ(ids(pool.lease(w2, 1)), (std::vector<std::string>{"j2"}));
  // Only the giver's leases end: j2 is w2's and "nope" does not exist.
  EXPECT_EQ(pool.give_back(w1, {"j1", "j2", "nope"}), 1);
  EXPECT_EQ(ids(pool.lease(w2, 3)), (std::vector<std::string>{"j1"}));  // no clock moved
  EXPECT_EQ(pool.give_back(w1, {"j1"}), 0);                             // w2 holds it now
  PoolSnapshot s = pool.snapshot();
  EXPECT_EQ(info(s, w1).leases, 1);
  EXPECT_EQ(info(s, w2).leases, 2);
  EXPECT_EQ(s.counters.redispatched, 1);
  EXPECT_EQ(pool.report(w2, "j1", result(1)), ReportOutcome::Accepted);
}

TEST(WorkerPool, AHeartbeatRenewsTheWorkersLeases) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  pool.submit("r", jobs("j", 2));
  ASSERT_EQ(pool.lease(w1, 2).leases.size(), 2u);

  clock.advance(6s);
  EXPECT_TRUE(pool.heartbeat(w1));  // deadlines now t+16
  clock.advance(6s);                // t+12: past the first deadline, within the renewed one
  EXPECT_TRUE(pool.lease(w2, 2).leases.empty());
  EXPECT_EQ(pool.snapshot().counters.redispatched, 0);
  EXPECT_EQ(info(pool.snapshot(), w1).leases, 2);

  clock.advance(4s);  // t+16: the renewed deadline
  // A heartbeat after the deadline does not bring the leases back.
  EXPECT_TRUE(pool.heartbeat(w1));
  EXPECT_EQ(ids(pool.lease(w2, 2)), (std::vector<std::string>{"j0", "j1"}));
  EXPECT_EQ(pool.snapshot().counters.redispatched, 2);
}

TEST(WorkerPool, ALostWorkersJobsAreQueuedAgainInOrder) {
  FakeClock clock;
  WorkerPool pool(options(600s, 5s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  pool.submit("r", jobs("j", 3));
  ASSERT_EQ(ids(pool.lease(w1, 2)), (std::vector<std::string>{"j0", "j1"}));

  clock.advance(3s);
  pool.heartbeat(w2);
  clock.advance(2s);  // w1 silent for 5 s, w2 for 2 s
  EXPECT_EQ(pool.expire_leases(), 2);
  PoolSnapshot s = pool.snapshot();
  EXPECT_TRUE(info(s, w1).lost);
  EXPECT_EQ(info(s, w1).leases, 0);
  EXPECT_FALSE(info(s, w2).lost);
  EXPECT_EQ(s.counters.queued, 3);
  EXPECT_EQ(s.counters.redispatched, 2);
  // Back at the front of the queue, in their order.
  EXPECT_EQ(ids(pool.lease(w2, 3)), (std::vector<std::string>{"j0", "j1", "j2"}));

  // Heard from again, it is no longer lost, but the leases it lost stay lost.
  EXPECT_TRUE(pool.heartbeat(w1));
  s = pool.snapshot();
  EXPECT_FALSE(info(s, w1).lost);
  EXPECT_EQ(info(s, w1).leases, 0);
  EXPECT_EQ(info(s, w2).leases, 3);
}

TEST(WorkerPool, AWorkerBlockedInLeaseIsNotLost) {
  FakeClock clock;
  WorkerPool pool(options(10s, 5s), clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  std::atomic<bool> done{false};
  std::thread poller([&] {
    pool.lease(w, 1, 2s);
    done = true;
  });
  wait_until_polling(pool, w);
  clock.advance(60s);
  pool.expire_leases();
  EXPECT_FALSE(pool.snapshot().workers[0].lost);
  pool.submit("r", jobs("j", 1));  // wakes it
  poller.join();
  EXPECT_TRUE(done);
  EXPECT_EQ(info(pool.snapshot(), w).leases, 1);
}

// After a coordinator restart a worker reports, under its new id, a job a previous
// coordinator leased it: accepted from a worker of the job's target (queued or leased to
// another worker, whose copy becomes the duplicate), never from another target's.
TEST(WorkerPool, AForgottenLeasesResultIsTakenFromAWorkerOfTheJobsTarget) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string x86 = pool.register_worker(caps("zen", kX86));
  std::string other = pool.register_worker(caps("zen2", kX86));
  std::string arm = pool.register_worker(caps("pi", kArm));
  pool.submit("r", jobs("j", 2));
  EXPECT_EQ(pool.report(x86, "j0", result(1.0)), ReportOutcome::NotLeased);
  EXPECT_EQ(pool.report(arm, "j0", result(1.0), /*forgotten_lease=*/true),
            ReportOutcome::NotLeased);
  EXPECT_EQ(pool.report(x86, "j0", result(1.0, "from before"), true), ReportOutcome::Accepted);
  EXPECT_EQ(pool.snapshot().counters.queued, 1);  // j0 left the queue
  ASSERT_EQ(ids(pool.lease(other, 1)), (std::vector<std::string>{"j1"}));
  EXPECT_EQ(pool.report(x86, "j1", result(2.0, "from before"), true), ReportOutcome::Accepted);
  EXPECT_EQ(pool.report(other, "j1", result(3.0, "leased now")), ReportOutcome::Duplicate);
  EXPECT_FALSE(info(pool.snapshot(), other).busy());
  AwaitReply got = pool.await({"j0", "j1"}, nullptr, 0s);
  ASSERT_EQ(got.status, AwaitStatus::Complete);
  EXPECT_EQ(got.results[0]->result.reason, "from before");
  EXPECT_EQ(got.results[1]->result.reason, "from before");
  EXPECT_EQ(got.results[1]->host, "zen");
}

TEST(WorkerPool, ReportsAreIdempotentAndTheFirstResultWins) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  std::string w3 = pool.register_worker(caps("h3", kX86));
  pool.submit("r", jobs("j", 3));

  // A plain duplicate.
  ASSERT_EQ(ids(pool.lease(w1, 1)), (std::vector<std::string>{"j0"}));
  EXPECT_EQ(pool.report(w1, "j0", result(1.0, "first")), ReportOutcome::Accepted);
  EXPECT_EQ(pool.report(w1, "j0", result(9.0, "again")), ReportOutcome::Duplicate);

  // j1: w1's lease expires, w2 gets it, w1's late result comes first and wins; w2's
  // later copy is a duplicate.
  ASSERT_EQ(ids(pool.lease(w1, 1)), (std::vector<std::string>{"j1"}));
  clock.advance(10s);
  ASSERT_EQ(ids(pool.lease(w2, 1)), (std::vector<std::string>{"j1"}));
  EXPECT_EQ(pool.report(w1, "j1", result(2.0, "late")), ReportOutcome::Accepted);
  EXPECT_FALSE(info(pool.snapshot(), w2).busy());  // its copy no longer counts as a lease
  EXPECT_EQ(pool.report(w2, "j1", result(3.0, "redispatched")), ReportOutcome::Duplicate);

  // j2: the re-dispatched copy finishes first; the late one is the duplicate.
  ASSERT_EQ(ids(pool.lease(w1, 1)), (std::vector<std::string>{"j2"}));
  clock.advance(10s);
  ASSERT_EQ(ids(pool.lease(w2, 1)), (std::vector<std::string>{"j2"}));
  EXPECT_EQ(pool.report(w2, "j2", result(4.0, "redispatched")), ReportOutcome::Accepted);
  EXPECT_EQ(pool.report(w1, "j2", result(5.0, "late")), ReportOutcome::Duplicate);

  // Nothing else is taken.
  EXPECT_EQ(pool.report(w1, "nope", result(6.0)), ReportOutcome::UnknownJob);
  EXPECT_EQ(pool.report("w99", "j0", result(7.0)), ReportOutcome::UnknownWorker);
  EXPECT_EQ(pool.report(w3, "j0", result(8.0)), ReportOutcome::NotLeased);

  AwaitReply got = pool.await({"j0", "j1", "j2"}, nullptr, 0s);
  ASSERT_EQ(got.status, AwaitStatus::Complete);
  EXPECT_EQ(got.results[0]->result.reason, "first");
  EXPECT_EQ(got.results[0]->result.time_ms, 1.0);
  EXPECT_EQ(got.results[0]->worker_id, w1);
  EXPECT_EQ(got.results[0]->host, "h1");
  EXPECT_EQ(got.results[1]->result.reason, "late");
  EXPECT_EQ(got.results[1]->worker_id, w1);
  EXPECT_EQ(got.results[2]->result.reason, "redispatched");
  EXPECT_EQ(got.results[2]->worker_id, w2);
  EXPECT_EQ(got.results[2]->host, "h2");

  PoolSnapshot s = pool.snapshot();
  EXPECT_EQ(s.counters.completed, 3);
  EXPECT_EQ(s.counters.duplicates, 3);
  EXPECT_EQ(s.counters.redispatched, 2);
  EXPECT_EQ(s.counters.leased, 0);
  EXPECT_EQ(s.counters.queued, 0);
  EXPECT_EQ(info(s, w1).jobs_completed, 2);
  EXPECT_EQ(info(s, w2).jobs_completed, 1);
  EXPECT_EQ(info(s, w3).jobs_completed, 0);
}

TEST(WorkerPool, ALateResultOfAQueuedJobTakesItOutOfTheQueue) {
  FakeClock clock;
  WorkerPool pool(options(10s, 60s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  pool.submit("r", jobs("j", 2));
  ASSERT_EQ(pool.lease(w1, 1).leases.size(), 1u);
  clock.advance(10s);
  EXPECT_EQ(pool.expire_leases(), 1);
  EXPECT_EQ(pool.snapshot().counters.queued, 2);
  EXPECT_EQ(pool.report(w1, "j0", result(1.0)), ReportOutcome::Accepted);
  EXPECT_EQ(pool.snapshot().counters.queued, 1);
  EXPECT_EQ(ids(pool.lease(w1, 5)), (std::vector<std::string>{"j1"}));
}

TEST(WorkerPool, RunsShareAWorkerRoundRobin) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  pool.submit("r1", jobs("a", 10));
  pool.submit("r2", jobs("b", 10));

  std::vector<std::string> order;
  for (int i = 0; i < 20; ++i) {
    LeaseReply got = pool.lease(w, 1);
    ASSERT_EQ(got.leases.size(), 1u);
    order.push_back(got.leases[0].job.id);
    ASSERT_EQ(pool.report(w, got.leases[0].job.id, result(i)), ReportOutcome::Accepted);
    if (i == 5) pool.submit("r3", jobs("c", 2));  // joins the rotation after r2
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{"a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3", "c0", "a4",
                                      "b4", "c1", "a5", "b5", "a6", "b6", "a7", "b7", "a8", "b8"}));
  EXPECT_EQ(ids(pool.lease(w, 5)), (std::vector<std::string>{"a9", "b9"}));

  // One call for several takes them round-robin too.
  pool.submit("r4", jobs("d", 3));
  pool.submit("r5", jobs("e", 3));
  EXPECT_EQ(ids(pool.lease(w, 4)), (std::vector<std::string>{"d0", "e0", "d1", "e1"}));
  EXPECT_EQ(pool.run_counters("r1").completed, 9);
  EXPECT_EQ(pool.run_counters("r1").leased, 1);
  EXPECT_EQ(pool.run_counters("r4").queued, 1);
}

TEST(WorkerPool, SubmittingAgainQueuesOnlyWhatIsNew) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  EXPECT_EQ(pool.submit("r", jobs("j", 2)), 2);
  ASSERT_EQ(ids(pool.lease(w, 1)), (std::vector<std::string>{"j0"}));
  ASSERT_EQ(pool.report(w, "j0", result(1.5, "kept")), ReportOutcome::Accepted);

  // j0 has a result, j1 is queued; only j2 is new. Then j2 leased: submitting it is a no-op.
  EXPECT_EQ(pool.submit("r", jobs("j", 3)), 1);
  EXPECT_EQ(pool.snapshot().counters.queued, 2);
  ASSERT_EQ(ids(pool.lease(w, 5)), (std::vector<std::string>{"j1", "j2"}));
  EXPECT_EQ(pool.submit("r", jobs("j", 3)), 0);
  PoolCounters c = pool.snapshot().counters;
  EXPECT_EQ(c.queued, 0);
  EXPECT_EQ(c.leased, 2);

  AwaitReply got = pool.await({"j0"}, nullptr, 0s);  // at once, no wait
  ASSERT_EQ(got.status, AwaitStatus::Complete);
  EXPECT_EQ(got.results[0]->result.reason, "kept");
  EXPECT_EQ(got.results[0]->result.time_ms, 1.5);
}

TEST(WorkerPool, AwaitTimesOutOrStopsOnTheCancelFlagWithWhatItHas) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  pool.submit("r", jobs("j", 2));
  pool.lease(w, 1);
  pool.report(w, "j0", result(1.0));

  AwaitReply timed = pool.await({"j0", "j1"}, nullptr, 20ms);
  EXPECT_EQ(timed.status, AwaitStatus::TimedOut);
  ASSERT_EQ(timed.results.size(), 2u);
  EXPECT_TRUE(timed.results[0].has_value());
  EXPECT_FALSE(timed.results[1].has_value());

  std::atomic<bool> cancel{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(20ms);
    cancel = true;  // not notified: seen within cancel_poll
  });
  auto start = std::chrono::steady_clock::now();
  AwaitReply cancelled = pool.await({"j0", "j1"}, &cancel, 10s);
  setter.join();
  EXPECT_EQ(cancelled.status, AwaitStatus::Cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_TRUE(cancelled.results[0].has_value());

  EXPECT_EQ(pool.await({"j0", "never"}, nullptr, 10s).status, AwaitStatus::UnknownJob);

  // A result wakes the waiter.
  std::thread reporter([&] {
    std::this_thread::sleep_for(20ms);
    pool.lease(w, 1);
    pool.report(w, "j1", result(2.0));
  });
  AwaitReply all = pool.await({"j1", "j0"}, nullptr, 10s);
  reporter.join();
  ASSERT_EQ(all.status, AwaitStatus::Complete);
  EXPECT_EQ(all.results[0]->result.time_ms, 2.0);
  EXPECT_EQ(all.results[1]->result.time_ms, 1.0);
}

TEST(WorkerPool, ALongPollWakesForNewAndRedispatchedJobs) {
  FakeClock clock;
  WorkerPool pool(options(10s, 600s), clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));

  LeaseReply got;
  std::thread poller([&] { got = pool.lease(w1, 1, 10s); });
  wait_until_polling(pool, w1);
  auto start = std::chrono::steady_clock::now();
  pool.submit("r", jobs("j", 1));
  poller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(ids(got), (std::vector<std::string>{"j0"}));

  std::thread poller2([&] { got = pool.lease(w2, 1, 10s); });
  wait_until_polling(pool, w2);
  start = std::chrono::steady_clock::now();
  clock.advance(10s);
  pool.expire_leases();  // w1's lease ends: w2 is woken with its job
  poller2.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(ids(got), (std::vector<std::string>{"j0"}));

  // shut_down() ends a long poll with nothing.
  std::thread poller3([&] { got = pool.lease(w1, 1, 10s); });
  wait_until_polling(pool, w1);
  start = std::chrono::steady_clock::now();
  pool.shut_down();
  poller3.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_TRUE(got.leases.empty());
  EXPECT_EQ(pool.await({"j0"}, nullptr, 10s).status, AwaitStatus::Cancelled);
}

TEST(WorkerPool, CancelDropsTheRunsJobsAndWakesItsWaiters) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  pool.submit("r1", jobs("a", 4));
  pool.submit("r2", jobs("b", 2));
  ASSERT_EQ(ids(pool.lease(w, 3)), (std::vector<std::string>{"a0", "b0", "a1"}));
  ASSERT_EQ(pool.report(w, "a0", result(1.0)), ReportOutcome::Accepted);

  AwaitReply waited;
  std::thread waiter([&] { waited = pool.await({"a0", "a1", "a2", "a3"}, nullptr, 10s); });
  std::this_thread::sleep_for(20ms);
  auto start = std::chrono::steady_clock::now();
  pool.cancel_run("r1");
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(waited.status, AwaitStatus::Cancelled);
  EXPECT_TRUE(waited.results[0].has_value());  // results already in stay
  EXPECT_FALSE(waited.results[1].has_value());

  PoolCounters c = pool.snapshot().counters;
  EXPECT_EQ(c.queued, 1);  // b1
  EXPECT_EQ(c.leased, 1);  // b0
  EXPECT_EQ(info(pool.snapshot(), w).leases, 1);
  EXPECT_EQ(pool.report(w, "a1", result(2.0)), ReportOutcome::UnknownJob);
  EXPECT_EQ(pool.report(w, "a0", result(3.0)), ReportOutcome::Duplicate);
  // Later submits to the cancelled run queue nothing; the other run goes on.
  EXPECT_EQ(pool.submit("r1", jobs("z", 2)), 0);
  EXPECT_EQ(pool.await({"z0"}, nullptr, 10s).status, AwaitStatus::Cancelled);
  EXPECT_EQ(ids(pool.lease(w, 5)), (std::vector<std::string>{"b1"}));
  EXPECT_EQ(pool.report(w, "b0", result(4.0)), ReportOutcome::Accepted);
  EXPECT_EQ(pool.run_counters("r2").completed, 1);
}

// A cancel reaches the workers measuring the run's jobs (the service answers their held
// heartbeats with take_cancelled()): each holder is told of its own revoked jobs once; jobs
// that were queued, done or of other runs are not mentioned, nor to a lost worker.
TEST(WorkerPool, CancelTellsEachHolderOfItsRevokedLeasesOnce) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  std::string w3 = pool.register_worker(caps("h3", kX86));
  pool.submit("r1", jobs("a", 6));
  pool.submit("r2", jobs("b", 2));
  ASSERT_EQ(ids(pool.lease(w1, 3)), (std::vector<std::string>{"a0", "b0", "a1"}));
  ASSERT_EQ(ids(pool.lease(w2, 2)), (std::vector<std::string>{"b1", "a2"}));
  ASSERT_EQ(ids(pool.lease(w3, 1)), (std::vector<std::string>{"a3"}));
  ASSERT_EQ(pool.report(w1, "a0", result(1.0)), ReportOutcome::Accepted);
  pool.worker_gone(w3);  // a3 back in the queue; w3 lost
  EXPECT_TRUE(pool.take_cancelled(w1).empty());

  pool.cancel_run("r1");
  EXPECT_EQ(pool.take_cancelled(w1), (std::vector<std::string>{"a1"}));
  EXPECT_EQ(pool.take_cancelled(w2), (std::vector<std::string>{"a2"}));
  EXPECT_TRUE(pool.take_cancelled(w3).empty());
  EXPECT_TRUE(pool.take_cancelled(w1).empty()) << "told once";
  EXPECT_TRUE(pool.take_cancelled("nobody").empty());

  // Releasing a run that still holds leases revokes them too.
  pool.release_run("r2");
  EXPECT_EQ(pool.take_cancelled(w1), (std::vector<std::string>{"b0"}));
  EXPECT_EQ(pool.take_cancelled(w2), (std::vector<std::string>{"b1"}));
}

TEST(WorkerPool, ReleaseForgetsAFinishedRun) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  pool.submit("r", jobs("j", 3));
  pool.lease(w, 2);
  pool.report(w, "j0", result(1.0));
  pool.release_run("r");
  PoolCounters c = pool.snapshot().counters;
  EXPECT_EQ(c.queued, 0);
  EXPECT_EQ(c.leased, 0);
  EXPECT_EQ(c.completed, 1);
  EXPECT_FALSE(info(pool.snapshot(), w).busy());
  EXPECT_EQ(pool.report(w, "j1", result(2.0)), ReportOutcome::UnknownJob);
  EXPECT_EQ(pool.await({"j0"}, nullptr, 10s).status, AwaitStatus::UnknownJob);
  EXPECT_TRUE(pool.lease(w, 5).leases.empty());
  EXPECT_EQ(pool.submit("r", jobs("j", 1)), 1);  // a fresh start
}

/// One job per run of the same evaluation: ids differ, the key is the same.
PoolJob keyed(const std::string& id, const std::string& key) {
  return {id, "", kX86, "train", "out.vectorize(x, 8)\n", 250, key, "", {}};
}

TEST(WorkerPool, JobsOfOneKeyInSeveralRunsAreMeasuredOnceAndShareTheResult) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  EXPECT_EQ(pool.submit("r1", {keyed("1/a", "A"), keyed("1/b", "B")}), 2);
  EXPECT_EQ(pool.submit("r2", {keyed("2/a", "A"), keyed("2/c", "C")}), 1);  // 2/a follows
  EXPECT_EQ(pool.submit("r3", {keyed("3/a", "A")}), 0);
  EXPECT_EQ(pool.snapshot().counters.queued, 3);
  ASSERT_EQ(ids(pool.lease(w, 10)), (std::vector<std::string>{"1/a", "2/c", "1/b"}));

  AwaitReply waited;
  std::thread waiter([&] { waited = pool.await({"2/a", "3/a"}, nullptr, 10s); });
  std::this_thread::sleep_for(20ms);
  ASSERT_EQ(pool.report(w, "1/a", result(7.0)), ReportOutcome::Accepted);
  waiter.join();
  ASSERT_EQ(waited.status, AwaitStatus::Complete);
  for (const auto& r : waited.results) {
    EXPECT_EQ(r->result.time_ms, 7.0);
    EXPECT_TRUE(r->shared);
    EXPECT_EQ(r->worker_id, w);
  }
  EXPECT_FALSE(pool.await({"1/a"}, nullptr, 0s).results[0]->shared);
  // A job of a key that has its result takes it at once; nothing is queued.
  EXPECT_EQ(pool.submit("r4", {keyed("4/a", "A")}), 0);
  AwaitReply now = pool.await({"4/a"}, nullptr, 0s);
  EXPECT_EQ(now.status, AwaitStatus::Complete);
  EXPECT_TRUE(now.results[0]->shared);
  PoolCounters c = pool.snapshot().counters;
  EXPECT_EQ(c.completed, 4);
  EXPECT_EQ(c.shared, 3);
  EXPECT_EQ(pool.run_counters("r2").shared, 1);
  EXPECT_EQ(c.leased, 2);  // 1/b and 2/c: never shared with each other
}

TEST(WorkerPool, AFollowerIsQueuedWhenItsLeaderIsCancelledBeforeItsResult) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  pool.submit("r1", {keyed("1/a", "A")});
  pool.submit("r2", {keyed("2/a", "A")});
  pool.submit("r3", {keyed("3/a", "A")});
  ASSERT_EQ(ids(pool.lease(w1, 5)), (std::vector<std::string>{"1/a"}));
  EXPECT_TRUE(pool.lease(w2, 5).leases.empty());  // the followers wait, unqueued

  AwaitReply waited;
  std::thread waiter([&] { waited = pool.await({"2/a", "3/a"}, nullptr, 10s); });
  pool.cancel_run("r1");
  // The first follower takes the key over and is queued; the other follows it.
  ASSERT_EQ(ids(pool.lease(w2, 5)), (std::vector<std::string>{"2/a"}));
  EXPECT_EQ(pool.report(w1, "1/a", result(1.0)), ReportOutcome::UnknownJob);
  ASSERT_EQ(pool.report(w2, "2/a", result(2.0)), ReportOutcome::Accepted);
  waiter.join();
  ASSERT_EQ(waited.status, AwaitStatus::Complete);
  EXPECT_FALSE(waited.results[0]->shared);
  EXPECT_TRUE(waited.results[1]->shared);
  EXPECT_EQ(waited.results[1]->result.time_ms, 2.0);
}

TEST(WorkerPool, AFollowerIsQueuedWhenItsLeadersRunIsReleasedOrCancelledWhileQueued) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w = pool.register_worker(caps("h", kX86));
  // Released with its leader leased: the follower is queued at the front of its run.
  pool.submit("r1", {keyed("1/a", "A")});
  pool.submit("r2", {keyed("2/x", "X"), keyed("2/a", "A")});
  ASSERT_EQ(ids(pool.lease(w, 1)), (std::vector<std::string>{"1/a"}));
  pool.release_run("r1");
  EXPECT_EQ(ids(pool.lease(w, 5)), (std::vector<std::string>{"2/a", "2/x"}));
  ASSERT_EQ(pool.report(w, "2/a", result(3.0)), ReportOutcome::Accepted);

  // Cancelled with its leader queued, the followers' runs cancelled too: the key is
  // forgotten, and the next job of it is measured.
  pool.submit("r3", {keyed("3/b", "B")});
  pool.submit("r4", {keyed("4/b", "B")});
  pool.cancel_run("r4");
  pool.cancel_run("r3");
  EXPECT_EQ(pool.snapshot().counters.queued, 0);
  EXPECT_EQ(pool.submit("r5", {keyed("5/b", "B")}), 1);

  // Released after its result: a follower that has it keeps the key.
  pool.submit("r6", {keyed("6/a", "A")});
  pool.release_run("r2");
  EXPECT_EQ(pool.submit("r7", {keyed("7/a", "A")}), 0);
  AwaitReply now = pool.await({"6/a", "7/a"}, nullptr, 0s);
  ASSERT_EQ(now.status, AwaitStatus::Complete);
  EXPECT_EQ(now.results[1]->result.time_ms, 3.0);
  // Released with no follower left: forgotten.
  pool.release_run("r6");
  pool.release_run("r7");
  EXPECT_EQ(pool.submit("r8", {keyed("8/a", "A")}), 1);
}

TEST(WorkerPool, AWorkerGoneEndsItsLeasesAtOnce) {
  FakeClock clock;
  WorkerPool pool({}, clock.fn());
  std::string w1 = pool.register_worker(caps("h1", kX86));
  std::string w2 = pool.register_worker(caps("h2", kX86));
  pool.submit("r", jobs("j", 3));
  ASSERT_EQ(ids(pool.lease(w1, 2)), (std::vector<std::string>{"j0", "j1"}));
  EXPECT_EQ(pool.worker_gone(w1), 2);
  EXPECT_TRUE(info(pool.snapshot(), w1).lost);
  EXPECT_EQ(ids(pool.lease(w2, 5)), (std::vector<std::string>{"j0", "j1", "j2"}));
  EXPECT_EQ(pool.snapshot().counters.redispatched, 2);
  EXPECT_EQ(pool.worker_gone("w99"), 0);
  // Its late result still counts if first (it held a lease on the job).
  EXPECT_EQ(pool.report(w1, "j1", result(1.0)), ReportOutcome::Accepted);
  EXPECT_FALSE(info(pool.snapshot(), w1).lost);
}

// Workers lease and report from threads while a driver moves the clock; some die with
// their leases (never reporting; a restarted worker registers anew), some report late or
// twice. Two runs await their jobs. Every job must end with exactly one stored result,
// the one whose report was accepted.
TEST(WorkerPool, ConcurrentWorkersDyingAndReportingLateLoseNothing) {
  FakeClock clock;
  WorkerPoolOptions o = options(100ms, 1000ms);  // pool time: the driver moves 50 ms a tick
  WorkerPool pool(o, clock.fn());
  constexpr int kJobs = 400;
  pool.submit("r1", jobs("a", kJobs));
  pool.submit("r2", jobs("b", kJobs));
  pool.submit("r3", jobs("other", 5, kArm));  // no worker of this target: never leased

  std::atomic<bool> stop{false};
  std::mutex accepted_mu;
  std::map<std::string, std::string> accepted;  // job -> reason of the accepted result
  std::atomic<int> duplicate_accepts{0}, died{0}, late_or_twice{0};

  auto worker = [&](int seed) {
    std::mt19937 rng(seed);
    std::string id = pool.register_worker(caps("host" + std::to_string(seed), kX86));
    int n = 0;
    while (!stop) {
      LeaseReply got = pool.lease(id, 1 + int(rng() % 3), 5ms);
      for (const Lease& l : got.leases) {
        EXPECT_EQ(l.job.target, kX86);
        if (rng() % 10 == 0) {  // dies: its leases are never reported; restarts
          ++died;
          id = pool.register_worker(caps("host" + std::to_string(seed), kX86));
          break;
        }
        if (rng() % 8 == 0) {  // slow: the lease may well have expired by the report
          ++late_or_twice;
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
        }
        std::string reason = id + "/" + l.job.id + "/" + std::to_string(n++);
        ReportOutcome out = pool.report(id, l.job.id, result(1.0, reason));
        EXPECT_TRUE(out == ReportOutcome::Accepted || out == ReportOutcome::Duplicate)
            << to_string(out);
        if (out == ReportOutcome::Accepted) {
          std::lock_guard lock(accepted_mu);
          if (!accepted.emplace(l.job.id, reason).second) ++duplicate_accepts;
        }
        if (rng() % 10 == 0) {  // twice
          ++late_or_twice;
          EXPECT_EQ(pool.report(id, l.job.id, result(2.0, "again")), ReportOutcome::Duplicate);
        }
      }
      if (rng() % 4 == 0) pool.heartbeat(id);
    }
  };
  std::thread driver([&] {
    while (!stop) {
      std::this_thread::sleep_for(1ms);
      clock.advance(50ms);
      pool.expire_leases();
    }
  });
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) workers.emplace_back(worker, i + 1);

  auto await_run = [&](const std::string& prefix, AwaitReply* reply) {
    std::vector<std::string> want;
    for (int i = 0; i < kJobs; ++i) want.push_back(prefix + std::to_string(i));
    *reply = pool.await(want, nullptr, 10s);
  };
  AwaitReply r1, r2;
  std::thread a1(await_run, "a", &r1), a2(await_run, "b", &r2);
  a1.join();
  a2.join();
  stop = true;
  for (auto& t : workers) t.join();
  driver.join();

  ASSERT_EQ(r1.status, AwaitStatus::Complete);
  ASSERT_EQ(r2.status, AwaitStatus::Complete);
  EXPECT_EQ(duplicate_accepts, 0);
  ASSERT_EQ(accepted.size(), size_t(2 * kJobs));
  for (int i = 0; i < kJobs; ++i) {
    for (auto [prefix, reply] : {std::pair{"a", &r1}, std::pair{"b", &r2}}) {
      std::string job = prefix + std::to_string(i);
      ASSERT_TRUE(reply->results[i].has_value()) << job;
      EXPECT_EQ(reply->results[i]->result.reason, accepted.at(job)) << job;
      EXPECT_EQ(reply->results[i]->result.time_ms, 1.0) << job;
    }
  }
  PoolSnapshot s = pool.snapshot();
  EXPECT_EQ(s.counters.completed, 2 * kJobs);
  EXPECT_EQ(s.counters.queued, 5);  // the other target's
  EXPECT_EQ(s.counters.leased, 0);
  EXPECT_GT(died, 0);
  EXPECT_GE(s.counters.redispatched, died.load());
  int64_t by_workers = 0;
  for (const WorkerInfo& w : s.workers) by_workers += w.jobs_completed;
  EXPECT_EQ(by_workers, 2 * kJobs);
  std::printf("died %d, late or twice %d, re-dispatched %lld, duplicates %lld, workers %zu\n",
              died.load(), late_or_twice.load(), (long long)s.counters.redispatched,
              (long long)s.counters.duplicates, s.workers.size());
}

}  // namespace
}  // namespace stipple::coordinator
