// Every benchmark pipeline (datasets/pipelines/*.stp) survives the trips it takes in
// production: compile -> proto bytes -> IR gives an equal pipeline that prints the same,
// and compile -> print -> compile gives an equal pipeline (the printer writes programs
// the parser reads back to the same IR).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "proto/pipeline_codec.h"

namespace stipple {
namespace {

std::vector<std::filesystem::path> benchmark_files() {
  std::vector<std::filesystem::path> files;
  std::filesystem::path dir = std::filesystem::path(STIPPLE_SOURCE_DIR) / "datasets/pipelines";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".stp") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class BenchmarkRoundTrip : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(BenchmarkRoundTrip, ThroughProtoBytes) {
  Pipeline p = compile_pipeline(read_file(GetParam()), GetParam().filename().string());
  Pipeline q = parse_pipeline_bytes(serialize_pipeline(p));
  EXPECT_TRUE(equal(p, q));
  EXPECT_EQ(structural_hash(p), structural_hash(q));
  EXPECT_EQ(to_string(p), to_string(q));
}

TEST_P(BenchmarkRoundTrip, PrintedProgramRecompiles) {
  Pipeline p = compile_pipeline(read_file(GetParam()), GetParam().filename().string());
  std::string printed = to_string(p);
  Pipeline q;
  try {
    q = compile_pipeline(printed, "printed " + GetParam().filename().string());
  } catch (const UserError& e) {
    FAIL() << "the printed program does not compile:\n" << e.what() << "\n" << printed;
  }
  EXPECT_TRUE(equal(p, q)) << "printed:\n" << printed << "\nreprinted:\n" << to_string(q);
  EXPECT_EQ(printed, to_string(q));
}

// The language's lets and the intrinsics tan, atan2, hypot, tanh and fma take both trips
// too: a Let's f32, f64 and bool variables keep their types through the proto bytes, and
// the printed `let ... in ...` parses back to the same Lets.
TEST(BenchmarkRoundTrip, LetsAndTheNewIntrinsics) {
  const std::string program =
      "pipeline lets\n"
      "input in : f32[x, y]\n"
      "param k : f32 = 0.5\n"
      "func g(x, y) = let t = in(x, y) * 2.0 in t * t + t\n"
      "func h(x, y) = let i = x - 1 in let d = f64(g(i, y)) in\n"
      "  f32(atan2(d, f64(k)) + hypot(d, d) + fma(d, d, f64(0.5))) + tan(k) + tanh(in(x, y))\n"
      "func out(x, y) = (let b = h(x, y) > 0.5 in select(b, 1.0, 0.0)) +\n"
      "  sum(r in -1..1 : let w = f32(r * r) in in(x + r, y) * w) + (let t = k in t * k)\n"
      "output out\n";
  Pipeline p = compile_pipeline(program, "lets.stp");
  Pipeline q = parse_pipeline_bytes(serialize_pipeline(p));
  EXPECT_TRUE(equal(p, q));
  EXPECT_EQ(structural_hash(p), structural_hash(q));
  std::string printed = to_string(p);
  EXPECT_NE(printed.find("let d = f64(g(i, y)) in"), std::string::npos) << printed;
  Pipeline r = compile_pipeline(printed, "printed lets.stp");
  EXPECT_TRUE(equal(p, r)) << "printed:\n" << printed << "\nreprinted:\n" << to_string(r);
  EXPECT_EQ(printed, to_string(r));
}

INSTANTIATE_TEST_SUITE_P(Pipelines, BenchmarkRoundTrip, ::testing::ValuesIn(benchmark_files()),
                         [](const ::testing::TestParamInfo<std::filesystem::path>& info) {
                           std::string name = info.param.stem().string();
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(BenchmarkRoundTrip, ThereArePipelines) { EXPECT_FALSE(benchmark_files().empty()); }

}  // namespace
}  // namespace stipple
