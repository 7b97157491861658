// Probing the host (compiler_core/support/host_probe.h): sysfs cache sizes, vector widths
// from CPU features, and the target key measurements are stored under.
#include "compiler_core/support/host_probe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace stipple {
namespace {

TEST(HostProbe, ParsesSysfsSizes) {
  EXPECT_EQ(parse_cache_size("48K"), 48 << 10);
  EXPECT_EQ(parse_cache_size("1024K"), 1 << 20);
  EXPECT_EQ(parse_cache_size("32M"), 32 << 20);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), 0);
  EXPECT_EQ(parse_cache_size("K"), 0);
  EXPECT_EQ(parse_cache_size("12Q"), 0);
}

TEST(HostProbe, VectorWidthFromFeatures) {
  EXPECT_EQ(vector_bytes_from_features(true, true, true, false), 64);
  EXPECT_EQ(vector_bytes_from_features(false, true, true, false), 32);
  EXPECT_EQ(vector_bytes_from_features(false, false, true, false), 32);
  EXPECT_EQ(vector_bytes_from_features(false, false, false, true), 16);
  EXPECT_EQ(vector_bytes_from_features(false, false, false, false), 16);
}

TEST(HostProbe, TargetKeyIgnoresFeatureOrderAndDisabledFeatures) {
  const std::string a = host_target_key("znver4", "+avx2,+fma,-avx512f");
  EXPECT_EQ(a, host_target_key("znver4", "-sse4a,+fma,+avx2"));
  EXPECT_NE(a, host_target_key("znver4", "+avx2,+fma,+avx512f"));
  EXPECT_NE(a, host_target_key("znver3", "+avx2,+fma"));
  EXPECT_EQ(a.rfind(host_arch() + "-znver4-", 0), 0u) << a;
}

// What qemu-user shows an arm64 program on an x86 machine is the x86 /proc/cpuinfo
// (checked by hand with Debian's qemu-aarch64-static 7.2 and by the arm-labelled cluster
// test): the architecture it describes, against uname's, is how emulation is told.
TEST(HostProbe, CpuinfoArchitecture) {
  EXPECT_EQ(cpuinfo_arch("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\n"),
            "x86_64");
  EXPECT_EQ(cpuinfo_arch("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n"
                         "CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"),
            "aarch64");
  EXPECT_EQ(cpuinfo_arch("processor\t: 0\nhart\t: 0\nisa\t: rv64imafdc\n"), "");
}

TEST(HostProbe, EmulationIsInTheTargetKey) {
  // This test runs natively (the arm-labelled test runs the emulated build).
  EXPECT_FALSE(host_is_emulated());
  const std::string key = host_target_key("znver4", "+avx2");
  EXPECT_FALSE(target_is_emulated(key)) << key;
  EXPECT_TRUE(target_is_emulated("aarch64-generic-811c9dc5-emulated"));
  EXPECT_FALSE(target_is_emulated("-emulated"));
  EXPECT_FALSE(target_is_emulated("aarch64-emulated-811c9dc5"));
}

TEST(HostProbe, ThisHost) {
  EXPECT_GE(host_cpu_count(), 1);
  EXPECT_GE(usable_cores(), 1);
  EXPECT_LE(usable_cores(), host_cpu_count());
  EXPECT_FALSE(host_name().empty());
}

// The caches against sysfs read here, independently: a probe that read nothing would
// leave every size 0, and the machine model would quietly keep its defaults.
TEST(HostProbe, CachesAreSysfsOwn) {
  namespace fs = std::filesystem;
  const fs::path dir = "/sys/devices/system/cpu/cpu0/cache";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no " << dir << " on this machine";
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::string s;
    in >> s;
    return s;
  };
  int64_t l2 = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    if (read(e.path() / "level") == "2") l2 = parse_cache_size(read(e.path() / "size"));
  }
  const HostCaches caches = probe_host_caches();
  EXPECT_EQ(caches.l2_bytes, l2);
  EXPECT_GT(caches.l1_data_bytes, 0);
  EXPECT_GE(caches.llc_bytes, caches.l2_bytes);
  EXPECT_GT(caches.llc_bytes, 0);
  EXPECT_GE(caches.line_bytes, 16);
}

}  // namespace
}  // namespace stipple
