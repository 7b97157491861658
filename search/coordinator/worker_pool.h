// WorkerPool: the coordinator's side of the cluster (the design, "Cluster principles").
// Tuning runs submit evaluation jobs and await their results; workers register, lease
// jobs, heartbeat and report. The coordinator's gRPC service is a thin layer over it.
//
// - Jobs go only to workers whose target key equals the job's, and a job kept for a host
//   (PoolJob::host) only to workers on that host.
// - A lease lasts `lease_duration` from when it is handed out or last renewed (by the
//   worker's heartbeat). A lease that passes its deadline, or whose worker is not heard
//   from for `heartbeat_timeout`, or that is gone (worker_gone(): the service saw a call of
//   its cancelled by the transport), ends: its job goes back to the front of its run's
//   queue and is counted as re-dispatched.
// - Results are idempotent by job id: the first result of a job is kept, every later one
//   (a duplicate, or the late result of an expired lease) changes nothing.
// - Runs share the workers fairly: per target, jobs are handed out round-robin across the
//   runs that have some queued, FIFO within a run.
// - Runs share measurements: jobs of the same non-empty `key` (the same evaluation, of
//   whichever run) are measured once. The first queued is the key's leader; a later one
//   becomes its follower and gets the leader's result when it arrives (marked `shared`),
//   or at once when the leader has it already. A leader cancelled or released before its
//   result hands the key to its first live follower, which is queued in its place: no
//   follower is lost or left waiting for a job that will never be measured.
//
// Time: leases and heartbeats are judged by the injected clock, so tests drive expiry
// without sleeping. Expiry is checked by expire_leases() (the service calls it
// periodically) and lazily at the start of every call. How long a call blocks (`wait`,
// `timeout`) is real time: a condition variable cannot wait on a fake clock.
//
// Thread-safe: one mutex guards everything; blocked callers wait on condition variables.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler_core/support/host_capabilities.h"
#include "workers/evaluator.h"

namespace stipple::coordinator {

using PoolClock = std::function<std::chrono::steady_clock::time_point()>;

struct WorkerPoolOptions {
  std::chrono::milliseconds lease_duration{std::chrono::seconds(120)};
  /// A worker not heard from (register, heartbeat, lease, report) for this long is lost:
  /// its leases end at once. A worker blocked in lease() is being heard from.
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(30)};
  /// How often a blocked await() looks at its cancel flag. The flag may be set from a
  /// signal handler, which cannot notify a condition variable; wake_waiters() wakes them
  /// at once from a normal thread.
  std::chrono::milliseconds cancel_poll{20};
};

/// One candidate to measure. `id` is the submitter's, opaque and unique across runs.
struct PoolJob {
  std::string id;
  std::string run_id;
  std::string target;  // host_target_key() of the machines that may measure it
  std::string split;   // "train", "test"
  std::string schedule;
  double give_up_ms = 0;
  /// What determines the result (RemoteEvaluator::job_key): jobs of equal keys are
  /// measured once and share the result. Empty: never shared.
  std::string key;
  /// Only workers on this host (HostCapabilities::host) may measure it; empty: any of the
  /// target. The nightly run times a night on one machine.
  std::string host;
  /// A code job: these are measured in one process, in order (workers/evaluator.h), and
  /// the result has one JobResult::code_results entry each; `schedule` is then unused.
  std::vector<workers::CodeRequest> code;
};

struct Lease {
  PoolJob job;
  /// Report, or heartbeat to renew, before then (pool clock); after it the job may be
  /// given to another worker.
  std::chrono::steady_clock::time_point deadline;
};

struct LeaseReply {
  bool unknown_worker = false;  // the id was never registered here: register again
  std::vector<Lease> leases;
};

enum class ReportOutcome {
  Accepted,       // the job's first result: stored, its waiters woken
  Duplicate,      // the job already has a result; this one changes nothing
  UnknownJob,     // never submitted, cancelled or released: ignored
  UnknownWorker,  // the worker id was never registered: ignored
  NotLeased,      // the worker never held a lease on this job (its timings may be of
                  // another machine), or says it did before a restart but is of another
                  // target: ignored
  Mismatched,     // its code results do not match the job's requests (one each for an ok
                  // code job, none for a schedule's): ignored
};
const char* to_string(ReportOutcome outcome);

/// A stored result and who measured it (the evaluation's host column).
struct JobResult {
  workers::EvaluationResult result;
  std::string worker_id;
  std::string host;
  /// The result of another job of the same key (another run's measurement), not one made
  /// for this job.
  bool shared = false;
  /// A code job's results, one per request; none when the job failed as a whole (its
  /// setup could not be measured there: `result` says why).
  std::vector<workers::EvaluationResult> code_results;
};

