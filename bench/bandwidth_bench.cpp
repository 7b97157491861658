// Issue #3's memory-bandwidth bound for the DRAM-bound case: the 3x3 blur on 6400x4800
// RGB f32 reads 369 MB and writes 369 MB, so no schedule can beat the time to stream
// that many bytes in and out. This times the same traffic two STREAM-like ways, with 1
// and 2 threads (each takes a contiguous half): a plain copy loop (-O3 -march=native;
// ordinary stores, so each written line is also read first, as the blur's stores are)
// and glibc's memcpy (non-temporal stores at this size: the cheapest way to write).
// The table takes the faster as the bound.
#include <cstring>
#include <thread>
#include <vector>

#include "bench/bench_common.h"

namespace stipple::bench {
namespace {

struct Streams {
  std::vector<float> src, dst;
};

void copy_loop(const float* __restrict src, float* __restrict dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}

void copy_memcpy(const float* src, float* dst, size_t n) {
  std::memcpy(dst, src, n * sizeof(float));
}

/// Runs copy over [0, n) split into `threads` contiguous parts, the caller taking one.
void split(void (*copy)(const float*, float*, size_t), const Streams& s, float* dst, int threads) {
  const size_t n = s.src.size(), part = (n + threads - 1) / threads;
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) {
    size_t begin = std::min(n, t * part), end = std::min(n, begin + part);
    helpers.emplace_back([&, begin, end] { copy(s.src.data() + begin, dst + begin, end - begin); });
  }
  copy(s.src.data(), dst, std::min(n, part));
  for (auto& h : helpers) h.join();
}

}  // namespace
}  // namespace stipple::bench

int main(int argc, char** argv) {
  using namespace stipple::bench;
  const ImageSize size = bench_sizes("blur3x3").back();  // 6400x4800
  auto streams = std::make_shared<Streams>();
  auto setup = [=] {
    if (!streams->src.empty()) return;
    // Fill both, so that page faults are not timed.
    const size_t n = static_cast<size_t>(size.width * size.height * 3);
    streams->src.assign(n, 0.5f);
    streams->dst.assign(n, 0.0f);
  };
  for (int threads : bench_threads()) {
    register_timed(
        bench_name("bandwidth", size, threads, "copy_loop"),
        [=] { split(&copy_loop, *streams, streams->dst.data(), threads); }, setup);
    register_timed(
        bench_name("bandwidth", size, threads, "memcpy"),
        [=] { split(&copy_memcpy, *streams, streams->dst.data(), threads); }, setup);
  }
  return run_benchmarks(argc, argv);
}
