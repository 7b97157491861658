// Strategies and the tuning session on a real pipeline with the real local evaluator and
// a real SQLite file: each strategy improves over its seeds (the default schedule and the
// built-in exact genome) within a small budget with a fixed seed, every evaluation is committed and
// linked to the run, nothing is measured twice, the front is re-measured on the test photos, and a
// run that is interrupted and resumed measures nothing it had committed again; a run whose
// baseline fails is stored failed with the reason.
#include "search/tuning_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/support/files.h"
#include "search/genetic.h"
#include "search/genome.h"
#include "search/hill_climbing.h"
#include "workers/local_evaluator.h"

namespace stipple::search {
namespace {

namespace fs = std::filesystem;

std::string source_path(const std::string& rel) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

// Counts what reaches the real evaluator, so that tests can tell measured from stored.
class CountingEvaluator : public workers::Evaluator {
 public:
  explicit CountingEvaluator(workers::Evaluator& inner) : inner_(inner) {}
  std::vector<workers::EvaluationResult> evaluate(const std::vector<std::string>& schedules,
                                                  const std::string& split,
                                                  double give_up_ms) override {
    for (const std::string& s : schedules) measured.push_back(split + ":" + s);
    return inner_.evaluate(schedules, split, give_up_ms);
  }
  std::string host() const override { return inner_.host(); }
  std::string target() const override { return inner_.target(); }
  std::vector<std::string> measured;

 private:
  workers::Evaluator& inner_;
};

class TuningSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stipple-tuning-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pipeline_file_ = source_path("datasets/pipelines/two_pass_blur.stp");
    source_ = read_text_file(pipeline_file_);
    pipeline_ = compile_pipeline(source_, pipeline_file_);
    setup_.pipeline_source = source_;
    setup_.pipeline_file = pipeline_file_;
    setup_.images["train"] = {source_path("datasets/fixtures/people-256x192.png")};
    setup_.images["test"] = {source_path("datasets/fixtures/natural-high-64x48.png")};
    setup_.runs = 9;
    workers::LocalEvaluatorOptions o;
    o.server_binary = STIPPLE_EVALUATOR;
    o.deadline_seconds = 30;
    evaluator_ = std::make_unique<workers::LocalEvaluator>(setup_, o);
    db_ = storage::Database::open((dir_ / "tune.db").string());
  }
  void TearDown() override {
    db_.reset();
    evaluator_.reset();
    fs::remove_all(dir_);
  }
  TuneOptions options(const std::string& strategy, int64_t budget) {
    TuneOptions t;
    t.pipeline_file = pipeline_file_;
    t.train_images = setup_.images["train"];
    t.test_images = setup_.images["test"];
    t.strategy = strategy;
    t.budget = budget;
    t.seed = 5;
    t.runs = 9;
    t.population = 6;
    t.batch = 3;
    return t;  // the baseline: the default schedule
  }

  fs::path dir_;
  std::string pipeline_file_, source_;
  Pipeline pipeline_;
  workers::EvaluationSetup setup_;
  std::unique_ptr<workers::LocalEvaluator> evaluator_;
  std::unique_ptr<storage::Database> db_;
};

