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
