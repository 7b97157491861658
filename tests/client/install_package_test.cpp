// The installed package (cmake/install.cmake, issue #30) as a user's project uses it:
// `cmake --install` of this build into a temporary prefix, then an out-of-tree CMake
// project that finds it (find_package(Stipple)), compiles a benchmark pipeline under its
// hand schedule, or a variant of a tuned run in a database, at build time
// (stipple_add_pipeline) and links aot_driver.c against it; the program's output equals
// the reference evaluator's bit for bit. A changed schedule
// compiles the pipeline again; a bad pipeline fails the user's build with its
// file:line:col. And a C++ program of the embedding library (Stipple::stipple), built
// against the package alone, runs a tuned variant on its own interleaved image and
// computes what `stipple run` does, value for value.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler_core/image/image_io.h"
#include "tests/client/aot_check.h"
#include "tests/client/shell.h"

namespace {

namespace fs = std::filesystem;
using stipple::testing_cli::Result;
using stipple::testing_cli::shell;
using stipple::testing_cli::source;

class InstallPackage : public stipple::testing_cli::CommandTest {
 protected:
  /// Installs this build into PREFIX.
  void SetUp() override {
    CommandTest::SetUp();
    Result installed = shell(std::string(STIPPLE_CMAKE) + " --install " + STIPPLE_BUILD_DIR +
                             " --prefix " + path("prefix"));
    ASSERT_EQ(installed.exit_code, 0) << installed.output;
  }
  /// A project compiling `stp` under `schedule` as aot_pipeline.
  Result build(const std::string& stp, const std::string& schedule) {
    return build_project("FROM " + stp + " SCHEDULE " + schedule);
  }
  /// A project whose program (aot_driver.c) links stipple_add_pipeline(aot_pipeline
  /// `what`), configured and built.
  Result build_project(const std::string& what) {
    fs::create_directories(path("app"));
    const std::string project =
        "cmake_minimum_required(VERSION 3.20)\n"
        "project(app C)\n"
        "find_package(Stipple 0.1 REQUIRED)\n"
        "stipple_add_pipeline(aot_pipeline " +
        what +
        ")\n"
        "add_executable(driver " +
        source("tests/client/aot_driver.c") +
        ")\n"
        "target_compile_options(driver PRIVATE -Wall -Wextra -Werror)\n"
        "target_link_libraries(driver PRIVATE aot_pipeline)\n";
    write("app/CMakeLists.txt", project);
    const std::string cmake = STIPPLE_CMAKE;
    Result configured = shell(cmake + " -S " + path("app") + " -B " + path("app/build") +
                              " -DCMAKE_C_COMPILER=" + STIPPLE_C_COMPILER +
                              " -DCMAKE_PREFIX_PATH=" + path("prefix"));
    if (configured.exit_code != 0) return configured;
    return shell(cmake + " --build " + path("app/build"));
  }
};

TEST_F(InstallPackage, AUsersProjectBuildsAndLinksATunedPipelineThatMatchesTheEvaluator) {
  ASSERT_TRUE(fs::exists(path("prefix/bin/stipple")));
  ASSERT_TRUE(fs::exists(path("prefix/bin/stipple-evaluator")));
  const std::string schedule = path("blur.sched");
  fs::copy_file(source("datasets/pipelines/two_pass_blur.sched"), schedule);
  Result built = build(source("datasets/pipelines/two_pass_blur.stp"), schedule);
  ASSERT_EQ(built.exit_code, 0) << built.output;
  EXPECT_NE(built.output.find("Compiling pipeline aot_pipeline with Stipple"), std::string::npos)
      << built.output;
  const std::string driver = path("app/build/driver");
  ASSERT_TRUE(fs::exists(driver)) << built.output;
  stipple::testing_cli::expect_matches_evaluator(driver, dir_.string(), "two_pass_blur",
                                                 stipple::testing_cli::random_image(97, 61, 3, 7),
                                                 {}, "", 0, 0, 97, 61);

  // Nothing changed: nothing compiled again. The schedule changed: compiled again.
  Result again = shell(std::string(STIPPLE_CMAKE) + " --build " + path("app/build"));
  EXPECT_EQ(again.output.find("Compiling pipeline"), std::string::npos) << again.output;
  std::ofstream(schedule, std::ios::app) << "# tuned again\n";
  again = shell(std::string(STIPPLE_CMAKE) + " --build " + path("app/build"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("Compiling pipeline"), std::string::npos) << again.output;
}

TEST_F(InstallPackage, AVariantOfATunedRunInADatabaseIsBuiltIntoTheUsersProgram) {
  // A short exact tune: its front's variants compute what the evaluator does, bit for bit.
  Result tuned = stipple::testing_cli::stipple(
      "tune " + source("datasets/pipelines/two_pass_blur.stp") + " --exact --budget 4 --images " +
      source("datasets/fixtures/natural-high-64x48.png") + " --db " + path("t.db"));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  Result built = build_project("DATABASE " + path("t.db") + " RUN 1 VARIANT 0");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  stipple::testing_cli::expect_matches_evaluator(
      path("app/build/driver"), dir_.string(), "two_pass_blur",
      stipple::testing_cli::random_image(64, 48, 3, 11), {}, "", 0, 0, 64, 48);
  // A variant the front does not have fails the build, saying so.
  EXPECT_NE(build_project("DATABASE " + path("t.db") + " RUN 1 VARIANT 99").exit_code, 0);
}

TEST_F(InstallPackage, ACppProgramRunsATunedVariantOnItsInterleavedImageAsTheCliDoes) {
  ASSERT_TRUE(fs::exists(path("prefix/include/stipple/stipple.h")));
  const std::string stp = source("datasets/pipelines/two_pass_blur.stp");
  const std::string photo = source("datasets/fixtures/natural-high-64x48.png");
  Result tuned = stipple::testing_cli::stipple("tune " + stp + " --exact --budget 4 --images " +
                                               photo + " --db " + path("t.db"));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  // What the command line computes for variant 0: its schedule, run on the photo.
  Result cli = stipple::testing_cli::stipple("export 1 --variant 0 --format schedule --db " +
                                             path("t.db") + " -o " + path("v0.sched"));
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  cli = stipple::testing_cli::stipple("run " + stp + " --schedule " + path("v0.sched") +
                                      " --input in=" + photo + " --output " + path("cli.png"));
  ASSERT_EQ(cli.exit_code, 0) << cli.output;

  // The user's program, built against the installed package alone.
  fs::create_directories(path("embed"));
  write("embed/CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.20)\n"
        "project(embed CXX)\n"
        "find_package(Stipple 0.1 REQUIRED)\n"
        "add_executable(embed " +
            source("tests/client/embedding_driver.cpp") +
            ")\n"
            "target_compile_features(embed PRIVATE cxx_std_17)\n"
            "target_compile_options(embed PRIVATE -Wall -Wextra -Werror)\n"
            "target_link_libraries(embed PRIVATE Stipple::stipple)\n");
  const std::string cmake = STIPPLE_CMAKE;
  Result built = shell(cmake + " -S " + path("embed") + " -B " + path("embed/build") +
                       " -DCMAKE_CXX_COMPILER=" + STIPPLE_CXX_COMPILER + " -DCMAKE_PREFIX_PATH=" +
                       path("prefix") + " && " + cmake + " --build " + path("embed/build"));
  ASSERT_EQ(built.exit_code, 0) << built.output;

  // The photo in the program's memory, interleaved as a decoder hands it over.
  const stipple::Buffer rgb = stipple::read_image(photo);
  const int64_t w = rgb.extent(0), h = rgb.extent(1);
  std::string bytes;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t c = 0; c < 3; ++c) {
        bytes.push_back(static_cast<char>(rgb.get(std::vector<int64_t>{x, y, c})));
      }
    }
  }
  write("in.rgb", bytes);
  Result ran =
      shell(path("embed/build/embed") + " " + stp + " " + path("t.db") + " 1 0 " + path("in.rgb") +
            " " + std::to_string(w) + " " + std::to_string(h) + " " + path("out.u16"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find("two_pass_blur 64x48"), std::string::npos) << ran.output;

  // Equal, value for value, to the command line's 16-bit PNG.
  const stipple::Buffer expected = stipple::read_image(path("cli.png"));
  std::ifstream out_file(path("out.u16"), std::ios::binary);
  const std::string out((std::istreambuf_iterator<char>(out_file)),
                        std::istreambuf_iterator<char>());
  ASSERT_EQ(static_cast<int64_t>(out.size()), w * h * 3 * 2);
  int64_t differ = 0;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t c = 0; c < 3; ++c) {
        const size_t at = static_cast<size_t>(((y * w + x) * 3 + c) * 2);
        const int v = static_cast<uint8_t>(out[at]) | static_cast<uint8_t>(out[at + 1]) << 8;
        differ += v != expected.get(std::vector<int64_t>{x, y, c}) ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(differ, 0) << "of " << w * h * 3 << " values";

  // A variant the front does not have: the program's exception, the CLI's message.
  ran =
      shell(path("embed/build/embed") + " " + stp + " " + path("t.db") + " 1 99 " + path("in.rgb") +
            " " + std::to_string(w) + " " + std::to_string(h) + " " + path("out.u16"));
  EXPECT_EQ(ran.exit_code, 2) << ran.output;
  EXPECT_NE(ran.output.find("run 1 has variants 0.."), std::string::npos) << ran.output;
}

