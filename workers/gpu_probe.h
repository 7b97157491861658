// The GPU of this host, as the CUDA driver reports it: what a worker registers (issue
// "GPU workers": model, compute capability, memory, SM count, driver version) and the key
// a GPU target's jobs would be matched on.
//
// The driver (libcuda.so.1) is loaded at run time with dlopen, never linked: a host
// without it builds, tests and runs everything else. Debian's toolkit brings libcuda1 even
// where there is no GPU; there cuInit fails. Either way the answer is "no GPU here", with
// the reason, which `stipple workers` and the worker's log show.
#pragma once

#include <cstdint>
#include <string>

namespace stipple::workers {

struct GpuProbe {
  bool found = false;
  std::string why_not;       // when !found: "no CUDA driver (...)", "cuInit: CUDA_ERROR_NO_DEVICE"
  std::string model;         // "NVIDIA H200"
  int major = 0, minor = 0;  // compute capability
  int64_t memory_bytes = 0;
  int multiprocessors = 0;
  int driver_version = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor (13000: CUDA 13.0)

  /// "9.0".
  std::string compute_capability() const;
  /// The key of a GPU target's jobs, `cuda-sm_90-13`: the architecture code is built for
  /// and the driver's major CUDA version, which JIT-compiles the PTX.
  std::string target_key() const;
};

/// Device 0 as the driver reports it. `driver_library` is what dlopen loads (the
/// STIPPLE_CUDA_DRIVER environment variable overrides the default, for tests).
GpuProbe probe_gpu(const std::string& driver_library = "libcuda.so.1");

}  // namespace stipple::workers
