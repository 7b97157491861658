// Runs the `stipple` binary as a user would and checks what it prints, what it writes and
// its exit code: 0 ok, 1 failure, 2 bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler_core/image/image_io.h"
#include "tests/client/shell.h"

namespace {

namespace fs = std::filesystem;

using stipple::testing_cli::Result;
using stipple::testing_cli::source;

Result run(const std::string& args) { return stipple::testing_cli::stipple(args); }

using Cli = stipple::testing_cli::CommandTest;

TEST_F(Cli, HelpEverywhere) {
  for (const char* args :
       {"--help", "check --help", "run --help", "lower --help", "compile --help"}) {
    Result r = run(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << args << "\n" << r.output;
  }
  Result none = run("");
  EXPECT_EQ(none.exit_code, 2);
  Result unknown = run("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
}

TEST_F(Cli, CheckPrintsTheStages) {
  Result r = run("check " + source("datasets/pipelines/unsharp_mask.stp"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("pipeline unsharp_mask"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input  in : f32[x, y, c] clamp"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("param  s : f32 = 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("func   A(x, y, c) : f32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("func   out(x, y, c) : f32  <- output, metric lab"), std::string::npos)
      << r.output;
}

TEST_F(Cli, CheckOfABadProgramSaysWhereAndExitsTwo) {
  std::string f =
      write("bad.stp", "pipeline p\ninput in : f32[x, y]\nfunc f(x, y) = in(x, y) * q\noutput f\n");
  Result r = run("check " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(f + ":3:27: error: unknown name 'q'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n" + std::string(28, ' ') + "^"), std::string::npos) << r.output;
}

TEST_F(Cli, AFuncTheOutputNeverUsesIsAWarningNotAnError) {
  std::string f = write("blur.stp",
                        "pipeline blur\ninput in : f32[x, y]\nfunc out(x, y) = in(x, y)\n"
                        "func tmp(x, y) = in(x, y) * 2.0\noutput out\n");
  const std::string warning = f +
                              ":4:6: warning: func 'tmp' is never used by the output\n"
                              "  func tmp(x, y) = in(x, y) * 2.0\n"
                              "       ^\n";
  Result r = run("check " + f);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(warning), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("func   tmp(x, y) : f32"), std::string::npos) << r.output;
  // The other commands that load a pipeline say so too.
  Result lowered = run("lower " + f);
  EXPECT_EQ(lowered.exit_code, 0) << lowered.output;
  EXPECT_NE(lowered.output.find(warning), std::string::npos) << lowered.output;
  // submit compiles the pipeline before it connects: the warning comes before the
  // connection's error (no coordinator listens on port 1).
  Result submitted = run("submit " + f + " --coordinator 127.0.0.1:1 --images " +
                         source("datasets/fixtures/natural-820x614.png"));
  EXPECT_NE(submitted.exit_code, 0) << submitted.output;
  EXPECT_EQ(submitted.output.find(warning), 0u) << submitted.output;
  // A pipeline whose funcs all reach the output has no warning.
  Result clean = run("check " + source("datasets/pipelines/blur3x3.stp"));
  EXPECT_EQ(clean.output.find("warning"), std::string::npos) << clean.output;
}

TEST_F(Cli, CheckWithAScheduleChecksItAndPrintsItsNormalForm) {
  std::string stp = source("datasets/pipelines/blur3x3.stp");
  std::string good = write("good.sched",
                           "# two lines\nblur_y.split(y, yo, yi, 8)\n"
                           "  .parallel(yo)\nblur_x.compute_root()\n");
  Result r = run("check " + stp + " --schedule " + good);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("schedule " + good + ": legal\n"), std::string::npos) << r.output;
  // Funcs in the pipeline's order, one line each.
  EXPECT_NE(r.output.find("blur_x.compute_root()\nblur_y.split(y, yo, yi, 8).parallel(yo)\n"),
            std::string::npos)
      << r.output;
  // A directive naming a loop that does not exist: an error at its location, exit 2.
  std::string bad = write("bad.sched", "\nblur_y.vectorize(c, 4).parallel(q)\n");
  Result b = run("check " + stp + " -s " + bad);
  EXPECT_EQ(b.exit_code, 2) << b.output;
  EXPECT_NE(b.output.find(bad + ":2:"), std::string::npos) << b.output;
  EXPECT_EQ(b.output.find(": legal"), std::string::npos) << b.output;
}

TEST_F(Cli, CheckOfAMissingFileExitsTwo) {
  Result r = run("check " + path("nope.stp"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("cannot read pipeline"), std::string::npos) << r.output;
}

// Endless inputs read gigabytes before (issue: "endless inputs hang"); each is now refused
// at once, exit 2, with the limit or the format in the message. `timeout` turns a hang
// into a failure here rather than a stuck test.
TEST_F(Cli, EndlessInputsAreRefusedAtOnce) {
  const std::string blur = source("datasets/pipelines/blur3x3.stp");
  const std::pair<std::string, std::string> cases[] = {
      {"check /dev/zero",
       "cannot read pipeline '/dev/zero': it is larger than the pipeline "
       "limit, 16 MiB"},
      {"check " + blur + " --schedule /dev/urandom",
       "cannot read schedule '/dev/urandom': it is larger than the schedule limit, 16 MiB"},
      {"run " + blur + " --input in=/dev/zero -o " + path("o.png"),
       "cannot read image '/dev/zero': not a PNG or JPEG file"},
  };
  for (const auto& [args, message] : cases) {
    Result r =
        stipple::testing_cli::shell("timeout 60 " + std::string(STIPPLE_BINARY) + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
}

// Runs that used to compute for minutes or on a rounded param are refused before any
// work, exit 2, with the numbers; and nothing is written.
TEST_F(Cli, RunsTooBigOrWithInexactParamsAreRefusedBeforeComputing) {
  std::string f = write("wide.stp",
                        "pipeline wide\ninput in : f32[x, y, c]\nparam W : i32 = 64\n"
                        "param n : i32 = 2\n"
                        "func out(x, y, c) = sum(i in 0..n : in(x + i, y, c))\n"
                        "output out size(W, in.height, 3)\n");
  const std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  const std::string base = "run " + f + " --input in=" + photo + " -o " + path("o.png") + " ";
  const std::pair<std::string, std::string> cases[] = {
      {"--param W=1.5", "param 'W' is i32: 1.5 is not an integer"},
      {"--param W=99999999999", "param 'W' is i32: 99999999999 is outside"},
      {"--param W=2000000", "cannot be written as a PNG: at most 1000000 pixels a side"},
      {"--param n=2000000000",
       "this run would compute 1.84e+13 points (pixels of every func, update and reduction "
       "step), over the limit of 1e+12 (raise it with --max-work)"},
      {"--max-memory 0.00001",
       "this run would realise 36.0 KiB of buffers (the largest, out, 36.0 KiB), over the limit "
       "of 10.5 KiB (raise it with --max-memory)"},
      {"--interp --max-work 100", "over the limit of 100 (raise it with --max-work)"},
  };
  for (const auto& [args, message] : cases) {
    Result r = stipple::testing_cli::shell("timeout 60 " + std::string(STIPPLE_BINARY) + " " +
                                           base + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(path("o.png"))) << args;
  }
  EXPECT_EQ(run(base + "--param W=100 --param n=3").exit_code, 0);
}

// A --db that cannot be opened is bad input (exit 2) for every command; the commands
// that read runs never write a schema into a file that is not already a database.
TEST_F(Cli, DatabasesAreOpenedOneWayEverywhere) {
  const std::string empty = write("empty.db", "");
  const std::string text = write("text.db", "not a database\n");
  for (const std::string& db : {empty, text}) {
    for (const std::string& command : {"runs --db " + db, "front 1 --db " + db,
                                       "export 1 --variant 0 --format schedule --db " + db}) {
      Result r = run(command);
      EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
      EXPECT_NE(r.output.find("cannot open the database '" + db + "'"), std::string::npos)
          << command << "\n"
          << r.output;
    }
  }
  EXPECT_EQ(fs::file_size(empty), 0u);  // no schema written into it
  EXPECT_NE(run("runs --db " + empty).output.find("it is not a Stipple database"),
            std::string::npos);
  EXPECT_EQ(run("runs --db " + path("none.db")).exit_code, 2);
  EXPECT_FALSE(fs::exists(path("none.db")));
  Result dir = run("runs --db " + dir_.string());
  EXPECT_EQ(dir.exit_code, 2) << dir.output;
  Result tune = run("tune " + source("datasets/pipelines/blur3x3.stp") + " --budget 2 --db " +
                    path("no/such/folder/t.db"));
  EXPECT_EQ(tune.exit_code, 2) << tune.output;
  EXPECT_NE(tune.output.find("cannot open the database"), std::string::npos) << tune.output;
}

// `run -o out.jpg` wrote PNG bytes under a JPEG name; now it is refused before any work.
TEST_F(Cli, RunWritesOnlyWhatItsOutputNameSays) {
  const std::string blur = source("datasets/pipelines/blur3x3.stp");
  const std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  for (const char* name : {"out.jpg", "out", "out.png.txt"}) {
    Result r = run("run " + blur + " --input in=" + photo + " -o " + path(name));
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
    EXPECT_NE(r.output.find("the output is written as a PNG; give a name ending in .png"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(path(name)));
  }
  EXPECT_EQ(run("run " + blur + " --input in=" + photo + " -o " + path("OUT.PNG")).exit_code, 0);
}

// Option parsing as a user types it: a repeated option takes one value each time, so the
// positional FILE may follow it (it was swallowed: "FILE is required"); --log-level works
// after the subcommand too; an unknown command is named, with the list of commands.
TEST_F(Cli, OptionsParseAsTyped) {
  const std::string blur = source("datasets/pipelines/blur3x3.stp");
  const std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  Result r = run("run -i in=" + photo + " " + blur + " -o " + path("a.png"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("a.png")));
  r = run("run -i in=" + photo + " -p nope=1 " + blur + " -o " + path("b.png"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("has no param named 'nope'"), std::string::npos) << r.output;

  r = run("run " + blur + " -i in=" + photo + " -o " + path("c.png") + " --log-level warn");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("info:"), std::string::npos) << r.output;
  r = run("--log-level warn run " + blur + " -i in=" + photo + " -o " + path("c.png"));
  EXPECT_EQ(r.output.find("info:"), std::string::npos) << r.output;
  r = run("run " + blur + " -i in=" + photo + " -o " + path("c.png"));
  EXPECT_NE(r.output.find("info:"), std::string::npos) << r.output;

  r = run("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown command 'frobnicate'; the commands are check, run, lower, "
                          "compile, tune, runs, front, export"),
            std::string::npos)
      << r.output;
}

// A pipeline without inputs passed check and tune, but run demanded --input.
TEST_F(Cli, APipelineWithoutInputsRuns) {
  const std::string f = write("gradient.stp",
                              "pipeline gradient\nparam W : i32 = 16\n"
                              "func out(x, y, c) = f32(x + 2 * y + 3 * c) / 100.0\n"
                              "output out size(W, 12, 3)\n");
  for (const char* mode : {"", " --interp"}) {
    Result r = run("run " + f + " -o " + path("g.png") + mode);
    ASSERT_EQ(r.exit_code, 0) << mode << "\n" << r.output;
    stipple::Buffer g = stipple::read_image(path("g.png"));
    ASSERT_EQ(g.extent(0), 16);
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t y = 0; y < 12; ++y) {
        for (int64_t x = 0; x < 16; ++x) {
          const double want = std::round(double(float(x + 2 * y + 3 * c) / 100.0f) * 65535.0);
          const int64_t at[3] = {x, y, c};
          ASSERT_EQ(g.get(at), want) << x << "," << y << "," << c;
        }
      }
    }
  }
  // An input that the pipeline does not have is still an error.
  Result extra = run("run " + f + " -i in=" + source("datasets/fixtures/natural-low-64x48.png") +
                     " -o " + path("g.png"));
  EXPECT_EQ(extra.exit_code, 2) << extra.output;
}

// A pipeline that scales the photo by a param; the written 16-bit PNG is checked pixel
// by pixel against the input photo.
TEST_F(Cli, RunWritesTheOutputImage) {
  std::string f = write("half.stp",
                        "pipeline half\ninput in : f32[x, y, c]\nparam k : f32 = 0.5\n"
                        "func out(x, y, c) = in(x, y, c) * k\noutput out\n");
  std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  Result r =
      run("run " + f + " --input in=" + photo + " --param k=0.25 --output " + path("out.png"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("out.png") + " (64x48x3 f32, 16-bit PNG)"),
            std::string::npos)
      << r.output;
  stipple::Buffer in = stipple::read_image(photo);
  stipple::Buffer out = stipple::read_image(path("out.png"));
  ASSERT_EQ(out.type(), stipple::ScalarType::UInt16);
  ASSERT_EQ(out.extent(0), 64);
  ASSERT_EQ(out.extent(2), 3);
  for (int64_t i = 0; i < in.element_count(); ++i) {
    double expected =
        static_cast<float>(static_cast<float>(in.get_flat(i) / 255.0) * 0.25f) * 65535.0;
    ASSERT_NEAR(out.get_flat(i), expected, 0.5 + 1e-6) << i;
  }
}

TEST_F(Cli, RunCompareReportsZeroErrorAgainstItself) {
  std::string blur = source("datasets/pipelines/blur3x3.stp");
  std::string photo = source("datasets/fixtures/natural-high-64x48.png");
  Result first = run("run " + blur + " --input in=" + photo + " --output " + path("a.png"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  Result second = run("run " + blur + " --input in=" + photo + " --output " + path("b.png") +
                      " --compare " + path("a.png"));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("mean Lab dE 0, rmse 0, psnr inf dB, max abs 0"), std::string::npos)
      << second.output;
}

// run --compare reported a float output's RMSE in 16-bit PNG units (2667.6) where tune and
// front report it in the output's units (0.0407): the same units now, labelled. Here the
// outputs differ by exactly k = 0.25 - 0.125 of the input, so the RMSE is computed in the
// test from the photo and compared in [0, 1] units.
TEST_F(Cli, RunCompareUsesTheOutputsUnits) {
  std::string f = write("scale.stp",
                        "pipeline scale\ninput in : f32[x, y, c]\nparam k : f32 = 0.5\n"
                        "func out(x, y, c) = in(x, y, c) * k\noutput out metric rmse\n");
  std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  ASSERT_EQ(run("run " + f + " -i in=" + photo + " -p k=0.25 -o " + path("a.png")).exit_code, 0);
  Result r = run("run " + f + " -i in=" + photo + " -p k=0.125 -o " + path("b.png") +
                 " --compare " + path("a.png"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(the pipeline's metric: RMSE; output units, 0 to 1): "),
            std::string::npos)
      << r.output;
  const stipple::Buffer in = stipple::read_image(photo);
  double sum = 0;
  for (int64_t i = 0; i < in.element_count(); ++i) {
    auto png = [&](float k) {  // what the PNG holds, back in [0, 1]
      return std::round(double(float(in.get_flat(i) / 255.0) * k) * 65535.0) / 65535.0;
    };
    sum += (png(0.125f) - png(0.25f)) * (png(0.125f) - png(0.25f));
  }
  const double want = std::sqrt(sum / double(in.element_count()));
  const size_t at = r.output.find("rmse ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NEAR(std::stod(r.output.substr(at + 5)), want, 1e-5) << r.output;
  EXPECT_LT(want, 1.0);  // not 16-bit units
}

TEST_F(Cli, BadRunInputsExitTwoWithAReason) {
  std::string blur = source("datasets/pipelines/two_pass_blur.stp");
  std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  std::string out = " --output " + path("o.png");
  struct Case {
    std::string args, message;
  } cases[] = {
      {"run " + blur + " --input in=" + path("missing.png") + out, "cannot read image"},
      {"run " + blur + " --input nope=" + photo + out, "has no input named 'nope'"},
      {"run " + blur + " --input in=" + photo + " --param zeta=1" + out,
       "has no param named 'zeta'"},
      {"run " + blur + " --input in=" + photo + " --param sigma=abc" + out,
       "the value is not a number"},
      {"run " + blur + " --input in" + out, "expected NAME=VALUE"},
      {"run " + source("datasets/pipelines/demosaic.stp") + " --input in=" + photo + out,
       "is 2-D but"},
      {"run " + blur + " --input in=" + photo, "--output is required"},
      {"run " + blur + " --input in=" + photo + " --threads 0" + out, "--threads"},
      {"run " + blur + " --interp --threads 2 --input in=" + photo + out,
       "--interp excludes --threads"},
  };
  for (const Case& c : cases) {
    Result r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(path("o.png")));
}

TEST_F(Cli, UnwritableOutputIsAFailureWithAReason) {
  std::string blur = source("datasets/pipelines/blur3x3.stp");
  std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  Result r = run("run " + blur + " --input in=" + photo + " --output " + path("no/such/dir/o.png"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("o.png"), std::string::npos) << r.output;
}

// The native path under a hand-written schedule writes the same bytes as the reference
// evaluator.
TEST_F(Cli, NativeRunUnderAScheduleEqualsTheEvaluator) {
  std::string stp = source("datasets/pipelines/two_pass_blur.stp");
  std::string sched = source("datasets/pipelines/two_pass_blur.sched");
  std::string photo = source("datasets/fixtures/natural-high-64x48.png");
  Result native = run("run " + stp + " --schedule " + sched + " --input in=" + photo +
                      " --output " + path("native.png") + " --time 3 --threads 1");
  ASSERT_EQ(native.exit_code, 0) << native.output;
  EXPECT_NE(native.output.find("as native code"), std::string::npos) << native.output;
  EXPECT_NE(native.output.find("median of 3 runs: "), std::string::npos) << native.output;
  EXPECT_NE(native.output.find("run on 1 thread(s)"), std::string::npos) << native.output;
  Result interp =
      run("run " + stp + " --interp --input in=" + photo + " --output " + path("interp.png"));
  ASSERT_EQ(interp.exit_code, 0) << interp.output;
  EXPECT_NE(interp.output.find("with the reference evaluator"), std::string::npos) << interp.output;
  std::ifstream a(path("native.png"), std::ios::binary), b(path("interp.png"), std::ios::binary);
  std::string bytes_a((std::istreambuf_iterator<char>(a)), {}),
      bytes_b((std::istreambuf_iterator<char>(b)), {});
  EXPECT_FALSE(bytes_a.empty());
  EXPECT_EQ(bytes_a, bytes_b);
}

TEST_F(Cli, LowerPrintsTheLoopNest) {
  Result r = run("lower " + source("datasets/pipelines/blur3x3.stp") + " --schedule " +
                 source("datasets/pipelines/blur3x3.sched"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("parallel"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("blur_x"), std::string::npos) << r.output;
  Result llvm = run("lower " + source("datasets/pipelines/blur3x3.stp") + " --llvm");
  ASSERT_EQ(llvm.exit_code, 0) << llvm.output.substr(0, 500);
  EXPECT_NE(llvm.output.find("define"), std::string::npos);
}

// Every lowering pass prints under its name, in lower.cpp's order, and the last one's
// loop nest is the one `stipple lower` prints.
TEST_F(Cli, LowerDumpsEveryPass) {
  std::string args = source("datasets/pipelines/local_laplacian.stp") + " --schedule " +
                     source("datasets/pipelines/local_laplacian.sched");
  Result r = run("lower " + args + " --dump-passes");
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 500);
  size_t at = 0;
  for (const char* pass :
       {"apply_perforation", "schedule_functions", "hoist_invariant_reductions", "sliding_window",
        "storage_folding", "simplify_modulo", "bound_gpu_allocations", "fold_constants"}) {
    size_t next = r.output.find(std::string("== ") + pass + " ==\n", at);
    ASSERT_NE(next, std::string::npos) << pass;
    at = next;
  }
  Result plain = run("lower " + args);
  ASSERT_EQ(plain.exit_code, 0) << plain.output.substr(0, 500);
  std::string last = r.output.substr(r.output.find('\n', at) + 1);
  EXPECT_EQ(last, plain.output);
}

TEST_F(Cli, BadSchedulesExitTwoWithALocation) {
  std::string stp = source("datasets/pipelines/blur3x3.stp");
  std::string photo = source("datasets/fixtures/natural-low-64x48.png");
  std::string bad = write("bad.sched", "# a comment\nblur_y.parallel(q)\n");
  Result r = run("run " + stp + " --schedule " + bad + " --input in=" + photo + " --output " +
                 path("o.png"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(bad + ":2:"), std::string::npos) << r.output;
  Result both = run("run " + stp + " --interp --schedule " + bad + " --input in=" + photo +
                    " --output " + path("o.png"));
  EXPECT_EQ(both.exit_code, 2) << both.output;
  Result lower = run("lower " + stp + " --schedule " + bad);
  EXPECT_EQ(lower.exit_code, 2) << lower.output;
  EXPECT_FALSE(fs::exists(path("o.png")));
}

}  // namespace
