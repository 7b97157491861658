#include "client/output_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "compiler_core/ir/error.h"

namespace stipple::cli {

void write_output_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  if (out) out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) throw UserError("cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace stipple::cli
