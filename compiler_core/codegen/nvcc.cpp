#include "compiler_core/codegen/nvcc.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/files.h"

extern char** environ;

namespace stipple::codegen {

namespace {

namespace fs = std::filesystem;

/// `name` as the shell would find it on the PATH (or itself when it has a '/'); empty when
/// it is not there.
std::string on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::exists(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : fallback;
}

/// Runs `args` with standard output and error into `log`; the exit status, or -1 when it
/// could not start.
int run(const std::vector<std::string>& args, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string ptx_from_cuda_source(const std::string& cuda_source, const std::string& arch) {
  const char* named = std::getenv("STIPPLE_NVCC");
  const std::string nvcc = on_path(named != nullptr ? named : "nvcc");
  if (nvcc.empty() && named != nullptr) {
    throw UserError("STIPPLE_NVCC names '" + std::string(named) + "', which is not a program");
  }
  if (nvcc.empty()) {
    throw UserError(
        "--emit ptx needs nvcc, which is not on the PATH: install the CUDA toolkit "
        "(deploy/install-deps.sh installs Debian's) or name one with STIPPLE_NVCC");
  }
  const std::string ccbin = on_path(env_or("STIPPLE_NVCC_CCBIN", "clang++-14"));
  // A folder of our own for nvcc's input, output and temporaries, removed however we leave.
  std::string pattern = (fs::temp_directory_path() / "stipple-ptx-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw UserError("cannot make a folder for nvcc in " + fs::temp_directory_path().string() +
                    ": " + std::strerror(errno));
  }
  const fs::path dir = pattern;
  struct Remove {
    fs::path dir;
    ~Remove() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove{dir};
  write_text_file((dir / "kernels.cu").string(), cuda_source);
  std::vector<std::string> args = {nvcc,
                                   "-ptx",
                                   "-std=c++17",
                                   "-O3",
                                   "-arch=" + arch,
                                   "-fmad=false",
                                   "--expt-relaxed-constexpr",
                                   "--keep-dir",
                                   dir.string(),
                                   "-o",
                                   (dir / "kernels.ptx").string(),
                                   (dir / "kernels.cu").string()};
  if (!ccbin.empty()) args.insert(args.begin() + 1, {"-ccbin", ccbin});
  const int status = run(args, dir / "nvcc.log");
  if (status != 0) {
    const fs::path log_file = dir / "nvcc.log";  // absent when nvcc did not start
    std::string log = fs::exists(log_file)
                          ? read_text_file(log_file.string(), "nvcc's log", kNoFileSizeLimit)
                          : std::string();
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
    throw UserError(nvcc + (status < 0 ? " did not run" : " failed") + " making PTX for " + arch +
                    (log.empty() ? std::string() : ":\n" + log));
  }
  return read_text_file((dir / "kernels.ptx").string(), "nvcc's PTX", kNoFileSizeLimit);
}

}  // namespace stipple::codegen
