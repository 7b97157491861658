#include "workers/host_capabilities.h"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "compiler_core/codegen/jit.h"
#include "search/reuse/machine_model.h"
#include "workers/host_target.h"

namespace stipple::workers {

namespace {

// A worker confined to some CPUs (taskset, a cgroup's cpuset) has only those to run
// candidates on; hardware_concurrency() counts them all.
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

WorkerCapabilities detect_host_capabilities() {
  WorkerCapabilities c;
  c.host = host_name();
  utsname u{};
  uname(&u);
  c.arch = u.machine;
  // The JIT's own view of the host (what measurement.cpp keys results with), not a second
  // detection that could disagree with it.
  const std::unique_ptr<codegen::JitCompiler> jit = codegen::JitCompiler::create();
  c.cpu = jit->host_cpu();
  std::stringstream features(jit->host_features());
  for (std::string f; std::getline(features, f, ',');) {
    if (f.size() > 1 && f[0] == '+') c.isa_features.push_back(f.substr(1));
  }
  std::sort(c.isa_features.begin(), c.isa_features.end());
  c.target = host_target_key(jit->host_cpu(), jit->host_features());
  c.cores = usable_cores();
  const search::MachineModel machine = search::MachineModel::host();
  c.l2_bytes = machine.l2_bytes;
  c.llc_bytes = machine.llc_bytes;
  c.vector_bits = machine.vector_bytes * 8;
  return c;
}

}  // namespace stipple::workers
