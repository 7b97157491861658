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
