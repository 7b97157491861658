// The thread pool behind stipple_parallel_for: a queue of jobs, each an index range handed
// out one iteration at a time through an atomic counter, so uneven iterations balance.
#include "compiler_core/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "compiler_core/ir/error.h"

namespace stipple {

namespace {
// How deep the current thread is inside parallel loops; nested loops run inline.
thread_local int parallel_depth = 0;
}  // namespace

struct ThreadPool::Job {
  ParallelBody body = nullptr;
  void* closure = nullptr;
  int64_t min = 0, end = 0;
  std::atomic<int64_t> next{0};      // the next iteration to hand out
  std::atomic<int64_t> finished{0};  // iterations completed or skipped
  std::atomic<int32_t> error{0};
  std::mutex done_mutex;
  std::condition_variable done;
};

ThreadPool::ThreadPool(int threads) { start_workers(threads); }

ThreadPool::~ThreadPool() {
  std::lock_guard<std::mutex> resize_lock(resize_mutex_);
  stop_workers();
}

void ThreadPool::start_workers(int threads) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  worker_count_.store(threads, std::memory_order_relaxed);
}

void ThreadPool::stop_workers() {
  // Workers look at stopping_ only between jobs, so each finishes the iterations it has
  // taken; a job's owner runs whatever is left, so queued jobs still complete.
  worker_count_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = false;
}

void ThreadPool::set_threads(int threads) {
  if (threads < 0) {
    throw UserError("a thread pool cannot have " + std::to_string(threads) + " workers");
  }
  if (parallel_depth > 0) {
    throw UserError("the thread count cannot change from inside a parallel loop");
  }
  std::lock_guard<std::mutex> resize_lock(resize_mutex_);
  if (threads == static_cast<int>(workers_.size())) return;
  stop_workers();
  start_workers(threads);
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1);
  return pool;
}

void ThreadPool::set_global_threads(int threads) {
  if (threads < 1) {
    throw UserError("the thread count must be at least 1, not " + std::to_string(threads));
  }
  global().set_threads(threads - 1);
}

void ThreadPool::run_iterations(Job& job) {
  const int64_t total = job.end - job.min;
  ++parallel_depth;
  for (;;) {
    int64_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= total) break;
    if (job.error.load(std::memory_order_relaxed) == 0) {
      int32_t code = job.body(job.closure, static_cast<int32_t>(job.min + i));
      if (code != 0) {
        int32_t expected = 0;
        job.error.compare_exchange_strong(expected, code);
      }
    }
    if (job.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == total) {
      std::lock_guard<std::mutex> lock(job.done_mutex);
      job.done.notify_all();
    }
  }
  --parallel_depth;
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = queue_.front();
      // A job whose iterations are all handed out leaves the queue; its owner waits for
      // the ones still running.
      if (job->next.load(std::memory_order_relaxed) >= job->end - job->min) {
        queue_.pop_front();
        continue;
      }
    }
    run_iterations(*job);
  }
}

int32_t ThreadPool::parallel_for(ParallelBody body, void* closure, int32_t min, int32_t extent) {
  if (extent <= 0) return 0;
  if (worker_count_.load(std::memory_order_relaxed) == 0 || extent == 1 || parallel_depth > 0) {
    ++parallel_depth;
    int32_t code = 0;
    for (int64_t i = min; i < static_cast<int64_t>(min) + extent && code == 0; ++i) {
      code = body(closure, static_cast<int32_t>(i));
    }
    --parallel_depth;
    return code;
  }
  auto job = std::make_shared<Job>();
  job->body = body;
  job->closure = closure;
  job->min = min;
  job->end = static_cast<int64_t>(min) + extent;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(job);
  }
  wake_.notify_all();
  run_iterations(*job);
  {
    std::unique_lock<std::mutex> lock(job->done_mutex);
    job->done.wait(lock, [&] { return job->finished.load(std::memory_order_acquire) >= extent; });
  }
  {
    // Workers drop a finished job lazily; drop it now so the queue stays short.
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it != queue_.end()) queue_.erase(it);
  }
  return job->error.load(std::memory_order_acquire);
}

}  // namespace stipple

extern "C" int32_t stipple_parallel_for(void* body, void* closure, int32_t min, int32_t extent) {
  return stipple::ThreadPool::global().parallel_for(reinterpret_cast<stipple::ParallelBody>(body),
                                                    closure, min, extent);
}

extern "C" int32_t stipple_set_num_threads(int32_t threads) {
  try {
    stipple::ThreadPool::set_global_threads(threads);
  } catch (const stipple::UserError&) {
    return 1;
  }
  return 0;
}
