// An arm64 worker in the cluster (issue #33): the `stipple` binary cross-built for arm64
// (deploy/cross-build-arm64.sh) runs as a worker under qemu-user, registers with a
// coordinator of this host's build on loopback, and tunes a run of the aarch64 target.
// Checked: it registers as the emulated CPU describes itself (aarch64, NEON, 128-bit
// vectors) and marked emulated; the run completes on it with every evaluation stored under
// the emulated target; `stipple workers` and `stipple front` say so; and the front's
// variants, run by the arm64 binary under qemu, write the images this host's build writes.
//
// Label `arm`, run by tests/run-arm.sh (which cross-builds first); not in tests/run.sh.
// A missing arm64 build fails the test, naming the script: the label is only run by it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "cluster_fixture.h"
#include "compiler_core/support/host_probe.h"

namespace stipple::testing_cli {
namespace {

namespace fs = std::filesystem;

class ArmWorkerTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    for (const std::string& p : {arm_binary("stipple"), arm_binary("stipple-evaluator")}) {
      ASSERT_TRUE(fs::exists(p)) << p << " is missing: tests/run-arm.sh cross-builds it "
                                 << "(deploy/cross-build-arm64.sh) before this test";
    }
    ASSERT_TRUE(fs::exists(std::string(STIPPLE_ARM64_SYSROOT) + "/lib/ld-linux-aarch64.so.1"))
        << "no arm64 sysroot at " << STIPPLE_ARM64_SYSROOT << " (deploy/cross-build-arm64.sh)";
  }

  static std::string arm_binary(const std::string& name) {
    return std::string(STIPPLE_ARM64_BUILD_DIR) + "/" + name;
  }
  static std::string qemu() {
    return std::string(STIPPLE_QEMU_AARCH64) + " -L " + STIPPLE_ARM64_SYSROOT;
  }

  /// The worker's evaluator, an arm64 program too: without binfmt_misc (containers) the
  /// worker cannot exec it directly, so it runs this script, which runs it under qemu.
  std::string evaluator_wrapper() {
    const std::string p =
        write("arm64-evaluator.sh",
              "#!/bin/sh\nexec " + qemu() + " " + arm_binary("stipple-evaluator") + " \"$@\"\n");
    fs::permissions(p, fs::perms::owner_exec, fs::perm_options::add);
    return p;
  }

  Process start_arm_worker(const std::string& address) {
    return spawn(
        {"-L", STIPPLE_ARM64_SYSROOT, arm_binary("stipple"), "worker", "--coordinator", address,
         "--cache", path("arm-cache"), "--evaluator", evaluator_wrapper(), "--deadline", "300"},
        "arm-worker", STIPPLE_QEMU_AARCH64);
  }
};

TEST_F(ArmWorkerTest, AnEmulatedArm64WorkerTunesARunOfItsTarget) {
  const std::string address = start_coordinator();
  client::CoordinatorClient c = client(address);
  Process worker = start_arm_worker(address);
  ASSERT_TRUE(wait_until([&] { return c.workers().size() == 1; }, 180s)) << read_file(worker.err);

  // Registered as the emulated CPU describes itself, and marked emulated.
  const proto::Capabilities caps = c.workers()[0].capabilities();
  EXPECT_EQ(caps.arch(), "aarch64");
  EXPECT_TRUE(caps.emulated());
  EXPECT_TRUE(target_is_emulated(caps.target())) << caps.target();
  EXPECT_EQ(caps.target().rfind("aarch64-", 0), 0u) << caps.target();
  const auto& features = caps.isa_features();
  EXPECT_NE(std::find(features.begin(), features.end(), "neon"), features.end())
      << "qemu's CPU has Advanced SIMD; the worker did not read it from the auxiliary vector";
  EXPECT_EQ(caps.vector_bits(), 128);
  const Result listed = stipple("workers --coordinator " + address);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find(caps.target()), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("emulated: this aarch64 CPU is emulated"), std::string::npos)
      << listed.output;

  // A run of its target, with the run's own test photo, completes on it.
  const auto started = std::chrono::steady_clock::now();
  const int64_t run = submit(address, 6, "--target " + caps.target());
  ASSERT_GT(run, 0);
  ASSERT_EQ(wait_for_run(c, run, 900s), "done") << read_file(worker.err);
  std::printf("the budget-6 run took %.1f s on the emulated worker\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  EXPECT_GE(c.workers()[0].jobs_completed(), 6);

  // Every evaluation is stored under the emulated target, and measured.
  auto db = storage::Database::open(db_path());
  const std::optional<storage::RunRecord> record = db->find_run(run);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->target, caps.target());
  // The searches drew the target's vector widths (NEON: at most four 128-bit registers of
  // 32-bit lanes), not this host's: every schedule but the hand-written baseline's, which
  // was written for AVX-512.
  const std::regex vectorize(R"(vectorize\(\w+, (\d+)\))");
  int ok = 0, train = 0;
  for (const storage::RunEvaluation& e : db->run_evaluations(run)) {
    EXPECT_EQ(e.evaluation.key.target, caps.target()) << e.evaluation.key.schedule;
    train += e.evaluation.key.split == "train";
    ok += e.evaluation.ok();
    if (e.strategy == "baseline") continue;
    const std::string& text = e.evaluation.key.schedule;
    for (auto m = std::sregex_iterator(text.begin(), text.end(), vectorize);
         m != std::sregex_iterator(); ++m) {
      EXPECT_LE(std::stoi((*m)[1]), 16) << e.strategy << ": " << text;
    }
  }
  EXPECT_GE(train, 6);
  EXPECT_GE(ok, 6);
  const Result front = stipple("front " + std::to_string(run) + " --db " + db_path());
  ASSERT_EQ(front.exit_code, 0) << front.output;
  EXPECT_NE(front.output.find("emulated: measured on an emulated CPU"), std::string::npos)
      << front.output;

  // The front's variants, run by the arm64 binary (its JIT, NEON code) under qemu, write
  // the image this host's build writes for the same schedule, and an exact one the image
  // of the reference evaluator (compiler_core/interp), which runs no generated code.
  const proto::GetFrontResponse points = c.front(run);
  ASSERT_GT(points.points_size(), 0);
  int compared = 0, exact = 0;
  for (const proto::FrontPoint& point : points.points()) {
    if (compared == 3) break;
    const std::string i = std::to_string(compared++);
    const std::string sched = write("variant" + i + ".sched", point.schedule_text());
    const std::string args = "run " + kPipeline + " --schedule " + sched + " --input in=" + kTest;
    const std::string x86 = path("x86-" + i + ".png"), arm = path("arm-" + i + ".png");
    const Result here = stipple(args + " --output " + x86);
    ASSERT_EQ(here.exit_code, 0) << here.output;
    const Result there = shell(qemu() + " " + arm_binary("stipple") + " " + args + " --output " +
                               arm + " --compare " + x86);
    ASSERT_EQ(there.exit_code, 0) << there.output;
    EXPECT_EQ(read_file(arm), read_file(x86)) << point.schedule_text() << "\n" << there.output;
    if (point.train_error() == 0) {
      ++exact;
      const std::string reference = path("interp-" + i + ".png");
      const Result interp = stipple(args + " --interp --output " + reference);
      ASSERT_EQ(interp.exit_code, 0) << interp.output;
      EXPECT_EQ(read_file(arm), read_file(reference)) << point.schedule_text();
    }
  }
  EXPECT_GT(exact, 0) << "no exact variant on the front to compare with the reference evaluator";
}

}  // namespace
}  // namespace stipple::testing_cli
