// Probing the machine this process runs on, from the operating system alone (uname,
// sysfs, the scheduler's affinity): the one home of what the workers register, the
// target key measurements are stored under, and the reuse model's machine model. What
// LLVM says of the CPU (its name and features) is read by codegen's JIT, not here.
#pragma once

#include <cstdint>
#include <string>

namespace stipple {

/// The host name; "localhost" when it cannot be read.
std::string host_name();

/// The machine's architecture as uname reports it ("x86_64", "aarch64").
std::string host_arch();

/// The architecture a /proc/cpuinfo text describes: "x86_64" when it has x86's
/// "vendor_id" lines, "aarch64" when it has Arm's "CPU implementer" lines, else "".
std::string cpuinfo_arch(const std::string& cpuinfo);

/// True when this process runs under user-mode emulation (qemu-user on another
/// architecture): uname reports the emulated architecture (qemu answers it) while
/// /proc/cpuinfo, which Debian 12's qemu-user (7.2) passes through from the real machine,
/// describes another. Where that cannot tell (QEMU 8.1 and later fake an Arm
/// /proc/cpuinfo; a full-system emulator), STIPPLE_EMULATED=1 in the environment says so
/// (`stipple worker --emulated` sets it for itself and its evaluators). Read once.
bool host_is_emulated();

/// "ARCH-CPU-HASH": the machine's architecture, LLVM's name of the host CPU and a hash of
/// the enabled ISA features in LLVM's "+f,-g" list (e.g. "x86_64-znver4-1f3a9c2e"), with
/// "-emulated" after it under emulation (host_is_emulated). Fronts never mix timings of
/// different machines, so every evaluation is stored with this key; an emulated CPU's
/// timings say nothing of a real one's, so its key is never a real host's.
std::string host_target_key(const std::string& cpu, const std::string& features);

/// Whether a target key is an emulated host's (host_target_key's "-emulated").
bool target_is_emulated(const std::string& target);

/// The CPUs online (std::thread::hardware_concurrency, else sysfs's online list); >= 1.
int host_cpu_count();

/// The CPUs this process may run on (sched_getaffinity): a worker confined by taskset or
/// a cgroup's cpuset has only those to run candidates on.
int usable_cores();

/// Cache sizes of CPU 0 from /sys/devices/system/cpu/cpu0/cache/index*/ (level, type,
/// size, coherency_line_size). A size that cannot be read is 0.
struct HostCaches {
  int64_t l1_data_bytes = 0;
  int64_t l2_bytes = 0;
  int64_t llc_bytes = 0;  // the highest level's data or unified cache; at least L2
  int line_bytes = 0;
};
HostCaches probe_host_caches();

/// Parses a sysfs cache size: "48K", "1024K", "32M", "512" (bytes); 0 when malformed.
int64_t parse_cache_size(const std::string& text);

/// The widest native vector register in bytes implied by a set of CPU features: avx512f
/// 64, avx or avx2 32, NEON (16-byte registers, like SSE's) and anything else 16.
int vector_bytes_from_features(bool avx512f, bool avx2, bool avx, bool neon);

/// This host's native vector register in bytes, as vector_bytes_from_features says of the
/// features the kernel reports (/proc/cpuinfo's x86 "flags"; every AArch64 CPU has 16-byte
/// NEON registers, and under qemu-user /proc/cpuinfo is the real machine's). Read once.
int host_vector_bytes();

}  // namespace stipple
