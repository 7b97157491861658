// The runtime thread pool: every iteration runs exactly once, nested loops run inline,
// the first error stops the loop and comes back, concurrent callers do not interfere,
// and the pool's size can change at run time (also while loops run) without losing work.
#include "compiler_core/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "compiler_core/ir/error.h"

namespace stipple {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(size_t n) : hits(n) {}
};

int32_t count_hit(void* closure, int32_t i) {
  auto* c = static_cast<Counts*>(closure);
  c->hits[static_cast<size_t>(i + 10)].fetch_add(1);
  return 0;
}

TEST(ThreadPool, EveryIterationRunsOnce) {
  ThreadPool pool(3);
  Counts c(1000);
  EXPECT_EQ(pool.parallel_for(&count_hit, &c, -10, 990), 0);
  for (size_t i = 0; i < 1000; ++i) EXPECT_EQ(c.hits[i].load(), i < 990 ? 1 : 0) << i;
}

TEST(ThreadPool, EmptyAndNegativeExtentsRunNothing) {
  ThreadPool pool(2);
  Counts c(20);
  EXPECT_EQ(pool.parallel_for(&count_hit, &c, 0, 0), 0);
  EXPECT_EQ(pool.parallel_for(&count_hit, &c, 0, -5), 0);
  for (auto& h : c.hits) EXPECT_EQ(h.load(), 0);
}

struct Nested {
  std::atomic<int64_t> sum{0};
};

int32_t inner(void* closure, int32_t i) {
  static_cast<Nested*>(closure)->sum.fetch_add(i);
  return 0;
}

int32_t outer(void* closure, int32_t i) {
  // A parallel loop inside a parallel loop (through the C entry point, as generated code
  // calls it) runs inline and must not deadlock.
  return stipple_parallel_for(reinterpret_cast<void*>(&inner), closure, i * 100, 100);
}

TEST(ThreadPool, NestedLoopsRunInline) {
  Nested n;
  EXPECT_EQ(stipple_parallel_for(reinterpret_cast<void*>(&outer), &n, 0, 50), 0);
  EXPECT_EQ(n.sum.load(), int64_t{4999} * 5000 / 2);
}

int32_t fail_at_7(void* closure, int32_t i) {
  static_cast<std::atomic<int>*>(closure)->fetch_add(1);
  return i == 7 ? 42 : 0;
}

TEST(ThreadPool, FirstErrorIsReturned) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_EQ(pool.parallel_for(&fail_at_7, &ran, 0, 100000), 42);
  EXPECT_LT(ran.load(), 100000);  // the rest were skipped
}

TEST(ThreadPool, ConcurrentCallersEachGetTheirOwnLoop) {
  ThreadPool pool(2);
  std::vector<std::unique_ptr<Counts>> counts;
  for (int t = 0; t < 4; ++t) counts.push_back(std::make_unique<Counts>(510));
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) pool.parallel_for(&count_hit, counts[t].get(), -10, 500);
    });
  }
  for (auto& th : callers) th.join();
  for (int t = 0; t < 4; ++t) {
    for (size_t i = 0; i < 510; ++i) EXPECT_EQ(counts[t]->hits[i].load(), i < 500 ? 20 : 0);
  }
}

// Records which threads ran iterations; iterations 0 and 1 wait (up to `patience`) until
// both have started, so two of them run at once exactly when the pool has a second thread.
struct Rendezvous {
  std::chrono::milliseconds patience{5000};
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};  // iterations that saw the other one arrive
};

int32_t meet(void* closure, int32_t i) {
  auto* r = static_cast<Rendezvous*>(closure);
  {
    std::lock_guard<std::mutex> lock(r->mutex);
    r->ids.insert(std::this_thread::get_id());
  }
  if (i < 2) {
    r->arrived.fetch_add(1);
    auto deadline = std::chrono::steady_clock::now() + r->patience;
    while (r->arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    if (r->arrived.load() >= 2) r->met.fetch_add(1);
  }
  return 0;
}

// Restores the global pool's size when a test ends, so the tests do not depend on order.
class GlobalThreads : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = ThreadPool::global_threads(); }
  void TearDown() override { ThreadPool::set_global_threads(saved_); }
  int saved_ = 1;
};