enum class AwaitStatus {
  Complete,    // every job has its result
  Cancelled,   // the cancel flag was set, a job's run was cancelled, or the pool shut down
  TimedOut,    // the timeout passed first
  UnknownJob,  // a job was never submitted (or was released): it would never complete
};
const char* to_string(AwaitStatus status);

struct AwaitReply {
  AwaitStatus status = AwaitStatus::Complete;
  /// In the order asked; empty where a job has no result (yet). Complete: all present.
  std::vector<std::optional<JobResult>> results;
};

struct WorkerInfo {
  std::string id;
  HostCapabilities capabilities;
  std::chrono::steady_clock::time_point registered, last_heard;  // pool clock
  int leases = 0;                                                // held now; busy when > 0
  bool busy() const { return leases > 0; }
  bool lost = false;           // not heard from for heartbeat_timeout (until heard from again)
  bool polling = false;        // blocked in lease() now, waiting for jobs
  int64_t jobs_completed = 0;  // accepted results it measured
};

/// Queued and leased count jobs now; the others count events since the pool started (or,
/// for one run, since its first submit).
struct PoolCounters {
  int64_t queued = 0;
  int64_t leased = 0;
  int64_t completed = 0;     // accepted results
  int64_t redispatched = 0;  // leases ended without a result, job queued again
  int64_t duplicates = 0;    // reports of jobs that already had a result
  int64_t shared = 0;        // results taken from another job of the same key (in completed)
};