// Runs a strategy and checks the run's records: the budget spent on distinct schedules,
// each measured once; the front stored with its test measurements; and improvement over
// the seeds. The seeds are the baseline (the default schedule) and the exact genome that
// the genetic search's first population and hill climbing's initial guesses contain
// (every func at root, the output tiled, vectorised and parallel). That genome alone is
// far faster than the default schedule, so the test also asks for something it cannot
// give: points of the front that it does not dominate, by a margin above timing noise.
void check_strategy_improves(storage::Database& db, workers::Evaluator& ev, const Pipeline& p,
                             const std::string& source, TuneOptions o,
                             double faster_than_seeds = 0.8) {
  CountingEvaluator counting(ev);
  TuningSession session(db, counting, p, source, o);
  const int64_t run = session.create_run();
  session.run();
  std::optional<storage::RunRecord> r = db.find_run(run);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, "done");
  ASSERT_TRUE(r->baseline_evaluation_id);
  std::vector<storage::RunEvaluation> evals = db.run_evaluations(run);
  std::set<std::string> train_schedules;
  double best_exact = 1e30;
  double baseline_ms = db.evaluation(*r->baseline_evaluation_id)->time_ms;
  std::vector<Objectives> points;
  for (const storage::RunEvaluation& e : evals) {
    if (e.evaluation.key.split != "train") continue;
    train_schedules.insert(e.evaluation.key.schedule);
    if (e.evaluation.ok()) {
      points.push_back({e.evaluation.time_ms, e.evaluation.error});
      if (e.evaluation.error == 0) best_exact = std::min(best_exact, e.evaluation.time_ms);
    }
  }
  // The budget is spent exactly, on distinct schedules, each measured once.
  EXPECT_EQ(int64_t(train_schedules.size()), o.budget);
  std::set<std::string> measured(counting.measured.begin(), counting.measured.end());
  EXPECT_EQ(measured.size(), counting.measured.size());
  // Better than the seed: the default schedule inlines A's 17 taps into out's 17.
  EXPECT_LT(best_exact, baseline_ms / 2) << o.strategy;
  // The front dominates more than the baseline alone.
  const Objectives ref{baseline_ms * 2, 10};
  EXPECT_GT(hypervolume(points, ref), hypervolume({{baseline_ms, 0}}, ref) * 1.5);
  // ... and more than the seeds together: below the fastest seed's time, where no seed
  // reaches, the search found variants (within dE 10) at least 20% faster (unless the caller asks
  // for less). The times the search recorded are single medians of a 0.5 ms pipeline on a shared
  // machine (seen to vary 2x between runs of the same schedule under a parallel test load), so the
  // claim is checked by re-timing: the fastest seed and the search's three fastest other variants
  // within dE 10, measured together in one batch, five times over, each keeping its best time. (The
  // portfolio has a third seed, the reuse model's schedule.)
  // The session models this host (the evaluator's): its vector width is the seed's.
  SearchSpaceOptions host_space;
  host_space.vector_bytes = MachineModel::host().vector_bytes;
  const SearchSpace space(p, host_space);
  const std::string exact_text = space.decode(space.exact_genome()).text;
  std::string fastest_seed;
  double fastest_seed_ms = 1e30;
  bool exact_genome_measured = false;
  std::vector<std::pair<double, std::string>> others;  // (recorded ms, schedule)
  for (const storage::RunEvaluation& e : evals) {
    if (e.evaluation.key.split != "train" || !e.evaluation.ok()) continue;
    const bool genome_seed = e.evaluation.key.schedule == exact_text;
    exact_genome_measured |= genome_seed;
    if (genome_seed || e.strategy == "reuse" || e.strategy == "baseline") {
      if (e.evaluation.time_ms < fastest_seed_ms) {
        fastest_seed_ms = e.evaluation.time_ms;
        fastest_seed = e.evaluation.key.schedule;
      }
    } else if (e.evaluation.error <= 10) {
      others.emplace_back(e.evaluation.time_ms, e.evaluation.key.schedule);
    }
  }
  ASSERT_TRUE(exact_genome_measured) << "the exact genome was not evaluated: " << exact_text;
  std::sort(others.begin(), others.end());
  others.resize(std::min<size_t>(others.size(), 3));
  ASSERT_FALSE(others.empty()) << o.strategy << ": no variant within dE 10 beyond the seeds";
  std::vector<std::string> batch{fastest_seed};
  for (const auto& [ms, schedule] : others) batch.push_back(schedule);
  std::vector<double> best_ms(batch.size(), 1e30);
  for (int round = 0; round < 5; ++round) {
    std::vector<workers::EvaluationResult> timed = ev.evaluate(batch, "train", 0);
    ASSERT_EQ(timed.size(), batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      ASSERT_TRUE(timed[i].ok()) << timed[i].reason;
      best_ms[i] = std::min(best_ms[i], timed[i].time_ms);
    }
  }
  const double fastest_other_ms = *std::min_element(best_ms.begin() + 1, best_ms.end());
  EXPECT_LT(fastest_other_ms, best_ms[0] * faster_than_seeds)
      << o.strategy << ": nothing below " << faster_than_seeds << "x the fastest seed's time ("
      << best_ms[0] << " ms re-timed, " << fastest_seed_ms
      << " ms in the search) within dE 10; the "
      << "fastest other variant re-timed at " << fastest_other_ms << " ms";
  // The front is stored with its test measurements.
  std::vector<FrontEntry> front = load_front(db, run);
  ASSERT_FALSE(front.empty());
  for (const FrontEntry& f : front) {
    ASSERT_TRUE(f.test) << f.train.key.schedule;
    EXPECT_EQ(f.test->key.split, "test");
    EXPECT_EQ(f.test->key.schedule, f.train.key.schedule);
  }
}

