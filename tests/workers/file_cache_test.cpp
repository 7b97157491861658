// The worker's cache trim (workers/file_cache.h): least recently used files go first until
// the folders fit the limit, a touched file counts as used now, files being written are
// left alone, and an independent model of the policy agrees on random caches.
#include "workers/file_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <string>

namespace stipple::workers {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class FileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "file_cache_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "images");
    fs::create_directories(root_ / "references");
  }
  void TearDown() override { fs::remove_all(root_); }

  /// A file of `bytes` bytes last used `age` ago.
  fs::path put(const std::string& name, size_t bytes, std::chrono::seconds age) {
    const fs::path p = root_ / name;
    std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
    fs::last_write_time(p, fs::file_time_type::clock::now() - age);
    return p;
  }
  std::set<std::string> left() const {
    std::set<std::string> out;
    for (const char* folder : {"images", "references"}) {
      for (const auto& e : fs::directory_iterator(root_ / folder)) {
        out.insert(std::string(folder) + "/" + e.path().filename().string());
      }
    }
    return out;
  }
  std::vector<fs::path> folders() const { return {root_ / "images", root_ / "references"}; }

  fs::path root_;
};

TEST_F(FileCacheTest, OldestGoFirstAcrossFoldersUntilTheLimit) {
  put("images/a", 100, 50s);
  put("references/b", 100, 40s);
  put("images/c", 100, 30s);
  put("references/d", 100, 20s);
  const CacheTrim t = trim_cache(folders(), 250);
  EXPECT_EQ(t.bytes_before, 400);
  EXPECT_EQ(t.bytes_after, 200);
  EXPECT_EQ(t.files_removed, 2);
  EXPECT_EQ(left(), (std::set<std::string>{"images/c", "references/d"}));
  // Under the limit: nothing to do.
  EXPECT_EQ(trim_cache(folders(), 250).files_removed, 0);
  EXPECT_EQ(trim_cache(folders(), 0).files_removed, 2);
  EXPECT_TRUE(left().empty());
}

TEST_F(FileCacheTest, ATouchedFileIsRecentlyUsed) {
  const fs::path old = put("images/old", 100, 100s);
  put("images/newer", 100, 10s);
  touch_cache_file(old);
  trim_cache(folders(), 100);
  EXPECT_EQ(left(), (std::set<std::string>{"images/old"}));
}

TEST_F(FileCacheTest, FilesBeingWrittenAndSubfoldersAreLeftAlone) {
  put("images/abc.tmp.123.456", 1000, 500s);
  fs::create_directories(root_ / "images" / "sub");
  put("images/sub/deep", 1000, 500s);
  put("images/photo", 100, 1s);
  const CacheTrim t = trim_cache(folders(), 50);
  EXPECT_EQ(t.bytes_before, 100);
  EXPECT_EQ(t.files_removed, 1);
  EXPECT_TRUE(fs::exists(root_ / "images" / "abc.tmp.123.456"));
  EXPECT_TRUE(fs::exists(root_ / "images" / "sub" / "deep"));
  // A folder that does not exist is an empty one.
  EXPECT_EQ(trim_cache({root_ / "missing"}, 0).files_removed, 0);
}

// Random caches against a model: sort by age, oldest first, drop while over the limit.
TEST_F(FileCacheTest, AgreesWithAModelOnRandomCaches) {
  std::mt19937 rng(17);
  for (int round = 0; round < 30; ++round) {
    fs::remove_all(root_ / "images");
    fs::remove_all(root_ / "references");
    fs::create_directories(root_ / "images");
    fs::create_directories(root_ / "references");
    const int n = 1 + int(rng() % 12);
    struct F {
      std::string name;
      int64_t bytes;
      int age;
    };
    std::vector<F> files;
    std::set<int> ages;
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      int age = 0;
      do age = 1 + int(rng() % 1000);
      while (!ages.insert(age).second);  // distinct ages: one right answer
      F f{std::string(rng() % 2 ? "images/" : "references/") + "f" + std::to_string(i),
          int64_t(rng() % 300), age};
      put(f.name, size_t(f.bytes), std::chrono::seconds(age));
      files.push_back(f);
      total += f.bytes;
    }
    const int64_t limit = int64_t(rng() % uint64_t(total + 1));
    std::sort(files.begin(), files.end(), [](const F& a, const F& b) { return a.age > b.age; });
    int64_t size = total;
    std::set<std::string> want;
    size_t i = 0;
    for (; i < files.size() && size > limit; ++i) size -= files[i].bytes;
    for (; i < files.size(); ++i) want.insert(files[i].name);
    const CacheTrim t = trim_cache(folders(), limit);
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(left(), want);
    EXPECT_EQ(t.bytes_before, total);
    EXPECT_EQ(t.bytes_after, size);
    EXPECT_LE(t.bytes_after, limit);
  }
}

}  // namespace
}  // namespace stipple::workers
