// Pipeline::tune of the embedding library (<stipple/tuning.h>) through its public API: a
// small run on two fixture photos is stored as `stipple tune` stores one (the run's row
// read back from SQLite, its front as `stipple front --format json` prints it), each
// variant it returns compiles to the schedule shown; the progress callback stops a run
// after its batch or stops it by throwing, leaving it interrupted, and the library or the
// command line resumes it with the program it tuned; bad options are refused before a
// run exists.
#include <gtest/gtest.h>
#include <stipple/stipple.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/database.h"
#include "tests/client/shell.h"

namespace {

using stipple::testing_cli::source;

constexpr const char* kBox = R"(pipeline box
input in : f32[x, y, c]
func h(x, y, c) = in(x - 1, y, c) + in(x, y, c) + in(x + 1, y, c)
func out(x, y, c) = (h(x, y - 1, c) + h(x, y, c) + h(x, y + 1, c)) / 9.0
output out
)";

class EmbeddingTune : public stipple::testing_cli::CommandTest {
 protected:
  stipple::Pipeline box = stipple::Pipeline::from_source(kBox, "box.stp");

  /// A quick run: the two 64x48 fixtures, few timed runs, no host-wide lock.
  stipple::TuneOptions small(int64_t budget) const {
    stipple::TuneOptions o;
    o.database = path("t.db");
    o.images = {source("datasets/fixtures/natural-high-64x48.png")};
    o.test_images = {source("datasets/fixtures/man-made-low-64x48.png")};
    o.budget = budget;
    o.runs = 2;
    o.benchmark_lock = "none";
    return o;
  }

  stipple::storage::RunRecord stored_run(int64_t id) const {
    std::optional<stipple::storage::RunRecord> r =
        stipple::storage::Database::open(path("t.db"))->find_run(id);
    EXPECT_TRUE(r.has_value());
    return r.value_or(stipple::storage::RunRecord{});
  }
};

TEST_F(EmbeddingTune, StoresTheRunAndReturnsTheFrontAsTheCommandLineShowsIt) {
  std::vector<stipple::TuneProgress> seen;
  const stipple::TuneResult r = box.tune(small(12), [&](const stipple::TuneProgress& p) {
    seen.push_back(p);
    return true;
  });
  EXPECT_EQ(r.database, path("t.db"));
  EXPECT_EQ(r.run, 1);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.metric, "dE");  // three channels: the mean Lab distance

  const stipple::storage::RunRecord run = stored_run(r.run);
  EXPECT_EQ(run.state, "done");
  EXPECT_EQ(run.pipeline_name, "box");
  EXPECT_EQ(run.evaluations, 12);

  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().phase, "baseline");
  EXPECT_EQ(seen.back().phase, "done");
  EXPECT_EQ(seen.back().evaluations, 12);
  EXPECT_EQ(seen.back().budget, 12);
  EXPECT_GT(seen.back().baseline_ms, 0);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].evaluations, seen[i - 1].evaluations);
    EXPECT_GE(seen[i].elapsed_s, seen[i - 1].elapsed_s);
  }

  // The front, variant for variant, as `stipple front` prints it.
  const auto shown = stipple::testing_cli::stipple("front 1 --format json --db " + path("t.db"));
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  const nlohmann::json j = nlohmann::json::parse(shown.output);
  EXPECT_EQ(j["metric"].get<std::string>(), r.metric);
  ASSERT_EQ(j["variants"].size(), r.front.size());
  ASSERT_FALSE(r.front.empty());
  int baselines = 0;
  for (size_t i = 0; i < r.front.size(); ++i) {
    const stipple::FrontPoint& f = r.front[i];
    const nlohmann::json& v = j["variants"][i];
    EXPECT_EQ(f.variant, static_cast<int>(i));
    EXPECT_EQ(f.baseline, v["baseline"].get<bool>());
    EXPECT_DOUBLE_EQ(f.train_ms, v["train"]["time_ms"].get<double>());
    EXPECT_DOUBLE_EQ(f.train_error, v["train"]["error"].get<double>());
    ASSERT_FALSE(v["test"].is_null()) << "a done run's front is measured on the test photos";
    EXPECT_DOUBLE_EQ(f.test_ms, v["test"]["time_ms"].get<double>());
    EXPECT_NEAR(f.speedup, v["speedup"].get<double>(), 1e-9 * f.speedup);
    EXPECT_EQ(f.schedule, v["schedule"].get<std::string>());
    baselines += f.baseline;
    // What a program then runs is that variant's schedule.
    const stipple::Function fn = box.compile(stipple::FrontVariant{r.database, r.run, f.variant});
    EXPECT_EQ(fn.schedule(), f.schedule);
  }
  EXPECT_EQ(baselines, 1);
}

