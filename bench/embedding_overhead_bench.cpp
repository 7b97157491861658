// What a call through the embedding library (<stipple/stipple.h>) costs over the same
// pipeline's ahead-of-time object called directly (issue #30: under 5% on a 1920x1080
// image). two_pass_blur under its hand schedule on a 1920x1080 RGB f32 photo-sized image:
// the object (`stipple compile --emit obj,header`, built with this benchmark) with its
// descriptors filled by hand, against Function::realize on the same planar buffers, and
// realize on the image interleaved (RGBRGB..., read and written in place). Rounds
// alternate the three, so drifts of a shared machine fall on all of them alike; each
// reports its median, and the ratios are of medians of the same run.
//
//   build/bench/embedding_overhead_bench [--rounds 15]
//
// Both run their parallel loops on a pool of a thread per hardware thread (the library
// holds its own copy of the runtime, as it holds the rest of the compiler).
#include <stipple/stipple.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "two_pass_blur_aot.h"
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double milliseconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: embedding_overhead_bench [--rounds N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (rounds < 1) rounds = 1;
  const int64_t w = 1920, h = 1080, c = 3;
  std::vector<float> in(static_cast<size_t>(w * h * c));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (float& v : in) v = unit(rng);
  std::vector<float> out_aot(in.size()), out_api(in.size()), out_inter(in.size());
  std::vector<float> in_inter(in.size());
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t i = 0; i < w * h; ++i) in_inter[i * c + k] = in[k * w * h + i];
  }

  // The object, called as its header says.
  stipple_buffer buffers[2];
  std::memset(buffers, 0, sizeof buffers);
  for (int b = 0; b < 2; ++b) {
    buffers[b].host = b == 0 ? in.data() : out_aot.data();
    buffers[b].type = STIPPLE_TYPE_F32;
    buffers[b].dimensions = 3;
    buffers[b].dim[0] = {0, w, 1};
    buffers[b].dim[1] = {0, h, w};
    buffers[b].dim[2] = {0, c, w * h};
  }
  double params[] = TWO_PASS_BLUR_AOT_PARAM_DEFAULTS;
  auto aot = [&] {
    if (two_pass_blur_aot(buffers, params) != STIPPLE_OK) std::abort();
  };

  // The library, from the same files.
  const std::string dir = STIPPLE_SOURCE_DIR "/datasets/pipelines/";
  const stipple::Function f =
      stipple::Pipeline::load(dir + "two_pass_blur.stp").compile_file(dir + "two_pass_blur.sched");
  const auto in_view = stipple::BufferView::planar(in.data(), w, h, c);
  const auto out_view = stipple::BufferView::planar(out_api.data(), w, h, c);
  const auto in_inter_view = stipple::BufferView::interleaved(in_inter.data(), w, h, c);
  const auto out_inter_view = stipple::BufferView::interleaved(out_inter.data(), w, h, c);
  auto api = [&] { f.realize(in_view, out_view); };
  auto api_inter = [&] { f.realize(in_inter_view, out_inter_view); };

  // A warm-up of each (the interleaved layout compiles on its first call), and the same
  // pixels from all three.
  aot();
  api();
  api_inter();
  if (out_api != out_aot) {
    std::fprintf(stderr, "the library's output differs from the object's\n");
    return 1;
  }
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t i = 0; i < w * h; ++i) {
      if (out_inter[i * c + k] != out_aot[k * w * h + i]) {
        std::fprintf(stderr, "the interleaved output differs from the object's\n");
        return 1;
      }
    }
  }
  std::vector<double> t_aot, t_api, t_inter;
  for (int r = 0; r < rounds; ++r) {
    t_aot.push_back(milliseconds(aot));
    t_api.push_back(milliseconds(api));
    t_inter.push_back(milliseconds(api_inter));
  }
  const double a = median(t_aot), b = median(t_api), i = median(t_inter);
  std::printf("two_pass_blur 1920x1080x3 f32, hand schedule, %d rounds (medians)\n", rounds);
  std::printf("%-36s %9.3f ms\n", "AOT object, called directly", a);
  std::printf("%-36s %9.3f ms  %+.1f%%\n", "Function::realize, planar", b, (b / a - 1) * 100);
  std::printf("%-36s %9.3f ms  %+.1f%%\n", "Function::realize, interleaved", i, (i / a - 1) * 100);
  return 0;
}
