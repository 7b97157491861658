// Running commands from the command-line tests: the exit code and the combined output,
// and the fixture those tests share (a fresh folder per test, `stipple` run as a user
// runs it).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

/// A file's bytes ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A path under the source tree.
inline std::string source(const std::string& rel) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

#ifdef STIPPLE_BINARY
/// Runs the `stipple` binary under test with `args`.
inline Result stipple(const std::string& args) {
  return shell(std::string(STIPPLE_BINARY) + " " + args);
}
#endif

/// A test with a folder of its own under the system's temporary folder, made empty
/// before the test and removed after it.
class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("stipple-" + std::string(test->test_suite_name()) + "-" + std::to_string(::getpid()) +
            "-" + test->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// Writes `text` to the file `name` in the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  /// A throwaway CA in the folder (ca.pem, ca.key), made by the openssl command.
  void make_ca() {
    run_quietly(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=stipple-test-ca "
        "-keyout " +
        path("ca.key") + " -out " + path("ca.pem"));
  }
  /// NAME.pem and NAME.key signed by the CA, valid for localhost and 127.0.0.1.
  void make_certificate(const std::string& name) {
    write(name + ".ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
    run_quietly("openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout " +
                path(name + ".key") + " -out " + path(name + ".csr"));
    run_quietly("openssl x509 -req -days 1 -CAcreateserial -in " + path(name + ".csr") + " -CA " +
                path("ca.pem") + " -CAkey " + path("ca.key") + " -extfile " + path(name + ".ext") +
                " -out " + path(name + ".pem"));
  }
  static void run_quietly(const std::string& command) {
    ASSERT_EQ(std::system((command + " > /dev/null 2>&1").c_str()), 0) << command;
  }
  std::filesystem::path dir_;
};

}  // namespace stipple::testing_cli
