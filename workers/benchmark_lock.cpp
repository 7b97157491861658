#include "workers/benchmark_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "compiler_core/ir/error.h"

namespace stipple::workers {

BenchmarkLock::BenchmarkLock(const std::string& path) : path_(path) {
  // Read-only: flock needs no write access, so every user's evaluators on the host can
  // share the one file whatever its owner's umask made of its mode.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw std::runtime_error("cannot open the benchmark lock " + path + ": " +
                             std::strerror(errno));
  }
}

BenchmarkLock::~BenchmarkLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool BenchmarkLock::lock_shared(double seconds) { return acquire(LOCK_SH, seconds); }
bool BenchmarkLock::lock_exclusive(double seconds) { return acquire(LOCK_EX, seconds); }

void BenchmarkLock::unlock() { ::flock(fd_, LOCK_UN); }

bool BenchmarkLock::acquire(int operation, double seconds) {
  if (seconds < 0) {
    while (::flock(fd_, operation) != 0) {
      if (errno != EINTR) return false;
    }
    return true;
  }
  // flock has no timeout, and a signal-driven one would be process-wide: polling with a
  // non-blocking try, starting at 1 ms and backing off to 20 ms. A waiter loses at most
  // 20 ms after the lock frees, against timed runs of tens of milliseconds and more.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));
  std::chrono::microseconds pause(1000);
  for (;;) {
    if (::flock(fd_, operation | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

std::string describe_lock_holders(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  // Lines of /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10954484 0 EOF", the
  // device as MAJOR:MINOR in hex and the inode in decimal.
  std::ifstream locks("/proc/locks");
  std::set<long> pids;
  for (std::string line; std::getline(locks, line);) {
    std::istringstream in(line);
    std::string number, kind, mode, access, file;
    long pid = 0;
    if (!(in >> number >> kind)) continue;
    if (kind == "->") in >> kind;  // a waiter's line: "1: -> FLOCK ..."
    if (!(in >> mode >> access >> pid >> file) || kind != "FLOCK") continue;
    const size_t colon = file.rfind(':');
    if (colon == std::string::npos) continue;
    char* end = nullptr;
    const unsigned long long inode = std::strtoull(file.c_str() + colon + 1, &end, 10);
    const std::string device = file.substr(0, colon);
    char expected[32];
    std::snprintf(expected, sizeof expected, "%02x:%02x", major(st.st_dev), minor(st.st_dev));
    if (inode != st.st_ino || device != expected || pid == ::getpid()) continue;
    if (line.find("->") != std::string::npos) continue;  // waiting, not holding
    pids.insert(pid);
  }
  std::string out;
  for (long pid : pids) {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string args((std::istreambuf_iterator<char>(cmdline)), {});
    std::replace(args.begin(), args.end(), '\0', ' ');
    while (!args.empty() && args.back() == ' ') args.pop_back();
    if (args.size() > 120) args = args.substr(0, 117) + "...";
    out += (out.empty() ? "" : ", ") + std::string("pid ") + std::to_string(pid) +
           (args.empty() ? "" : " (" + args + ")");
  }
  return out;
}

void require_benchmark_lock(const std::string& path, const std::string& option) {
  try {
    BenchmarkLock probe(path);
  } catch (const std::runtime_error& e) {
    throw UserError(std::string(e.what()) + " (give " + option + " another file, or 'none')");
  }
}

}  // namespace stipple::workers
