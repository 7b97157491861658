// stipple_malloc / stipple_free: 64-byte alignment, every byte usable, blocks handed out
// again after a free (the per-thread cache, whole images included, at most 128 MiB),
// frees from another thread.
// The ASan build checks that no cached block is used after it is handed back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "compiler_core/runtime/codegen_runtime.h"

namespace {

bool aligned(void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(RuntimeAlloc, BlocksAreAlignedWritableAndDistinct) {
  std::vector<void*> live;
  std::set<void*> seen;
  for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64}, int64_t{65},
                        int64_t{35000}, int64_t{5} << 20}) {
    void* p = stipple_malloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p)) << bytes;
    std::memset(p, 0xAB, static_cast<size_t>(bytes));
    EXPECT_TRUE(seen.insert(p).second) << "two live blocks share an address";
    live.push_back(p);
  }
  for (void* p : live) stipple_free(p);
  stipple_free(nullptr);  // a no-op, as free(nullptr)
}

TEST(RuntimeAlloc, AFreedBlockIsHandedOutAgainForTheSameSize) {
  // A tile's scratch planes, allocated and freed once per tile.
  std::vector<void*> first;
  for (int k = 0; k < 6; ++k) first.push_back(stipple_malloc(35000));
  for (void* p : first) stipple_free(p);
  std::set<void*> again;
  for (int k = 0; k < 6; ++k) again.insert(stipple_malloc(35000));
  EXPECT_EQ(again, std::set<void*>(first.begin(), first.end()));
  // A much smaller request does not take a large block (at most half wasted).
  void* small = stipple_malloc(64);
  EXPECT_EQ(again.count(small), 0u);
  for (void* p : again) stipple_free(p);
  stipple_free(small);
}

TEST(RuntimeAlloc, BlocksCrossThreadsAndTheCacheIsBounded) {
  void* p = stipple_malloc(1000);
  std::thread other([p] {
    std::memset(p, 1, 1000);
    stipple_free(p);  // into the other thread's cache, freed when it exits
  });
  other.join();
  // A whole intermediate image (8 MiB) is kept too: the next run of the pipeline gets the
  // same block, its pages already mapped.
  void* image = stipple_malloc(int64_t{8} << 20);
  ASSERT_NE(image, nullptr);
  std::memset(image, 2, size_t{8} << 20);
  stipple_free(image);
  void* again = stipple_malloc(int64_t{8} << 20);
  EXPECT_EQ(again, image);
  stipple_free(again);
  // Blocks that would take the cache past its 128 MiB go back to the C library, the
  // oldest first (ASan would see a reuse).
  std::vector<void*> big;
  for (int k = 0; k < 3; ++k) big.push_back(stipple_malloc(int64_t{60} << 20));
  for (void* q : big) {
    ASSERT_NE(q, nullptr);
    std::memset(q, 3, size_t{60} << 20);
    stipple_free(q);
  }
  void* huge = stipple_malloc(int64_t{129} << 20);  // above the limit: never kept
  ASSERT_NE(huge, nullptr);
  stipple_free(huge);
  // More blocks than the cache holds: the extra ones go back too.
  std::vector<void*> many;
  for (int k = 0; k < 40; ++k) many.push_back(stipple_malloc(4096 + 64 * k));
  for (void* q : many) stipple_free(q);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(RuntimeAllocDeathTest, ACachedBlockIsPoisonedUnderAsan) {
  // The cache keeps freed blocks instead of handing them back to the C library; ASan must
  // still report a write after stipple_free.
  EXPECT_DEATH(
      {
        auto* p = static_cast<volatile char*>(stipple_malloc(100));
        stipple_free(const_cast<char*>(p));
        p[10] = 1;
      },
      "use-after-poison");
}
#endif

}  // namespace
