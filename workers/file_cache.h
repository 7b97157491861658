// The worker's on-disk cache (photos by SHA-256, reference outputs by key) kept under a size
// limit: least recently used files go first. "Used" is the file's modification time, which
// a cache hit renews (touch_cache_file), so that processes sharing a cache folder share
// one notion of recency without a database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace stipple::workers {

/// Marks `path` used now (its modification time). Errors are ignored: a file that cannot
/// be touched is merely evicted sooner.
void touch_cache_file(const std::filesystem::path& path);

struct CacheTrim {
  int64_t bytes_before = 0, bytes_after = 0;
  int files_removed = 0;
};

/// Removes the least recently used regular files of `folders` (not their subfolders) until
/// their total size is at most `max_bytes`. Files being written (a temporary name holding
/// ".tmp.") are neither counted nor removed. Files another process removes meanwhile are
/// skipped.
CacheTrim trim_cache(const std::vector<std::filesystem::path>& folders, int64_t max_bytes);

}  // namespace stipple::workers