// The session draws vector widths for the machine it is told the target is (the
// coordinator tells it an arm64 worker's 128-bit NEON), not for the host it runs on; the
// reuse model plans for that machine too.
TEST_F(TuningSessionTest, VectorWidthsAreTheTargetMachines) {
  TuneOptions o = options("portfolio", 12);
  TuningSession session(*db_, *evaluator_, pipeline_, source_, o);
  MachineModel neon = MachineModel::host();
  neon.vector_bytes = 16;
  session.set_machine(neon);
  const int64_t run = session.create_run();
  session.run();
  const std::vector<int> ladder = vector_width_ladder(16);
  const std::regex vectorize(R"(vectorize\(\w+, (\d+)\))");
  // The exact seed for NEON (one 4-lane register) was measured, not this host's.
  SearchSpaceOptions neon_space;
  neon_space.vector_bytes = 16;
  const SearchSpace space(pipeline_, neon_space);
  const std::string neon_exact = space.decode(space.exact_genome()).text;
  bool exact_measured = false;
  std::set<int> widths;
  for (const storage::RunEvaluation& e : db_->run_evaluations(run)) {
    const std::string& text = e.evaluation.key.schedule;
    exact_measured |= text == neon_exact;
    for (auto m = std::sregex_iterator(text.begin(), text.end(), vectorize);
         m != std::sregex_iterator(); ++m) {
      widths.insert(std::stoi((*m)[1]));
    }
  }
  ASSERT_FALSE(widths.empty());
  for (int w : widths) {
    EXPECT_NE(std::find(ladder.begin() + 1, ladder.end(), w), ladder.end())
        << w << " lanes is not a NEON width (" << ladder[1] << " to " << ladder.back() << ")";
  }
  EXPECT_TRUE(exact_measured) << neon_exact;
}

TEST_F(TuningSessionTest, GeneticImprovesOverItsSeed) {
  check_strategy_improves(*db_, *evaluator_, pipeline_, source_, options("genetic", 36));
}

TEST_F(TuningSessionTest, HillClimbingImprovesOverItsSeed) {
  check_strategy_improves(*db_, *evaluator_, pipeline_, source_, options("hill", 48));
}

// The portfolio's seeds include the reuse model's schedule, which is far faster than the
// other two, and its budget is split three ways, so what its searches find beyond that
// seed is a smaller step: re-timed ratios of 0.46-0.78 in eight runs on an idle machine
// at budgets 36 and 60 (a CI run saw one above 0.8). It is asked for 10%, not 20%.
TEST_F(TuningSessionTest, PortfolioImprovesOverItsSeed) {
  check_strategy_improves(*db_, *evaluator_, pipeline_, source_, options("portfolio", 48), 0.9);
}

TEST_F(TuningSessionTest, ReuseModelImprovesOverTheDefaultSchedule) {
  // Two evaluations: the baseline (the default schedule) and the reuse model's schedule,
  // computed without measuring anything.
  TuningSession session(*db_, *evaluator_, pipeline_, source_, options("reuse", 5));
  const int64_t run = session.create_run();
  session.run();
  EXPECT_GT(session.reuse_model_ms(), 0);
  std::vector<storage::RunEvaluation> evals = db_->run_evaluations(run);
  const storage::EvaluationRecord* baseline = nullptr;
  const storage::EvaluationRecord* reuse = nullptr;
  for (const storage::RunEvaluation& e : evals) {
    if (e.evaluation.key.split != "train") continue;
    if (e.strategy == "baseline") baseline = &e.evaluation;
    if (e.strategy == "reuse") reuse = &e.evaluation;
  }
  ASSERT_TRUE(baseline && reuse);
  ASSERT_TRUE(reuse->ok()) << reuse->reason;
  EXPECT_EQ(reuse->error, 0);  // exact
  EXPECT_LT(reuse->time_ms, baseline->time_ms / 2) << reuse->key.schedule;
  EXPECT_EQ(db_->find_run(run)->evaluations, 2);  // the strategy ended before the budget
}

// An evaluator whose every candidate crashes, the baseline among them.
class CrashingEvaluator : public workers::Evaluator {
 public:
  explicit CrashingEvaluator(workers::Evaluator& real) : real_(real) {}
  std::vector<workers::EvaluationResult> evaluate(const std::vector<std::string>& schedules,
                                                  const std::string&, double) override {
    std::vector<workers::EvaluationResult> out(schedules.size());
    for (workers::EvaluationResult& r : out) {
      r.status = EvaluationStatus::Crash;
      r.reason = "killed by signal 11 (Segmentation fault)";
    }
    return out;
  }
  std::string host() const override { return real_.host(); }
  std::string target() const override { return real_.target(); }

 private:
  workers::Evaluator& real_;
};

