// Running commands from the command-line tests: the exit code and the combined output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace stipple::testing_cli {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

/// Runs `command` in a shell, stderr merged into stdout.
inline Result shell(const std::string& command) {
  Result r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// A path under the source tree.
inline std::string source(const std::string& rel) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

}  // namespace stipple::testing_cli
