// What this host is, as a worker registers it (the design's "Cluster principles"): detected
// once at start-up from the same sources the measuring process uses, so that the target a
// worker registers under is exactly the one its measurements are recorded with.
#pragma once

#include "compiler_core/support/host_capabilities.h"

namespace stipple::workers {

/// The host name, architecture (uname), LLVM's host CPU and enabled ISA features (as the
/// JIT compiles for them), the CPUs this process may run on (sched_getaffinity), L2 and
/// last-level cache sizes (compiler_core/support/host_probe.h), the vector width those
/// features imply, and host_target_key() of the CPU and features: the key LocalEvaluator
/// reports as target().
/// The GPU, if the CUDA driver reports one (gpu_probe.h): model, memory, compute
/// capability, multiprocessors, driver version and its target key; else why not.
HostCapabilities detect_host_capabilities();

}  // namespace stipple::workers
