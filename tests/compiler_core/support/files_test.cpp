// Reading files within a limit (files.h): endless devices and oversized files fail at
// once with the limit in the message, the head check runs before the rest is read, and
// what is within the limit reads back byte for byte.
#include "compiler_core/support/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "compiler_core/ir/error.h"
#include "tests/common/user_error_message.h"

namespace stipple {
namespace {

namespace fs = std::filesystem;

using testing_common::message_of;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stipple-files-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST(ByteSizeText, WholeUnitsOnly) {
  EXPECT_EQ(byte_size_text(16u << 20), "16 MiB");
  EXPECT_EQ(byte_size_text(size_t{1536} << 20), "1536 MiB");
  EXPECT_EQ(byte_size_text(size_t{1} << 30), "1 GiB");
  EXPECT_EQ(byte_size_text(1024), "1 KiB");
  EXPECT_EQ(byte_size_text(1000), "1000 bytes");
  EXPECT_EQ(byte_size_text(1025), "1025 bytes");
}

// The hang of `stipple check /dev/zero`: it read gigabytes before. Now the default limit
// stops it, quickly.
TEST_F(Files, AnEndlessDeviceStopsAtTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(message_of([] { read_text_file("/dev/zero", "pipeline"); }),
            "cannot read pipeline '/dev/zero': it is larger than the pipeline limit, 16 MiB");
  EXPECT_EQ(message_of([] { read_text_file("/dev/urandom", "schedule", 4096); }),
            "cannot read schedule '/dev/urandom': it is larger than the schedule limit, 4 KiB");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(Files, ALargeRegularFileIsRefusedBeforeItIsRead) {
  // Sparse: its size is known without writing its bytes, and reading it would take long.
  const std::string big = path("big.stp");
  { std::ofstream(big) << ""; }
  fs::resize_file(big, uintmax_t{64} << 30);  // 64 GiB
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(message_of([&] { read_text_file(big, "pipeline"); }),
            "cannot read pipeline '" + big + "': it is larger than the pipeline limit, 16 MiB");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(Files, AFileAtTheLimitReadsBackExactly) {
  std::mt19937 rng(7);
  for (size_t size : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{65535}, size_t{65536},
                      size_t{65537}, size_t{200000}}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string file = path("f" + std::to_string(size));
    std::ofstream(file, std::ios::binary) << bytes;
    EXPECT_EQ(read_text_file(file, "file", size), bytes) << size;
    if (size > 0) {
      EXPECT_NE(message_of([&] { read_text_file(file, "file", size - 1); }).find("larger than"),
                std::string::npos)
          << size;
    }
  }
}

TEST_F(Files, TheHeadCheckSeesTheFirstBytesBeforeTheRest) {
  std::vector<std::string> heads;
  auto record = [&](std::string_view head) { heads.emplace_back(head); };
  std::ofstream(path("short"), std::ios::binary) << "abc";
  EXPECT_EQ(read_text_file(path("short"), "file", kMaxTextFileBytes, record), "abc");
  std::string long_text(100000, 'x');
  long_text.replace(0, 20, "0123456789abcdefghij");
  std::ofstream(path("long"), std::ios::binary) << long_text;
  EXPECT_EQ(read_text_file(path("long"), "file", kMaxTextFileBytes, record), long_text);
  EXPECT_EQ(heads, (std::vector<std::string>{"abc", "0123456789abcdef"}));

  // A refusal from the head check ends the read of an endless device at once, even with
  // no limit.
  EXPECT_EQ(message_of([] {
              read_text_file("/dev/zero", "image", kNoFileSizeLimit, [](std::string_view head) {
                if (head[0] == '\0') throw UserError("not a PNG or JPEG file");
              });
            }),
            "not a PNG or JPEG file");
}

TEST_F(Files, MissingFilesAndFoldersSayWhy) {
  EXPECT_EQ(message_of([&] { read_text_file(path("none.stp"), "pipeline"); }),
            "cannot read pipeline '" + path("none.stp") + "': No such file or directory");
  EXPECT_EQ(message_of([&] { read_text_file(dir_.string(), "schedule"); }),
            "cannot read schedule '" + dir_.string() + "': it is a directory");
}

}  // namespace
}  // namespace stipple
