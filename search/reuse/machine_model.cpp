#include "search/reuse/machine_model.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace stipple::search {

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

}  // namespace

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

MachineModel MachineModel::host() {
  MachineModel m;
  unsigned threads = std::thread::hardware_concurrency();
  if (threads == 0) {
    threads = static_cast<unsigned>(count_cpu_list(read_line("/sys/devices/system/cpu/online")));
  }
  if (threads > 0) m.cores = static_cast<int>(threads);

  namespace fs = std::filesystem;
  const fs::path cache_dir = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  if (fs::is_directory(cache_dir, ec)) {
    int64_t llc = 0;
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
      if (level == 1 && type == "Data") m.l1_bytes = size;
      if (level == 2) m.l2_bytes = size;
      if (level >= 2 && level >= llc_level) {
        llc_level = level;
        llc = size;
      }
      std::string line = read_line(e.path() / "coherency_line_size");
      try {
        int l = line.empty() ? 0 : std::stoi(line);
        if (l >= 16 && l <= 1024) m.cache_line = l;
      } catch (const std::exception&) {
      }
    }
    if (llc > 0) m.llc_bytes = llc;
    if (m.llc_bytes < m.l2_bytes) m.llc_bytes = m.l2_bytes;
  }

  llvm::StringMap<bool> features;
  if (llvm::sys::getHostCPUFeatures(features)) {
    auto has = [&](const char* name) {
      auto it = features.find(name);
      return it != features.end() && it->second;
    };
    m.vector_bytes = vector_bytes_from_features(has("avx512f"), has("avx2"), has("avx"),
                                                has("neon") || has("asimd"));
  } else {
#if defined(__aarch64__) || defined(__ARM_NEON)
    m.vector_bytes = 16;
#endif
  }
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
