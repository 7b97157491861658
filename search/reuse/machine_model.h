// The machine model of the reuse model (Schedule Synthesis through Reuse Analysis §4.2-4.3,
// Table 2): the number of cores (threads of the parallel loop, equation 14), the cache
// sizes that bound a tile's working set (L2 for buffers that are not folded, the
// last-level cache for folded ones and for a segment), the cache line (the unit of
// spatial locality and of the innermost tile size) and the native vector width.
#pragma once

#include <cstdint>
#include <string>

#include "compiler_core/support/host_capabilities.h"

namespace stipple::search {

struct MachineModel {
  int cores = 1;
  int64_t l1_bytes = 32 << 10, l2_bytes = 1 << 20, llc_bytes = 8 << 20;
  int cache_line = 64;
  int vector_bytes = 32;

  /// The host this process runs on: cores, caches and the vector width
  /// (host_vector_bytes) as compiler_core/support/host_probe.h reads them. What cannot be
  /// read keeps the defaults above.
  static MachineModel host();

  /// A worker's host as it registered (the coordinator models the target's machine, not
  /// its own): cores, caches and vector width; what it did not say keeps the defaults.
  static MachineModel of_worker(const HostCapabilities& worker);

  /// "2 cores, L1d 48 KiB, L2 1024 KiB, LLC 32768 KiB, 64-byte lines, 64-byte vectors".
  std::string describe() const;
};

}  // namespace stipple::search
