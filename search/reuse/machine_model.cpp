#include "search/reuse/machine_model.h"

#include <algorithm>
#include <sstream>

#include "compiler_core/support/host_probe.h"
namespace stipple::search {

MachineModel MachineModel::host() {
  MachineModel m;
  m.cores = host_cpu_count();
  const HostCaches caches = probe_host_caches();
  if (caches.l1_data_bytes > 0) m.l1_bytes = caches.l1_data_bytes;
  if (caches.l2_bytes > 0) m.l2_bytes = caches.l2_bytes;
  if (caches.llc_bytes > 0) m.llc_bytes = caches.llc_bytes;
  if (m.llc_bytes < m.l2_bytes) m.llc_bytes = m.l2_bytes;
  if (caches.line_bytes > 0) m.cache_line = caches.line_bytes;

  // The one reading of the host's registers that vectors(k) in a schedule also counts.
  m.vector_bytes = host_vector_bytes();
  return m;
}

MachineModel MachineModel::of_worker(const HostCapabilities& worker) {
  MachineModel m;
  if (worker.cores > 0) m.cores = worker.cores;
  if (worker.l2_bytes > 0) m.l2_bytes = worker.l2_bytes;
  if (worker.llc_bytes > 0) m.llc_bytes = std::max(worker.llc_bytes, m.l2_bytes);
  if (worker.vector_bits > 0) m.vector_bytes = worker.vector_bits / 8;
  return m;
}

std::string MachineModel::describe() const {
  std::ostringstream os;
  os << cores << (cores == 1 ? " core" : " cores") << ", L1d " << (l1_bytes >> 10) << " KiB, L2 "
     << (l2_bytes >> 10) << " KiB, LLC " << (llc_bytes >> 10) << " KiB, " << cache_line
     << "-byte lines, " << vector_bytes << "-byte vectors";
  return os.str();
}

}  // namespace stipple::search
