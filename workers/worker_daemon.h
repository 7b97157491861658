// WorkerDaemon: the worker side of the tuning cluster (`stipple worker`, the design's "Cluster
// principles"). It registers this host's capabilities with the coordinator, leases jobs in
// batches, measures them in LocalEvaluator children and reports the results:
//
//   register ──> lease a batch (long poll) ──> slot k: setup (once per setup id) ──>
//      ^          |    ^         photos (cache) ──> LocalEvaluator (per slot, at most 2,
//      |          |    |         by setup) ──> report
//      |          |    └── when every slot is idle again ──────────────────────────┘
//      └──────────┘ NOT_FOUND "unknown worker": the coordinator restarted and forgot us
//
// - Compiles in parallel, benchmarks one job at a time per host: a batch is one job per
//   slot (--compile-jobs, one per core by default), each in its slot's evaluator child.
//   The children hold the host's benchmark lock (benchmark_lock.h) shared to compile and
//   exclusively to time, so the batch compiles at once and then each job is timed alone,
//   across every worker process of the host. The next batch is leased when the last job
//   of this one is done: a new compile would hold up the timed runs still waiting.
// - A candidate that crashes or hangs is a failed result from LocalEvaluator, reported
//   like any other; so is every job of a setup whose reference outputs hang or die
//   (SetupFailed: timeout, out_of_memory or crash, remembered per setup).
// - A heartbeat thread renews the worker's leases at the interval the coordinator asked
//   for, so a long measurement keeps its lease. The coordinator holds each heartbeat call
//   open up to the interval and the next follows at once: when this process dies the
//   transport cancels the open call, and its jobs go to other workers at once. A held
//   call is answered early with the worker's jobs whose runs were cancelled: the slot
//   measuring one kills its evaluator child (LocalEvaluatorOptions::cancel) and goes on
//   to the next batch without reporting it, within a second of the cancel.
// - Photos are cached under CACHE/images/<sha256>, written to a temporary file and
//   renamed, and checked against their hash when fetched and when read back; the
//   children cache reference outputs under CACHE/references (reference_cache.h).
// - The coordinator unreachable (UNAVAILABLE, DEADLINE_EXCEEDED): retry with exponential
//   backoff and jitter, one log line per change of state, never exit. A job that cannot
//   be finished for reasons not the candidate's (its setup or photos unreachable, the
//   evaluator child cannot start) is abandoned: the worker registers anew so that the
//   old id stops renewing that lease, and the coordinator re-dispatches the job.
// - Every call has a deadline; reports are retried (idempotent by job id).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "compiler_core/support/host_capabilities.h"
#include "proto/rpc_security.h"
#include "workers/local_evaluator.h"

namespace stipple::workers {

struct WorkerDaemonOptions {
  std::string coordinator;        // "HOST:PORT"
  rpc::SecurityOptions security;  // token and TLS files of the channel
  /// Photos under CACHE/images/<sha256>; reference outputs under CACHE/references/<key>
  /// unless evaluator.reference_cache names another folder.
  std::string cache_dir;
  /// The cache's size limit: after a batch that fetched photos (and every 50 batches) the
  /// least recently used photos and references beyond it are removed.
  int64_t cache_max_bytes = int64_t(4) << 30;
  /// The children, their per-candidate deadline and limits, and the host's benchmark lock.
  LocalEvaluatorOptions evaluator;
  int compile_jobs = 0;  // jobs compiled at once (slots); 0: one per core
  /// What to register; an empty target: detect_host_capabilities() at run().
  HostCapabilities capabilities;
  int max_message_bytes = 64 << 20;  // as the coordinator's server (a photo per message)
  std::chrono::milliseconds backoff_initial{200}, backoff_max{std::chrono::seconds(10)};
  double lease_wait_seconds = 10;   // the long poll; its call deadline adds call_seconds
  double call_seconds = 10;         // deadline of register, heartbeat, report, setup
  double image_call_seconds = 120;  // deadline of one photo's download
  int max_evaluators = 2;           // LocalEvaluators kept per slot, least recently used dropped
};

/// Exit codes of run(), as the command line's (client/commands.h).
inline constexpr int kWorkerStopped = 0;
inline constexpr int kWorkerBadInput = 2;  // the coordinator refused our token or capabilities

class WorkerDaemon {
 public:
  explicit WorkerDaemon(WorkerDaemonOptions options);
  ~WorkerDaemon();
  WorkerDaemon(const WorkerDaemon&) = delete;
  WorkerDaemon& operator=(const WorkerDaemon&) = delete;

  /// Runs until `stop` is set (it may be set from a signal handler; it is polled): then
  /// leases nothing more, finishes and reports the jobs in hand (a long poll in flight is
  /// waited out, up to lease_wait_seconds, and its job measured), and returns 0. Returns 2
  /// when the coordinator answers UNAUTHENTICATED (a bad token) or rejects the
  /// capabilities. Never returns because the coordinator is unreachable.
  int run(const std::atomic<bool>& stop);

  /// Jobs reported so far (accepted or not): for tests and the log.
  int64_t jobs_reported() const { return jobs_reported_; }

 private:
  class Session;
  WorkerDaemonOptions options_;
  std::atomic<int64_t> jobs_reported_{0};
};

}  // namespace stipple::workers
