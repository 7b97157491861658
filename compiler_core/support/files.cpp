#include "compiler_core/support/files.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "compiler_core/ir/error.h"

namespace stipple {

std::string read_text_file(const std::string& path, std::string_view what) {
  const std::string name = "cannot read " + std::string(what) + " '" + path + "': ";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(name + "no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UserError(name + "a read error");
  return text.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  // A temporary name of this process and thread: several writers of one content-addressed
  // file (workers sharing a photo cache, coordinator threads) never write into each other.
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError("cannot write '" + temp + "'");
    out << text;
    out.flush();
    if (!out) throw UserError("error while writing '" + temp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) throw UserError("cannot rename '" + temp + "' to '" + path + "': " + ec.message());
}

}  // namespace stipple