struct PoolSnapshot {
  std::vector<WorkerInfo> workers;  // in registration order, lost ones included
  PoolCounters counters;
  std::chrono::steady_clock::time_point taken_at;  // pool clock, to age last_heard by
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolOptions options = {}, PoolClock clock = nullptr);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Call shut_down() and let blocked callers return before destroying the pool.
  ~WorkerPool();

  // ---- workers ----

  /// A fresh id ("w1", "w2", ...) for every registration: a worker restarted on the same
  /// host gets a new one, and its old id's leases end when the old id is lost. Several
  /// workers may share a host name (processes on one machine).
  std::string register_worker(const HostCapabilities& capabilities);
  /// Marks the worker heard from and renews all its leases to now + lease_duration.
  /// False when the id is unknown (the worker should register again).
  bool heartbeat(const std::string& worker_id);
  /// Up to `max_jobs` jobs of the worker's target, each under a lease. With `wait` > 0,
  /// blocks up to `wait` until at least one is available (a long poll).
  LeaseReply lease(const std::string& worker_id, int max_jobs,
                   std::chrono::steady_clock::duration wait = {});
  /// The worker is gone (its process died or its connection broke: a call of its was
  /// cancelled by the transport): it is lost at once, its leases end and their jobs go back
  /// to the front of their queues. Heard from again, it is not lost any more (its results
  /// of jobs still without one are taken as ever). Returns how many jobs went back.
  int worker_gone(const std::string& worker_id);
  /// The jobs of the worker whose leases a cancel_run() or release_run() ended since the
  /// last call, to tell it to stop measuring them (the service answers a held heartbeat
  /// with them at once). Empty for an unknown worker; a lost worker has none.
  std::vector<std::string> take_cancelled(const std::string& worker_id);
  /// Ends the worker's leases of `job_ids` at once, their jobs back at the front of their
  /// queues: for jobs leased to a call that could not deliver them (the worker's long
  /// poll was cancelled), which would otherwise wait for the lease to run out. Jobs the
  /// worker does not hold are left alone. Returns how many went back.
  int give_back(const std::string& worker_id, const std::vector<std::string>& job_ids);
  /// Stores the job's first result, recording which worker measured it. A late result of
  /// an expired lease is accepted if the job has no result yet (the job is taken out of
  /// the queue, or the other worker's copy becomes a duplicate). Only a worker that held a
  /// lease on the job may report it, unless `forgotten_lease`: the worker held one under
  /// an id a previous coordinator gave it, and is accepted if it is of the job's target.
  /// A code job's results come as `code_results`, one per request (none with a failed
  /// `result`); others are Mismatched.
  ReportOutcome report(const std::string& worker_id, const std::string& job_id,
                       const workers::EvaluationResult& result, bool forgotten_lease = false,
                       std::vector<workers::EvaluationResult> code_results = {});

  // ---- runs ----

  /// Queues the jobs of a run (each job's run_id is set to `run_id`). An id that already
  /// has a result is not queued again (await returns its result at once); an id queued or
  /// leased is left as it is; jobs of a cancelled run are cancelled at once. A job whose
  /// key another job holds follows it (the class comment). Returns how many were queued
  /// (followers not counted).
  int submit(const std::string& run_id, const std::vector<PoolJob>& jobs);
  /// Blocks until every job has a result, `*cancel` is set (checked every cancel_poll),
  /// a job is cancelled or unknown, or `timeout` passes (real time; max(): none).
  AwaitReply await(
      const std::vector<std::string>& job_ids, const std::atomic<bool>* cancel = nullptr,
      std::chrono::steady_clock::duration timeout = std::chrono::steady_clock::duration::max());
  /// Drops the run's queued jobs and forgets its leases (their reports come back as
  /// UnknownJob; their workers learn of it from take_cancelled()); its results stay. Wakes its
  /// waiters (Cancelled). Final: later submits to the run are cancelled at once.
  void cancel_run(const std::string& run_id);
  /// Forgets everything of a finished run: results, jobs, leases (as cancel_run does), the
  /// cancelled mark. Its late reports are UnknownJob; its ids may be submitted anew.
  void release_run(const std::string& run_id);

  // ---- upkeep and introspection ----

  /// Ends the leases past their deadline and those of lost workers; returns how many jobs
  /// went back to the queues.
  int expire_leases();
  PoolSnapshot snapshot();
  /// Counters of one run (zero when unknown).
  PoolCounters run_counters(const std::string& run_id);
  /// Wakes blocked await() calls so they look at their cancel flags now.
  void wake_waiters();
  /// Wakes every blocked call; from now on lease() hands out nothing and await() returns
  /// Cancelled at once. For draining on SIGTERM and before destruction.
  void shut_down();
  bool is_shut_down();

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  /// Following: waits for the result of its key's leader, neither queued nor leased.
  enum class JobState { Queued, Leased, Following, Done, Cancelled };

  struct Job {
    PoolJob job;
    std::string leader;                  // Following: the job measured for it
    std::vector<std::string> followers;  // the key's leader: jobs that may follow it
    uint64_t seq = 0;  // submission order, to keep FIFO when several go back at once
    JobState state = JobState::Queued;
    std::string holder;                // Leased: the worker holding the lease
    TimePoint deadline;                // Leased: when the lease ends
    std::vector<std::string> lessees;  // every worker that ever held a lease on it
    std::optional<JobResult> result;   // Done
  };
  struct Worker {
    WorkerInfo info;
    std::unordered_set<std::string> leases;  // job ids
    std::vector<std::string> cancelled;      // revoked leases it has not been told of
    int polling = 0;                         // lease() calls blocked now
  };
  struct Run {
    std::unordered_set<std::string> jobs;
    bool cancelled = false;
    PoolCounters counters;
  };
  /// The queued jobs of one target (and host, for jobs kept for one): round-robin over `rotation`
  /// (the runs with queued jobs, each once), FIFO within a run.
  struct TargetQueue {
    std::deque<std::string> rotation;
    std::unordered_map<std::string, std::deque<std::string>> by_run;
  };

  WorkerPoolOptions options_;
  PoolClock clock_;

  std::mutex mu_;
  std::condition_variable jobs_cv_;     // leasers: jobs were queued
  std::condition_variable results_cv_;  // awaiters: a result came, a run was cancelled
  bool shut_down_ = false;
  uint64_t next_worker_ = 1, next_seq_ = 1;
  std::map<std::string, Worker> workers_;  // by id
  std::vector<std::string> worker_order_;  // registration order
  std::unordered_map<std::string, Job> jobs_;
  std::unordered_map<std::string, Run> runs_;
  std::unordered_map<std::string, TargetQueue> queues_;   // by queue_key()
  std::unordered_map<std::string, std::string> leaders_;  // job id by key
  PoolCounters counters_;

  /// The queue of a target's jobs, or of those kept for one of its hosts.
  static std::string queue_key(const std::string& target, const std::string& host) {
    return host.empty() ? target : target + '\n' + host;
  }

  // All below run with mu_ held.
  /// expire_leases(); returns the jobs re-queued and the pool-clock time of the next lease
  /// deadline or worker loss (max() if none).
  int expire_locked(TimePoint now, TimePoint* next_event = nullptr);
  Worker* touch(const std::string& worker_id, TimePoint now);
  void set_state(Job& job, JobState state);
  void enqueue_back(Job& job);
  void enqueue_front(Job& job);
  /// Ends leases without a result: jobs to the front of their runs' queues, in
  /// submission order. Returns how many.
  int requeue(std::vector<Job*> jobs);
  void unqueue(const Job& job);
  /// Gives the leader's result to its followers still following.
  void share_result(Job& leader);
  /// The leader is cancelled or released without a result (or released with one): its
  /// first live follower takes the key over, queued at the front of its run's queue if it
  /// has no result; with none the key is forgotten.
  void hand_over(Job& leader);
  void drop_lease(Job& job);
  /// drop_lease() of a job that will not be measured for anyone (its run was cancelled or
  /// released): a live holder is told to stop (take_cancelled).
  void revoke_lease(Job& job);
  Job* find_job(const std::string& id);
};

}  // namespace stipple::coordinator
