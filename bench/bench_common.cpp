// The shared part of the issue-#3 benchmarks: see bench_common.h.
#include "bench/bench_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::bench {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The fixture photo as planar f32 RGB in [0, 1].
const Buffer& fixture_rgb() {
  static const Buffer rgb = [] {
    Buffer photo =
        read_image(std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/natural-820x614.png");
    InputDecl decl;
    decl.name = "in";
    decl.type = Type(ScalarType::Float32);
    decl.dim_names = {"x", "y", "c"};
    return photo_to_input(photo, decl, "natural-820x614.png");
  }();
  return rgb;
}

/// The fixture resampled bilinearly (pixel centres aligned) to `size`: smooth regions,
/// edges and texture like a photo, the same at every run.
Buffer resampled_rgb(ImageSize size) {
  const Buffer& src = fixture_rgb();
  const int64_t sw = src.extent(0), sh = src.extent(1);
  const float* s = src.data_as<float>();
  Buffer out(ScalarType::Float32, {size.width, size.height, 3});
  float* o = out.data_as<float>();
  for (int64_t y = 0; y < size.height; ++y) {
    double fy = std::clamp((y + 0.5) * sh / size.height - 0.5, 0.0, double(sh - 1));
    int64_t y0 = static_cast<int64_t>(fy), y1 = std::min(y0 + 1, sh - 1);
    double ty = fy - y0;
    for (int64_t x = 0; x < size.width; ++x) {
      double fx = std::clamp((x + 0.5) * sw / size.width - 0.5, 0.0, double(sw - 1));
      int64_t x0 = static_cast<int64_t>(fx), x1 = std::min(x0 + 1, sw - 1);
      double tx = fx - x0;
      for (int64_t c = 0; c < 3; ++c) {
        const float* p = s + c * sw * sh;
        double top = p[y0 * sw + x0] * (1 - tx) + p[y0 * sw + x1] * tx;
        double bottom = p[y1 * sw + x0] * (1 - tx) + p[y1 * sw + x1] * tx;
        o[(c * size.height + y) * size.width + x] =
            static_cast<float>(top * (1 - ty) + bottom * ty);
      }
    }
  }
  return out;
}

/// An RGGB mosaic of the resampled photo: red at (even, even), blue at (odd, odd).
Buffer bayer_rggb(ImageSize size) {
  Buffer rgb = resampled_rgb(size);
  const float* s = rgb.data_as<float>();
  Buffer out(ScalarType::Float32, {size.width, size.height});
  float* o = out.data_as<float>();
  for (int64_t y = 0; y < size.height; ++y) {
    for (int64_t x = 0; x < size.width; ++x) {
      int64_t c = (x % 2 == 0 && y % 2 == 0) ? 0 : (x % 2 == 1 && y % 2 == 1 ? 2 : 1);
      o[y * size.width + x] = s[(c * size.height + y) * size.width + x];
    }
  }
  return out;
}

/// camera_pipe's input: a GRBG mosaic of the resampled photo as 10-bit raw values in u16
/// (green at (even, even) and (odd, odd), red at (odd, even), blue at (even, odd)), the
/// photo's [0, 1] mapped to the .stp's black and white levels 25..1023, as
/// reference_evaluator_bench makes it.
Buffer bayer_grbg10(ImageSize size) {
  Buffer rgb = resampled_rgb(size);
  const float* s = rgb.data_as<float>();
  Buffer out(ScalarType::UInt16, {size.width, size.height});
  uint16_t* o = out.data_as<uint16_t>();
  for (int64_t y = 0; y < size.height; ++y) {
    for (int64_t x = 0; x < size.width; ++x) {
      int64_t c = (x % 2 == 1 && y % 2 == 0) ? 0 : (x % 2 == 0 && y % 2 == 1 ? 2 : 1);
      double v = s[(c * size.height + y) * size.width + x];
      o[y * size.width + x] = static_cast<uint16_t>(std::lround(25 + v * (1023 - 25)));
    }
  }
  return out;
}

/// interpolate's input: the resampled photo plus an alpha channel that is 1 inside a
/// centred disc (radius 0.35 of the height) and 0 outside, so the pyramid has holes to
/// fill, as reference_evaluator_bench makes it.
Buffer rgba_disc(ImageSize size) {
  Buffer rgb = resampled_rgb(size);
  const int64_t plane = size.width * size.height;
  Buffer out(ScalarType::Float32, {size.width, size.height, 4});
  float* o = out.data_as<float>();
  std::copy(rgb.data_as<float>(), rgb.data_as<float>() + 3 * plane, o);
  for (int64_t y = 0; y < size.height; ++y) {
    for (int64_t x = 0; x < size.width; ++x) {
      bool inside = std::hypot(x - size.width / 2.0, y - size.height / 2.0) < 0.35 * size.height;
      o[3 * plane + y * size.width + x] = inside ? 1.0f : 0.0f;
    }
  }
  return out;
}

/// bilateral_grid_halide's input: the Rec. 601 luma of the resampled photo (its
/// 0.299 R + 0.587 G + 0.114 B, in double, rounded once), gray f32[x, y] in [0, 1].
Buffer gray_luma(ImageSize size) {
  Buffer rgb = resampled_rgb(size);
  const float* s = rgb.data_as<float>();
  const int64_t plane = size.width * size.height;
  Buffer out(ScalarType::Float32, {size.width, size.height});
  float* o = out.data_as<float>();
  for (int64_t p = 0; p < plane; ++p) {
    o[p] = static_cast<float>(0.299 * s[p] + 0.587 * s[plane + p] + 0.114 * s[2 * plane + p]);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& issue3_pipelines() {
  static const std::vector<std::string> names = {"blur3x3", "two_pass_blur", "bilateral_filter",
                                                 "median",  "unsharp_mask",  "demosaic"};
  return names;
}

const std::vector<std::string>& halide_app_pipelines() {
  static const std::vector<std::string> names = {"bilateral_grid",  "bilateral_grid_halide",
                                                 "camera_pipe",     "interpolate",
                                                 "local_laplacian", "harris",
                                                 "nl_means",        "max_filter",
                                                 "unsharp"};
  return names;
}

std::vector<ImageSize> bench_sizes(const std::string& pipeline) {
  std::vector<ImageSize> sizes = {{1920, 1080}};
  if (pipeline == "blur3x3") sizes.push_back({6400, 4800});
  const std::vector<std::string>& apps = halide_app_pipelines();
  if (std::find(apps.begin(), apps.end(), pipeline) != apps.end()) {
    // The size each app runs at in Halide's apps/ (issue #26): its test photos are
    // 1536x2560 (portrait; rgb.png, rgba.png, gray.png), camera_pipe's raw mosaic 2592x1968.
    sizes.push_back(pipeline == "camera_pipe" ? ImageSize{2592, 1968} : ImageSize{1536, 2560});
  }
  return sizes;
}

const std::vector<int>& bench_threads() {
  static const std::vector<int> threads = {1, 2};
  return threads;
}

std::string pipeline_path(const std::string& name) {
  return std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/" + name + ".stp";
}

std::string schedule_path(const std::string& name) {
  // STIPPLE_BENCH_SCHEDULES=DIR times DIR/NAME.sched where it exists instead of the
  // checked-in hand schedule: A/B runs of a schedule change in one binary.
  if (const char* dir = std::getenv("STIPPLE_BENCH_SCHEDULES")) {
    const std::string candidate = std::string(dir) + "/" + name + ".sched";
    if (std::ifstream(candidate)) return candidate;
  }
  return std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/" + name + ".sched";
}

const Buffer& bench_input(const std::string& pipeline, ImageSize size) {
  static std::mutex mutex;
  static std::map<std::string, Buffer> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::string kind = pipeline == "demosaic"                ? "rggb"
                     : pipeline == "camera_pipe"           ? "grbg10"
                     : pipeline == "interpolate"           ? "rgba"
                     : pipeline == "bilateral_grid_halide" ? "gray"
                                                           : "rgb";
  std::string key = kind + "/" + size.label();
  auto it = cache.find(key);
  if (it == cache.end()) {
    Buffer b = kind == "rggb"     ? bayer_rggb(size)
               : kind == "grbg10" ? bayer_grbg10(size)
               : kind == "rgba"   ? rgba_disc(size)
               : kind == "gray"   ? gray_luma(size)
                                  : resampled_rgb(size);
    it = cache.emplace(key, std::move(b)).first;
  }
  return it->second;
}

StippleProgram::StippleProgram(const std::string& pipeline, bool hand)
    : StippleProgram(pipeline, hand ? schedule_path(pipeline) : std::string()) {}

StippleProgram::StippleProgram(const std::string& pipeline, const std::string& schedule_file) {
  auto t0 = Clock::now();
  pipeline_ = load_pipeline_file(pipeline_path(pipeline));
  Schedule schedule =
      schedule_file.empty() ? Schedule{} : load_schedule_file(schedule_file, pipeline_);
  lowered_ = lower(pipeline_, schedule);
  compiled_ = codegen::compile_for_host(lowered_);
  compile_ms_ = ms_since(t0);
  for (const ParamDecl& p : lowered_.params) params_.push_back(p.default_value);
  STIPPLE_INTERNAL_CHECK(lowered_.inputs.size() == 1 && lowered_.buffers.size() == 1,
                         "the benchmarks pass one input and one output buffer");
}

StippleProgram::~StippleProgram() = default;

const codegen::CompileStats& StippleProgram::jit_stats() const { return compiled_->stats(); }

Buffer StippleProgram::make_output(const Buffer& input) const {
  InputImages inputs = {{pipeline_.inputs[0].name, input}};
  return Buffer(pipeline_.find_func(pipeline_.output.func)->type.code,
                output_extents(pipeline_, inputs));
}

void StippleProgram::run(const Buffer& input, Buffer& output) const {
  // Descriptors are a few hundred bytes on the stack: cheaper than anything timed.
  codegen::BufferDescriptor descriptors[2] = {codegen::describe(input), codegen::describe(output)};
  int32_t rc = (*compiled_)(descriptors, params_.data());
  if (rc != 0) {
    std::fprintf(stderr, "%s: generated code returned %d\n", pipeline_.name.c_str(), rc);
    std::exit(1);
  }
}

const Buffer& stipple_reference_output(const std::string& pipeline, ImageSize size) {
  static std::mutex mutex;
  static std::map<std::string, Buffer> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::string key = pipeline + "/" + size.label();
  auto it = cache.find(key);
  if (it == cache.end()) {
    StippleProgram program(pipeline, /*hand=*/true);
    const Buffer& input = bench_input(pipeline, size);
    Buffer out = program.make_output(input);
    program.run(input, out);
    it = cache.emplace(key, std::move(out)).first;
  }
  return it->second;
}

ImageView view_of(const Buffer& b) {
  STIPPLE_INTERNAL_CHECK(b.type() == ScalarType::Float32, "views are of f32 buffers");
  return ImageView{b.data_as<float>(), b.dim(0).stride, b.dim(1).stride,
                   b.dimensions() > 2 ? b.dim(2).stride : 0};
}

double max_abs_diff(const Buffer& reference, const ImageView& actual, int64_t margin, int64_t c0,
                    int64_t c1, double tolerance, int64_t* over) {
  ImageView ref = view_of(reference);
  const int64_t w = reference.extent(0), h = reference.extent(1);
  if (c1 < 0) c1 = reference.extent_or_one(2);
  double worst = 0;
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t y = margin; y < h - margin; ++y) {
      for (int64_t x = margin; x < w - margin; ++x) {
        double d = std::fabs(double(ref.at(x, y, c)) - double(actual.at(x, y, c)));
        if (!(d <= worst)) worst = d;  // keeps NaN
        if (over && !(d <= tolerance)) ++*over;
      }
    }
  }
  return worst;
}

void check_close(const std::string& what, double diff, double tolerance, int64_t margin) {
  std::fprintf(stderr,
               "check: %s: max |diff| %.3g against Stipple (tolerance %.3g, border margin %lld)\n",
               what.c_str(), diff, tolerance, static_cast<long long>(margin));
  if (!(diff <= tolerance)) {
    std::fprintf(stderr, "check FAILED: %s does not compute what Stipple computes\n", what.c_str());
    std::exit(1);
  }
}

void check_close_but_strays(const std::string& what, const Buffer& reference,
                            const ImageView& actual, double tolerance, double stray_fraction) {
  const int64_t n = reference.element_count();
  int64_t strays = 0;
  const double worst = max_abs_diff(reference, actual, 0, 0, -1, tolerance, &strays);
  const auto allowed = static_cast<int64_t>(stray_fraction * static_cast<double>(n));
  std::fprintf(stderr,
               "check: %s: max |diff| %.3g against Stipple, %lld of %lld elements over %.3g "
               "(at most %lld allowed)\n",
               what.c_str(), worst, static_cast<long long>(strays), static_cast<long long>(n),
               tolerance, static_cast<long long>(allowed));
  if (std::isnan(worst) || strays > allowed) {
    std::fprintf(stderr, "check FAILED: %s does not compute what Stipple computes\n", what.c_str());
    std::exit(1);
  }
}

std::string bench_name(const std::string& pipeline, ImageSize size, int threads,
                       const std::string& variant) {
  return pipeline + "/" + size.label() + "/t" + std::to_string(threads) + "/" + variant;
}

benchmark::internal::Benchmark* register_timed(const std::string& name, std::function<void()> body,
                                               std::function<void()> setup, double min_time) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [body, setup](benchmark::State& state) {
    if (setup) setup();
    std::vector<double> times;
    for (auto _ : state) {
      auto t0 = Clock::now();
      body();
      times.push_back(ms_since(t0));
    }
    std::sort(times.begin(), times.end());
    state.counters["median_ms"] = times[times.size() / 2];
    state.counters["min_ms"] = times.front();
  });
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(min_time);
  return b;
}

int run_benchmarks(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  // The registered lambdas own compiled programs; destroy them now, while the JIT (a
  // function-local static made after the registry) still exists. Left to static
  // destruction, removing their code from the destroyed JIT would hang.
  benchmark::ClearRegisteredBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace stipple::bench