TEST_F(InstallPackage, ThePythonModuleImportsFromThePrefixRunsAndTunes) {
  // Where the README says: PREFIX/lib/python3.X/dist-packages, finding libstipple.so in
  // PREFIX/lib without LD_LIBRARY_PATH.
  const std::string script =
      "import numpy as np, stipple\n"
      "p = stipple.Pipeline.from_source('pipeline twice\\ninput in : f32[x, y]\\n"
      "func out(x, y) = 2.0 * in(x, y)\\noutput out\\n', 'twice.stp')\n"
      "a = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
      "assert np.array_equal(p.compile()(a), 2 * a)\n"
      "print(stipple.__file__)\n"
      // A tuning run finds the installed stipple-evaluator beside the installed library
      // (PREFIX/bin; never the build tree's).
      "fx = '" +
      source("datasets/fixtures/") +
      "'\n"
      "blur = stipple.Pipeline('" +
      source("datasets/pipelines/two_pass_blur.stp") +
      "')\n"
      "r = blur.tune(db='t.db', images=fx + 'natural-high-64x48.png', test_images=fx + "
      "'man-made-low-64x48.png', budget=4, runs=1, exact=True, benchmark_lock='none')\n"
      "assert r.run == 1 and not r.stopped and r.front, r\n"
      "print('tuned', len(r.front))\n"
      // Without photos, the bundled ones the prefix holds (PREFIX/share/stipple/fixtures).
      "import json, sqlite3\n"
      "r = blur.tune(db='bundled.db', budget=2, runs=1, exact=True, benchmark_lock='none')\n"
      "o = json.loads(sqlite3.connect('bundled.db').execute('select options_json from "
      "runs').fetchone()[0])\n"
      "print('photos', o['train_images'] + o['test_images'])\n";
  write("check.py", script);
  Result ran = shell("cd " + dir_.string() + " && PYTHONPATH=" + path("prefix") + "/" +
                     STIPPLE_PYTHON_DIR + " " + STIPPLE_PYTHON_EXECUTABLE + " check.py");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find(path("prefix")), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("tuned "), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("photos ['" + path("prefix") +
                            "/share/stipple/fixtures/natural-820x614.png', '" + path("prefix") +
                            "/share/stipple/fixtures/people-256x192.png']"),
            std::string::npos)
      << ran.output;
}

TEST_F(InstallPackage, ABadPipelineFailsTheUsersBuildWithItsLocation) {
  const std::string stp = write("bad.stp", "input in: f32(x, y, c)\nout(x, y, c) = in(x, y) +\n");
  Result built = build(stp, source("datasets/pipelines/two_pass_blur.sched"));
  EXPECT_NE(built.exit_code, 0) << built.output;
  EXPECT_NE(built.output.find("bad.stp:"), std::string::npos) << built.output;
  // A file that is not there is named when the project is configured.
  built = build_project("FROM " + path("nothere.stp"));
  EXPECT_NE(built.exit_code, 0);
  EXPECT_NE(built.output.find("no such file"), std::string::npos) << built.output;
}

}  // namespace
