// stipple-evaluator: the child process LocalEvaluator runs candidates in (wire.h has the
// protocol). It lives under resource limits the parent asks for, so a candidate that
// allocates without end, writes without end or spins takes down this process, never the
// tuner: the parent sees the child die, records the candidate as failed and starts a new
// child.
//   - address space (RLIMIT_AS): an allocation past it fails -> "out_of_memory";
//   - CPU time (RLIMIT_CPU), reset before each job to what it has used plus the job's
//     allowance: past it the kernel sends SIGXCPU -> "timeout";
//   - file size (RLIMIT_FSIZE), from the first candidate on: the reference outputs this
//     process writes to the cache at start are its own, sized by the photos (a 40 MP
//     colour photo's is 480 MB), not a candidate's runaway writes;
//   - no core dumps (RLIMIT_CORE = 0).
// The reference outputs are computed at start under the same CPU allowance as a candidate.
// The wall-clock deadline is the parent's: it kills this process's whole group, and it
// applies to the start too. With --parent-pid this process dies with its parent
// (PR_SET_PDEATHSIG): a worker killed while this computes references leaves no orphan.
//
// With --benchmark-lock it holds the host's lock (benchmark_lock.h) shared while compiling
// a candidate and exclusively while timing; never while computing references, which may
// take up to the deadline and must not hold up another process's timed runs. When it has
// to wait for the lock it says so, a line {"phase": "waiting"} and then {"phase":
// "running"}, so that the parent's deadline counts the candidate's own time, not the
// queue's.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/host_probe.h"
#include "workers/benchmark_lock.h"
#include "workers/measurement.h"
#include "workers/sanitizer.h"
#include "workers/wire.h"

namespace {

using namespace stipple;
using namespace stipple::workers;

void limit(int resource, rlim_t value) {
  rlimit r{value, value};
  setrlimit(resource, &r);
}

void allow_cpu_seconds(double seconds) {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double used = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                      1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  rlimit r{};
  getrlimit(RLIMIT_CPU, &r);
  r.rlim_cur = rlim_t(used + seconds) + 1;
  if (r.rlim_max != RLIM_INFINITY && r.rlim_cur > r.rlim_max) r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_CPU, &r);
}

void send(const nlohmann::json& j) {
  std::cout << j.dump() << "\n";
  std::cout.flush();
}

/// Takes the host's benchmark lock for a phase, telling the parent when it must wait. A
/// wait past `wait_seconds` goes on without the lock (with a warning): a host whose lock
/// a stopped process keeps must still measure.
//
// With STIPPLE_EVALUATOR_TRACE=FILE it appends a line per measured candidate to FILE:
// "PID COMPILE_START COMPILE_END TIMING_START TIMING_END", steady-clock nanoseconds from
// the moment each phase held its lock; the tests check with it that timed runs never
// overlap each other or a compile.
class LockedPhases {
 public:
  LockedPhases(const std::string& path, double wait_seconds, const char* trace)
      : lock_(std::make_unique<BenchmarkLock>(path)),
        wait_seconds_(wait_seconds),
        trace_(trace ? trace : "") {}

  MeasurementGate gate() {
    MeasurementGate g;
    g.before_compile = [this] {
      take(false);
      marks_[0] = now();
    };
    g.before_timing = [this] {
      marks_[1] = now();
      take(true);
      marks_[2] = now();
    };
    g.after_timing = [this] {
      marks_[3] = now();
      lock_->unlock();
      write_trace();
    };
    return g;
  }
  void release() { lock_->unlock(); }