TEST_F(GlobalThreads, OneThreadRunsEveryLoopOnTheCaller) {
  ThreadPool::set_global_threads(1);
  EXPECT_EQ(ThreadPool::global_threads(), 1);
  EXPECT_EQ(ThreadPool::global().threads(), 0);
  Rendezvous r;
  r.patience = std::chrono::milliseconds(100);  // iteration 0 waits in vain: no one else runs
  EXPECT_EQ(stipple_parallel_for(reinterpret_cast<void*>(&meet), &r, 0, 64), 0);
  ASSERT_EQ(r.ids.size(), 1u);
  EXPECT_EQ(*r.ids.begin(), std::this_thread::get_id());
  EXPECT_EQ(r.met.load(), 1);  // only the second iteration saw both arrive
}

TEST_F(GlobalThreads, TwoThreadsRunTwoIterationsAtOnce) {
  ASSERT_EQ(stipple_set_num_threads(2), 0);
  EXPECT_EQ(ThreadPool::global_threads(), 2);
  Rendezvous r;
  EXPECT_EQ(stipple_parallel_for(reinterpret_cast<void*>(&meet), &r, 0, 2), 0);
  EXPECT_EQ(r.ids.size(), 2u);
  EXPECT_EQ(r.met.load(), 2);
  // More threads than cores is allowed (the pool does not look at the hardware).
  ThreadPool::set_global_threads(5);
  EXPECT_EQ(ThreadPool::global().threads(), 4);
  Counts c(110);
  EXPECT_EQ(stipple_parallel_for(reinterpret_cast<void*>(&count_hit), &c, -10, 100), 0);
  for (size_t i = 0; i < 110; ++i) EXPECT_EQ(c.hits[i].load(), i < 100 ? 1 : 0) << i;
}

TEST_F(GlobalThreads, BadCountsAreRefusedAndChangeNothing) {
  ThreadPool::set_global_threads(2);
  EXPECT_THROW(ThreadPool::set_global_threads(0), UserError);
  EXPECT_THROW(ThreadPool::set_global_threads(-3), UserError);
  EXPECT_EQ(stipple_set_num_threads(0), 1);
  EXPECT_THROW(ThreadPool::global().set_threads(-1), UserError);
  EXPECT_EQ(ThreadPool::global_threads(), 2);
}

int32_t resize_inside(void* closure, int32_t) {
  try {
    ThreadPool::set_global_threads(1);
  } catch (const UserError&) {
    static_cast<std::atomic<int>*>(closure)->fetch_add(1);
  }
  return 0;
}

TEST_F(GlobalThreads, ResizingFromInsideALoopIsRefused) {
  ThreadPool::set_global_threads(2);
  std::atomic<int> refused{0};
  EXPECT_EQ(stipple_parallel_for(reinterpret_cast<void*>(&resize_inside), &refused, 0, 8), 0);
  EXPECT_EQ(refused.load(), 8);
  EXPECT_EQ(stipple_set_num_threads(1), 0);  // and from outside it is fine
}

TEST(ThreadPool, ResizingWhileLoopsRunLosesNoIteration) {
  ThreadPool pool(1);
  constexpr int kCallers = 3, kReps = 200;
  std::vector<std::unique_ptr<Counts>> counts;
  for (int t = 0; t < kCallers; ++t) counts.push_back(std::make_unique<Counts>(310));
  std::atomic<bool> done{false};
  std::thread resizer([&] {
    for (int k = 0; !done.load(); ++k) pool.set_threads(k % 4);
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < kReps; ++rep) {
        EXPECT_EQ(pool.parallel_for(&count_hit, counts[t].get(), -10, 300), 0);
      }
    });
  }
  for (auto& th : callers) th.join();
  done = true;
  resizer.join();
  for (int t = 0; t < kCallers; ++t) {
    for (size_t i = 0; i < 310; ++i) EXPECT_EQ(counts[t]->hits[i].load(), i < 300 ? kReps : 0);
  }
}

}  // namespace
}  // namespace stipple
