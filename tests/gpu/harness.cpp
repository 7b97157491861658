// The GPU device check's harness (device_check.sh, README.md beside this). Built twice
// around one generated pipeline file, which it #includes as CASE_SOURCE and which exports
// `pipeline` (and, from the CUDA back end, `pipeline_device`):
//   - on a CPU host with the C++ source back end's file (c++ -x c++): `write` runs the
//     pipeline on the case's synthetic inputs and writes the reference output;
//   - on the GPU host with the CUDA back end's file (nvcc -x cu): `check` runs it and
//     compares with that reference; `time` times pipeline_device on device buffers with
//     CUDA events (transfers and the device-to-device copy bound timed apart).
//
//   harness CASE_FILE WIDTH HEIGHT write OUT.raw
//   harness CASE_FILE WIDTH HEIGHT check REF.raw
//   harness CASE_FILE WIDTH HEIGHT time RUNS
//
// CASE_FILE lines: `input TYPE DIMS`, `output TYPE DIMS C`, `param VALUE` (in order);
// an input of 3 dimensions is WIDTH x HEIGHT x 3, of 2 WIDTH x HEIGHT; the output's third
// extent is C.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include CASE_SOURCE

namespace {

struct Array {
  int32_t type = 0;
  std::vector<int64_t> extents;
  std::vector<uint8_t> bytes;
  stipple_buffer desc{};
};

int64_t element_bytes(int32_t type) {
  switch (type) {
    case STIPPLE_TYPE_U8:
    case STIPPLE_TYPE_BOOL: return 1;
    case STIPPLE_TYPE_U16: return 2;
    case STIPPLE_TYPE_F64: return 8;
    default: return 4;
  }
}

int32_t parse_type(const std::string& t) {
  if (t == "u8") return STIPPLE_TYPE_U8;
  if (t == "u16") return STIPPLE_TYPE_U16;
  if (t == "i32") return STIPPLE_TYPE_I32;
  if (t == "f32") return STIPPLE_TYPE_F32;
  if (t == "f64") return STIPPLE_TYPE_F64;
  if (t == "bool") return STIPPLE_TYPE_BOOL;
  std::fprintf(stderr, "unknown type %s\n", t.c_str());
  std::exit(2);
}

void make(Array& a, int32_t type, std::vector<int64_t> extents) {
  a.type = type;
  a.extents = std::move(extents);
  int64_t n = 1;
  for (int64_t e : a.extents) n *= e;
  a.bytes.assign(static_cast<size_t>(n * element_bytes(type)), 0);
  a.desc = stipple_buffer{};
  a.desc.host = a.bytes.data();
  a.desc.type = type;
  a.desc.dimensions = static_cast<int32_t>(a.extents.size());
  int64_t stride = 1;
  for (size_t d = 0; d < a.extents.size(); ++d) {
    a.desc.dim[d].min = 0;
    a.desc.dim[d].extent = a.extents[d];
    a.desc.dim[d].stride = stride;
    stride *= a.extents[d];
  }
}

// A deterministic image: smooth gradients and edges plus noise, in [0, 1] (u16: the
// 10-bit range of a raw sensor; u8: 0-255), the same on every machine.
void fill(Array& a, uint32_t seed) {
  const int64_t n = static_cast<int64_t>(a.bytes.size()) / element_bytes(a.type);
  const int64_t w = a.extents[0], h = a.extents.size() > 1 ? a.extents[1] : 1;
  uint32_t state = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = i % w, y = (i / w) % h, c = i / (w * h);
    state = state * 1664525u + 1013904223u;
    const double noise = static_cast<double>(state >> 8) / 16777216.0;
    double v = 0.5 + 0.35 * std::sin(0.05 * x + 0.3 * c) * std::cos(0.07 * y) +
               ((x / 17 + y / 13) % 2 ? 0.1 : -0.1) + 0.08 * (noise - 0.5);
    v = std::min(1.0, std::max(0.0, v));
    switch (a.type) {
      case STIPPLE_TYPE_F32:
        reinterpret_cast<float*>(a.bytes.data())[i] = static_cast<float>(v);
        break;
      case STIPPLE_TYPE_F64: reinterpret_cast<double*>(a.bytes.data())[i] = v; break;
      case STIPPLE_TYPE_U16:
        reinterpret_cast<uint16_t*>(a.bytes.data())[i] = static_cast<uint16_t>(v * 1023);
        break;
      case STIPPLE_TYPE_U8: a.bytes[i] = static_cast<uint8_t>(v * 255); break;
      case STIPPLE_TYPE_I32:
        reinterpret_cast<int32_t*>(a.bytes.data())[i] = static_cast<int32_t>(v * 1000);
        break;
      default: a.bytes[i] = v > 0.5; break;
    }
  }
}