TEST_F(EmbeddingTune, ProgressReturningFalseStopsAfterTheBatchAndResumeFinishesTheRun) {
  int64_t at_stop = -1;
  const stipple::TuneResult r = box.tune(small(16), [&](const stipple::TuneProgress& p) {
    if (p.phase != "search" || p.evaluations < 5) return true;
    at_stop = p.evaluations;
    return false;
  });
  EXPECT_TRUE(r.stopped);
  ASSERT_GT(at_stop, 0);
  // Nothing measured after the batch the callback saw; the run is left interrupted (no
  // process owns it, though this one lives on), to be resumed by anyone.
  stipple::storage::RunRecord run = stored_run(r.run);
  EXPECT_EQ(run.evaluations, at_stop);
  EXPECT_EQ(stipple::storage::run_state_label(run), "interrupted");
  EXPECT_FALSE(r.front.empty());
  for (const stipple::FrontPoint& f : r.front) EXPECT_TRUE(std::isnan(f.test_ms));

  // Resumed by the library, with the run's own options (this budget is ignored).
  stipple::TuneOptions again = small(3);
  again.resume = r.run;
  const stipple::TuneResult done = box.tune(again);
  EXPECT_FALSE(done.stopped);
  EXPECT_EQ(done.run, r.run);
  run = stored_run(r.run);
  EXPECT_EQ(run.state, "done");
  EXPECT_EQ(run.evaluations, 16);
  for (const stipple::FrontPoint& f : done.front) EXPECT_FALSE(std::isnan(f.test_ms));
  // A done run resumed returns its front as it is.
  const stipple::TuneResult same = box.tune(again);
  ASSERT_EQ(same.front.size(), done.front.size());
  EXPECT_EQ(same.front.back().schedule, done.front.back().schedule);
}

TEST_F(EmbeddingTune, AStopAtTheTestReportLeavesTheRunUntestedAndOneAtDoneStopsNothing) {
  const stipple::TuneResult r =
      box.tune(small(8), [](const stipple::TuneProgress& p) { return p.phase != "test"; });
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(stipple::storage::run_state_label(stored_run(r.run)), "interrupted");
  for (const stipple::FrontPoint& f : r.front) EXPECT_TRUE(std::isnan(f.test_ms));

  stipple::TuneOptions o = small(8);
  o.database = path("u.db");
  const stipple::TuneResult d =
      box.tune(o, [](const stipple::TuneProgress& p) { return p.phase != "done"; });
  EXPECT_FALSE(d.stopped);
  ASSERT_FALSE(d.front.empty());
  for (const stipple::FrontPoint& f : d.front) EXPECT_FALSE(std::isnan(f.test_ms));
}

