#include "workers/file_cache.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace stipple::workers {

namespace fs = std::filesystem;

void touch_cache_file(const fs::path& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

CacheTrim trim_cache(const std::vector<fs::path>& folders, int64_t max_bytes) {
  struct Entry {
    fs::file_time_type used;
    fs::path path;
    int64_t bytes;
  };
  std::vector<Entry> entries;
  CacheTrim trim;
  for (const fs::path& folder : folders) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (!it->is_regular_file(entry_ec)) continue;
      if (it->path().filename().string().find(".tmp.") != std::string::npos) continue;
      const auto bytes = it->file_size(entry_ec);
      const auto used = it->last_write_time(entry_ec);
      if (entry_ec) continue;  // gone meanwhile
      entries.push_back({used, it->path(), int64_t(bytes)});
      trim.bytes_before += int64_t(bytes);
    }
  }
  trim.bytes_after = trim.bytes_before;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.used, a.path) < std::tie(b.used, b.path);
  });
  for (const Entry& e : entries) {
    if (trim.bytes_after <= max_bytes) break;
    std::error_code ec;
    if (fs::remove(e.path, ec)) ++trim.files_removed;
    // Removed by us or by another process sharing the cache: either way it is gone.
    if (!ec) trim.bytes_after -= e.bytes;
  }
  return trim;
}

}  // namespace stipple::workers
