#include "workers/local_evaluator.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "compiler_core/ir/error.h"
#include "workers/wire.h"

extern char** environ;

namespace stipple::workers {

namespace {

std::string default_server_binary() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "stipple-evaluator";
  return (self.parent_path() / "stipple-evaluator").string();
}

// Writes `data` to the child. A child that died makes this an error (EPIPE), not this
// process's death, without changing the process's SIGPIPE disposition (a program that
// embeds the library owns it): SIGPIPE is blocked in this thread for the write, and the
// one a failed write raised (sent to the writing thread) is taken off the pending
// signals before the old mask comes back.
void write_all(int fd, const std::string& data) {
  sigset_t pipe_only, previous, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  int error = 0;
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += size_t(n);
  }
  if (error == EPIPE && !was_pending) {
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (error != 0) {
    throw std::runtime_error("cannot write to the evaluator: " + std::string(std::strerror(error)));
  }
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return std::string("killed by SIG") + (abbrev ? abbrev : std::to_string(sig).c_str()) + " (" +
           strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped (wait status " + std::to_string(status) + ")";
}

EvaluationResult death_result(int status, double cpu_seconds, const std::string& process) {
  EvaluationResult failed;
  failed.reason = process + " was " + describe_wait_status(status);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    failed.status = EvaluationStatus::Timeout;
    failed.reason += ": it used more than " + std::to_string(int(cpu_seconds)) + " s of CPU time";
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
    failed.status =
        EvaluationStatus::OutOfMemory;  // nobody else sends SIGKILL: the kernel's OOM killer
  } else {
    failed.status = EvaluationStatus::Crash;
  }
  return failed;
}

void require_server_binary(const std::string& given, const std::string& option) {
  std::string binary = given.empty() ? default_server_binary() : given;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string help = "--help";
  char* argv[] = {binary.data(), help.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  const std::string what = "the evaluator " + binary + (given.empty() ? "" : " (" + option + ")");
  if (rc != 0) throw UserError(what + " cannot be started: " + std::strerror(rc));
  // `--help` answers at once; one that has not within a minute (an emulator starts in a
  // second or so) is killed and counts as not running.
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw UserError(what + ": " + std::strerror(errno));
    if (waited_ms >= 60000) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw UserError(what + " did not answer --help within 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw UserError(what + " does not run: for --help it " + describe_wait_status(status) +
                    " (127: the system cannot execute it): this worker could measure nothing");
  }
}

LocalEvaluator::LocalEvaluator(EvaluationSetup setup, LocalEvaluatorOptions options)
    : setup_(std::move(setup)), options_(std::move(options)) {
  if (options_.server_binary.empty()) options_.server_binary = default_server_binary();
  if (options_.cpu_seconds <= 0) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    options_.cpu_seconds = options_.deadline_seconds * double(cores);
  }
  if (options_.startup_seconds <= 0) options_.startup_seconds = options_.deadline_seconds;
  start();
}

LocalEvaluator::~LocalEvaluator() { stop(); }

void LocalEvaluator::start() {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so that a deadline kills every process it may have started.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> args = {options_.server_binary,
                                   "--memory-limit",
                                   std::to_string(options_.memory_limit_bytes),
                                   "--file-size-limit",
                                   std::to_string(options_.file_size_limit_bytes),
                                   "--cpu-seconds",
                                   std::to_string(options_.cpu_seconds),
                                   "--parent-pid",
                                   std::to_string(::getpid())};
  if (!options_.benchmark_lock.empty()) {
    args.insert(args.end(), {"--benchmark-lock", options_.benchmark_lock, "--lock-wait-seconds",
                             std::to_string(options_.lock_wait_seconds)});
  }
  if (!options_.reference_cache.empty()) {
    args.insert(args.end(), {"--reference-cache", options_.reference_cache});
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, options_.server_binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    throw std::runtime_error("cannot start " + options_.server_binary + ": " + std::strerror(rc));
  }
  child_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  pending_.clear();
  ++children_started_;

  write_all(to_child_, nlohmann::json{{"setup", wire::to_json(setup_)}}.dump() + "\n");
  std::string line;
  bool eof = false;
  if (!read_answer(line, options_.startup_seconds, &eof)) {
    const int status = stop();
    // Past the deadline, or killed by a signal (a resource limit among them), while
    // computing the references: the setup's doing, the same on any host. An exit is not
    // (the child exits only when it cannot read its setup).
    if (!eof) {
      EvaluationResult late;
      late.status = EvaluationStatus::Timeout;
      late.reason = "the reference outputs were not computed within the deadline of " +
                    std::to_string(int(options_.startup_seconds)) +
                    " s (the pipeline under its default schedule, on every photo); the process "
                    "was killed: give a longer --deadline, or smaller photos";
      throw SetupFailed(late);
    }
    if (WIFSIGNALED(status)) {
      throw SetupFailed(death_result(status, options_.cpu_seconds,
                                     "the process computing the reference outputs"));
    }
    throw std::runtime_error("the evaluator did not start: " + describe_wait_status(status));
  }
  nlohmann::json hello = nlohmann::json::parse(line);
  if (hello.contains("fatal")) {
    stop();
    // A status with it is how the references failed (out_of_memory): the setup's failure,
    // recorded as such for its candidates; without one the setup itself is bad.
    const std::optional<EvaluationStatus> status =
        parse_evaluation_status(hello.value("status", std::string()));
    if (status) {
      EvaluationResult failed;
      failed.status = *status;
      failed.reason = hello["fatal"].get<std::string>();
      throw SetupFailed(failed);
    }
    throw UserError(hello["fatal"].get<std::string>());
  }
  host_ = hello.at("host").get<std::string>();
  target_ = hello.at("target").get<std::string>();
}

