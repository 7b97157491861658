#include "compiler_core/support/host_probe.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

namespace stipple {

namespace {

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

// "0-15" or "0,2-3": the number of CPUs in a sysfs cpu list.
int count_cpu_list(const std::string& list) {
  int count = 0;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        std::stoi(part);
        ++count;
      } else {
        count += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
      }
    } catch (const std::exception&) {
      return 0;
    }
  }
  return count;
}

constexpr const char* kEmulatedSuffix = "-emulated";

}  // namespace

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string host_arch() {
  utsname u{};
  uname(&u);
  return u.machine;
}

std::string host_target_key(const std::string& cpu, const std::string& features) {
  // Only the enabled features, sorted, so that the key does not depend on LLVM's order.
  std::vector<std::string> enabled;
  std::stringstream in(features);
  for (std::string f; std::getline(in, f, ',');) {
    if (!f.empty() && f[0] == '+') enabled.push_back(f.substr(1));
  }
  std::sort(enabled.begin(), enabled.end());
  uint32_t h = 2166136261u;  // FNV-1a: a short stable key, not a security hash
  for (const std::string& f : enabled) {
    for (char c : f + ",") h = (h ^ uint8_t(c)) * 16777619u;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return host_arch() + "-" + cpu + "-" + buf + (host_is_emulated() ? kEmulatedSuffix : "");
}

bool target_is_emulated(const std::string& target) {
  const std::string_view suffix = kEmulatedSuffix;
  return target.size() > suffix.size() &&
         std::string_view(target).substr(target.size() - suffix.size()) == suffix;
}

std::string cpuinfo_arch(const std::string& cpuinfo) {
  std::stringstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("vendor_id", 0) == 0) return "x86_64";
    if (line.rfind("CPU implementer", 0) == 0) return "aarch64";
  }
  return "";
}

bool host_is_emulated() {
  static const bool emulated = [] {
    if (const char* said = std::getenv("STIPPLE_EMULATED"); said && std::string(said) == "1") {
      return true;
    }
    std::ifstream in("/proc/cpuinfo");
    std::stringstream text;
    text << in.rdbuf();
    const std::string real = cpuinfo_arch(text.str());
    return !real.empty() && real != host_arch();
  }();
  return emulated;
}

int host_cpu_count() {
  unsigned threads = std::thread::hardware_concurrency();
  if (threads == 0) {
    threads = static_cast<unsigned>(count_cpu_list(read_line("/sys/devices/system/cpu/online")));
  }
  return threads > 0 ? static_cast<int>(threads) : 1;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return host_cpu_count();
}

HostCaches probe_host_caches() {
  namespace fs = std::filesystem;
  HostCaches caches;
  const fs::path cache_dir = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  if (!fs::is_directory(cache_dir, ec)) return caches;
  int llc_level = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(cache_dir, ec)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    std::string type = read_line(e.path() / "type");
    int64_t size = parse_cache_size(read_line(e.path() / "size"));
    int level = 0;
    try {
      level = std::stoi(read_line(e.path() / "level"));
    } catch (const std::exception&) {
      continue;
    }
    if (size <= 0 || type == "Instruction") continue;
    if (level == 1 && type == "Data") caches.l1_data_bytes = size;
    if (level == 2) caches.l2_bytes = size;
    if (level >= 2 && level >= llc_level) {
      llc_level = level;
      caches.llc_bytes = size;
    }
    std::string line = read_line(e.path() / "coherency_line_size");
    try {
      int l = line.empty() ? 0 : std::stoi(line);
      if (l >= 16 && l <= 1024) caches.line_bytes = l;
    } catch (const std::exception&) {
    }
  }
  if (caches.llc_bytes < caches.l2_bytes) caches.llc_bytes = caches.l2_bytes;
  return caches;
}

int64_t parse_cache_size(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return 0;
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  std::string unit = text.substr(used);
  if (unit.empty()) return value;
  if (unit == "K" || unit == "KB" || unit == "KiB") return value << 10;
  if (unit == "M" || unit == "MB" || unit == "MiB") return value << 20;
  if (unit == "G" || unit == "GB" || unit == "GiB") return value << 30;
  return 0;
}

int vector_bytes_from_features(bool avx512f, bool avx2, bool avx, bool neon) {
  if (avx512f) return 64;
  if (avx2 || avx) return 32;
  (void)neon;  // NEON registers are 16 bytes, like SSE's
  return 16;
}

int host_vector_bytes() {
  static const int bytes = [] {
    if (host_arch() != "x86_64") return vector_bytes_from_features(false, false, false, true);
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("flags", 0) != 0) continue;
      std::stringstream words(line.substr(line.find(':') + 1));
      bool avx512f = false, avx2 = false, avx = false;
      for (std::string w; words >> w;) {
        avx512f |= w == "avx512f";
        avx2 |= w == "avx2";
        avx |= w == "avx";
      }
      return vector_bytes_from_features(avx512f, avx2, avx, false);
    }
    return vector_bytes_from_features(false, false, false, false);
  }();
  return bytes;
}

}  // namespace stipple
