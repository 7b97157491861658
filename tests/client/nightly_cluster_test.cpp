// `stipple nightly run --coordinator` (issue #29): the nights of a registration measured
// on the cluster's workers, the database kept by the client. A real coordinator and two
// real workers on loopback, registered as two hosts ("alpha", "beta") of this machine's
// target: each night is timed on one of them only, the next night on the same one, each
// variant beside the baseline night's code in one job (one process). Nothing changed:
// no regression; the shipped variant registered again without its vectorisation: slower,
// with the command to measure again on the same host. A target without live workers
// fails the night with the reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/client/cluster_fixture.h"

namespace stipple::testing_cli {
namespace {

class NightlyCluster : public ClusterTest {
 protected:
  std::string db() const { return " --db " + path("n.db"); }
  Result ship(const std::string& schedule, const std::string& extra = "") {
    return stipple("nightly add " + source("datasets/pipelines/blur3x3.stp") + " --schedule " +
                   schedule + " --images " + source("datasets/fixtures/natural-820x614.png") +
                   extra + db());
  }
  Result night(const std::string& address, int budget = 0, const std::string& extra = "") {
    return stipple("nightly run --coordinator " + address + " --only blur3x3 --budget " +
                   std::to_string(budget) + " --min-change 0.3 --json " + path("night.json") +
                   extra + db());
  }
  nlohmann::json report() const { return nlohmann::json::parse(read_file(path("night.json"))); }
  /// What a worker logged: its jobs, one line each.
  static std::string log(const Process& p) { return read_file(p.out) + read_file(p.err); }
};

TEST_F(NightlyCluster, NightsAreTimedOnOneHostBesideTheBaselineNightsCode) {
  const std::string address = start_coordinator();
  client::CoordinatorClient c = client(address);
  Process alpha = start_worker(address, {"--host", "alpha", "--compile-jobs", "1"});
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  Process beta = start_worker(address, {"--host", "beta", "--compile-jobs", "1"});
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 2; }, 20s));
  // Each worker says which build measures there (the nights record it).
  Result listed = stipple("workers --coordinator " + address);
  EXPECT_NE(listed.output.find("build: stipple " STIPPLE_VERSION), std::string::npos)
      << listed.output;

  ASSERT_EQ(ship(source("datasets/pipelines/blur3x3.sched")).exit_code, 0);
  // The first night re-tunes a little too: schedules measured on the cluster, stored here.
  Result first = night(address, 3);
  ASSERT_EQ(first.exit_code, 0) << first.output << log(alpha) << log(beta);
  EXPECT_NE(first.output.find("nothing to compare"), std::string::npos) << first.output;
  const std::string host = report()["nights"][0]["night"]["host"];
  EXPECT_EQ(host, "alpha");  // the first live host by name, with no night before

  Result second = night(address);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("against night 1"), std::string::npos) << second.output;
  nlohmann::json r = report();
  EXPECT_EQ(r["nights"][0]["night"]["host"], host);
  const nlohmann::json& shipped = r["nights"][0]["variants"][0];
  EXPECT_EQ(shipped["label"], "shipped");
  EXPECT_FALSE(shipped["regressed"].get<bool>());
  EXPECT_EQ(shipped["output_digest"], shipped["before"]["output_digest"]);
  EXPECT_EQ(shipped["stats"]["compared_with"], "the baseline night's code, timed beside it");
  EXPECT_EQ(shipped["baseline_samples_ms"].size(), shipped["samples_ms"].size());
  // Every job went to alpha: beta measured nothing, alpha the variant beside its baseline.
  // A variant and its baseline code in one job (one process): two measurements a job.
  EXPECT_NE(log(alpha).find(": 2 code measurements"), std::string::npos) << log(alpha);
  EXPECT_EQ(log(beta).find("job "), std::string::npos) << log(beta);

  // The re-tune's evaluations are in the client's database, recorded for alpha.
  {
    auto store = storage::Database::open(path("n.db"));
    // One photo, training and test at once: one photo, as `nightly add` said.
    EXPECT_EQ(store->find_nightly("blur3x3")->images, 1);
    const auto nights = store->list_nights(store->find_nightly("blur3x3")->id);
    ASSERT_EQ(nights.size(), 2u);
    EXPECT_EQ(nights[0].host, "alpha");
    // No regression; "unsure" when the machine is too noisy for 30 rounds to say "same"
    // (tests run in parallel on two cores).
    EXPECT_TRUE(nights[1].outcome == "passed" || nights[1].outcome == "unsure")
        << nights[1].outcome;
    // Recorded with the build of the worker that measured it, as it registered.
    const proto::Capabilities caps = c.workers()[0].capabilities();
    EXPECT_FALSE(caps.code_generator().empty());
    EXPECT_EQ(nights[0].llvm_version, caps.code_generator());
    EXPECT_EQ(nights[0].stipple_version, caps.stipple_version());
    ASSERT_TRUE(nights[0].retune_run.has_value());
    const auto evaluations = store->run_evaluations(*nights[0].retune_run);
    EXPECT_FALSE(evaluations.empty());
    for (const storage::RunEvaluation& e : evaluations) EXPECT_EQ(e.evaluation.host, "alpha");
  }

  // Shipped again without its vectorisation: slower, measured again on alpha.
  ASSERT_EQ(ship(write("scalar.sched",
                       "blur_x.store_at(blur_y, yo).compute_at(blur_y, yi)\n"
                       "blur_y.split(y, yo, yi, 54).reorder(x, yi, c, yo).parallel(yo)\n"),
                 " --replace")
                .exit_code,
            0);
  Result third = night(address);
  EXPECT_EQ(third.exit_code, 1) << third.output;
  EXPECT_NE(third.output.find("shipped   slower"), std::string::npos) << third.output;
  EXPECT_NE(third.output.find("--coordinator " + address), std::string::npos) << third.output;
  EXPECT_NE(third.output.find("--host alpha"), std::string::npos) << third.output;
  r = report();
  EXPECT_EQ(r["nights"][0]["variants"][0]["verdict"], "slower");
  EXPECT_EQ(r["nights"][0]["variants"][0]["stats"]["compared_with"],
            "the baseline night's code, timed beside it");
  EXPECT_EQ(log(beta).find("job "), std::string::npos) << log(beta);
}

