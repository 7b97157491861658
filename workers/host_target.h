// The target a measurement belongs to: fronts never mix timings of different machines
// (DESIGN.md), so every evaluation is stored with the key of the CPU that ran it.
#pragma once

#include <string>

namespace stipple::workers {

/// "ARCH-CPU-HASH": the machine's architecture (uname), LLVM's name of the host CPU and a
/// hash of the ISA features LLVM compiles for (e.g. "x86_64-znver4-1f3a9c2e").
std::string host_target_key(const std::string& cpu, const std::string& features);

/// This machine's host name.
std::string host_name();

}  // namespace stipple::workers
