// The fixture of the cluster tests (cluster_test.cpp, cluster_faults_test.cpp): a real
// `stipple coordinator` process and real `stipple worker` processes on loopback, each in
// a process group of its own with its output in files of the test's folder, killed when
// the test ends; the coordinator's SQLite file read back to check what was stored.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "client/coordinator_client.h"
#include "shell.h"
#include "storage/database.h"

namespace stipple::testing_cli {

using namespace std::chrono_literals;

inline const std::string kPipeline = source("datasets/pipelines/two_pass_blur.stp");
inline const std::string kTrain = source("datasets/fixtures/people-256x192.png");
inline const std::string kTest = source("datasets/fixtures/natural-high-64x48.png");

/// Polls `done` every 50 ms until it holds or `timeout` passes; returns whether it held.
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

class ClusterTest : public CommandTest {
 protected:
  /// A child process in a process group of its own, its output in files of the test folder.
  struct Process {
    pid_t pid = -1;
    std::string out, err;
  };

  void TearDown() override {
    for (Process& p : processes_) stop(p, SIGKILL);
    CommandTest::TearDown();
  }

  /// Runs `program` (the stipple binary unless given) with `args`.
  Process spawn(const std::vector<std::string>& args, const std::string& name,
                const std::string& program = STIPPLE_BINARY) {
    Process p;
    p.out = path(name + ".out");
    p.err = path(name + ".err");
    p.pid = fork();
    if (p.pid == 0) {
      setpgid(0, 0);
      const int out = open(p.out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      const int err = open(p.err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(out, 1);
      dup2(err, 2);
      std::vector<char*> argv;
      std::string binary = program;
      argv.push_back(binary.data());
      std::vector<std::string> copy = args;
      for (std::string& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    processes_.push_back(p);
    return p;
  }

  /// Sends `signal` to the process's group and, for a fatal one, reaps it.
  static void stop(Process& p, int signal) {
    if (p.pid <= 0) return;
    kill(-p.pid, signal);
    if (signal == SIGKILL || signal == SIGTERM) {
      int status = 0;
      const auto end = std::chrono::steady_clock::now() + 20s;
      while (waitpid(p.pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > end) {
          kill(-p.pid, SIGKILL);
          waitpid(p.pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
      p.pid = -1;
    }
  }
  void kill_process(Process& p, int signal) {
    for (Process& q : processes_) {
      if (q.pid == p.pid) stop(q, signal);
    }
    p.pid = -1;
  }

  /// Starts a coordinator on an ephemeral loopback port (or `port`) over the test's
  /// database, and returns its address once it listens.
  std::string start_coordinator(const std::vector<std::string>& extra = {}, int port = 0) {
    std::vector<std::string> args = {"coordinator", "--listen", "127.0.0.1:" + std::to_string(port),
                                     "--db", db_path()};
    args.insert(args.end(), extra.begin(), extra.end());
    coordinator_ = spawn(args, "coordinator" + std::to_string(++coordinators_));
    return address_of(coordinator_);
  }

  /// The address `coordinator` listens on, once it does.
  std::string address_of(const Process& coordinator) {
    std::string address;
    const bool up = wait_until(
        [&] {
          const std::string out = read_file(coordinator.out);
          const size_t at = out.find("listening on ");
          if (at == std::string::npos) return false;
          address = out.substr(at + 13, out.find('\n', at) - at - 13);
          return true;
        },
        15s);
    EXPECT_TRUE(up) << read_file(coordinator.err);
    return address;
  }

  Process start_worker(const std::string& address, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"worker", "--coordinator", address, "--cache", path("cache")};
    args.insert(args.end(), extra.begin(), extra.end());
    return spawn(args, "worker" + std::to_string(++workers_));
  }

  /// Starts two workers, one registered after the other, and returns the first (worker 0
  /// in ListWorkers) once both are.
  Process start_two_workers(const std::string& address, client::CoordinatorClient& c) {
    Process first = start_worker(address);
    EXPECT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
    start_worker(address);
    EXPECT_TRUE(wait_until([&] { return c.workers().size() == 2; }, 20s));
    return first;
  }

  client::CoordinatorClient client(const std::string& address, const std::string& token = "") {
    client::ClientOptions o;
    o.address = address;
    o.security.token = token;
    o.call_timeout_s = 20;
    return client::CoordinatorClient(o);
  }

  /// `stipple submit` of the two-pass blur on the small photos; returns the run id.
  int64_t submit(const std::string& address, int64_t budget, const std::string& extra = "") {
    Result r =
        stipple("submit " + kPipeline + " --coordinator " + address + " --images " + kTrain +
                " --test-images " + kTest + " --budget " + std::to_string(budget) + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const size_t at = r.output.find("run ");
    return at == std::string::npos ? 0 : std::stoll(r.output.substr(at + 4));
  }

  /// Waits until the run's state is not "running"; returns it.
  std::string wait_for_run(client::CoordinatorClient& c, int64_t run,
                           std::chrono::milliseconds timeout = 120s) {
    std::string state = "running";
    wait_until(
        [&] {
          try {
            state = c.status(run).state();
          } catch (const client::RpcError&) {
            // The coordinator may be restarting.
          }
          return state != "running";
        },
        timeout);
    return state;
  }

  /// Freezes worker `index` (registration order) while it holds a lease, so the job in its
  /// hands cannot be reported: SIGSTOP when it looks busy, then check it still is (it may
  /// have reported in between; then let it go on and try again).
  bool freeze_while_busy(client::CoordinatorClient& c, size_t index, Process& p) {
    return wait_until(
        [&] {
          std::vector<proto::WorkerStatus> w = c.workers();
          if (w.size() <= index || !w[index].busy()) return false;
          kill(-p.pid, SIGSTOP);
          w = c.workers();
          if (w[index].busy()) return true;
          kill(-p.pid, SIGCONT);
          return false;
        },
        60s);
  }

  std::string db_path() const { return path("cluster.db"); }

  /// The run's training evaluations as stored: id -> created_at.
  std::map<int64_t, std::string> train_evaluations(int64_t run, int* failed) {
    auto db = storage::Database::open(db_path());
    std::map<int64_t, std::string> out;
    *failed = 0;
    for (const storage::RunEvaluation& e : db->run_evaluations(run)) {
      if (e.evaluation.key.split != "train") continue;
      out[e.evaluation.id] = e.evaluation.created_at;
      *failed += !e.evaluation.ok();
    }
    return out;
  }
  std::map<int64_t, std::string> train_evaluations(int64_t run) {
    auto db = storage::Database::open(db_path());
    std::map<int64_t, std::string> out;
    for (const storage::RunEvaluation& e : db->run_evaluations(run)) {
      if (e.evaluation.key.split == "train") out[e.evaluation.id] = e.evaluation.created_at;
    }
    return out;
  }
  /// Rows of the evaluations and measurements tables, read with SQLite itself.
  int64_t evaluation_rows() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    int64_t n = 0;
    for (const char* sql :
         {"SELECT COUNT(*) FROM evaluations", "SELECT COUNT(*) FROM measurements"}) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
          sqlite3_step(stmt) == SQLITE_ROW) {
        n += sqlite3_column_int64(stmt, 0);
      } else {
        ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return n;
  }
  /// The schedules of the run's front, fastest first.
  std::vector<std::string> front_schedules(client::CoordinatorClient& c, int64_t run) {
    std::vector<std::string> out;
    const proto::GetFrontResponse front = c.front(run);
    for (const proto::FrontPoint& p : front.points()) out.push_back(p.schedule_text());
    return out;
  }

  std::vector<Process> processes_;
  Process coordinator_;
  int coordinators_ = 0, workers_ = 0;
};

}  // namespace stipple::testing_cli
