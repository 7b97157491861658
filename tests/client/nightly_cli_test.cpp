// `stipple nightly add|list|remove` as a user runs them: real processes, a real SQLite file,
// exit codes. A registration from a schedule file and one from a point of a real run's
// front (made by `stipple tune` here), refused registrations that write nothing, and what a
// deleted run leaves registered.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "storage/database.h"
#include "tests/client/shell.h"

namespace {

using stipple::testing_cli::Result;
using stipple::testing_cli::source;

Result run(const std::string& args) { return stipple::testing_cli::stipple(args); }

class NightlyCli : public stipple::testing_cli::CommandTest {
 protected:
  std::string db_option() const { return " --db " + path("n.db"); }
  std::string photos() const {
    return " --images " + source("datasets/fixtures/natural-high-64x48.png") + " --test-images " +
           source("datasets/fixtures/man-made-low-64x48.png");
  }
};

TEST_F(NightlyCli, AScheduleIsRegisteredListedAndRemoved) {
  Result add =
      run("nightly add " + source("datasets/pipelines/blur3x3.stp") + " --schedule " +
          source("datasets/pipelines/blur3x3.sched") + photos() +
          " --size 320x240 --target x86_64-znver4-0000000b --target cuda-sm_90-13" + db_option());
  ASSERT_EQ(add.exit_code, 0) << add.output;
  EXPECT_NE(add.output.find("registered blur3x3: blur3x3, schedule blur3x3.sched, 2 photos at "
                            "320x240, targets cuda-sm_90-13 x86_64-znver4-0000000b"),
            std::string::npos)
      << add.output;

  auto db = stipple::storage::Database::open(path("n.db"));
  std::optional<stipple::storage::NightlyRecord> r = db->find_nightly("blur3x3");
  ASSERT_TRUE(r);
  std::ifstream hand(source("datasets/pipelines/blur3x3.sched"));
  EXPECT_EQ(r->schedule, std::string(std::istreambuf_iterator<char>(hand), {}));
  EXPECT_EQ(r->images, 2);
  EXPECT_FALSE(r->run_id);

  Result list = run("nightly list" + db_option());
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("blur3x3"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("schedule blur3x3.sched"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("320x240"), std::string::npos) << list.output;

  // The same name again, and a removal of what is not there: bad input.
  Result again = run("nightly add " + source("datasets/pipelines/blur3x3.stp") + " --schedule " +
                     source("datasets/pipelines/blur3x3.sched") + photos() + db_option());
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("'blur3x3' is registered already"), std::string::npos);
  Result removed = run("nightly remove blur3x3" + db_option());
  ASSERT_EQ(removed.exit_code, 0) << removed.output;
  EXPECT_FALSE(db->find_nightly("blur3x3"));
  Result missing = run("nightly remove blur3x3" + db_option());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("nothing is registered as 'blur3x3'"), std::string::npos);
  EXPECT_NE(run("nightly list" + db_option()).output.find("no pipelines registered"),
            std::string::npos);
}

TEST_F(NightlyCli, AVariantOfARunsFrontIsRegisteredAndOutlivesTheRun) {
  Result tune = run("tune " + source("datasets/pipelines/blur3x3.stp") + photos() +
                    " --budget 3 --exact --runs 1 --seed 2" + db_option());
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  auto db = stipple::storage::Database::open(path("n.db"));
  const std::vector<stipple::storage::FrontPoint> front = db->front(1);
  ASSERT_FALSE(front.empty());
  const std::string shipped = db->evaluation(front[0].evaluation_id)->key.schedule;

  Result add = run("nightly add " + source("datasets/pipelines/blur3x3.stp") +
                   " --name blur-prod --variant 1:0" + photos() + db_option());
  ASSERT_EQ(add.exit_code, 0) << add.output;
  std::optional<stipple::storage::NightlyRecord> r = db->find_nightly("blur-prod");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->schedule, shipped);
  EXPECT_EQ(r->variant, "run 1 variant 0");
  EXPECT_EQ(r->run_id, std::optional<int64_t>(1));
  EXPECT_EQ(r->targets.size(), 1u);  // the run's target key
  EXPECT_EQ(r->targets[0], db->find_run(1)->target);
  EXPECT_EQ(r->source_run, std::optional<int64_t>(1));

  ASSERT_EQ(run("runs --delete 1" + db_option()).exit_code, 0);
  Result list = run("nightly list" + db_option());
  EXPECT_NE(list.output.find("run 1 variant 0 (run deleted)"), std::string::npos) << list.output;
  EXPECT_EQ(db->find_nightly("blur-prod")->schedule, shipped);
}

