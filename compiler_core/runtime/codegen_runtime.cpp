// Definitions of the runtime helpers generated code calls (codegen_runtime.h).
#include "compiler_core/runtime/codegen_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define STIPPLE_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define STIPPLE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define STIPPLE_POISON(p, n) ((void)(p), (void)(n))
#define STIPPLE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#include "compiler_core/runtime/median_order.h"

namespace {

// Scratch buffers of tiled schedules are allocated and freed once per tile (the demosaic's
// hand schedule once had six planes of 35 KiB per 256x32 tile). Straight to glibc, each tile's
// frees shrink the heap past its trim threshold and the next tile's mallocs grow it again with
// fresh pages (page faults, TLB flushes): 22 ms per 1080p demosaic instead of 7 in a linked
// program. Whole intermediate images have the same problem one level up: glibc maps them with mmap
// and unmaps them on free, so every run of a pipeline faults in its compute_root buffers again (a
// quarter of the time of a perforated median, mostly in the kernel). So each thread keeps the last
// few blocks it freed and hands them out again, up to kMaxCachedBytes in all; a finished pipeline
// holds at most that much per thread.
constexpr size_t kAlign = 64;  // and the header in front of each block (its size)
constexpr size_t kCachedBlocks = 32;
constexpr size_t kMaxCachedBytes = size_t{128} << 20;

struct BlockCache {
  void* blocks[kCachedBlocks] = {};  // each points at its header; oldest first
  size_t count = 0;
  size_t bytes = 0;
  ~BlockCache() {
    for (size_t i = 0; i < count; ++i) std::free(blocks[i]);
  }
};
thread_local BlockCache block_cache;

size_t& block_size(void* header) { return *static_cast<size_t*>(header); }

}  // namespace

extern "C" void* stipple_malloc(int64_t bytes) {
  size_t n = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  n = (n + kAlign - 1) / kAlign * kAlign;
  BlockCache& cache = block_cache;
  // The smallest cached block that fits and wastes at most half of itself.
  size_t best = cache.count;
  for (size_t i = 0; i < cache.count; ++i) {
    size_t have = block_size(cache.blocks[i]);
    if (have >= n && have / 2 <= n &&
        (best == cache.count || have < block_size(cache.blocks[best]))) {
      best = i;
    }
  }
  void* header;
  if (best < cache.count) {
    header = cache.blocks[best];
    std::copy(cache.blocks + best + 1, cache.blocks + cache.count, cache.blocks + best);
    --cache.count;
    cache.bytes -= block_size(header);
    STIPPLE_UNPOISON(static_cast<char*>(header) + kAlign, block_size(header));
  } else {
    header = std::aligned_alloc(kAlign, n + kAlign);  // a multiple of the alignment
    if (!header) return nullptr;
    block_size(header) = n;
  }
  return static_cast<char*>(header) + kAlign;
}

extern "C" void stipple_free(void* p) {
  if (!p) return;
  void* header = static_cast<char*>(p) - kAlign;
  BlockCache& cache = block_cache;
  const size_t size = block_size(header);
  if (size > kMaxCachedBytes) {
    std::free(header);
    return;
  }
  // Make room: the oldest blocks go.
  size_t drop = 0, dropped_bytes = 0;
  while (drop < cache.count && (cache.count - drop == kCachedBlocks ||
                                cache.bytes - dropped_bytes + size > kMaxCachedBytes)) {
    dropped_bytes += block_size(cache.blocks[drop]);
    std::free(cache.blocks[drop++]);
  }
  std::copy(cache.blocks + drop, cache.blocks + cache.count, cache.blocks);
  cache.count -= drop;
  cache.bytes -= dropped_bytes;
  // Under ASan a cached block is poisoned: a use after stipple_free is still reported.
  STIPPLE_POISON(p, size);
  cache.bytes += size;
  cache.blocks[cache.count++] = header;
}

extern "C" double stipple_median_f64(double* values, int64_t n) {
  // The evaluator's selection and order (median_order.h).
  double* nth = values + (n - 1) / 2;
  std::nth_element(values, nth, values + n, stipple::median_less);
  return *nth;
}

namespace {

template <typename T>
T apply_libm(int32_t op, T a, T b) {
  switch (op) {
    case kStippleExp: return std::exp(a);  // f64 only: f32 exp is in line (exp_f32.h)
    case kStippleLog: return std::log(a);
    case kStippleSin: return std::sin(a);
    case kStippleCos: return std::cos(a);
    case kStipplePow: return std::pow(a, b);
    case kStippleTan: return std::tan(a);
    case kStippleAtan2: return std::atan2(a, b);
    case kStippleHypot: return std::hypot(a, b);
    case kStippleTanh: return std::tanh(a);
    default: return a;
  }
}

template <typename T>
void libm_lanes(int32_t op, const void* a, const void* b, void* out, int32_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* r = static_cast<T*>(out);
  for (int32_t i = 0; i < n; ++i) r[i] = apply_libm<T>(op, x[i], y ? y[i] : T(0));
}

}  // namespace

extern "C" void stipple_libm_lanes(int32_t op, int32_t f64, const void* a, const void* b, void* out,
                                   int32_t n) {
  if (f64) {
    libm_lanes<double>(op, a, b, out, n);
  } else {
    libm_lanes<float>(op, a, b, out, n);
  }
}