[[maybe_unused]] double value(const Array& a, int64_t i) {
  switch (a.type) {
    case STIPPLE_TYPE_F32: return reinterpret_cast<const float*>(a.bytes.data())[i];
    case STIPPLE_TYPE_F64: return reinterpret_cast<const double*>(a.bytes.data())[i];
    case STIPPLE_TYPE_U16: return reinterpret_cast<const uint16_t*>(a.bytes.data())[i];
    case STIPPLE_TYPE_I32: return reinterpret_cast<const int32_t*>(a.bytes.data())[i];
    default: return a.bytes[i];
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s CASE_FILE WIDTH HEIGHT write|check|time ARG\n", argv[0]);
    return 2;
  }
  const int64_t width = std::atoll(argv[2]), height = std::atoll(argv[3]);
  const std::string mode = argv[4], arg = argv[5];
  std::ifstream in(argv[1]);
  std::vector<Array> arrays;
  std::vector<double> params;
  size_t inputs = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string kind, type;
    ls >> kind;
    if (kind == "param") {
      double v;
      ls >> v;
      params.push_back(v);
      continue;
    }
    int dims = 0;
    int64_t c = 3;
    ls >> type >> dims;
    if (kind == "output") ls >> c;
    std::vector<int64_t> extents = {width, height, c};
    extents.resize(static_cast<size_t>(dims));
    arrays.emplace_back();
    make(arrays.back(), parse_type(type), extents);
    if (kind == "input") {
      fill(arrays.back(), static_cast<uint32_t>(++inputs));
    }
  }
  std::vector<stipple_buffer> descs;
  for (const Array& a : arrays) descs.push_back(a.desc);
  Array& out = arrays.back();

  if (mode == "write") {
    const int32_t rc = pipeline(descs.data(), params.data());
    if (rc != 0) {
      std::fprintf(stderr, "pipeline returned %d\n", rc);
      return 1;
    }
    std::ofstream f(arg, std::ios::binary);
    f.write(reinterpret_cast<const char*>(out.bytes.data()),
            static_cast<std::streamsize>(out.bytes.size()));
    return f ? 0 : 1;
  }
#ifdef __CUDACC__
  if (mode == "check") {
    const int32_t rc = pipeline(descs.data(), params.data());
    if (rc != 0) {
      std::printf("FAIL returned %d\n", rc);
      return 1;
    }
    Array ref = out;
    std::ifstream f(arg, std::ios::binary);
    f.read(reinterpret_cast<char*>(ref.bytes.data()),
           static_cast<std::streamsize>(ref.bytes.size()));
    if (!f) {
      std::printf("FAIL no reference %s\n", arg.c_str());
      return 1;
    }
    // Floats: the CUDA math library's log, pow, sin and cos may differ from glibc's by an
    // ulp or two, so a relative tolerance; integers exactly, or by 1 where a float that
    // close rounded the other way.
    const bool is_float = out.type == STIPPLE_TYPE_F32 || out.type == STIPPLE_TYPE_F64;
    const int64_t count = static_cast<int64_t>(out.bytes.size()) / element_bytes(out.type);
    double max_err = 0;
    int64_t bad = 0, exact = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double a = value(out, i), b = value(ref, i);
      const double err = std::fabs(a - b);
      if (a == b || (std::isnan(a) && std::isnan(b))) ++exact;
      if (!(err <= max_err)) max_err = std::isnan(err) ? INFINITY : std::max(max_err, err);
      const double tol = is_float ? 1e-5 + 1e-5 * std::fabs(b) : 1.0;
      if (!(err <= tol)) ++bad;
    }
    std::printf("%s max_abs_err %.3g exact %.4f%% over_tolerance %lld of %lld\n",
                bad == 0 ? "PASS" : "FAIL", max_err, 100.0 * exact / count,
                static_cast<long long>(bad), static_cast<long long>(count));
    return bad == 0 ? 0 : 1;
  }
  if (mode == "time") {
    const int runs = std::atoi(arg.c_str());
    std::vector<void*> device(arrays.size());
    std::vector<stipple_buffer> ddescs = descs;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float in_ms = 0, out_ms = 0, ms = 0;
    cudaEventRecord(start);
    for (size_t k = 0; k < arrays.size(); ++k) {
      if (cudaMalloc(&device[k], arrays[k].bytes.size()) != cudaSuccess) {
        std::printf("FAIL cudaMalloc\n");
        return 1;
      }
      ddescs[k].host = device[k];
      if (k + 1 < arrays.size()) {
        cudaMemcpy(device[k], arrays[k].bytes.data(), arrays[k].bytes.size(),
                   cudaMemcpyHostToDevice);
      }
    }
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&in_ms, start, stop);
    std::vector<float> times;
    for (int r = 0; r < runs + 3; ++r) {
      cudaEventRecord(start);
      const int32_t rc = pipeline_device(ddescs.data(), params.data());
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      if (rc != 0) {
        std::printf("FAIL returned %d\n", rc);
        return 1;
      }
      cudaEventElapsedTime(&ms, start, stop);
      if (r >= 3) times.push_back(ms);  // three warm-ups
    }
    std::sort(times.begin(), times.end());
    cudaEventRecord(start);
    cudaMemcpy(out.bytes.data(), device.back(), out.bytes.size(), cudaMemcpyDeviceToHost);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&out_ms, start, stop);
    // The bound of a memory-bound pipeline: copying the output's bytes device to device
    // reads and writes as many bytes as a one-pass filter of same-size input must.
    void* copy = nullptr;
    cudaMalloc(&copy, out.bytes.size());
    std::vector<float> copies;
    for (int r = 0; r < runs + 3; ++r) {
      cudaEventRecord(start);
      cudaMemcpy(copy, device.back(), out.bytes.size(), cudaMemcpyDeviceToDevice);
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      cudaEventElapsedTime(&ms, start, stop);
      if (r >= 3) copies.push_back(ms);
    }
    std::sort(copies.begin(), copies.end());
    std::printf(
        "TIME %lldx%lld kernels_ms %.4f (min %.4f) copy_bound_ms %.4f ratio %.2f "
        "to_device_ms %.3f from_device_ms %.3f\n",
        static_cast<long long>(width), static_cast<long long>(height), times[times.size() / 2],
        times[0], copies[copies.size() / 2], times[times.size() / 2] / copies[copies.size() / 2],
        in_ms, out_ms);
    return 0;
  }
#endif
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
