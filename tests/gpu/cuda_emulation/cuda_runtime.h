// A CPU stand-in for the part of the CUDA runtime that files of Stipple's CUDA back end
// use, so that the tests run the generated kernels' own code on a host without a GPU
// (emulated_check.sh; tests/gpu/README.md). A launch runs the blocks one after another and,
// in each, the threads one after another: exact for these kernels, whose threads share
// nothing (no shared memory, no barriers; the error word is written with atomicExch, a
// plain store here). Device memory is host memory.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>

#define __global__
#define __host__
#define __device__

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local uint3 blockIdx, threadIdx;
inline thread_local dim3 gridDim, blockDim;

enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind {
  cudaMemcpyHostToHost,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice
};

inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::memcpy(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* to, int value, size_t bytes) {
  std::memset(to, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline int atomicExch(int* address, int value) {
  const int old = *address;
  *address = value;
  return old;
}
// Threads run one at a time here, so an atomic add is a plain one (in the order of the
// blocks and threads, not the evaluator's: atomic updates are compared within tolerance).
template <typename T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

namespace stipple_emulation {

template <typename Kernel>
struct Launch {
  Kernel* kernel;
  dim3 grid, block;
  template <typename... Args>
  void operator()(const Args&... args) const {
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx)
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                blockIdx = {bx, by, bz};
                threadIdx = {tx, ty, tz};
                kernel(args...);
              }
  }
};

template <typename Kernel>
Launch<Kernel> launch(Kernel* kernel, dim3 grid, dim3 block) {
  return {kernel, grid, block};
}

}  // namespace stipple_emulation

#define STIPPLE_CUDA_LAUNCH(kernel, grid, block) stipple_emulation::launch(kernel, grid, block)
