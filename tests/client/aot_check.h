// What the tests of ahead-of-time compiled pipelines share (aot_link_test.cpp,
// install_package_test.cpp): random input images, raw files, and the check of a linked
// aot_driver.c program's output against the reference evaluator, bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "tests/client/shell.h"

namespace stipple::testing_cli {

inline ::stipple::Buffer random_image(int w, int h, int c, uint32_t seed) {
  ::stipple::Buffer b(::stipple::ScalarType::Float32, {w, h, c});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < b.element_count(); ++i) b.data_as<float>()[i] = u(rng);
  return b;
}

inline void write_raw(const std::string& path, const ::stipple::Buffer& b) {
  std::ofstream(path, std::ios::binary)
      .write(static_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size_in_bytes()));
}

/// Runs the driver on `in` for the output box [ox, ox+ow) x [oy, oy+oh) x [0, c) and
/// checks it against the evaluator's output over the whole image, bit for bit.
inline void expect_matches_evaluator(const std::string& exe, const std::string& dir,
                                     const std::string& pipeline, const ::stipple::Buffer& in,
                                     const ::stipple::ParamValues& params,
                                     const std::string& param_overrides, int ox, int oy, int ow,
                                     int oh) {
  const std::string in_path = dir + "/in.raw", out_path = dir + "/out.raw";
  write_raw(in_path, in);
  const int64_t w = in.extent(0), h = in.extent(1), c = in.extent(2);
  Result run = shell(exe + " " + in_path + " " + std::to_string(w) + " " + std::to_string(h) + " " +
                     std::to_string(c) + " " + out_path + " " + std::to_string(ox) + " " +
                     std::to_string(oy) + " " + std::to_string(ow) + " " + std::to_string(oh) +
                     " " + param_overrides);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "rc=0\n");

  ::stipple::Pipeline p =
      ::stipple::load_pipeline_file(source("datasets/pipelines/" + pipeline + ".stp"));
  ::stipple::Buffer expected = ::stipple::evaluate_pipeline(p, {{"in", in}}, params);
  ASSERT_EQ(expected.dimensions(), 3);
  std::ifstream file(out_path, std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_EQ(got.size(), static_cast<size_t>(ow * oh * c) * sizeof(float));
  int64_t mismatches = 0;
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        const int64_t coords[] = {ox + x, oy + y, k};
        const float want = expected.data_as<float>()[expected.offset_of(coords)];
        float have;
        std::memcpy(&have, got.data() + ((k * oh + y) * ow + x) * sizeof(float), sizeof have);
        if (std::memcmp(&want, &have, sizeof have) != 0 && mismatches++ < 5) {
          ADD_FAILURE() << pipeline << " at (" << coords[0] << ", " << coords[1] << ", " << k
                        << "): linked code " << have << ", evaluator " << want;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << pipeline;
}

}  // namespace stipple::testing_cli
