// LocalEvaluator: measures candidates on this host in a child process, stipple-evaluator
// (evaluation_server_main.cpp), one at a time (the design: one benchmark at a time per
// host). The child runs under resource limits and a wall-clock deadline that this side
// enforces by killing the child's whole process group; a candidate that crashes, hangs,
// runs out of memory or writes NaN becomes a failed result with its reason, and the next
// candidate gets a fresh child. The tuner never dies with a candidate.
//
// The child computes the setup's reference outputs when it starts, under the same
// deadline and CPU allowance as a candidate: a reference that hangs or dies is the
// setup's failure (SetupFailed), recorded for its candidates, not a host that waits.
// The child dies with the thread that started it (PR_SET_PDEATHSIG): a LocalEvaluator
// belongs to the thread that constructs it and calls evaluate().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>

#include "workers/evaluator.h"

namespace stipple::workers {

struct LocalEvaluatorOptions {
  /// The stipple-evaluator executable; empty: the one beside this process's executable.
  std::string server_binary;
  double deadline_seconds = 60;  // wall clock per candidate (compile and all runs)
  /// Wall clock for the child to load the photos and compute their reference outputs;
  /// 0: deadline_seconds (a reference is the pipeline's run under the default schedule).
  double startup_seconds = 0;
  int64_t memory_limit_bytes = int64_t(16) << 30;
  int64_t file_size_limit_bytes = int64_t(64) << 20;
  /// CPU seconds per candidate; 0: the deadline times the number of cores.
  double cpu_seconds = 0;
  /// The host's benchmark lock (benchmark_lock.h), shared by every evaluator that must
  /// not time candidates at once; empty: none. Time spent waiting for it does not count
  /// against the deadline; a wait past lock_wait_seconds measures without it.
  std::string benchmark_lock;
  double lock_wait_seconds = 600;
  /// A folder of reference outputs cached by content hash (reference_cache.h); empty:
  /// each child computes its setup's at start.
  std::string reference_cache;
  /// Set from another thread to stop the work in progress (the worker's heartbeat learnt
  /// that the job's run was cancelled): the child is killed within kCancelPoll and the
  /// constructor or evaluate() throws EvaluationCancelled. Null: never cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

/// How often a LocalEvaluator waiting on its child looks at its cancel flag.
inline constexpr std::chrono::milliseconds kCancelPoll{50};

/// The work was stopped by LocalEvaluatorOptions::cancel: no result, and none is owed.
class EvaluationCancelled : public std::runtime_error {
 public:
  EvaluationCancelled() : std::runtime_error("cancelled") {}
};

/// The child died of a signal, or ran past the start-up deadline, while loading the photos
/// and computing their reference outputs: no candidate of the setup can be measured on
/// this host. `result` (timeout, out_of_memory or crash, with the reason) is what each of
/// them is recorded as; evaluate() returns it rather than throwing.
class SetupFailed : public std::runtime_error {
 public:
  explicit SetupFailed(EvaluationResult r) : std::runtime_error(r.reason), result(std::move(r)) {}
  EvaluationResult result;
};

/// Runs `server_binary --help` (empty: the default, beside this executable) and throws
/// UserError unless it starts and exits 0, as `stipple worker` does at start: an evaluator
/// that cannot run (missing, not executable, a program for another architecture without
/// an emulator) would make a worker abandon every job it leases, and each go round again.
void require_server_binary(const std::string& server_binary, const std::string& option);

class LocalEvaluator : public Evaluator {
 public:
  /// Starts the child and waits until it has loaded the photos of every split and
  /// computed their reference outputs. Throws UserError when the setup is bad (the
  /// pipeline does not compile, a photo does not load), SetupFailed when computing the
  /// references died or ran past startup_seconds, and std::runtime_error when the child
  /// cannot be started.
  LocalEvaluator(EvaluationSetup setup, LocalEvaluatorOptions options = {});
  ~LocalEvaluator() override;
  LocalEvaluator(const LocalEvaluator&) = delete;
  LocalEvaluator& operator=(const LocalEvaluator&) = delete;

  std::vector<EvaluationResult> evaluate(const std::vector<std::string>& schedules,
                                         const std::string& split, double give_up_ms) override;
  std::vector<EvaluationResult> evaluate_code(const std::vector<CodeRequest>& requests,
                                              const std::string& split) override;
  std::string host() const override { return host_; }
  std::string target() const override { return target_; }

  /// Children started so far (1 + the candidates that killed one).
  int children_started() const { return children_started_; }
  /// The current child's pid (-1 between a failure and the next candidate).
  pid_t child_pid() const { return child_; }

 private:
  EvaluationSetup setup_;
  LocalEvaluatorOptions options_;
  std::string host_, target_;
  pid_t child_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string pending_;  // bytes read from the child after the last full line
  int64_t next_id_ = 1;
  int children_started_ = 0;

  void start();
  /// Kills the child's process group (if alive) and reaps it; returns its wait status.
  int stop();
  /// The next line from the child within `seconds`; false on timeout or end of file
  /// (*eof tells which).
  bool read_line(std::string& line, double seconds, bool* eof);
  /// The next line that is not a phase line ({"phase": ...}): a phase line restarts the
  /// wait, `seconds` for "running" and lock_wait_seconds more for "waiting".
  bool read_answer(std::string& line, double seconds, bool* eof);
  EvaluationResult evaluate_one(const CodeRequest& request, const std::string& split,
                                double give_up_ms);
};

/// A wait status in words: "killed by SIGSEGV (Segmentation fault)", "exited with status 3".
std::string describe_wait_status(int status);

/// What a child's death by `status` says of the candidate (or the references) it was
/// computing: SIGXCPU -> timeout (more than `cpu_seconds` of CPU), SIGKILL ->
/// out_of_memory (only the kernel's OOM killer sends it), anything else -> crash; the
/// reason is "`process` was killed by SIG...".
EvaluationResult death_result(int status, double cpu_seconds, const std::string& process);

}  // namespace stipple::workers
