// The cluster when its disk fails it (issue #25, item 6): a database on a full disk or made
// immutable under a running coordinator, a submit refused on a full disk, and `submit --wait`
// across a coordinator killed and restarted. Real processes on loopback (cluster_fixture.h).
// A full disk is a 2 MiB tmpfs that the coordinator mounts for itself in a user and mount
// namespace of its own (`unshare -rm`); the test reaches it through /proc/PID/root.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cluster_fixture.h"

namespace stipple::testing_cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUnshare = "/usr/bin/unshare";

/// Why a tmpfs cannot be mounted in a namespace of our own here, or "" when it can.
std::string namespaces_unavailable(const std::string& dir) {
  if (!fs::exists(kUnshare)) return std::string(kUnshare) + " is not installed (util-linux)";
  const Result r =
      shell(std::string(kUnshare) + " -rm sh -c 'mount -t tmpfs -o size=1m tmpfs " + dir + "'");
  return r.exit_code == 0 ? "" : "unshare -rm cannot mount a tmpfs here: " + r.output;
}

/// Fills the filesystem of `file` with zeros until it says ENOSPC; returns whether it did.
bool fill(const std::string& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string chunk(64 << 10, '\0');
  for (;;) {
    if (::write(fd, chunk.data(), chunk.size()) < 0) {
      const bool full = errno == ENOSPC;
      ::close(fd);
      return full;
    }
  }
}

