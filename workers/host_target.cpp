#include "workers/host_target.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <vector>

namespace stipple::workers {

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
  utsname u{};
  uname(&u);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return std::string(u.machine) + "-" + cpu + "-" + buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace stipple::workers
