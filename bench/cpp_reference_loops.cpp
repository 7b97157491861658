// Issue #3's baseline: each benchmark pipeline as the straightforward C++ program one would
// write without a scheduling language: plain loops over planar f32 images, one full-size
// temporary per separable pass, no tiling, no threads, no intrinsics; compiled with
// -O3 -march=native (see CMakeLists.txt) so the compiler vectorises what it can. Every
// loop computes its pipeline's .stp (same types, operation order and boundary handling;
// its multiply-adds as the compiler contracts them, not always as the language does, so
// the float pipelines agree within tolerance_for's bounds), which the setup checks against
// Stipple's output once per size.
#include <algorithm>
#include <cmath>
#include <vector>

#include "bench/bench_common.h"

namespace stipple::bench {
namespace {

inline int64_t clamp_index(int64_t v, int64_t n) { return std::clamp<int64_t>(v, 0, n - 1); }

/// The full-size temporary of a separable pass, allocated on first use and kept, so
/// that page faults of a fresh 123 MB buffer are not timed (Stipple's and the other
/// comparators' outputs are preallocated too). The loops run on one thread.
float* scratch(int64_t elements) {
  static std::vector<float> buffer;
  if (buffer.size() < static_cast<size_t>(elements)) buffer.resize(static_cast<size_t>(elements));
  return buffer.data();
}

/// Reflection without repeating the edge (the .stp's `mirror`): -1 reads 1, n reads n-2.
inline int64_t mirror_index(int64_t v, int64_t n) {
  if (v < 0) v = -v;
  if (v >= n) v = 2 * n - 2 - v;
  return v;
}

void blur3x3(const float* in, float* out, int64_t w, int64_t h) {
  float* bx = scratch(w * h);
  for (int64_t c = 0; c < 3; ++c) {
    const float* src = in + c * w * h;
    float* dst = out + c * w * h;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        bx[y * w + x] = (src[y * w + clamp_index(x - 1, w)] + src[y * w + x] +
                         src[y * w + clamp_index(x + 1, w)]) /
                        3.0f;
      }
    }
    for (int64_t y = 0; y < h; ++y) {
      const float* up = bx + clamp_index(y - 1, h) * w;
      const float* mid = bx + y * w;
      const float* down = bx + clamp_index(y + 1, h) * w;
      for (int64_t x = 0; x < w; ++x) dst[y * w + x] = (up[x] + mid[x] + down[x]) / 3.0f;
    }
  }
}

constexpr int kGaussRadius = 8;  // h = 8, sigma = 4: the .stp params' defaults

/// k(i) of two_pass_blur.stp / unsharp_mask.stp, and norm() = their sum in order.
std::vector<float> gaussian_taps(float sigma, float* norm) {
  std::vector<float> k;
  *norm = 0;
  for (int i = -kGaussRadius; i <= kGaussRadius; ++i) {
    k.push_back(std::exp(-static_cast<float>(i * i) / (2 * sigma * sigma)));
    *norm += k.back();
  }
  return k;
}

/// The two passes A (along x) and out (along y) of the separable Gaussian.
void gaussian(const float* in, float* out, int64_t w, int64_t h) {
  float norm = 0;
  std::vector<float> k = gaussian_taps(4.0f, &norm);
  float* a = scratch(w * h);
  for (int64_t c = 0; c < 3; ++c) {
    const float* src = in + c * w * h;
    float* dst = out + c * w * h;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        float sum = 0;
        for (int i = -kGaussRadius; i <= kGaussRadius; ++i) {
          sum += k[i + kGaussRadius] * src[y * w + clamp_index(x - i, w)];
        }
        a[y * w + x] = sum / norm;
      }
    }
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        float sum = 0;
        for (int i = -kGaussRadius; i <= kGaussRadius; ++i) {
          sum += k[i + kGaussRadius] * a[clamp_index(y - i, h) * w + x];
        }
        dst[y * w + x] = sum / norm;
      }
    }
  }
}

void unsharp_mask(const float* in, float* out, int64_t w, int64_t h) {
  gaussian(in, out, w, h);
  const float s = 3.0f;
  for (int64_t i = 0; i < 3 * w * h; ++i) out[i] = s * in[i] + (1 - s) * out[i];
}

void bilateral(const float* in, float* out, int64_t w, int64_t h) {
  const float sigma_r = 0.015686275f, sigma_s = 0.8f;
  constexpr int r = 4;
  float spatial[2 * r + 1][2 * r + 1];
  for (int j = -r; j <= r; ++j) {
    for (int i = -r; i <= r; ++i) {
      spatial[j + r][i + r] =
          std::exp(-static_cast<float>(i * i + j * j) / (2 * sigma_s * sigma_s));
    }
  }
  const float range_scale = -1 / (2 * sigma_r * sigma_r);  // as the .stp's range_scale()
  for (int64_t c = 0; c < 3; ++c) {
    const float* src = in + c * w * h;
    float* dst = out + c * w * h;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        const float centre = src[y * w + x];
        float num = 0, den = 0;
        for (int j = -r; j <= r; ++j) {
          const float* row = src + clamp_index(y - j, h) * w;
          for (int i = -r; i <= r; ++i) {
            const float v = row[clamp_index(x - i, w)];
            const float d = centre - v;
            const float weight = spatial[j + r][i + r] * std::exp(d * d * range_scale);
            num += weight * v;
            den += weight;
          }
        }
        dst[y * w + x] = num / den;
      }
    }
  }
}

