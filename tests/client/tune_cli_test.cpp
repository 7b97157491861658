// `stipple tune`, `runs`, `front` and `export` as a user runs them: real processes, a real
// SQLite file, exit codes. The interruption test kills `stipple tune` with SIGKILL in the
// middle of a run and checks that `--resume` finishes it without measuring again anything
// committed before the kill.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "storage/database.h"
#include "tests/client/shell.h"

namespace {

namespace fs = std::filesystem;

using stipple::testing_cli::Result;
using stipple::testing_cli::source;

Result run(const std::string& args) { return stipple::testing_cli::stipple(args); }

class TuneCli : public stipple::testing_cli::CommandTest {
 protected:
  // A small, quick tuning job: the 3x3 blur on two small fixtures.
  std::string job(const std::string& extra) const {
    return source("datasets/pipelines/blur3x3.stp") + " --images " +
           source("datasets/fixtures/natural-high-64x48.png") + " --test-images " +
           source("datasets/fixtures/man-made-low-64x48.png") + " --db " + path("t.db") +
           " --runs 2 --seed 3 " + extra;
  }
};

TEST_F(TuneCli, TunePrintsTheFrontAndEveryCommandReadsTheRun) {
  Result r = run("tune " + job("--budget 10 --population 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("run 1: blur3x3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[baseline]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[done] 10/10 evaluations"), std::string::npos) << r.output;

  Result runs = run("runs --db " + path("t.db"));
  ASSERT_EQ(runs.exit_code, 0) << runs.output;
  EXPECT_NE(runs.output.find("blur3x3"), std::string::npos);
  EXPECT_NE(runs.output.find("done"), std::string::npos);
  EXPECT_NE(runs.output.find("10/10"), std::string::npos) << runs.output;

  Result json = run("front 1 --format json --db " + path("t.db") + " --plot " + path("f.svg"));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  nlohmann::json j = nlohmann::json::parse(json.output.substr(0, json.output.rfind("wrote")));
  ASSERT_GE(j["variants"].size(), 1u);
  int baselines = 0;
  double last_time = -1, last_error = 1e30;
  for (const auto& v : j["variants"]) {
    if (v["baseline"].get<bool>()) {
      ++baselines;
      continue;
    }
    // The front: by increasing time, strictly decreasing error.
    EXPECT_GT(v["train"]["time_ms"].get<double>(), last_time);
    EXPECT_LT(v["train"]["error"].get<double>(), last_error);
    last_time = v["train"]["time_ms"].get<double>();
    last_error = v["train"]["error"].get<double>();
    EXPECT_FALSE(v["test"].is_null());
  }
  EXPECT_EQ(baselines, 1);
  std::ifstream svg(path("f.svg"));
  std::string text((std::istreambuf_iterator<char>(svg)), {});
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("baseline"), std::string::npos);

  Result csv = run("front 1 --format csv --db " + path("t.db"));
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.output.rfind("variant,baseline,train_ms,", 0), 0u) << csv.output;

  // Export the fastest variant as a schedule: `stipple check` accepts it with the pipeline.
  Result ex = run("export 1 --variant 0 --format schedule -o " + path("v0.sched") + " --db " +
                  path("t.db"));
  ASSERT_EQ(ex.exit_code, 0) << ex.output;
  // A variant the front does not have is bad input, naming those it has (client/front_table.h,
  // as `nightly add --variant` says it).
  Result past = run("export 1 --variant 99 --format schedule --db " + path("t.db"));
  EXPECT_EQ(past.exit_code, 2) << past.output;
  EXPECT_NE(past.output.find("run 1 has variants 0.."), std::string::npos) << past.output;
  Result check =
      run("check " + source("datasets/pipelines/blur3x3.stp") + " --schedule " + path("v0.sched"));
  EXPECT_EQ(check.exit_code, 0) << check.output;
  // `-o -` is standard output, as for compile (it wrote a file named "-"): the same text,
  // and no file.
  Result to_stdout = stipple::testing_cli::shell("cd " + dir_.string() + " && " + STIPPLE_BINARY +
                                                 " export 1 --variant 0 --format schedule -o - "
                                                 "--db " +
                                                 path("t.db") + " 2>/dev/null");
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.output;
  std::ifstream written(path("v0.sched"));
  EXPECT_EQ(to_stdout.output, std::string((std::istreambuf_iterator<char>(written)), {}));
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  EXPECT_EQ(run("export 1 --variant 0 --format schedule,cpp -o - --db " + path("t.db")).exit_code,
            2);
  Result obj =
      run("export 1 --variant 0 --format obj,header -o " + path("v0") + " --db " + path("t.db"));
  ASSERT_EQ(obj.exit_code, 0) << obj.output;
  EXPECT_GT(fs::file_size(path("v0.o")), 0u);
  EXPECT_GT(fs::file_size(path("v0.h")), 0u);
  // As portable C++ source, which the system C++ compiler compiles without warnings.
  Result cpp =
      run("export 1 --variant 0 --format cpp -o " + path("v0.cpp") + " --db " + path("t.db"));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  Result cxx = stipple::testing_cli::shell(std::string(STIPPLE_CXX_COMPILER) +
                                           " -O2 -std=c++17 -pthread -Wall -Wextra -Werror -c " +
                                           path("v0.cpp") + " -o " + path("v0_cpp.o"));
  EXPECT_EQ(cxx.exit_code, 0) << cxx.output;
}

// The error levels are the user's (--thresholds) and labelled with the pipeline's metric
// (the progress line said "dE<=1, <=2, <=5" whatever the metric); the run keeps them.
TEST_F(TuneCli, ThresholdsAreSettableAndLabelledByTheMetric) {
  Result r = run("tune " + job("--budget 3 --population 2 --strategy hill --thresholds 3,0.5"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best speedup at dE<=0.5 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", <=3 "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("<=5"), std::string::npos) << r.output;
  auto db = stipple::storage::Database::open(path("t.db"));
  const nlohmann::json options = nlohmann::json::parse(db->find_run(1)->options_json);
  EXPECT_EQ(options["thresholds"], nlohmann::json({0.0, 0.5, 3.0}));

  // An RMSE pipeline's levels are RMSE levels.
  write("gray.stp",
        "pipeline gray\ninput in : f32[x, y, c]\n"
        "func out(x, y) = (in(x, y, 0) + in(x, y, 1) + in(x, y, 2)) / 3.0\noutput out\n");
  Result rmse = run("tune " + path("gray.stp") + " --images " +
                    source("datasets/fixtures/natural-high-64x48.png") + " --test-images " +
                    source("datasets/fixtures/man-made-low-64x48.png") + " --db " + path("g.db") +
                    " --runs 1 --budget 2 --thresholds 0.01");
  ASSERT_EQ(rmse.exit_code, 0) << rmse.output;
  EXPECT_NE(rmse.output.find("best speedup at RMSE<=0.01 "), std::string::npos) << rmse.output;

  for (const char* bad : {"0", "-1", "1,1", "x"}) {
    Result b = run("tune " + job(std::string("--budget 2 --thresholds ") + bad));
    EXPECT_EQ(b.exit_code, 2) << bad << "\n" << b.output;
  }
}

// With neither --budget nor --time, a run stops at 600 evaluations or 150 s of search,
// whichever comes first (the README's first command must take what it promises on a slow
// machine too): the run as stored says so. The tune is stopped once its run exists.
TEST_F(TuneCli, TheDefaultBudgetIsCappedInTime) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("exec ") + STIPPLE_BINARY + " tune " + job("") + " > " +
                            path("tune.log") + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::optional<stipple::storage::RunRecord> created;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!created && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!fs::exists(path("t.db"))) continue;
    try {
      created = stipple::storage::Database::open(path("t.db"))->find_run(1);
    } catch (const std::exception&) {
      // The file is being created: try again.
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(created) << "no run was created";
  EXPECT_EQ(created->budget_evaluations, 600);
  EXPECT_EQ(created->budget_seconds, 150);
  const nlohmann::json options = nlohmann::json::parse(created->options_json);
  EXPECT_EQ(options["budget"], 600);
  EXPECT_EQ(options["time_budget_s"], 150.0);

  // An explicit --budget is not capped; --time alone has no evaluation budget.
  ASSERT_EQ(run("tune " + job("--budget 2 --population 2")).exit_code, 0);
  auto db = stipple::storage::Database::open(path("t.db"));
  EXPECT_EQ(db->find_run(2)->budget_seconds, 0);
}

TEST_F(TuneCli, BadInputExitsTwoWithAReason) {
  Result r = run("tune " + path("missing.stp") + " --db " + path("t.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run("tune " + job("--budget 0"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run("tune " + job("--strategy annealing"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run("tune " + source("datasets/pipelines/blur3x3.stp") + " --images " + path("nowhere") +
          " --db " + path("t.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nowhere"), std::string::npos) << r.output;
  r = run("front 7 --db " + path("t.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run("tune --resume 7 --db " + path("t.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no run 7"), std::string::npos) << r.output;

  // A bad baseline is found before the run is created: it left a run "running 0/2" that
  // --resume could not continue.
  write("bad.sched", "blur_x.split(x, xo, xi, 0)\n");
  r = run("tune " + job("--budget 2 --baseline " + path("bad.sched")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(path("bad.sched") + ":1:8: error"), std::string::npos) << r.output;
  EXPECT_NE(run("runs --db " + path("t.db")).output.find("no runs"), std::string::npos);
}

// The host's benchmark lock (workers/benchmark_lock.h) is the workers' and tune's: while
// another process holds it exclusively (a worker timing a candidate), tune neither compiles
// nor times, and it goes on when the lock is free.
TEST_F(TuneCli, TuneWaitsForTheHostsBenchmarkLock) {
  const std::string lock = path("benchmark.lock");
  const int fd = open(lock.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  std::future<Result> tune = std::async(std::launch::async, [&] {
    return run("tune " + job("--budget 2 --population 2 --benchmark-lock " + lock));
  });
  EXPECT_EQ(tune.wait_for(std::chrono::seconds(4)), std::future_status::timeout);
  ASSERT_EQ(flock(fd, LOCK_UN), 0);
  ASSERT_EQ(tune.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  const Result r = tune.get();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[done] 2/2 evaluations"), std::string::npos) << r.output;
  // It said that it waited, for which lock, and who held it: this test's process.
  EXPECT_NE(r.output.find("waiting for the host's benchmark lock " + lock + ", held by pid " +
                          std::to_string(getpid()) + " ("),
            std::string::npos)
      << r.output;
  close(fd);

  // A lock file that cannot be opened is said at start: exit 2, naming it.
  const Result bad = run("tune " + job("--budget 2 --benchmark-lock " + path("no/such/lock")));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("no/such/lock"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("--benchmark-lock"), std::string::npos) << bad.output;
}

TEST_F(TuneCli, KillNineThenResumeLosesNothingCommitted) {
  const int64_t budget = 40;
  // Started in the background; its pid is the shell's exec'd process.
  const std::string log = path("tune.log");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("exec ") + STIPPLE_BINARY + " tune " +
                            job("--budget " + std::to_string(budget) + " --population 6") + " > " +
                            log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until a few batches are committed, then kill -9 in the middle of the run.
  std::map<int64_t, std::string> committed;  // evaluation id -> created_at
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!fs::exists(path("t.db"))) continue;
    try {
      auto db = stipple::storage::Database::open(path("t.db"));
      if (db->find_run(1) && db->run_evaluations(1).size() >= 8) break;
    } catch (const std::exception&) {
      // The file is being created: try again.
    }
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "tune finished before it was killed";
  {
    auto db = stipple::storage::Database::open(path("t.db"));
    EXPECT_EQ(db->find_run(1)->state, "running");
    for (const auto& e : db->run_evaluations(1))
      committed[e.evaluation.id] = e.evaluation.created_at;
  }
  ASSERT_GE(committed.size(), 8u);
  ASSERT_LT(int64_t(committed.size()), budget);
  // Its process is gone: the listing says so (it said "running" forever before).
  Result listed = run("runs --db " + path("t.db"));
  EXPECT_NE(listed.output.find("interrupted"), std::string::npos) << listed.output;
  // Its front is what was measured so far, marked partial (it showed the baseline alone):
  // every point of it nondominated among the run's committed training evaluations.
  Result partial = run("front 1 --format json --db " + path("t.db"));
  ASSERT_EQ(partial.exit_code, 0) << partial.output;
  nlohmann::json pj = nlohmann::json::parse(partial.output);
  EXPECT_EQ(pj["partial"], true);
  EXPECT_EQ(pj["state"], "interrupted");
  std::vector<std::pair<double, double>> committed_points;
  std::vector<std::pair<double, double>> candidates;  // the committed points but the baseline
  int64_t baseline_evaluation = -1;
  for (const auto& v : pj["variants"]) {
    if (v["baseline"] == true) baseline_evaluation = v["train"]["evaluation"];
  }
  {
    auto db = stipple::storage::Database::open(path("t.db"));
    for (const auto& e : db->run_evaluations(1)) {
      if (e.evaluation.key.split != "train" || !e.evaluation.ok()) continue;
      committed_points.push_back({e.evaluation.time_ms, e.evaluation.error});
      if (e.evaluation.id != baseline_evaluation) {
        candidates.push_back({e.evaluation.time_ms, e.evaluation.error});
      }
    }
  }
  auto dominated = [&](double t, double err) {
    for (const auto& [mt, me] : committed_points) {
      if (mt <= t && me <= err && (mt < t || me < err)) return true;
    }
    return false;
  };
  size_t on_front = 0;
  for (const auto& v : pj["variants"]) {
    if (v["baseline"] == true) continue;
    ++on_front;
    const double t = v["train"]["time_ms"], err = v["train"]["error"];
    EXPECT_FALSE(dominated(t, err)) << "dominated: " << t << " " << err;
  }
  // A candidate nondominated among the committed points is on the front (it showed the
  // baseline alone). On this tiny photo the baseline may dominate every candidate
  // measured so far (a loaded machine): then the baseline alone is right.
  const bool some_candidate_nondominated =
      std::any_of(candidates.begin(), candidates.end(),
                  [&](const auto& c) { return !dominated(c.first, c.second); });
  if (some_candidate_nondominated) {
    EXPECT_GE(on_front, 1u) << partial.output;
  }

  Result resumed = run("tune --resume 1 --db " + path("t.db"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming run 1"), std::string::npos) << resumed.output;

  auto db = stipple::storage::Database::open(path("t.db"));
  EXPECT_EQ(db->find_run(1)->state, "done");
  std::map<int64_t, stipple::storage::EvaluationRecord> after;
  std::set<std::string> train;
  for (const auto& e : db->run_evaluations(1)) {
    after[e.evaluation.id] = e.evaluation;
    if (e.evaluation.key.split == "train") train.insert(e.evaluation.key.schedule);
  }
  for (const auto& [id, created] : committed) {
    ASSERT_TRUE(after.count(id)) << "evaluation " << id << " was lost";
    EXPECT_EQ(after[id].created_at, created) << "evaluation " << id << " was measured again";
  }
  EXPECT_EQ(int64_t(train.size()), budget);
  // "measured" in the resumed run's last progress line counts what it measured itself.
  const size_t done = resumed.output.rfind("[done]");
  ASSERT_NE(done, std::string::npos) << resumed.output;
  const std::string last = resumed.output.substr(done);
  const size_t open = last.find('(');
  const int measured = std::stoi(last.substr(open + 1));
  EXPECT_EQ(size_t(measured), after.size() - committed.size()) << last;

  // Deleting the run keeps its measurements: a new run of the same search measures nothing.
  Result deleted = run("runs --delete 1 --db " + path("t.db"));
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_NE(deleted.output.find("deleted run 1"), std::string::npos) << deleted.output;
  EXPECT_NE(run("runs --db " + path("t.db")).output.find("no runs"), std::string::npos);
  EXPECT_EQ(run("runs --delete 1 --db " + path("t.db")).exit_code, 2);
}

}  // namespace
