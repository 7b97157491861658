#include "client/output_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "compiler_core/ir/error.h"

namespace stipple::cli {

void write_output_file(const std::string& path, const std::string& contents) {
  if (is_standard_output(path)) {
    std::cout.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    std::cout.flush();
    if (!std::cout) throw UserError("cannot write to standard output");
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (out) out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) throw UserError("cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace stipple::cli
