// A small thread pool for the parallel loops of JIT-compiled pipelines.
//
// Generated code outlines the body of a parallel For into a closure function and calls
// the C entry point stipple_parallel_for, which spreads the iterations over the pool's
// workers (the calling thread takes part). A parallel loop met inside another one runs
// serially on the thread that meets it: the outer loop already keeps every core busy, and
// waiting on the pool from inside the pool could deadlock.
//
// The global pool's size can be changed at run time (ThreadPool::set_global_threads or
// the C function stipple_set_num_threads), so that one process can time the same code on
// 1, 2, ... threads (bench/stipple_pipelines_bench.cpp does).
#pragma once

#include <atomic>
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

  /// The number of workers (not counting the threads that call parallel_for).
  int threads() const { return worker_count_.load(std::memory_order_relaxed); }

  /// Replaces the workers by `threads` new ones (0: every loop runs on its caller).
  /// Thread-safe: loops running meanwhile finish on their callers and on whichever
  /// workers remain, so no iteration is lost; it waits for retiring workers to finish
  /// the iteration in hand. Throws UserError for a negative count or when called from
  /// inside a parallel loop (a worker cannot wait for itself to stop).
  void set_threads(int threads);

  /// The process-wide pool, with hardware_concurrency() - 1 workers, made on first use.
  static ThreadPool& global();

  /// Makes parallel loops of generated code use `threads` threads in all: the caller plus
  /// threads - 1 workers of the global pool (1 runs every loop serially). Throws
  /// UserError when threads < 1 or when called from inside a parallel loop.
  static void set_global_threads(int threads);
  /// The number of threads parallel loops of generated code use (workers + 1).
  static int global_threads() { return global().threads() + 1; }

 private:
  struct Job;
  void worker_loop();
  void start_workers(int threads);
  void stop_workers();
  static void run_iterations(Job& job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  // Serialises set_threads and the destructor: only they touch workers_ after
  // construction. parallel_for reads worker_count_ instead, so it never races a resize.
  std::mutex resize_mutex_;
  std::vector<std::thread> workers_;
  std::atomic<int> worker_count_{0};
};

}  // namespace stipple

/// The entry point generated code calls (a plain C symbol the JIT resolves): runs the
/// closure over [min, min + extent) on the global pool; returns 0 or an error code.
extern "C" int32_t stipple_parallel_for(void* body, void* closure, int32_t min, int32_t extent);

/// ThreadPool::set_global_threads for C callers: 0 on success, 1 when threads < 1 or
/// when called from inside a parallel loop (nothing changes then).
extern "C" int32_t stipple_set_num_threads(int32_t threads);