int LocalEvaluator::stop() {
  int status = 0;
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (child_ > 0) {
    ::kill(-child_, SIGKILL);
    while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  child_ = -1;
  return status;
}

bool LocalEvaluator::read_line(std::string& line, double seconds, bool* eof) {
  *eof = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return true;
    }
    if (options_.cancel && *options_.cancel) {
      stop();
      throw EvaluationCancelled();
    }
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    // In slices of kCancelPoll when it may be cancelled: the flag cannot wake poll().
    const double slice_ms =
        options_.cancel ? std::min(left * 1000 + 1, double(kCancelPoll.count())) : left * 1000 + 1;
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min(slice_ms, 1e9)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // re-checks the deadline
    char buf[65536];
    ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *eof = true;
      return false;
    }
    pending_.append(buf, size_t(n));
  }
}

bool LocalEvaluator::read_answer(std::string& line, double seconds, bool* eof) {
  double wait = seconds;
  while (read_line(line, wait, eof)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("phase")) return true;  // garbage is the caller's to judge
    const bool waiting = j["phase"] == "waiting";
    if (waiting) {
      // Said, not left to a progress line that stops moving: what this waits for, and who.
      const std::string holders = j.value("holders", std::string());
      std::fprintf(stderr, "waiting for the host's benchmark lock %s%s\n",
                   j.value("lock", options_.benchmark_lock).c_str(),
                   holders.empty() ? "" : (", held by " + holders).c_str());
      std::fflush(stderr);
    }
    // The child gives up waiting after lock_wait_seconds and goes on: it has the whole
    // allowance left then, and a second's grace for the lines in flight.
    wait = waiting ? options_.lock_wait_seconds + seconds + 1 : seconds;
  }
  return false;
}

EvaluationResult LocalEvaluator::evaluate_one(const CodeRequest& request, const std::string& split,
                                              double give_up_ms) {
  const int64_t id = next_id_++;
  nlohmann::json job = wire::to_json(request);
  job["id"] = id;
  job["split"] = split;
  job["give_up_ms"] = give_up_ms;
  try {
    if (child_ <= 0) start();
    try {
      write_all(to_child_, job.dump() + "\n");
    } catch (const std::runtime_error&) {
      // The child died between jobs: its status says why; the candidate is not to blame,
      // so it is measured in a fresh child.
      stop();
      start();
      write_all(to_child_, job.dump() + "\n");
    }
  } catch (const SetupFailed& e) {
    return e.result;  // a fresh child could not compute the references: neither can the next
  }
  EvaluationResult failed;
  std::string line;
  bool eof = false;
  while (read_answer(line, options_.deadline_seconds, &eof)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || j.contains("fatal")) {
      stop();
      failed.status = EvaluationStatus::Error;
      failed.reason = "the evaluator answered garbage: " + line.substr(0, 200);
      return failed;
    }
    if (j.value("id", int64_t(-1)) != id) continue;  // a late answer to an abandoned job
    return wire::result_from_json(j.at("result"));
  }
  if (eof) return death_result(stop(), options_.cpu_seconds, "the candidate's process");
  stop();
  failed.status = EvaluationStatus::Timeout;
  failed.reason = "no result within the deadline of " +
                  std::to_string(int(options_.deadline_seconds)) + " s; the process was killed";
  return failed;
}

std::vector<EvaluationResult> LocalEvaluator::evaluate(const std::vector<std::string>& schedules,
                                                       const std::string& split,
                                                       double give_up_ms) {
  std::vector<EvaluationResult> out;
  for (const std::string& s : schedules)
    out.push_back(evaluate_one({s, {}, {}, false}, split, give_up_ms));
  return out;
}

std::vector<EvaluationResult> LocalEvaluator::evaluate_code(
    const std::vector<CodeRequest>& requests, const std::string& split) {
  std::vector<EvaluationResult> out;
  for (const CodeRequest& r : requests) out.push_back(evaluate_one(r, split, 0));
  return out;
}

}  // namespace stipple::workers
