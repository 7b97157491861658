#include "workers/host_capabilities.h"

#include <algorithm>
#include <sstream>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/support/host_probe.h"
#include "workers/gpu_probe.h"

namespace stipple::workers {

HostCapabilities detect_host_capabilities() {
  HostCapabilities c;
  c.host = host_name();
  c.arch = host_arch();
  // The JIT's own view of the host (what measurement.cpp keys results with), not a second
  // detection that could disagree with it.
  const codegen::HostCpu host = codegen::jit_host_cpu();
  c.cpu = host.cpu;
  std::stringstream features(host.features);
  for (std::string f; std::getline(features, f, ',');) {
    if (f.size() > 1 && f[0] == '+') c.isa_features.push_back(f.substr(1));
  }
  std::sort(c.isa_features.begin(), c.isa_features.end());
  c.target = host_target_key(host.cpu, host.features);
  c.emulated = host_is_emulated();
  c.cores = usable_cores();
  const HostCaches caches = probe_host_caches();
  c.l2_bytes = caches.l2_bytes;
  c.llc_bytes = caches.llc_bytes;
  auto has = [&](const char* name) {
    return std::binary_search(c.isa_features.begin(), c.isa_features.end(), std::string(name));
  };
  c.vector_bits = 8 * vector_bytes_from_features(has("avx512f"), has("avx2"), has("avx"),
                                                 has("neon") || has("asimd"));
  const GpuProbe gpu = probe_gpu();
  if (gpu.found) {
    c.gpu_model = gpu.model;
    c.gpu_memory_bytes = gpu.memory_bytes;
    c.gpu_compute_capability = gpu.compute_capability();
    c.gpu_multiprocessors = gpu.multiprocessors;
    c.gpu_driver_version = gpu.driver_version;
    c.gpu_target = gpu.target_key();
  } else {
    c.gpu_absent = gpu.why_not;
  }
  return c;
}

}  // namespace stipple::workers