TEST_F(NightlyCli, BadRegistrationsAreRefusedAndWriteNothing) {
  ASSERT_EQ(run("tune " + source("datasets/pipelines/blur3x3.stp") + photos() +
                " --budget 2 --exact --runs 1" + db_option())
                .exit_code,
            0);
  const std::string blur = "nightly add " + source("datasets/pipelines/blur3x3.stp") + " ";
  const std::string sched = " --schedule " + source("datasets/pipelines/blur3x3.sched");
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      {blur + photos(), "give the variant that ships"},
      {blur + "--variant 9:0" + photos(), "no run 9"},
      {blur + "--variant 1:7" + photos(), "run 1 has variants 0.."},
      {blur + "--variant one" + photos(), "--variant takes RUN:N"},
      {"nightly add " + source("datasets/pipelines/two_pass_blur.stp") + " --variant 1:0" +
           photos(),
       "run 1 tuned blur3x3"},
      {blur + "--schedule " + source("datasets/pipelines/two_pass_blur.sched") + photos(),
       "unknown func"},
      {blur + sched + " --size 8x8" + photos(), "--size takes WxH"},
      {blur + sched + " --target 'a b'" + photos(), "--target takes a target key"},
      {blur + sched + " --target x86_64" + photos(), "--target takes a target key"},
      {blur + sched + " --images " + path("missing.png"), "no such file"},
  };
  for (const Case& c : cases) {
    Result r = run(c.args + db_option());
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  auto db = stipple::storage::Database::open(path("n.db"));
  EXPECT_TRUE(db->list_nightly().empty());
  // A refused registration opens no database it would have to create.
  for (const std::string& args :
       {blur + "--schedule " + source("datasets/pipelines/two_pass_blur.sched"),
        blur + "--variant 1:0", blur + sched + " --size 8x8"}) {
    EXPECT_EQ(run(args + " --db " + path("none.db")).exit_code, 2) << args;
    EXPECT_FALSE(std::filesystem::exists(path("none.db"))) << args;
  }
}

// A run still running (here: one whose process was killed, so interrupted) has a front that
// may change: none of its variants is registered.
TEST_F(NightlyCli, AVariantOfARunNotDoneIsRefused) {
  ASSERT_EQ(run("tune " + source("datasets/pipelines/blur3x3.stp") + photos() +
                " --budget 2 --exact --runs 1" + db_option())
                .exit_code,
            0);
  {
    auto db = stipple::storage::Database::open(path("n.db"));
    db->set_run_state(1, "failed", "a test");
  }
  Result r = run("nightly add " + source("datasets/pipelines/blur3x3.stp") + " --variant 1:0" +
                 photos() + db_option());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("run 1 is failed, not done"), std::string::npos) << r.output;
}

// Repeatable options of a nested command take one value each, so FILE may follow them.
TEST_F(NightlyCli, TheFileMayFollowARepeatableOption) {
  Result r = run("nightly add --images " + source("datasets/fixtures/natural-high-64x48.png") +
                 " --target cuda-sm_90-13 " + source("datasets/pipelines/blur3x3.stp") +
                 " --schedule " + source("datasets/pipelines/blur3x3.sched") + db_option());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("registered blur3x3: blur3x3, schedule blur3x3.sched, 1 photo, "
                          "targets cuda-sm_90-13"),
            std::string::npos)
      << r.output;
}

// `stipple nightly` alone and with a command it does not have name its commands.
TEST_F(NightlyCli, AMissingOrUnknownCommandNamesTheCommands) {
  Result bare = run("nightly");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.output.find("stipple nightly: give a command: add, list, remove"),
            std::string::npos)
      << bare.output;
  Result unknown = run("nightly frob" + db_option());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("stipple nightly: unknown command 'frob'; the commands are add, "
                                "list, remove"),
            std::string::npos)
      << unknown.output;
  Result help = run("nightly --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_NE(help.output.find("remove"), std::string::npos);
  EXPECT_EQ(run("nightly add --help").exit_code, 0);
  EXPECT_EQ(run("frob").exit_code, 2);
}

}  // namespace
