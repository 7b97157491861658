// Shared by the lowering tests: a benchmark pipeline with inputs made from a committed
// fixture, its reference output, and a check that lowers, JIT-compiles and runs a
// schedule and compares the result with the reference byte for byte.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple::testing_lowering {

inline std::vector<std::string> benchmark_paths() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(std::string(STIPPLE_SOURCE_DIR) +
                                                           "/datasets/pipelines")) {
    if (e.path().extension() == ".stp") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// The top-left width x height corner of a photo (x, y, c).
inline Buffer crop_photo(const Buffer& photo, int64_t width, int64_t height) {
  std::vector<int64_t> extents{width, height};
  for (int d = 2; d < photo.dimensions(); ++d) extents.push_back(photo.extent(d));
  Buffer out(photo.type(), extents);
  std::vector<int64_t> c(extents.size(), 0);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    int64_t r = i;
    for (size_t d = 0; d < extents.size(); ++d) {
      c[d] = r % extents[d];
      r /= extents[d];
    }
    out.set(c, photo.get(c));
  }
  return out;
}

struct Case {
  /// Inputs from the 64x48 fixtures, or their top-left width x height corner.
  explicit Case(const std::string& path, int64_t width = 64, int64_t height = 48)
      : pipeline(load_pipeline_file(path)) {
    std::string fixtures = std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/";
    Buffer rgb = crop_photo(read_image(fixtures + "natural-high-64x48.png"), width, height);
    Buffer gray = crop_photo(read_image(fixtures + "gray-64x48.png"), width, height);
    for (const InputDecl& in : pipeline.inputs) {
      inputs[in.name] = photo_to_input(in.dim_names.size() == 2 ? gray : rgb, in, "fixture");
    }
    expected = evaluate_pipeline(pipeline, inputs);
    for (int d = 0; d < expected.dimensions(); ++d) extents.push_back(expected.extent(d));
  }

  /// "" when the lowered code matches the reference; otherwise what differs.
  std::string check(codegen::JitCompiler& jit, const Schedule& s) const {
    LoweredFunction f = lower(pipeline, s);
    auto t0 = std::chrono::steady_clock::now();
    auto fn = jit.compile(f);
    auto t1 = std::chrono::steady_clock::now();
    Buffer got = run_lowered(*fn, f, pipeline, inputs, {}, extents);
    auto t2 = std::chrono::steady_clock::now();
    // STIPPLE_LOWER_TIMES=1 prints the compile and run time of every schedule (and the
    // schedules that take over 2 s).
    if (getenv("STIPPLE_LOWER_TIMES")) {
      std::fprintf(stderr, "%s: compile %.3f s (%zu chars), run %.3f s\n", pipeline.name.c_str(),
                   std::chrono::duration<double>(t1 - t0).count(), to_string(f.body).size(),
                   std::chrono::duration<double>(t2 - t1).count());
      if (std::chrono::duration<double>(t2 - t0).count() > 2) {
        std::fprintf(stderr, "%s", print_schedule(s, pipeline).c_str());
      }
    }
    if (got.size_in_bytes() == expected.size_in_bytes() &&
        std::memcmp(got.data(), expected.data(), got.size_in_bytes()) == 0) {
      return "";
    }
    std::ostringstream os;
    os << pipeline.name << " under schedule:\n" << print_schedule(s, pipeline);
    int bytes = bytes_of(got.type());
    for (int64_t i = 0; i < got.element_count(); ++i) {
      if (std::memcmp(static_cast<const std::byte*>(got.data()) + i * bytes,
                      static_cast<const std::byte*>(expected.data()) + i * bytes, bytes) != 0) {
        os << "first difference at flat index " << i << " (";
        int64_t r = i;
        for (int d = 0; d < got.dimensions(); ++d) {
          os << (d ? ", " : "") << r % got.extent(d);
          r /= got.extent(d);
        }
        os << "): got " << got.get_flat(i) << ", expected " << expected.get_flat(i);
        break;
      }
    }
    return os.str();
  }

  Pipeline pipeline;
  InputImages inputs;
  Buffer expected;
  std::vector<int64_t> extents;
};

}  // namespace stipple::testing_lowering
