// BenchmarkLock: one benchmark at a time per host (the design, "Evaluation protocol"),
// across every process that measures candidates on it. It is an flock(2) on a file that
// all evaluator children of a host open:
//   - compiling, and computing reference outputs, hold it shared: any number at once;
//   - timed runs hold it exclusively: alone, with no compile beside them to disturb the
//     clock, as Halide's autotuning loop compiles a batch in parallel and then benchmarks
//     its members one by one.
// The kernel drops a dead process's lock, so a candidate that crashes or is killed past
// its deadline while holding it blocks no one.
#pragma once

#include <string>

namespace stipple::workers {

/// The lock file's default: one per host for every user of /tmp.
inline constexpr const char* kDefaultBenchmarkLock = "/tmp/stipple-benchmark.lock";

class BenchmarkLock {
 public:
  /// Opens (creating) `path`. Throws std::runtime_error when it cannot.
  explicit BenchmarkLock(const std::string& path);
  ~BenchmarkLock();
  BenchmarkLock(const BenchmarkLock&) = delete;
  BenchmarkLock& operator=(const BenchmarkLock&) = delete;

  /// Takes the lock shared (exclusive), replacing what this object holds; waits at most
  /// `seconds` (< 0: no limit). False when the time ran out: the caller goes on without
  /// it, since a host whose lock some stopped process keeps must still measure. Changing
  /// from shared to exclusive is not atomic (flock drops the old lock first), so two
  /// holders upgrading at once never deadlock.
  bool lock_shared(double seconds);
  bool lock_exclusive(double seconds);
  void unlock();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool acquire(int operation, double seconds);
};

/// Who holds the lock at `path` now, other than this process, from /proc/locks: "pid 1234
/// (stipple worker --coordinator host:7000), pid 1240 (stipple-evaluator ...)"; empty
/// when no one does or it cannot be read. For the message of a process that must wait.
std::string describe_lock_holders(const std::string& path);

/// Opens the lock file once, as `stipple worker` and `stipple tune` do at start, so that a
/// file that cannot be opened is said once (UserError, naming `option`) rather than
/// warned about by every evaluator child that would then measure without it.
void require_benchmark_lock(const std::string& path, const std::string& option);

}  // namespace stipple::workers
