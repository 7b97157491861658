// `stipple nightly run` as a user (or a timer) runs it: real processes, real compiles,
// real timings on this machine, a real SQLite file; nothing injected. Two nights each:
//  - nothing changed: no regression;
//  - the shipped variant registered again without its vectorisation: slower, with the
//    evidence (medians, interval, p-value, versions, the command to measure again);
//  - the code generator changed between the nights (an LLVM option that computes logf
//    with 6 bits, STIPPLE_LLVM_OPTIONS=-limit-float-precision=6, a real compiler change
//    that alters what the default schedule computes): a correctness regression, though
//    the output still equals the reference (computed by the same changed compiler);
//  - the re-tune of a registration shipping the default schedule finds a faster one: an
//    improvement;
//  - the history as an HTML page, rendered by headless Chromium: its plots are there, in
//    the DOM and in the pixels of a screenshot.
// Changes are large (4x, a changed output) and --min-change generous, so that a shared,
// noisy machine decides them the same way every time; the statistics' power on small
// changes is bench/nightly_noise.sh's to show.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "compiler_core/image/image_io.h"
#include "storage/database.h"
#include "tests/client/shell.h"

namespace {

using stipple::testing_cli::Result;
using stipple::testing_cli::source;

Result run(const std::string& args) { return stipple::testing_cli::stipple(args); }

class NightlyRun : public stipple::testing_cli::CommandTest {
 protected:
  std::string db() const { return " --db " + path("n.db"); }
  static std::string photo() {
    return " --images " + source("datasets/fixtures/natural-820x614.png");
  }
  /// A night of `only`, re-measuring alone unless `budget`, with its JSON report.
  Result night(const std::string& only, int budget = 0, const std::string& env = "") {
    return stipple::testing_cli::shell(env + " " + STIPPLE_BINARY + " nightly run --only " + only +
                                       " --budget " + std::to_string(budget) +
                                       " --min-change 0.3 --json " + path("night.json") + db());
  }
  /// Registers blur3x3 with `schedule` shipped (`extra`: more options, e.g. --replace).
  Result ship(const std::string& schedule, const std::string& extra = "") {
    return run("nightly add " + source("datasets/pipelines/blur3x3.stp") + " --schedule " +
               schedule + photo() + extra + db());
  }
  static std::string hand() { return source("datasets/pipelines/blur3x3.sched"); }
  /// The hand schedule less its two vectorize directives.
  std::string scalar() const {
    return write("scalar.sched",
                 "blur_x.store_at(blur_y, yo).compute_at(blur_y, yi)\n"
                 "blur_y.split(y, yo, yi, 54).reorder(x, yi, c, yo).parallel(yo)\n");
  }
  nlohmann::json report() const {
    std::ifstream in(path("night.json"));
    return nlohmann::json::parse(in);
  }
};

TEST_F(NightlyRun, TwoNightsWithNothingChangedReportNoRegression) {
  ASSERT_EQ(ship(hand()).exit_code, 0);
  Result first = night("blur3x3");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("(the first on this host and setup: nothing to compare): passed"),
            std::string::npos)
      << first.output;
  Result second = night("blur3x3");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("against night 1"), std::string::npos) << second.output;
  const nlohmann::json r = report();
  ASSERT_EQ(r["nights"].size(), 1u);
  const nlohmann::json& shipped = r["nights"][0]["variants"][0];
  EXPECT_EQ(shipped["label"], "shipped");
  EXPECT_NE(shipped["verdict"], "slower");
  EXPECT_FALSE(shipped["regressed"].get<bool>());
  EXPECT_GE(shipped["samples_ms"].size(), 10u);
  EXPECT_EQ(shipped["output_digest"], shipped["before"]["output_digest"]);
  // Compared with the first night's own code, timed beside it round by round.
  EXPECT_EQ(shipped["stats"]["compared_with"], "the baseline night's code, timed beside it");
  EXPECT_EQ(shipped["baseline_samples_ms"].size(), shipped["samples_ms"].size());
  EXPECT_FALSE(r["regressed"].get<bool>());

  // The history: two nights, both passed, on this host.
  auto store = stipple::storage::Database::open(path("n.db"));
  const std::vector<stipple::storage::NightRecord> nights =
      store->list_nights(store->find_nightly("blur3x3")->id);
  ASSERT_EQ(nights.size(), 2u);
  EXPECT_EQ(nights[0].outcome, "passed");
  EXPECT_EQ(nights[1].outcome, "passed");
  EXPECT_EQ(nights[0].host, nights[1].host);
  EXPECT_FALSE(nights[1].llvm_version.empty());
}

