// AArch64 code checked for the pixels it computes, on this x86-64 host (issue #33): for
// every benchmark pipeline, under its hand schedule and random legal schedules, the
// object `stipple compile --target aarch64` writes is linked with Debian's cross
// toolchain into aot_any_driver.c and the runtime cross-compiled for AArch64
// (CMakeLists.txt), run under qemu-user, and its output must equal the reference
// evaluator's bit for bit, as the x86-64 object's does. The portable C++ export
// (`--emit cpp`) is cross-compiled and checked the same way, and a vectorised schedule's
// assembly must be NEON's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "tests/client/shell.h"

namespace {

namespace fs = std::filesystem;

using stipple::Buffer;
using stipple::ScalarType;
using stipple::testing_cli::read_file;
using stipple::testing_cli::Result;
using stipple::testing_cli::shell;
using stipple::testing_cli::source;

/// The benchmark pipelines: every .stp of datasets/pipelines (the GPU schedules' folder
/// aside).
std::vector<std::string> benchmark_pipelines() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(source("datasets/pipelines"))) {
    if (e.path().extension() == ".stp") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Random pixels for an input: [0, 1) for floats, [0, 1024) for integers (camera_pipe's
/// raw sensor values are 10-bit).
Buffer random_input(ScalarType t, const std::vector<int64_t>& extents, std::mt19937_64& rng) {
  Buffer b(t, extents);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const bool integer =
      t != ScalarType::Float16 && t != ScalarType::Float32 && t != ScalarType::Float64;
  for (int64_t i = 0; i < b.element_count(); ++i) {
    const double u = unit(rng);
    b.set_flat(i, integer ? std::floor(u * (t == ScalarType::UInt8 ? 256 : 1024)) : u);
  }
  return b;
}

std::string extents_text(const std::vector<int64_t>& extents) {
  std::string s;
  for (int64_t e : extents) s += (s.empty() ? "" : "x") + std::to_string(e);
  return s;
}

/// "" when `got` (raw bytes of `expected`'s type and extents) equals `expected` element
/// for element (NaN equal to NaN); else the count and the first difference.
std::string compare(const Buffer& expected, const std::string& got) {
  if (got.size() != expected.size_in_bytes()) {
    return "the output has " + std::to_string(got.size()) + " bytes, not " +
           std::to_string(expected.size_in_bytes());
  }
  Buffer actual(expected.type(), [&] {
    std::vector<int64_t> e;
    for (int d = 0; d < expected.dimensions(); ++d) e.push_back(expected.extent(d));
    return e;
  }());
  std::memcpy(actual.data(), got.data(), got.size());
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double a = expected.get_flat(i), b = actual.get_flat(i);
    if (!(a == b) && !(std::isnan(a) && std::isnan(b))) {
      if (first < 0) first = i;
      ++differ;
    }
  }
  if (differ == 0) return "";
  return std::to_string(differ) + " of " + std::to_string(expected.element_count()) +
         " elements differ; the first, element " + std::to_string(first) + ": expected " +
         std::to_string(expected.get_flat(first)) + ", got " +
         std::to_string(actual.get_flat(first));
}

/// A random schedule is emulated when its native run on the test's images takes at most
/// this long.
constexpr int kNativeLimitMs = 30;

class Aarch64Emulated : public stipple::testing_cli::CommandTest,
                        public ::testing::WithParamInterface<std::string> {
 protected:
  /// `stipple compile` of the pipeline under `schedule_file` ("" for the default) for
  /// AArch64, as `kind` ("obj" or "cpp") with its header; then the cross toolchain builds
  /// the driver on it. Returns the executable ("" after a failure, reported).
  std::string build(const std::string& stp, const std::string& schedule_file,
                    const std::string& kind, const std::string& tag) {
    const std::string base = path(tag);
    std::string args =
        "compile " + stp + " --emit " + kind + ",header --function-name aot_pipeline -o " + base;
    if (kind == "obj") args += " --target aarch64";
    if (!schedule_file.empty()) args += " --schedule " + schedule_file;
    Result compiled = stipple::testing_cli::stipple(args);
    EXPECT_EQ(compiled.exit_code, 0) << compiled.output;
    if (compiled.exit_code != 0) return "";
    // The driver includes "aot_pipeline.h": each build its own folder.
    fs::create_directories(base + "-inc");
    fs::rename(base + ".h", base + "-inc/aot_pipeline.h");
    const std::string cc = STIPPLE_AARCH64_CC, cxx = STIPPLE_AARCH64_CXX;
    std::string object = base + ".o";
    if (kind == "cpp") {
      // As AOT.md says to compile it for bit-exact results: GCC contracts a*b+c into an
      // FMA on AArch64 unless told not to.
      Result c = shell(cxx + " -std=c++17 -O2 -ffp-contract=off -pthread -c " + base + ".cpp -o " +
                       object);
      EXPECT_EQ(c.exit_code, 0) << c.output;
      if (c.exit_code != 0) return "";
    }
    const std::string exe = base + "-driver";
    Result linked = shell(cc + " -std=c11 -O2 -Wall -Wextra -Werror -I" + base + "-inc " +
                          source("tests/client/aot_any_driver.c") + " " + object + " " +
                          (kind == "obj" ? std::string(STIPPLE_AARCH64_RUNTIME) : "") +
                          " -lstdc++ -lm -lpthread -o " + exe);
    EXPECT_EQ(linked.exit_code, 0) << linked.output;
    return linked.exit_code == 0 ? exe : "";
  }

  /// Runs `exe` under qemu on the inputs and compares its output with `expected`.
  void expect_output(const std::string& exe, const std::string& args, const Buffer& expected,
                     const std::string& what) {
    SCOPED_TRACE(what);
    if (exe.empty()) return;
    fs::remove(path("out.raw"));
    Result ran = shell(std::string(STIPPLE_QEMU_AARCH64) + " -L " + STIPPLE_AARCH64_SYSROOT + " " +
                       exe + " " + args);
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_EQ(ran.output, "rc=0\n");
    EXPECT_EQ(compare(expected, read_file(path("out.raw"))), "");
  }
};

TEST_P(Aarch64Emulated, HandAndRandomSchedulesComputeTheEvaluatorsOutput) {
  const std::string name = GetParam();
  const std::string stp = source("datasets/pipelines/" + name + ".stp");
  const stipple::Pipeline p = stipple::load_pipeline_file(stp);
  std::mt19937_64 rng(std::hash<std::string>{}(name));

  // Inputs that are not a multiple of any vector width or tile, and their raw files.
  std::string args;
  for (const stipple::ParamDecl& param : p.params) {
    char value[40];
    std::snprintf(value, sizeof value, "%.17g", param.default_value);
    args += (args.empty() ? "" : ",") + std::string(value);
  }
  if (args.empty()) args = "-";
  stipple::InputImages inputs;
  for (const stipple::InputDecl& in : p.inputs) {
    std::vector<int64_t> extents{37, 23};
    if (in.dim_names.size() == 3) extents.push_back(3);
    Buffer b = random_input(in.type.code, extents, rng);
    const std::string file = path(in.name + ".raw");
    std::ofstream(file, std::ios::binary)
        .write(static_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size_in_bytes()));
    args += " " + std::to_string(static_cast<int>(in.type.code)) + ":" + extents_text(extents) +
            ":" + file;
    inputs.emplace(in.name, std::move(b));
  }
  const Buffer expected = stipple::evaluate_pipeline(p, inputs);
  std::vector<int64_t> out_extents;
  for (int d = 0; d < expected.dimensions(); ++d) out_extents.push_back(expected.extent(d));
  args += " " + std::to_string(static_cast<int>(expected.type())) + ":" +
          extents_text(out_extents) + ":" + path("out.raw");

  struct Case {
    std::string kind, schedule_file;
  };
  std::vector<Case> cases = {{"hand", source("datasets/pipelines/" + name + ".sched")}};
  // Five random schedules cheap enough to emulate. Some legal ones recompute a producer
  // per pixel of its consumer and take seconds natively, which under qemu's
  // instruction-by-instruction translation (some 20 to 50 times slower) is many minutes:
  // those are drawn past, by the time of a native run of the same lowered code.
  for (int draws = 0, kept = 0; kept < 5; ++draws) {
    ASSERT_LT(draws, 60) << "too few random schedules of " << name << " are cheap enough";
    const stipple::Schedule s = stipple::random_schedule(p, rng);
    const stipple::LoweredFunction lowered = stipple::lower(p, s);
    const auto code = stipple::codegen::compile_for_host(lowered);
    const auto start = std::chrono::steady_clock::now();
    stipple::run_lowered(*code, lowered, p, inputs, {}, out_extents);
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(kNativeLimitMs)) {
      continue;
    }
    cases.push_back({"random", write("random" + std::to_string(kept++) + ".sched",
                                     stipple::print_schedule(s, p))});
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string what = name + " under the " + cases[i].kind + " schedule " +
                             cases[i].schedule_file + ":\n" + read_file(cases[i].schedule_file);
    expect_output(build(stp, cases[i].schedule_file, "obj", "obj" + std::to_string(i)), args,
                  expected, what + "\n(AArch64 object)");
    // The C++ export, compiled by the cross compiler, under the hand schedule and two
    // random ones (its compile is the slow part).
    if (i < 3) {
      expect_output(build(stp, cases[i].schedule_file, "cpp", "cpp" + std::to_string(i)), args,
                    expected, what + "\n(C++ export)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BenchmarkPipelines, Aarch64Emulated,
                         ::testing::ValuesIn(benchmark_pipelines()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

class Aarch64Assembly : public stipple::testing_cli::CommandTest {};

TEST_F(Aarch64Assembly, AVectorisedScheduleIsNeonCode) {
  // two_pass_blur's hand schedule vectorises every stage by four registers (vectors(4): 16
  // f32 lanes on NEON): its arithmetic is on NEON's four-lane f32 registers (v0.4s...), not
  // one float at a time.
  const std::string asm_text =
      stipple::testing_cli::stipple(
          "compile " + source("datasets/pipelines/two_pass_blur.stp") + " --schedule " +
          source("datasets/pipelines/two_pass_blur.sched") + " --target aarch64 --emit asm -o -")
          .output;
  auto count = [&](const std::string& pattern) {
    const std::regex re(pattern);
    return std::distance(std::sregex_iterator(asm_text.begin(), asm_text.end(), re),
                         std::sregex_iterator());
  };
  EXPECT_GT(count(R"(\t(fmla|fmul|fadd)\tv[0-9]+\.4s)"), 10) << asm_text.substr(0, 3000);
  EXPECT_GT(count(R"(\t(ldr|ldp|ld1)\t(q[0-9]+|\{v[0-9]+\.4s))"), 10) << asm_text.substr(0, 3000);
  // The same schedule without vectorize: scalar code (s registers), no four-lane math.
  const std::string scalar_schedule =
      std::regex_replace(read_file(source("datasets/pipelines/two_pass_blur.sched")),
                         std::regex(R"(\.vectorize\(\w+, (vectors\(\d+\)|\d+)\))"), "");
  const std::string scalar =
      stipple::testing_cli::stipple("compile " + source("datasets/pipelines/two_pass_blur.stp") +
                                    " --schedule " + write("scalar.sched", scalar_schedule) +
                                    " --target aarch64 --emit asm -o -")
          .output;
  const std::regex vector_math(R"(\t(fmla|fmul|fadd)\tv[0-9]+\.4s)");
  EXPECT_FALSE(std::regex_search(scalar, vector_math)) << "LLVM vectorised the scalar schedule";
}

// The hand schedules give widths in registers (vectors(k)), so the same file is 16 f32
// lanes for NEON and 64 for AVX-512: an AArch64 build does not carry x86 widths.
TEST_F(Aarch64Assembly, HandScheduleWidthsAreTheTargetsRegisters) {
  auto normal_form = [&](const std::string& target) {
    return stipple::testing_cli::stipple(
               "check " + source("datasets/pipelines/two_pass_blur.stp") + " --schedule " +
               source("datasets/pipelines/two_pass_blur.sched") + " --target " + target)
        .output;
  };
  const std::string neon = normal_form("aarch64");
  EXPECT_NE(neon.find("vectorize(xi, 16)"), std::string::npos) << neon;
  EXPECT_EQ(neon.find("vectorize(xi, 64)"), std::string::npos) << neon;
  const std::string avx2 = normal_form("x86-64-v3");
  EXPECT_NE(avx2.find("vectorize(xi, 32)"), std::string::npos) << avx2;
  const std::string avx512 = normal_form("x86-64-v4");
  EXPECT_NE(avx512.find("vectorize(xi, 64)"), std::string::npos) << avx512;
}

}  // namespace
