// The runtime thread pool: every iteration runs exactly once, nested loops run inline,
// the first error stops the loop and comes back, concurrent callers do not interfere.
#include "compiler_core/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

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

}  // namespace
}  // namespace stipple
