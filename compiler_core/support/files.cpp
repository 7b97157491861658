#include "compiler_core/support/files.h"

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
  // A write that fails (a full disk, a file size limit) takes its temporary file with it.
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw UserError(why);
  };
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot write '" + temp + "'");
    out << text;
    out.flush();
    if (!out) fail("error while writing '" + temp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) fail("cannot rename '" + temp + "' to '" + path + "': " + ec.message());
}

}  // namespace stipple