TEST_F(EmbeddingTune, AStoppedRunIsResumedByTheCommandLineWithTheProgramItTuned) {
  // From a file, stopped; then the file is changed to another program. The run goes on
  // with the program it tuned (stored with it), from another folder, while this process
  // (which stopped it) still lives.
  const std::string file = write("box.stp", kBox);
  stipple::Pipeline from_file = stipple::Pipeline::load(file);
  const stipple::TuneResult r =
      from_file.tune(small(12), [](const stipple::TuneProgress& p) { return p.evaluations < 4; });
  ASSERT_TRUE(r.stopped);
  write("box.stp",
        "pipeline other\ninput in : f32[x, y, c]\nfunc out(x, y, c) = 2.0 * "
        "in(x, y, c)\noutput out\n");
  const auto resumed =
      stipple::testing_cli::shell("cd / && " + std::string(STIPPLE_BINARY) +
                                  " tune --resume 1 --benchmark-lock none --db " + path("t.db"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const stipple::storage::RunRecord run = stored_run(1);
  EXPECT_EQ(run.state, "done");
  EXPECT_EQ(run.pipeline_name, "box");
  EXPECT_EQ(run.evaluations, 12);

  // The library refuses to continue (or to compile a variant of) a run with a program that
  // is not the one it tuned.
  stipple::Pipeline other = stipple::Pipeline::load(file);
  stipple::TuneOptions o = small(12);
  o.resume = 1;
  try {
    other.tune(o);
    ADD_FAILURE() << "resumed with another program";
  } catch (const stipple::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tuned pipeline 'box', a different program from 'other'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(other.compile(stipple::FrontVariant{path("t.db"), 1, 0}), stipple::Error);
}

TEST_F(EmbeddingTune, AProgramFromAFileIsMeasuredAgainstItsHandSchedule) {
  const std::string stp = source("datasets/pipelines/two_pass_blur.stp");
  const std::string sched = source("datasets/pipelines/two_pass_blur.sched");
  stipple::TuneOptions o = small(4);
  o.exact = true;
  const stipple::TuneResult r = stipple::Pipeline::load(stp).tune(o);
  const std::string text = stipple::testing_cli::read_file(sched);
  int baselines = 0;
  for (const stipple::FrontPoint& f : r.front) {
    if (!f.baseline) continue;
    ++baselines;
    EXPECT_EQ(f.schedule, text);
  }
  EXPECT_EQ(baselines, 1);
  // The same program as text has no file beside it: the default schedule.
  const std::string source_text = stipple::testing_cli::read_file(stp);
  o.database = path("text.db");
  const stipple::TuneResult t =
      stipple::Pipeline::from_source(source_text, "two_pass_blur.stp").tune(o);
  int text_baselines = 0;
  for (const stipple::FrontPoint& f : t.front) {
    if (f.baseline) {
      ++text_baselines;
      EXPECT_EQ(f.schedule, "");
    }
  }
  EXPECT_EQ(text_baselines, 1);
}

struct CallerError {
  int code;
};

TEST_F(EmbeddingTune, ACallbacksExceptionStopsTheRunAndLeavesAsThrown) {
  int calls = 0, calls_when_thrown = -1;
  int64_t evaluations_when_thrown = -1;
  try {
    box.tune(small(400), [&](const stipple::TuneProgress& p) {
      ++calls;
      if (p.phase == "search") {
        calls_when_thrown = calls;
        evaluations_when_thrown = p.evaluations;
        throw CallerError{42};
      }
      return true;
    });
    ADD_FAILURE() << "tune returned";
  } catch (const CallerError& e) {
    EXPECT_EQ(e.code, 42);
  }
  EXPECT_EQ(stored_run(1).evaluations, evaluations_when_thrown);
  EXPECT_EQ(stipple::storage::run_state_label(stored_run(1)), "interrupted");
  EXPECT_EQ(calls, calls_when_thrown);  // never called again once it threw
}

TEST_F(EmbeddingTune, BadOptionsAreRefusedBeforeARunExists) {
  auto refused = [&](stipple::TuneOptions o, const std::string& message) {
    try {
      box.tune(o);
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const stipple::Error& e) {
      EXPECT_EQ(e.kind(), stipple::Error::Kind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  stipple::TuneOptions o = small(8);
  o.strategy = "annealing";
  refused(o, "strategy 'annealing' is not one of portfolio (");
  o = small(8);
  o.time_s = 10;
  refused(o, "give a budget or time_s, not both");
  o = small(8);
  o.images = {path("missing.png")};
  refused(o, "images " + path("missing.png") + ": no such file or folder");
  o = small(8);
  o.test_images = {path("")};
  refused(o, "test_images " + path("") + ": no .png or .jpg files in it");
  o = small(8);
  o.baseline = write("bad.sched", "out.tile(x, y, xo, yo, xi, yi, 8, 8)\nout.vectorize(q, 8)\n");
  refused(o, "bad.sched:2:");
  o = small(8);
  o.runs = 0;
  refused(o, "runs must be in 1..1000");
  o = small(8);
  o.population = 1;
  refused(o, "population must be in 2..100000");
  o = small(8);
  o.resume = 3;
  refused(o, "no database " + path("t.db"));
  // The evaluator can be named; a wrong name is said as it was given.
  ::setenv("STIPPLE_EVALUATOR", path("no-evaluator").c_str(), 1);
  refused(small(8), "STIPPLE_EVALUATOR=" + path("no-evaluator") + ": no such file");
  ::unsetenv("STIPPLE_EVALUATOR");
  EXPECT_FALSE(std::filesystem::exists(path("t.db"))) << "a refused run left a database";
}

}  // namespace