void median5x5(const float* in, float* out, int64_t w, int64_t h) {
  float window[25];
  for (int64_t c = 0; c < 3; ++c) {
    const float* src = in + c * w * h;
    float* dst = out + c * w * h;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        int n = 0;
        for (int j = -2; j <= 2; ++j) {
          for (int i = -2; i <= 2; ++i) {
            window[n++] = src[clamp_index(y + j, h) * w + clamp_index(x + i, w)];
          }
        }
        std::nth_element(window, window + 12, window + 25);
        dst[y * w + x] = window[12];
      }
    }
  }
}

/// 0 red, 1 green, 2 blue at mosaic position (x, y) of an RGGB pattern (any integers).
inline int bayer_colour(int64_t x, int64_t y) {
  bool even_x = (x & 1) == 0, even_y = (y & 1) == 0;
  return even_x && even_y ? 0 : (!even_x && !even_y ? 2 : 1);
}

inline bool row_has(int64_t y, int c) { return c == 1 || (c == 0) == ((y & 1) == 0); }

void demosaic(const float* in, float* out, int64_t w, int64_t h) {
  auto raw = [&](int64_t x, int64_t y) { return in[mirror_index(y, h) * w + mirror_index(x, w)]; };
  // The x pass at (x, y) for colour c: the sample itself, the mean of the neighbours of
  // colour c, or 0 on a row without c.
  auto x_pass = [&](int c, int64_t x, int64_t y) -> float {
    if (bayer_colour(x, y) == c) return raw(x, y);
    float left = bayer_colour(x - 1, y) == c ? 0.5f * raw(x - 1, y) : 0.0f;
    float right = bayer_colour(x + 1, y) == c ? 0.5f * raw(x + 1, y) : 0.0f;
    return left + right;
  };
  for (int c = 0; c < 3; ++c) {
    float* dst = out + c * w * h;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        if (row_has(y, c)) {
          dst[y * w + x] = x_pass(c, x, y);
        } else {
          float up = row_has(y - 1, c) ? 0.5f * x_pass(c, x, y - 1) : 0.0f;
          float down = row_has(y + 1, c) ? 0.5f * x_pass(c, x, y + 1) : 0.0f;
          dst[y * w + x] = up + down;
        }
      }
    }
  }
}

using Loop = void (*)(const float*, float*, int64_t, int64_t);

Loop loop_for(const std::string& pipeline) {
  if (pipeline == "blur3x3") return &blur3x3;
  if (pipeline == "two_pass_blur") return &gaussian;
  if (pipeline == "bilateral_filter") return &bilateral;
  if (pipeline == "median") return &median5x5;
  if (pipeline == "unsharp_mask") return &unsharp_mask;
  return &demosaic;
}

/// The largest difference allowed against Stipple: exact where the operations are the
/// same and exact (median, demosaic, the box blur); libm's expf may differ from the
/// JIT's exp by an ulp, which the weighted sums carry into the 1e-6 range.
double tolerance_for(const std::string& pipeline) {
  if (pipeline == "median" || pipeline == "demosaic" || pipeline == "blur3x3") return 0;
  return 1e-5;
}

void register_pipeline(const std::string& pipeline, ImageSize size) {
  auto output = std::make_shared<Buffer>();
  Loop loop = loop_for(pipeline);
  auto setup = [=] {
    if (output->defined()) return;
    *output = Buffer(ScalarType::Float32, {size.width, size.height, 3});
    loop(bench_input(pipeline, size).data_as<float>(), output->data_as<float>(), size.width,
         size.height);
    check_close("cpp " + pipeline + " " + size.label(),
                max_abs_diff(stipple_reference_output(pipeline, size), view_of(*output)),
                tolerance_for(pipeline));
  };
  register_timed(
      bench_name(pipeline, size, 1, "cpp"),
      [=] {
        loop(bench_input(pipeline, size).data_as<float>(), output->data_as<float>(), size.width,
             size.height);
      },
      setup);
}

}  // namespace
}  // namespace stipple::bench

int main(int argc, char** argv) {
  using namespace stipple::bench;
  for (const std::string& name : issue3_pipelines()) {
    for (ImageSize size : bench_sizes(name)) register_pipeline(name, size);
  }
  return run_benchmarks(argc, argv);
}