// A run whose baseline fails is marked failed with the reason it throws, so that the
// database can say why after the process is gone (`stipple runs`, a coordinator restarted).
TEST_F(TuningSessionTest, ARunWhoseBaselineFailsIsStoredFailedWithTheReason) {
  CrashingEvaluator crashing(*evaluator_);
  TuningSession session(*db_, crashing, pipeline_, source_, options("genetic", 4));
  const int64_t run = session.create_run();
  std::string thrown;
  try {
    session.run();
  } catch (const UserError& e) {
    thrown = e.what();
  }
  EXPECT_NE(thrown.find("Segmentation fault"), std::string::npos) << thrown;
  std::optional<storage::RunRecord> r = db_->find_run(run);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, "failed");
  EXPECT_EQ(r->message, thrown);
}

// A warm start's schedules are evaluated right after the baseline, linked to the run as
// "warm start", each once and within the budget; one measured before is found in the
// store, not measured again (the nightly re-tune starts from the last front so).
TEST_F(TuningSessionTest, AWarmStartIsEvaluatedFirstAndFoundInTheStore) {
  const std::string fast = "norm.compute_root()\n";
  TuneOptions first = options("portfolio", 3);
  first.warm_start = {fast};
  CountingEvaluator counting(*evaluator_);
  TuningSession s(*db_, counting, pipeline_, source_, first);
  const int64_t run = s.create_run();
  s.run();
  std::vector<storage::RunEvaluation> evals = db_->run_evaluations(run);
  ASSERT_GE(evals.size(), 2u);
  EXPECT_EQ(evals[1].strategy, "warm start");
  EXPECT_EQ(evals[1].evaluation.key.schedule, fast);
  EXPECT_EQ(std::count(counting.measured.begin(), counting.measured.end(), "train:" + fast), 1);

  TuneOptions again = options("portfolio", 3);
  again.seed = 6;
  again.warm_start = {fast, fast};
  CountingEvaluator second(*evaluator_);
  TuningSession t(*db_, second, pipeline_, source_, again);
  const int64_t rerun = t.create_run();
  t.run();
  std::vector<storage::RunEvaluation> linked = db_->run_evaluations(rerun);
  EXPECT_EQ(
      std::count_if(linked.begin(), linked.end(),
                    [](const storage::RunEvaluation& e) { return e.strategy == "warm start"; }),
      1);
  EXPECT_EQ(std::count(second.measured.begin(), second.measured.end(), "train:" + fast), 0);
}

TEST_F(TuningSessionTest, AResumedRunMeasuresNothingItHadCommitted) {
  TuneOptions o = options("portfolio", 15);
  CountingEvaluator first(*evaluator_);
  std::atomic<bool> stop{false};
  int batches = 0;
  int64_t run = 0;
  {
    TuningSession s(*db_, first, pipeline_, source_, o);
    run = s.create_run();
    s.set_stop_flag(&stop);
    s.run([&](const TuneProgress& p) {
      if (p.phase == "search" && ++batches == 2) stop = true;  // interrupted after 2 batches
    });
  }
  EXPECT_EQ(db_->find_run(run)->state, "running");
  std::map<int64_t, std::string> committed;  // id -> created_at
  for (const storage::RunEvaluation& e : db_->run_evaluations(run)) {
    committed[e.evaluation.id] = e.evaluation.created_at;
  }
  ASSERT_GE(committed.size(), 4u);  // the baseline and two batches
  ASSERT_LT(committed.size(), 15u);

  CountingEvaluator second(*evaluator_);
  TuningSession resumed(*db_, second, pipeline_, source_, o);
  resumed.attach(run);
  resumed.run();
  EXPECT_EQ(db_->find_run(run)->state, "done");
  // Everything committed before is still linked and untouched, and nothing of it was
  // measured again.
  std::map<int64_t, storage::EvaluationRecord> after;
  for (const storage::RunEvaluation& e : db_->run_evaluations(run))
    after[e.evaluation.id] = e.evaluation;
  std::set<std::string> measured_again(second.measured.begin(), second.measured.end());
  for (const auto& [id, created] : committed) {
    ASSERT_TRUE(after.count(id)) << id;
    EXPECT_EQ(after[id].created_at, created) << id;
    EXPECT_FALSE(measured_again.count(after[id].key.split + ":" + after[id].key.schedule)) << id;
  }
  // The resumed run is the run an uninterrupted one would have been: the same budget.
  std::set<std::string> train;
  for (const auto& [id, e] : after) {
    if (e.key.split == "train") train.insert(e.key.schedule);
  }
  EXPECT_EQ(int64_t(train.size()), o.budget);
  EXPECT_EQ(first.measured.size() + second.measured.size(), after.size());
}

}  // namespace
}  // namespace stipple::search
