#include "client/cache_dir.h"

#include <cstdlib>

#include "compiler_core/ir/error.h"

namespace stipple::cli {

std::string default_cache_dir(const std::string& command) {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/stipple";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/stipple";
  }
  throw UserError(command + ": neither XDG_CACHE_HOME nor HOME is set; give --cache DIR");
}

}  // namespace stipple::cli
