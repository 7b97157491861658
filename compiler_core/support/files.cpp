#include "compiler_core/support/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>

#include "compiler_core/ir/error.h"

namespace stipple {

std::string byte_size_text(size_t bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(units) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

namespace {

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

File open_for_reading(const std::string& path, const std::string& name) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(name + "it is a directory");
  File file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw UserError(name + std::strerror(errno));
  return file;
}

std::string cannot_read(const std::string& path, std::string_view what) {
  return "cannot read " + std::string(what) + " '" + path + "': ";
}

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what, size_t limit,
                           const std::function<void(std::string_view head)>& check_head) {
  const std::string name = cannot_read(path, what);
  const auto too_large = [&] {
    return UserError(name + "it is larger than the " + std::string(what) + " limit, " +
                     byte_size_text(limit));
  };
  std::error_code ec;
  // A regular file's size is known before reading it; a device or a pipe is read up to
  // one byte past the limit.
  if (std::filesystem::is_regular_file(path, ec)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > limit) throw too_large();
  }
  File file = open_for_reading(path, name);
  std::string text;
  char chunk[1 << 16];
  size_t n;
  bool head_checked = !check_head;
  while ((n = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) {
    if (!head_checked && text.size() + n >= kFileHeadBytes) {
      check_head(std::string_view(text + std::string(chunk, n)).substr(0, kFileHeadBytes));
      head_checked = true;
    }
    if (n > limit - text.size()) throw too_large();
    text.append(chunk, n);
  }
  if (std::ferror(file.get())) throw UserError(name + std::strerror(errno));
  if (!head_checked) check_head(text);
  return text;
}

void write_text_file(const std::string& path, const std::string& text) {
  // A temporary name of this process and thread: several writers of one content-addressed
  // file (workers sharing a photo cache, coordinator threads) never write into each other.
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  // A write that fails (a full disk, a file size limit) takes its temporary file with it,
  // and says what the OS said: "No space left on device" is not the user's mistake.
  const auto fail = [&](const std::string& what, int error_number) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw FileWriteError(what + ": " + std::strerror(error_number));
  };
  // POSIX calls rather than a stream: each failure's errno is the one the OS gave.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write '" + temp + "'", errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      fail("error while writing '" + temp + "'", e);
    }
    done += size_t(n);
  }
  if (::close(fd) != 0) fail("error while writing '" + temp + "'", errno);
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) fail("cannot rename '" + temp + "' to '" + path + "'", ec.value());
}

}  // namespace stipple
