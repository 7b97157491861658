// What a host is, as a worker registers it with the coordinator and the coordinator
// dispatches on it (the design's "Cluster principles"). The pool dispatches on `target`
// alone; the rest is shown by `stipple workers` and is there for the searches that model
// the machine (the reuse model's cores and cache sizes, a GPU back end's device). Here,
// below the workers, the coordinator and the wire format, because all three speak it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stipple {

struct HostCapabilities {
  std::string host;                       // host name (host_probe.h's host_name())
  std::string arch;                       // "x86_64", "aarch64"
  std::string cpu;                        // LLVM's name of the host CPU, e.g. "znver4"
  std::vector<std::string> isa_features;  // "avx2", "avx512f", "neon", ...
  int cores = 0;
  int64_t l2_bytes = 0;   // per core
  int64_t llc_bytes = 0;  // last-level cache
  int vector_bits = 0;    // the widest native vector register
  std::string gpu_model;  // empty: no GPU
  int64_t gpu_memory_bytes = 0;
  std::string gpu_compute_capability;  // "9.0"
  int gpu_multiprocessors = 0;
  int gpu_driver_version = 0;  // the CUDA driver's: 13000 for CUDA 13.0
  std::string gpu_target;      // "cuda-sm_90-13": the key a GPU target's jobs are matched on
  std::string gpu_absent;      // without a GPU: why ("no CUDA driver (...)", "cuInit: ...")
  /// host_target_key(): jobs go only to workers whose key equals the job's, so timings of
  /// different machines are never mixed in one front.
  std::string target;
  /// Under user-mode emulation (qemu-user: host_probe.h's host_is_emulated): its timings
  /// are the emulator's, not a real CPU's of `arch`; `target` then ends in "-emulated".
  bool emulated = false;
  /// The worker's build: Stipple's version and its code generator's
  /// (codegen::code_generator_version()), which the nightly history records with the
  /// nights measured there. Empty from workers that do not say.
  std::string stipple_version, code_generator;
};

}  // namespace stipple
