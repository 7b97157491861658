// stipple-evaluator: the child process LocalEvaluator runs candidates in (wire.h has the
// protocol). It lives under resource limits the parent asks for, so a candidate that
// allocates without end, writes without end or spins takes down this process, never the
// tuner: the parent sees the child die, records the candidate as failed and starts a new
// child.
//   - address space (RLIMIT_AS): an allocation past it fails -> "out_of_memory";
//   - CPU time (RLIMIT_CPU), reset before each job to what it has used plus the job's
//     allowance: past it the kernel sends SIGXCPU -> "timeout";
//   - file size (RLIMIT_FSIZE) and no core dumps (RLIMIT_CORE = 0).
// The wall-clock deadline is the parent's: it kills this process's whole group.
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "compiler_core/ir/error.h"
#include "workers/host_target.h"
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
  CLI::App app{
      "stipple-evaluator: measures candidate schedules for LocalEvaluator (a child "
      "process speaking JSON lines on stdin and stdout; not for interactive use)"};
  int64_t memory_bytes = 0, file_bytes = 0;
  double cpu_seconds = 0;
  app.add_option("--memory-limit", memory_bytes, "address space limit in bytes (0: none)");
  app.add_option("--file-size-limit", file_bytes, "file size limit in bytes (0: none)");
  app.add_option("--cpu-seconds", cpu_seconds, "CPU seconds allowed per job (0: none)");
  CLI11_PARSE(app, argc, argv);

  limit(RLIMIT_CORE, 0);
  if (file_bytes > 0) limit(RLIMIT_FSIZE, rlim_t(file_bytes));
  // AddressSanitizer reserves terabytes of shadow address space: under it the memory
  // limit cannot be an address-space limit, and is left to the parent's deadline.
  if (memory_bytes > 0 && !address_sanitizer_active()) limit(RLIMIT_AS, rlim_t(memory_bytes));

  const char* faults = std::getenv("STIPPLE_EVALUATOR_TEST_FAULTS");
  const bool test_faults = faults && std::string(faults) == "1";
  std::unique_ptr<Measurement> measurement;
  std::string line;
  try {
    if (!std::getline(std::cin, line)) return 1;
    measurement = std::make_unique<Measurement>(
        wire::setup_from_json(nlohmann::json::parse(line).at("setup")));
  } catch (const std::exception& e) {
    send({{"fatal", e.what()}});
    return 2;
  }
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
      const std::string schedule = job.at("schedule").get<std::string>();
      if (test_faults) inject_fault(schedule);
      r = measurement->measure(schedule, job.at("split").get<std::string>(),
                               job.value("give_up_ms", 0.0));
    } catch (const std::bad_alloc&) {
      r = {};
      r.status = "out_of_memory";
      r.reason = "an allocation failed under the evaluator's memory limit";
    } catch (const std::exception& e) {
      r = {};
      r.status = "error";
      r.reason = e.what();
    }
    send({{"id", job.at("id")}, {"result", wire::to_json(r)}});
  }
  return 0;
}
