// Issue #3's OpenCV 4.6 comparison: each benchmark pipeline that OpenCV has as one
// operation, on the same planar f32 input (each channel plane wrapped as a CV_32FC1 Mat,
// so there is no layout conversion), with the border mode closest to the .stp's, at 1
// and 2 threads (cv::setNumThreads). Each is checked against Stipple's output once at
// setup. Where OpenCV differs (stated with each): bilateralFilter takes the 9x9 window's
// inscribed disk and interpolates exp from a table; its demosaic works on u16 mosaics
// into interleaved RGB and averages four greens at red and blue pixels, where
// demosaic.stp averages the left and right ones.
#include <cmath>
#include <cstdio>
#include <limits>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "bench/bench_common.h"

namespace stipple::bench {
namespace {

/// Channel plane c of a planar f32 (x, y, c) buffer as a Mat sharing its memory.
cv::Mat plane(const Buffer& b, int64_t c) {
  return cv::Mat(static_cast<int>(b.extent(1)), static_cast<int>(b.extent(0)), CV_32FC1,
                 const_cast<float*>(b.data_as<float>()) + c * b.dim(2).stride);
}

/// A per-channel-plane OpenCV implementation of a pipeline, with its check tolerance.
struct PlanarOp {
  double tolerance;
  void (*run)(const cv::Mat& in, cv::Mat& out, cv::Mat& scratch);
};

PlanarOp planar_op(const std::string& pipeline) {
  if (pipeline == "blur3x3") {
    // A normalised 3x3 box: (sum of 9) / 9 instead of two passes of (sum of 3) / 3.
    return {1e-6, [](const cv::Mat& in, cv::Mat& out, cv::Mat&) {
              cv::blur(in, out, cv::Size(3, 3), cv::Point(-1, -1), cv::BORDER_REPLICATE);
            }};
  }
  if (pipeline == "two_pass_blur") {
    // 17 taps (h = 8), sigma 4, normalised; OpenCV makes the kernel in double.
    return {1e-5, [](const cv::Mat& in, cv::Mat& out, cv::Mat&) {
              cv::GaussianBlur(in, out, cv::Size(17, 17), 4.0, 4.0, cv::BORDER_REPLICATE);
            }};
  }
  if (pipeline == "unsharp_mask") {
    return {5e-5, [](const cv::Mat& in, cv::Mat& out, cv::Mat& blurred) {
              cv::GaussianBlur(in, blurred, cv::Size(17, 17), 4.0, 4.0, cv::BORDER_REPLICATE);
              cv::addWeighted(in, 3.0, blurred, 1.0 - 3.0, 0.0, out);
            }};
  }
  if (pipeline == "bilateral_filter") {
    // d = 9 (radius 4), sigma_color = 4/255, sigma_space = 0.8. The taps outside the disk
    // (i^2 + j^2 > 16) have spatial weights below exp(-13) and are left out by OpenCV;
    // its exp table's interpolation error is about 1e-5 of a weight.
    return {2e-3, [](const cv::Mat& in, cv::Mat& out, cv::Mat&) {
              cv::bilateralFilter(in, out, 9, 0.015686275, 0.8, cv::BORDER_REPLICATE);
            }};
  }
  // median: 5x5 on f32 (OpenCV's sorting network), replicating the border like clamp.
  return {0, [](const cv::Mat& in, cv::Mat& out, cv::Mat&) { cv::medianBlur(in, out, 5); }};
}

void register_planar(const std::string& pipeline, ImageSize size) {
  PlanarOp op = planar_op(pipeline);
  auto output = std::make_shared<Buffer>();
  auto scratch = std::make_shared<cv::Mat>();
  auto body = [=] {
    const Buffer& input = bench_input(pipeline, size);
    for (int64_t c = 0; c < 3; ++c) {
      cv::Mat out = plane(*output, c);
      op.run(plane(input, c), out, *scratch);
    }
  };
  for (int threads : bench_threads()) {
    auto setup = [=] {
      cv::setNumThreads(threads);
      if (output->defined()) return;
      *output = Buffer(ScalarType::Float32, {size.width, size.height, 3});
      *scratch = cv::Mat(static_cast<int>(size.height), static_cast<int>(size.width), CV_32FC1);
      body();
      check_close("opencv " + pipeline + " " + size.label(),
                  max_abs_diff(stipple_reference_output(pipeline, size), view_of(*output)),
                  op.tolerance);
    };
    register_timed(bench_name(pipeline, size, threads, "opencv"), body, setup);
  }
}

/// Demosaic: OpenCV's bilinear Bayer conversion of a u16 mosaic (the f32 input times
/// 65535, rounded) into interleaved u16 RGB.
void register_demosaic(ImageSize size) {
  struct State {
    cv::Mat mosaic, rgb;
    int code = -1;
  };
  auto state = std::make_shared<State>();
  auto body = [=] { cv::cvtColor(state->mosaic, state->rgb, state->code); };
  for (int threads : bench_threads()) {
    auto setup = [=] {
      cv::setNumThreads(threads);
      if (state->code >= 0) return;
      const Buffer& input = bench_input("demosaic", size);
      cv::Mat f32(static_cast<int>(size.height), static_cast<int>(size.width), CV_32FC1,
                  const_cast<float*>(input.data_as<float>()));
      f32.convertTo(state->mosaic, CV_16UC1, 65535.0);
      // OpenCV names Bayer patterns by another corner than the usual RGGB; take the code
      // whose red and blue channels match Stipple's (its channel order is R, G, B).
      const Buffer& reference = stipple_reference_output("demosaic", size);
      double best = std::numeric_limits<double>::infinity();
      for (int code : {cv::COLOR_BayerBG2RGB, cv::COLOR_BayerGB2RGB, cv::COLOR_BayerRG2RGB,
                       cv::COLOR_BayerGR2RGB}) {
        cv::cvtColor(state->mosaic, state->rgb, code);
        Buffer as_f32(ScalarType::Float32, {size.width, size.height, 3});
        const uint16_t* p = state->rgb.ptr<uint16_t>();
        float* q = as_f32.data_as<float>();
        for (int64_t y = 0; y < size.height; ++y) {
          for (int64_t x = 0; x < size.width; ++x) {
            for (int64_t c = 0; c < 3; ++c) {
              q[(c * size.height + y) * size.width + x] =
                  static_cast<float>(p[(y * size.width + x) * 3 + c] / 65535.0);
            }
          }
        }
        double red = max_abs_diff(reference, view_of(as_f32), 2, 0, 1);
        double blue = max_abs_diff(reference, view_of(as_f32), 2, 2, 3);
        if (std::max(red, blue) < best) {
          best = std::max(red, blue);
          state->code = code;
          std::fprintf(stderr,
                       "note: opencv demosaic green (four-neighbour mean, by design) differs "
                       "from Stipple's by up to %.3g\n",
                       max_abs_diff(reference, view_of(as_f32), 2, 1, 2));
        }
      }
      // Red and blue are the same bilinear interpolation: equal up to the u16 rounding of
      // the input and the output (2 / 65535), away from OpenCV's own 1-pixel border.
      check_close("opencv demosaic red and blue " + size.label(), best, 2.0 / 65535, 2);
      cv::cvtColor(state->mosaic, state->rgb, state->code);
    };
    register_timed(bench_name("demosaic", size, threads, "opencv"), body, setup);
  }
}

}  // namespace
}  // namespace stipple::bench

int main(int argc, char** argv) {
  using namespace stipple::bench;
  for (const std::string& name : issue3_pipelines()) {
    for (ImageSize size : bench_sizes(name)) {
      if (name == "demosaic") {
        register_demosaic(size);
      } else {
        register_planar(name, size);
      }
    }
  }
  return run_benchmarks(argc, argv);
}
