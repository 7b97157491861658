#include "workers/benchmark_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
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

void require_benchmark_lock(const std::string& path, const std::string& option) {
  try {
    BenchmarkLock probe(path);
  } catch (const std::runtime_error& e) {
    throw UserError(std::string(e.what()) + " (give " + option + " another file, or 'none')");
  }
}

}  // namespace stipple::workers