/// A column (state, message) of the run in the SQLite file at `db`, read with SQLite itself
/// ("" if none). SQLite resolves symbolic links, /proc/PID/root among them: a database in
/// another mount namespace is read from a copy of its files (`copy_to`, in the test's
/// namespace).
std::string stored(const std::string& db, int64_t run, const std::string& column,
                   const std::string& copy_to = "") {
  std::string file = db;
  if (!copy_to.empty()) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal"}) {
      fs::copy_file(db + suffix, copy_to + suffix, fs::copy_options::overwrite_existing, ec);
    }
    fs::remove(copy_to + "-shm", ec);
    file = copy_to;
  }
  sqlite3* handle = nullptr;
  std::string value;
  const int flags = copy_to.empty() ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (sqlite3_open_v2(file.c_str(), &handle, flags, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(handle, 2000);
    sqlite3_stmt* stmt = nullptr;
    const std::string sql = "SELECT " + column + " FROM runs WHERE id = ?";
    if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      sqlite3_bind_int64(stmt, 1, run);
      if (sqlite3_step(stmt) == SQLITE_ROW)
        value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(handle);
  return value;
}
std::string stored_state(const std::string& db, int64_t run, const std::string& copy_to = "") {
  return stored(db, run, "state", copy_to);
}

class ClusterStorageFaultsTest : public ClusterTest {
 protected:
  void TearDown() override {
    // An immutable file would outlive the test's folder.
    if (!immutable_.empty()) shell("chattr -i " + immutable_);
    ClusterTest::TearDown();
  }

  /// A coordinator whose `on_tmpfs` folder (its database or its data) is a 2 MiB tmpfs of
  /// its own; the rest of its files are in the test's folder.
  std::string start_coordinator_on_tmpfs(const std::string& tmpfs, const std::string& db,
                                         const std::string& data) {
    const std::string command = "mount -t tmpfs -o size=2m tmpfs " + tmpfs + " && exec " +
                                STIPPLE_BINARY + " coordinator --listen 127.0.0.1:0 --db " + db +
                                " --data " + data;
    coordinator_ = spawn({"-rm", "sh", "-c", command}, "coordinator", kUnshare);
    return address_of(coordinator_);
  }

  /// `path` as the coordinator sees it, in its mount namespace.
  std::string seen_by_coordinator(const std::string& path) const {
    return "/proc/" + std::to_string(coordinator_.pid) + "/root" + path;
  }

  /// `stipple submit --wait` in the background: the process, its run id once it printed it.
  Process submit_and_wait(const std::string& address, int budget, int64_t* run) {
    Process p =
        spawn({"submit", kPipeline, "--coordinator", address, "--images", kTrain, "--test-images",
               kTest, "--budget", std::to_string(budget), "--runs", "1", "--wait"},
              "submit");
    *run = 0;
    wait_until(
        [&] {
          const std::string out = read_file(p.out);
          const size_t at = out.find("run ");
          if (at == std::string::npos || out.find(" submitted", at) == std::string::npos)
            return false;
          *run = std::stoll(out.substr(at + 4));
          return true;
        },
        30s);
    return p;
  }

  /// A worker, and `stipple submit --wait` of a run of `budget` once it has `evaluations`
  /// committed: the waiting client, the run in `*run` (0 if it did not get there).
  Process run_under_way(const std::string& address, int budget, int evaluations, int64_t* run) {
    start_worker(address);
    auto c = client(address);
    EXPECT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
    Process waiting = submit_and_wait(address, budget, run);
    EXPECT_GT(*run, 0) << read_file(waiting.err);
    if (!wait_until([&] { return *run > 0 && c.status(*run).evaluations() >= evaluations; }, 60s)) {
      *run = 0;
    }
    return waiting;
  }

  /// That the waiting client of `run` exited 1, told the run failed and why (`reason`).
  void expect_told_failed(Process& waiting, int64_t run, const std::string& reason) {
    ASSERT_EQ(exit_code(waiting, 60s), 1) << read_file(waiting.out) << read_file(waiting.err);
    const std::string told = read_file(waiting.out);
    EXPECT_NE(told.find("run " + std::to_string(run) + " is failed"), std::string::npos) << told;
    EXPECT_NE(told.find(reason), std::string::npos) << told;
  }

  /// Waits for `p` to exit; its exit status, or -1 if it is still running after `timeout`.
  int exit_code(Process& p, std::chrono::milliseconds timeout) {
    int status = 0, code = -1;
    wait_until(
        [&] {
          if (waitpid(p.pid, &status, WNOHANG) != p.pid) return false;
          code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          return true;
        },
        timeout);
    if (code >= 0) {
      for (Process& q : processes_) {
        if (q.pid == p.pid) q.pid = -1;  // reaped: never signal its id again
      }
    }
    return code;
  }

  std::string immutable_;
};

// A database whose disk fills up under a running run: the run fails, the waiting client is
// told why (the OS's reason), and the database says failed as soon as it can be written
// again, not "running" for ever (which the next start would resume), with that reason: a
// coordinator started again on the file still says why (`stipple status RUN`).
TEST_F(ClusterStorageFaultsTest, AFullDiskFailsTheRunWithTheReasonAndMarksItFailed) {
  const std::string small = path("small");
  fs::create_directories(small);
  if (std::string why = namespaces_unavailable(small); !why.empty()) GTEST_SKIP() << why;
  const std::string db = small + "/cluster.db";
  const std::string address = start_coordinator_on_tmpfs(small, db, path("data"));
  ASSERT_FALSE(address.empty());
  int64_t run = 0;
  Process waiting = run_under_way(address, 400, 3, &run);
  ASSERT_GT(run, 0);

  ASSERT_TRUE(fill(seen_by_coordinator(small + "/fill")));
  expect_told_failed(waiting, run, "No space left on device");

  // Room again: the coordinator, which kept trying, marks the run failed. The copy is made
  // where the restarted coordinator below finds it (its own tmpfs goes with it).
  fs::remove(seen_by_coordinator(small + "/fill"));
  const auto state = [&] { return stored_state(seen_by_coordinator(db), run, db_path()); };
  EXPECT_TRUE(wait_until([&] { return state() == "failed"; }, 20s)) << state() << "\n"
                                                                    << read_file(coordinator_.err);
  EXPECT_NE(read_file(coordinator_.err).find("cannot mark it failed yet"), std::string::npos)
      << read_file(coordinator_.err);
  EXPECT_EQ(client(address).status(run).state(), "failed");
  // The reason stored is the disk's, from the failure, not the attempt that succeeded.
  EXPECT_NE(stored(db_path(), run, "message").find("No space left on device"), std::string::npos)
      << stored(db_path(), run, "message");

  // A coordinator started again over that database has the run only in the file.
  kill_process(coordinator_, SIGTERM);
  const std::string restarted = start_coordinator();
  ASSERT_FALSE(restarted.empty());
  const Result status = stipple("status " + std::to_string(run) + " --coordinator " + restarted);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("run " + std::to_string(run) + ": failed"), std::string::npos)
      << status.output;
  EXPECT_NE(status.output.find("No space left on device"), std::string::npos) << status.output;
}