 private:
  std::unique_ptr<BenchmarkLock> lock_;
  double wait_seconds_;
  std::string trace_;
  int64_t marks_[4] = {};

  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void write_trace() {
    if (trace_.empty()) return;
    const std::string record = std::to_string(getpid()) + " " + std::to_string(marks_[0]) + " " +
                               std::to_string(marks_[1]) + " " + std::to_string(marks_[2]) + " " +
                               std::to_string(marks_[3]) + "\n";
    // One write with O_APPEND: lines of several children never interleave.
    const int fd = ::open(trace_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (::write(fd, record.data(), record.size()) < 0) {
    }
    ::close(fd);
  }

  void take(bool exclusive) {
    auto attempt = [&](double seconds) {
      return exclusive ? lock_->lock_exclusive(seconds) : lock_->lock_shared(seconds);
    };
    if (attempt(0)) return;
    send({{"phase", "waiting"},
          {"lock", lock_->path()},
          {"holders", describe_lock_holders(lock_->path())}});
    if (!attempt(wait_seconds_)) {
      std::cerr << "stipple-evaluator: waited " << wait_seconds_ << " s for the benchmark lock "
                << lock_->path() << "; going on without it\n";
    }
    send({{"phase", "running"}});
  }
};

// Test hook (STIPPLE_EVALUATOR_TEST_FAULTS=1 only): a schedule with the comment
// `# fault: NAME` fails the way NAME says, so that tests can drive every failure path of
// LocalEvaluator with a real dying, spinning or allocating process. Never enabled
// otherwise.
void inject_fault(const std::string& schedule) {
  const size_t at = schedule.find("# fault: ");
  if (at == std::string::npos) return;
  const std::string fault = schedule.substr(at + 9, schedule.find('\n', at) - at - 9);
  if (fault == "segv") std::raise(SIGSEGV);
  if (fault == "abort") std::abort();
  if (fault == "exit") _exit(3);
  if (fault == "spin") {
    // A volatile read each turn: a loop with a side effect, which must not end.
    static volatile int forever = 1;
    while (forever) {
    }
  }
  if (fault == "sleep") {
    for (;;) pause();
  }
  if (fault == "allocate") {
    // Until the address-space limit says no: std::bad_alloc, as a candidate's would.
    std::vector<std::unique_ptr<char[]>> blocks;
    for (;;) {
      blocks.emplace_back(new char[size_t(64) << 20]);
      std::memset(blocks.back().get(), 1, size_t(64) << 20);
    }
  }
  if (fault == "garbage") {
    std::cout << "this is not JSON\n" << std::flush;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // First of all: die with the parent. Checked below against the parent it names, which
  // may have died before this line ran (then this process was reparented already).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  CLI::App app{
      "stipple-evaluator: measures candidate schedules for LocalEvaluator (a child "
      "process speaking JSON lines on stdin and stdout; not for interactive use)"};
  int64_t memory_bytes = 0, file_bytes = 0;
  double cpu_seconds = 0;
  std::string lock_path, reference_cache;
  double lock_wait_seconds = 600;
  app.add_option("--memory-limit", memory_bytes, "address space limit in bytes (0: none)");
  app.add_option("--file-size-limit", file_bytes, "file size limit in bytes (0: none)");
  app.add_option("--cpu-seconds", cpu_seconds, "CPU seconds allowed per job (0: none)");
  app.add_option("--benchmark-lock", lock_path,
                 "the host's benchmark lock file: shared while compiling, exclusive while "
                 "timing (default: none)");
  app.add_option("--lock-wait-seconds", lock_wait_seconds,
                 "longest wait for the benchmark lock before measuring without it")
      ->capture_default_str();
  app.add_option("--reference-cache", reference_cache,
                 "folder of cached reference outputs, by content hash (default: none)");
  pid_t parent_pid = 0;
  app.add_option("--parent-pid", parent_pid,
                 "the process that started this one: when it is gone, so is this one");
  CLI11_PARSE(app, argc, argv);
  if (parent_pid > 0 && getppid() != parent_pid) return 1;  // the parent died before prctl

  limit(RLIMIT_CORE, 0);
  // AddressSanitizer reserves terabytes of shadow address space: under it the memory
  // limit cannot be an address-space limit, and is left to the parent's deadline.
  if (memory_bytes > 0 && !address_sanitizer_active()) limit(RLIMIT_AS, rlim_t(memory_bytes));

  const char* faults = std::getenv("STIPPLE_EVALUATOR_TEST_FAULTS");
  const bool test_faults = faults && std::string(faults) == "1";
  std::unique_ptr<LockedPhases> phases;
  std::unique_ptr<Measurement> measurement;
  std::string line;
  try {
    if (!lock_path.empty()) {
      // A lock file that cannot be opened is the host's problem, not the setup's: measure
      // without it, as after a wait that ran out, rather than fail every candidate.
      try {
        phases = std::make_unique<LockedPhases>(lock_path, lock_wait_seconds,
                                                std::getenv("STIPPLE_EVALUATOR_TRACE"));
      } catch (const std::runtime_error& e) {
        std::cerr << "stipple-evaluator: " << e.what() << "; measuring without it\n";
      }
    }
    if (!std::getline(std::cin, line)) return 1;
    // The references run the pipeline: a hang is stopped as a candidate's would be.
    if (cpu_seconds > 0) allow_cpu_seconds(cpu_seconds);
    measurement = std::make_unique<Measurement>(
        wire::setup_from_json(nlohmann::json::parse(line).at("setup")),
        phases ? phases->gate() : MeasurementGate{}, reference_cache);
  } catch (const std::bad_alloc&) {
    // A reference output past the memory limit (new, or the generated code's buffers) is
    // the setup's out_of_memory, as a candidate's would be, not a bad setup.
    send({{"fatal",
           "an allocation failed under the evaluator's memory limit while computing "
           "the reference outputs (the pipeline under its default schedule)"},
          {"status", to_string(EvaluationStatus::OutOfMemory)}});
    return 2;
  } catch (const std::exception& e) {
    send({{"fatal", e.what()}});
    return 2;
  }
  // From here on only candidates run: their writes are limited (the references are
  // written).
  if (file_bytes > 0) limit(RLIMIT_FSIZE, rlim_t(file_bytes));
  // Idle between candidates holds nothing: another process's timed runs may go.
  if (phases) phases->release();
  send({{"ready", true}, {"host", host_name()}, {"target", measurement->target()}});

  while (std::getline(std::cin, line)) {
    nlohmann::json job;
    try {
      job = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      send({{"fatal", std::string("bad job line: ") + e.what()}});
      return 2;
    }
    EvaluationResult r;
    try {
      if (cpu_seconds > 0) allow_cpu_seconds(cpu_seconds);
      const CodeRequest request = wire::code_request_from_json(job);
      if (test_faults) inject_fault(request.schedule);
      r = measurement->measure(request, job.at("split").get<std::string>(),
                               job.value("give_up_ms", 0.0));
    } catch (const std::bad_alloc&) {
      r = {};
      r.status = EvaluationStatus::OutOfMemory;
      r.reason = "an allocation failed under the evaluator's memory limit";
    } catch (const std::exception& e) {
      r = {};
      r.status = EvaluationStatus::Error;
      r.reason = e.what();
    }
    if (phases) phases->release();
    send({{"id", job.at("id")}, {"result", wire::to_json(r)}});
  }
  return 0;
}