TEST_F(NightlyRun, AShippedVariantWithoutItsVectorisationIsSlowerWithEvidence) {
  ASSERT_EQ(ship(hand()).exit_code, 0);
  ASSERT_EQ(night("blur3x3").exit_code, 0);
  // The hand schedule less its two vectorize directives, shipped under the same name.
  Result again = ship(scalar(), " --replace");
  ASSERT_EQ(again.exit_code, 0) << again.output;

  Result second = night("blur3x3");
  EXPECT_EQ(second.exit_code, 1) << second.output;
  EXPECT_NE(second.output.find("REGRESSED"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("shipped   slower"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("registered again"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("measure again: stipple nightly run --only blur3x3"),
            std::string::npos)
      << second.output;
  const nlohmann::json r = report();
  EXPECT_TRUE(r["regressed"].get<bool>());
  const nlohmann::json& shipped = r["nights"][0]["variants"][0];
  EXPECT_EQ(shipped["verdict"], "slower");
  const nlohmann::json& change = shipped["stats"]["change"];
  EXPECT_LT(change["p_value"].get<double>(), 0.01);
  EXPECT_GT(change["ratio_low"].get<double>(), 1.3);  // the interval, all of it slower
  EXPECT_GT(change["after_median_ms"].get<double>(), change["before_median_ms"].get<double>());
  EXPECT_EQ(shipped["stats"]["confirmation"]["verdict"], "slower");
  EXPECT_EQ(shipped["stats"]["compared_with"], "the baseline night's code, timed beside it");
  EXPECT_EQ(shipped["baseline_samples_ms"].size(), shipped["samples_ms"].size());
  EXPECT_FALSE(r["nights"][0]["night"]["host"].get<std::string>().empty());

  // Reported again the next night, until it is accepted; then the slower one is the
  // baseline and the night passes.
  EXPECT_EQ(night("blur3x3").exit_code, 1);
  Result accept = run("nightly accept blur3x3" + db());
  ASSERT_EQ(accept.exit_code, 0) << accept.output;
  Result after = night("blur3x3");
  EXPECT_EQ(after.exit_code, 0) << after.output;
  EXPECT_EQ(run("nightly accept blur3x3" + db()).exit_code, 2);  // nothing to accept
}

TEST_F(NightlyRun, ACodeGeneratorThatChangesAnExactOutputFailsTheNight) {
  const std::string pipeline = write("logs.stp",
                                     "pipeline logs\n"
                                     "input in : f32[x, y, c]\n"
                                     "func out(x, y, c) = log(in(x, y, c) + 1)\n"
                                     "output out\n");
  const std::string none = write("default.sched", "");
  ASSERT_EQ(run("nightly add " + pipeline + " --schedule " + none + photo() + db()).exit_code, 0);
  Result first = night("logs");
  ASSERT_EQ(first.exit_code, 0) << first.output;

  Result second = night("logs", 0, "STIPPLE_LLVM_OPTIONS=-limit-float-precision=6");
  EXPECT_EQ(second.exit_code, 1) << second.output;
  EXPECT_NE(second.output.find("shipped   wrong output"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("changed since the baseline night"), std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("STIPPLE_LLVM_OPTIONS=-limit-float-precision=6"), std::string::npos)
      << second.output;  // the versions of the night say what changed
  const nlohmann::json shipped = report()["nights"][0]["variants"][0];
  EXPECT_EQ(shipped["verdict"], "wrong output");
  EXPECT_NE(shipped["output_digest"], shipped["before"]["output_digest"]);
  EXPECT_EQ(shipped["error"].get<double>(), 0);  // the reference changed with it

  // Back to the usual compiler: the output is the first night's again, and the baseline is
  // the last night that passed (the first), not the wrong one: passed.
  Result third = night("logs");
  EXPECT_EQ(third.exit_code, 0) << third.output;
  EXPECT_NE(third.output.find("against night 1"), std::string::npos) << third.output;
}

TEST_F(NightlyRun, TheReTuneFindsAnImprovementOnTheDefaultSchedule) {
  const std::string none = write("default.sched", "");
  ASSERT_EQ(ship(none).exit_code, 0);
  Result first = night("blur3x3", 8);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("dominates the shipped variant"), std::string::npos) << first.output;
  const nlohmann::json r = report();
  EXPECT_TRUE(r["nights"][0]["retune_run"].is_number());
  bool improvement = false;
  for (const nlohmann::json& v : r["nights"][0]["variants"]) {
    if (!v["stats"].contains("improves_on_shipped")) continue;
    improvement = true;
    EXPECT_EQ(v["stats"]["improves_on_shipped"]["verdict"], "faster");
    EXPECT_LE(v["error"].get<double>(), r["nights"][0]["variants"][0]["error"].get<double>());
  }
  EXPECT_TRUE(improvement) << first.output;

  // The next night starts from that front: the registration points at the re-tune's run,
  // and shipping the hand schedule instead keeps it. The front's points are re-measured;
  // the run's baseline (the default schedule, which the front dominates) is not one.
  auto store = stipple::storage::Database::open(path("n.db"));
  const int64_t retune = r["nights"][0]["retune_run"].get<int64_t>();
  EXPECT_EQ(store->find_nightly("blur3x3")->run_id, retune);
  ASSERT_EQ(ship(hand(), " --replace").exit_code, 0);
  EXPECT_EQ(store->find_nightly("blur3x3")->run_id, retune);
  ASSERT_NE(night("blur3x3").exit_code, 2);
  const nlohmann::json second = report()["nights"][0]["variants"];
  EXPECT_GE(second.size(), 2u) << second.dump(1);
  for (size_t i = 1; i < second.size(); ++i) {
    EXPECT_NE(second[i]["schedule"], "") << "the dominated baseline re-measured as a front point";
  }
}

TEST_F(NightlyRun, PhotosAreMeasuredAtTheRegisteredSize) {
  ASSERT_EQ(ship(hand(), " --size 200x150").exit_code, 0);
  Result first = run("nightly run --budget 0 --samples 4 --cache " + path("cache") + db());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::vector<std::string> sized;
  for (const auto& e : std::filesystem::directory_iterator(path("cache") + "/nightly-photos")) {
    sized.push_back(e.path().string());
  }
  ASSERT_EQ(sized.size(), 1u);
  EXPECT_NE(sized[0].find("-200x150.png"), std::string::npos);
  const stipple::Buffer image = stipple::read_image(sized[0]);
  EXPECT_EQ(image.extent(0), 200);
  EXPECT_EQ(image.extent(1), 150);
  // The night's code ran on it: the re-measured photo's time is a 200x150 one's, far
  // under the 820x614 photo's (16.8 times the pixels).
  Result full = ship(hand(), " --name full");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  ASSERT_EQ(run("nightly run --budget 0 --samples 4 --json " + path("both.json") + " --cache " +
                path("cache") + db())
                .exit_code,
            0);
  std::ifstream in(path("both.json"));
  const nlohmann::json both = nlohmann::json::parse(in);
  double small = 0, large = 0;
  for (const nlohmann::json& n : both["nights"]) {
    const double ms = n["variants"][0]["median_ms"].get<double>();
    (n["registration"]["name"] == "full" ? large : small) = ms;
  }
  EXPECT_LT(small * 4, large) << both.dump(1);
}

// Pixels of `png` within 40 (in each channel, 8-bit) of the colour r, g, b.
int64_t pixels_near(const std::string& png, int r, int g, int b) {
  const stipple::Buffer image = stipple::read_image(png);
  const int64_t w = image.extent(0), h = image.extent(1), channels = image.extent(2);
  const double scale = image.type() == stipple::ScalarType::UInt16 ? 257 : 1;
  int64_t n = 0;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      bool near = channels >= 3;
      const int want[3] = {r, g, b};
      for (int64_t c = 0; c < 3 && near; ++c) {
        const int64_t at[3] = {x, y, c};
        near = std::abs(image.get(at) / scale - want[c]) <= 40;
      }
      n += near;
    }
  }
  return n;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(NightlyRun, TheHistoryPageRendersItsPlotsInChromium) {
  ASSERT_EQ(ship(hand()).exit_code, 0);
  ASSERT_EQ(night("blur3x3").exit_code, 0);
  ASSERT_EQ(ship(scalar(), " --replace").exit_code, 0);
  ASSERT_EQ(night("blur3x3").exit_code, 1);
  Result report = run("nightly report --html " + path("nightly.html") + db());
  ASSERT_EQ(report.exit_code, 0) << report.output;

  // The DOM as Chromium built it: two plots, the shipped variant's line over the two
  // nights, the second night's change point marked slower, the fronts' points.
  const std::string chromium = "chromium --headless --no-sandbox --disable-gpu ";
  Result dom = stipple::testing_cli::shell("timeout 120 " + chromium + "--dump-dom file://" +
                                           path("nightly.html") + " 2>/dev/null");
  ASSERT_EQ(dom.exit_code, 0) << dom.output;
  EXPECT_EQ(count(dom.output, "<svg"), 2u) << dom.output;
  EXPECT_EQ(count(dom.output, "<polyline class=\"series\""), 1u);
  EXPECT_EQ(count(dom.output, "class=\"change slower\""), 1u);
  EXPECT_EQ(count(dom.output, "<circle class=\"point\""), 1u);  // the first night
  EXPECT_EQ(count(dom.output, "class=\"front-point now\""), 1u);
  EXPECT_EQ(count(dom.output, "class=\"front-point before\""), 1u);
  EXPECT_NE(dom.output.find("<td>slower</td>"), std::string::npos);

  // The pixels: the series' blue and the change point's red are drawn.
  Result shot = stipple::testing_cli::shell(
      "timeout 120 " + chromium + "--window-size=1000,1400 --screenshot=" + path("nightly.png") +
      " file://" + path("nightly.html"));
  ASSERT_EQ(shot.exit_code, 0) << shot.output;
  EXPECT_GT(pixels_near(path("nightly.png"), 0x1f, 0x4e, 0x9c), 200);  // the line, the front
  EXPECT_GT(pixels_near(path("nightly.png"), 0xc0, 0x39, 0x2b), 20);   // the triangle
}

// What is compared with what: a night run to look again (--no-record, as the report's
// "measure again" command) stores nothing; photos registered again, another host name, are
// no baseline; a host of no registered target measures nothing, and that fails the night.
TEST_F(NightlyRun, OnlyNightsOfTheSameHostAndSetupAreCompared) {
  ASSERT_EQ(ship(hand()).exit_code, 0);
  ASSERT_EQ(night("blur3x3").exit_code, 0);
  Result again = run("nightly run --only blur3x3 --no-record --budget 0 --min-change 0.3" + db());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("a night not recorded against night 1"), std::string::npos)
      << again.output;
  auto store = stipple::storage::Database::open(path("n.db"));
  const int64_t id = store->find_nightly("blur3x3")->id;
  EXPECT_EQ(store->list_nights(id).size(), 1u);

  Result elsewhere = stipple::testing_cli::shell(std::string(STIPPLE_BINARY) +
                                                 " nightly run --budget 0 --host node-7" + db());
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.output;
  EXPECT_NE(elsewhere.output.find("(node-7), night 2 (the first on this host"), std::string::npos)
      << elsewhere.output;

  ASSERT_EQ(run("nightly add " + source("datasets/pipelines/blur3x3.stp") +
                " --replace --schedule " + source("datasets/pipelines/blur3x3.sched") +
                " --images " + source("datasets/fixtures/people-256x192.png") + db())
                .exit_code,
            0);
  Result other_photos = night("blur3x3");
  ASSERT_EQ(other_photos.exit_code, 0) << other_photos.output;
  EXPECT_NE(other_photos.output.find("night 3 (the first on this host and setup"),
            std::string::npos)
      << other_photos.output;
  EXPECT_EQ(store->list_nights(id).size(), 3u);

  ASSERT_EQ(ship(hand(), " --name arm --target aarch64-cortex_a76-00000000").exit_code, 0);
  Result none = run("nightly run --only arm" + db());
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_NE(none.output.find("skipped target aarch64-cortex_a76-00000000"), std::string::npos);
  EXPECT_NE(none.output.find("nothing measured"), std::string::npos) << none.output;
}

TEST_F(NightlyRun, BadInputIsRefusedWithExitCodeTwo) {
  Result empty = run("nightly run" + db());
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("no database"), std::string::npos) << empty.output;
  ASSERT_EQ(ship(hand()).exit_code, 0);
  Result unknown = run("nightly run --only nosuch" + db());
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("nothing is registered as 'nosuch'"), std::string::npos);
  // A coordinator that cannot be reached is a failure (exit 1), found before any night.
  Result cluster = run("nightly run --coordinator 127.0.0.1:1 --timeout 5" + db());
  EXPECT_EQ(cluster.exit_code, 1) << cluster.output;
  EXPECT_NE(cluster.output.find("cannot reach the coordinator at 127.0.0.1:1"), std::string::npos)
      << cluster.output;
  EXPECT_EQ(cluster.output.find("night 1"), std::string::npos) << cluster.output;
  Result nowhere = run("nightly run --json " + path("no/such/folder/n.json") + db());
  EXPECT_EQ(nowhere.exit_code, 2) << nowhere.output;
  EXPECT_NE(nowhere.output.find("--json: no folder"), std::string::npos) << nowhere.output;
  Result replace = ship(hand(), " --name other --replace");
  EXPECT_EQ(replace.exit_code, 2) << replace.output;
}

}  // namespace