// An immutable database file (chattr +i, as root) under a running run: the write fails with
// EPERM, which the message says rather than SQLite's bare "disk I/O error"; the run ends
// failed in the database once the file is writable again.
TEST_F(ClusterStorageFaultsTest, AnImmutableDatabaseFailsTheRunWithTheReason) {
  const std::string address = start_coordinator();
  int64_t run = 0;
  Process waiting = run_under_way(address, 400, 3, &run);
  ASSERT_GT(run, 0);

  const std::string files = db_path() + " " + db_path() + "-wal";
  const Result made = shell("chattr +i " + files);
  if (made.exit_code != 0) {
    GTEST_SKIP() << "chattr +i is not permitted here (it needs CAP_LINUX_IMMUTABLE and a "
                    "filesystem with the flag): "
                 << made.output;
  }
  immutable_ = files;
  expect_told_failed(waiting, run, "Operation not permitted");
  EXPECT_EQ(stored_state(db_path(), run), "running");  // it cannot be written yet

  shell("chattr -i " + files);
  immutable_.clear();
  EXPECT_TRUE(wait_until([&] { return stored_state(db_path(), run) == "failed"; }, 20s))
      << read_file(coordinator_.err);
  EXPECT_NE(stored(db_path(), run, "message").find("Operation not permitted"), std::string::npos)
      << stored(db_path(), run, "message");
}

// A submit whose photos cannot be stored because the coordinator's disk is full is the
// coordinator's failure (exit 1, with the OS's reason), not bad input (exit 2), and leaves no
// temporary file behind.
TEST_F(ClusterStorageFaultsTest, ASubmitRefusedOnAFullDiskExitsOneWithTheReason) {
  const std::string small = path("small");
  fs::create_directories(small);
  if (std::string why = namespaces_unavailable(small); !why.empty()) GTEST_SKIP() << why;
  const std::string data = small + "/data";
  const std::string address = start_coordinator_on_tmpfs(small, path("cluster.db"), data);
  ASSERT_FALSE(address.empty());
  ASSERT_TRUE(fill(seen_by_coordinator(small + "/fill")));

  // A target given: the submit needs no worker to get as far as storing its files.
  const Result r = stipple("submit " + kPipeline + " --coordinator " + address + " --images " +
                           kTrain + " --test-images " + kTest + " --target x86_64-test");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  std::vector<std::string> temporary;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::recursive_directory_iterator(seen_by_coordinator(data), ec)) {
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      temporary.push_back(e.path().string());
  }
  EXPECT_TRUE(temporary.empty()) << temporary.front();
}

// `submit --wait` while the coordinator is killed (-9) and started again on the same port:
// the client reconnects, the restarted coordinator resumes the run, and the client prints
// its front and exits 0.
TEST_F(ClusterStorageFaultsTest, SubmitWaitSurvivesACoordinatorRestart) {
  const std::string address = start_coordinator();
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  int64_t run = 0;
  Process waiting = run_under_way(address, 40, 5, &run);
  ASSERT_GT(run, 0);
  kill_process(coordinator_, SIGKILL);
  std::this_thread::sleep_for(1s);  // the client sees it gone and tries again meanwhile

  start_coordinator({}, port);
  ASSERT_EQ(exit_code(waiting, 120s), 0)
      << read_file(waiting.out) << read_file(waiting.err) << read_file(coordinator_.err);
  const std::string out = read_file(waiting.out);
  EXPECT_NE(out.find("baseline"), std::string::npos) << out;  // the front's table
  EXPECT_NE(read_file(waiting.err).find("reconnecting"), std::string::npos)
      << read_file(waiting.err);
  EXPECT_EQ(client(address).status(run).state(), "done");
}

}  // namespace
}  // namespace stipple::testing_cli
