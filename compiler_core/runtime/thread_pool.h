// A small thread pool for the parallel loops of JIT-compiled pipelines.
//
// Generated code outlines the body of a parallel For into a closure function and calls
// the C entry point stipple_parallel_for, which spreads the iterations over the pool's
// workers (the calling thread takes part). A parallel loop met inside another one runs
// serially on the thread that meets it: the outer loop already keeps every core busy, and
// waiting on the pool from inside the pool could deadlock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace stipple {

/// The closure a parallel loop runs per iteration: returns 0, or an error code that
/// stops the loop from handing out further iterations.
using ParallelBody = int32_t (*)(void* closure, int32_t index);

class ThreadPool {
 public:
  /// A pool of `threads` workers besides the calling thread (0 runs everything inline).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Runs body(closure, i) for every i in [min, min + extent) and returns when all have
  /// finished: 0, or the first nonzero code an iteration returned (iterations not yet
  /// started when that happened are skipped).
  int32_t parallel_for(ParallelBody body, void* closure, int32_t min, int32_t extent);

  int threads() const { return static_cast<int>(workers_.size()); }

  /// The process-wide pool, with hardware_concurrency() - 1 workers, made on first use.
  static ThreadPool& global();

 private:
  struct Job;
  void worker_loop();
  static void run_iterations(Job& job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace stipple

/// The entry point generated code calls (a plain C symbol the JIT resolves): runs the
/// closure over [min, min + extent) on the global pool; returns 0 or an error code.
extern "C" int32_t stipple_parallel_for(void* body, void* closure, int32_t min, int32_t extent);
