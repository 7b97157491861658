// `stipple compile` end to end, as a user would use it: the real binary writes an object
// file and a C header for a benchmark pipeline under its hand schedule; the system C
// compiler (the one CMake found) builds a small C program against the header
// (aot_driver.c) and links it with the object and libstipple_runtime.a; the program runs
// on random floats and its output must equal the reference evaluator's bit for bit.
// Also: asm and LLVM IR output, cross-target objects, output naming, and bad flags
// (exit code 2).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "tests/client/aot_check.h"
#include "tests/client/shell.h"

namespace {

namespace fs = std::filesystem;

using stipple::testing_cli::expect_matches_evaluator;
using stipple::testing_cli::random_image;
using stipple::testing_cli::write_raw;

using stipple::testing_cli::read_file;
using stipple::testing_cli::Result;
using stipple::testing_cli::shell;
using stipple::testing_cli::source;

using stipple::testing_cli::stipple;

class AotLink : public stipple::testing_cli::CommandTest {
 protected:
  /// Compiles `pipeline` (datasets/pipelines/NAME.stp, with NAME.sched unless
  /// `default_schedule`) as aot_pipeline and links aot_driver.c against it.
  std::string build_driver(const std::string& name, bool default_schedule = false) {
    std::string args = "compile " + source("datasets/pipelines/" + name + ".stp") +
                       " --emit obj --emit header --function-name aot_pipeline -o " +
                       path("aot_pipeline");
    if (!default_schedule) args += " --schedule " + source("datasets/pipelines/" + name + ".sched");
    Result compiled = stipple(args);
    EXPECT_EQ(compiled.exit_code, 0) << compiled.output;
    EXPECT_TRUE(fs::exists(path("aot_pipeline.o"))) << compiled.output;
    EXPECT_TRUE(fs::exists(path("aot_pipeline.h"))) << compiled.output;

    const std::string cc = STIPPLE_C_COMPILER;
    Result c = shell(cc + " -std=c11 -Wall -Wextra -Werror -pedantic -I" + dir_.string() + " -c " +
                     source("tests/client/aot_driver.c") + " -o " + path("driver.o"));
    EXPECT_EQ(c.exit_code, 0) << c.output;
    const std::string exe = path("driver");
    Result link = shell(cc + " " + path("driver.o") + " " + path("aot_pipeline.o") + " " +
                        STIPPLE_RUNTIME_LIBRARY + " " + STIPPLE_DRIVER_LINK_FLAGS +
                        " -lstdc++ -lm -lpthread -o " + exe);
    EXPECT_EQ(link.exit_code, 0) << link.output;
    return exe;
  }
};

TEST_F(AotLink, LinkedTwoPassBlurMatchesTheEvaluatorBitForBit) {
  const std::string exe = build_driver("two_pass_blur");
  // Sizes that are not multiples of the schedule's 256x64 tiles or 16-lane vectors.
  stipple::Buffer in = random_image(41, 29, 3, 7);
  // Defaults, then a non-default sigma and h through the params array (index order).
  expect_matches_evaluator(exe, dir_.string(), "two_pass_blur", in, {}, "", 0, 0, 41, 29);
  expect_matches_evaluator(exe, dir_.string(), "two_pass_blur", in, {{"sigma", 2.5}, {"h", 5}},
                           "0=2.5 1=5", 0, 0, 41, 29);
  // An output box away from the origin: the function computes exactly that box.
  expect_matches_evaluator(exe, dir_.string(), "two_pass_blur", in, {}, "", 7, 4, 19, 13);
}

TEST_F(AotLink, LinkedMedianUsesTheRuntimeLibraryAndMatchesTheEvaluator) {
  // median calls stipple_median_f64 from libstipple_runtime.a for every pixel.
  const std::string exe = build_driver("median");
  stipple::Buffer in = random_image(35, 21, 3, 11);
  in.data_as<float>()[5] = -0.0f;  // -0 vs +0 must be chosen as the evaluator does
  in.data_as<float>()[6] = 0.0f;
  expect_matches_evaluator(exe, dir_.string(), "median", in, {}, "", 0, 0, 35, 21);
}

TEST_F(AotLink, DefaultScheduleLinksToo) {
  const std::string exe = build_driver("unsharp_mask", /*default_schedule=*/true);
  stipple::Buffer in = random_image(23, 17, 3, 13);
  expect_matches_evaluator(exe, dir_.string(), "unsharp_mask", in, {}, "", 0, 0, 23, 17);
}

TEST_F(AotLink, EmitCppLinksWithoutTheRuntimeAndMatchesTheEvaluator) {
  // `--emit cpp`: the same driver, written against the header, links against the C++ source
  // compiled by the system C++ compiler, without libstipple_runtime.a.
  Result compiled =
      stipple("compile " + source("datasets/pipelines/two_pass_blur.stp") + " --schedule " +
              source("datasets/pipelines/two_pass_blur.sched") +
              " --emit cpp,header --function-name aot_pipeline -o " + path("aot_pipeline"));
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_NE(compiled.output.find("aot_pipeline.cpp (cpp, function aot_pipeline)"),
            std::string::npos)
      << compiled.output;
  ASSERT_TRUE(fs::exists(path("aot_pipeline.cpp")));
  const std::string cxx = STIPPLE_CXX_COMPILER, cc = STIPPLE_C_COMPILER;
  Result cpp = shell(cxx + " -O2 -std=c++17 -pthread -Wall -Wextra -Werror -c " +
                     path("aot_pipeline.cpp") + " -o " + path("aot_pipeline.o"));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  Result c = shell(cc + " -std=c11 -Wall -Wextra -Werror -pedantic -I" + dir_.string() + " -c " +
                   source("tests/client/aot_driver.c") + " -o " + path("driver.o"));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  Result link = shell(cxx + " -pthread " + path("driver.o") + " " + path("aot_pipeline.o") +
                      " -o " + path("driver"));
  ASSERT_EQ(link.exit_code, 0) << link.output;
  stipple::Buffer in = random_image(41, 29, 3, 7);
  expect_matches_evaluator(path("driver"), dir_.string(), "two_pass_blur", in,
                           {{"sigma", 2.5}, {"h", 5}}, "0=2.5 1=5", 3, 2, 35, 25);
}

TEST_F(AotLink, AWrongBufferTypeIsRefusedWithTheHeadersErrorCode) {
  const std::string exe = build_driver("two_pass_blur");
  write_raw(path("in.raw"), random_image(8, 8, 3, 1));
  Result run =
      shell(exe + " " + path("in.raw") + " 8 8 3 " + path("out.raw") + " 0 0 8 8 --wrong-type");
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_EQ(run.output, "rc=1\n");  // STIPPLE_ERROR_BUFFER_MISMATCH
}

TEST_F(AotLink, TheHeaderIsValidCxxAndC99) {
  Result r = stipple("compile " + source("datasets/pipelines/two_pass_blur.stp") +
                     " --emit header -o " + path("blur.h"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ofstream(path("use.cpp")) << "#include \"blur.h\"\n"
                                 << "static_assert(sizeof(stipple_buffer) == 208);\n"
                                 << "int main() { double p[] = TWO_PASS_BLUR_PARAM_DEFAULTS;\n"
                                 << "  return p[TWO_PASS_BLUR_PARAM_H] == 8.0 ? 0 : 1; }\n";
  Result cxx = shell(std::string(STIPPLE_CXX_COMPILER) +
                     " -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only -I" +
                     dir_.string() + " " + path("use.cpp"));
  EXPECT_EQ(cxx.exit_code, 0) << cxx.output;
  std::ofstream(path("use.c")) << "#include \"blur.h\"\n"
                               << "int main(void) { return TWO_PASS_BLUR_BUFFER_OUT; }\n";
  Result c99 = shell(std::string(STIPPLE_C_COMPILER) +
                     " -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I" + dir_.string() +
                     " " + path("use.c"));
  EXPECT_EQ(c99.exit_code, 0) << c99.output;
}

TEST_F(AotLink, AsmAndLlvmAreTextWithTheSymbol) {
  const std::string stp = source("datasets/pipelines/two_pass_blur.stp");
  const std::string sched = " --schedule " + source("datasets/pipelines/two_pass_blur.sched");
  Result s = stipple("compile " + stp + sched + " --emit asm -o - --function-name blur_fn");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_NE(s.output.find(".globl\tblur_fn"), std::string::npos) << s.output.substr(0, 2000);
  EXPECT_NE(s.output.find("blur_fn:"), std::string::npos);
  EXPECT_NE(s.output.find("stipple_parallel_for"), std::string::npos);  // parallel(yo)

  Result ll = stipple("compile " + stp + sched + " --emit llvm -o - --target x86-64-v4");
  ASSERT_EQ(ll.exit_code, 0) << ll.output;
  EXPECT_NE(ll.output.find("define i32 @two_pass_blur("), std::string::npos)
      << ll.output.substr(0, 2000);
  EXPECT_NE(ll.output.find("\"target-cpu\"=\"x86-64-v4\""), std::string::npos);

  // Cross-compiling: an AArch64 object is an ELF file for machine 183 (EM_AARCH64).
  Result arm =
      stipple("compile " + stp + sched + " --emit obj --target aarch64 -o " + path("arm.o"));
  ASSERT_EQ(arm.exit_code, 0) << arm.output;
  std::string obj = read_file(path("arm.o"));
  ASSERT_GT(obj.size(), 20u);
  EXPECT_EQ(obj.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(static_cast<unsigned char>(obj[18]) | (static_cast<unsigned char>(obj[19]) << 8), 183);
}

// Stipple turns two backend passes off by default (target_machine.cpp); a user who sets
// either in STIPPLE_LLVM_OPTIONS gets theirs, not LLVM's "may only occur once" error.
TEST_F(AotLink, LlvmOptionsTheUserSetsOverrideStipplesDefaults) {
  const std::string stp = source("datasets/pipelines/blur3x3.stp");
  for (const char* options : {"-post-RA-scheduler=true", "-disable-x86-domain-reassignment=false",
                              "-post-RA-scheduler -x86-asm-syntax=intel"}) {
    Result r = shell(std::string("STIPPLE_LLVM_OPTIONS='") + options + "' " + STIPPLE_BINARY +
                     " compile " + stp + " --emit asm -o -");
    ASSERT_EQ(r.exit_code, 0) << options << ": " << r.output.substr(0, 2000);
    EXPECT_NE(r.output.find("blur3x3:"), std::string::npos) << options;
  }
}

TEST_F(AotLink, OutputNamesComeFromTheStemOrFromMinusO) {
  // No -o: the pipeline's stem in the current directory, one extension per kind.
  Result r = shell("cd " + dir_.string() + " && " + STIPPLE_BINARY + " compile " +
                   source("datasets/pipelines/blur3x3.stp") + " --emit asm,llvm,header");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"blur3x3.s", "blur3x3.ll", "blur3x3.h"}) {
    EXPECT_TRUE(fs::exists(dir_ / f)) << f << "\n" << r.output;
    EXPECT_GT(fs::file_size(dir_ / f), 100u) << f;
  }
  EXPECT_NE(read_file(dir_ / "blur3x3.h").find("int32_t blur3x3(const stipple_buffer* buffers"),
            std::string::npos);
  // -o with one of our extensions: it is the base for every kind.
  r = stipple("compile " + source("datasets/pipelines/blur3x3.stp") + " --emit obj,header -o " +
              path("lib/b.o"));
  EXPECT_EQ(r.exit_code, 2) << r.output;  // the folder lib/ does not exist
  EXPECT_NE(r.output.find("cannot write"), std::string::npos) << r.output;
  fs::create_directories(dir_ / "lib");
  r = stipple("compile " + source("datasets/pipelines/blur3x3.stp") + " --emit obj,header -o " +
              path("lib/b.o"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "lib/b.o"));
  EXPECT_TRUE(fs::exists(dir_ / "lib/b.h"));
  // One kind: -o is the file's exact name.
  r = stipple("compile " + source("datasets/pipelines/blur3x3.stp") + " --emit obj -o " +
              path("exact.obj"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "exact.obj"));
}

TEST_F(AotLink, BadInputExitsTwoAndSaysWhy) {
  const std::string stp = source("datasets/pipelines/blur3x3.stp");
  struct Case {
    std::string args, expected;
  };
  std::ofstream(path("bad.stp"))
      << "pipeline p\ninput in : f32[x, y]\nfunc f(x, y) = in(x, y) * q\n"
      << "output f\n";
  std::ofstream(path("bad.sched")) << "out.parallel(nope)\n";
  const std::vector<Case> cases = {
      {"compile " + stp, "--emit is required"},
      {"compile " + stp + " --emit exe", "exe"},
      {"compile " + stp + " --emit obj,exe", "exe"},
      {"compile " + stp + " --emit obj --target sparc", "sparc"},
      {"compile " + stp + " --emit obj --function-name 3d", "not starting with a digit"},
      {"compile " + stp + " --emit obj --function-name my-fn", "expected a C identifier"},
      {"compile " + stp + " --emit obj --function-name int", "keyword"},
      {"compile " + stp + " --emit obj --function-name _blur", "reserved"},
      {"compile " + stp + " --emit obj --function-name stipple_malloc", "runtime"},
      {"compile " + stp + " --emit obj,header -o -", "single --emit kind"},
      {"compile " + path("missing.stp") + " --emit obj", "missing.stp"},
      {"compile " + path("bad.stp") + " --emit obj", "bad.stp:3:"},
      {"compile " + stp + " --emit obj --schedule " + path("bad.sched"), "bad.sched:1:"},
  };
  for (const Case& c : cases) {
    Result r = stipple(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.args << "\n" << r.output;
  }
  Result help = stipple("compile --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--emit"), std::string::npos);
  EXPECT_NE(help.output.find("--function-name"), std::string::npos);
}

}  // namespace