TEST_F(NightlyCluster, ATargetWithoutALiveWorkerFailsTheNight) {
  const std::string address = start_coordinator();
  ASSERT_EQ(ship(source("datasets/pipelines/blur3x3.sched")).exit_code, 0);
  Result none = night(address);
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_NE(none.output.find("no live worker of target"), std::string::npos) << none.output;
  EXPECT_TRUE(report()["failed"].get<bool>());

  client::CoordinatorClient c = client(address);
  start_worker(address, {"--host", "alpha"});
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 20s));
  Result elsewhere = night(address, 0, " --host gamma");
  EXPECT_EQ(elsewhere.exit_code, 1) << elsewhere.output;
  EXPECT_NE(elsewhere.output.find("on host gamma"), std::string::npos) << elsewhere.output;

  // A target no registration ships to is bad input.
  Result nowhere = night(address, 0, " --target x86_64-other-00000000");
  EXPECT_EQ(nowhere.exit_code, 2) << nowhere.output;
  EXPECT_NE(nowhere.output.find("ships to it"), std::string::npos) << nowhere.output;

  // Locally, another target than this host's is bad input.
  ASSERT_EQ(ship(source("datasets/pipelines/blur3x3.sched"),
                 " --name other --target x86_64-other-00000000")
                .exit_code,
            0);
  Result local = stipple("nightly run --target x86_64-other-00000000 --only other" + db());
  EXPECT_EQ(local.exit_code, 2) << local.output;
  EXPECT_NE(local.output.find("--coordinator"), std::string::npos) << local.output;
}

}  // namespace
}  // namespace stipple::testing_cli
