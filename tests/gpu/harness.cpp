// The GPU device check's harness (device_check.sh, README.md beside this). Built twice
// around one generated pipeline file, which it #includes as CASE_SOURCE and which exports
// `pipeline` (and, from the CUDA back end, `pipeline_device`):
//   - on a CPU host with the C++ source back end's file (c++ -x c++): `write` runs the
//     pipeline on the case's synthetic inputs and writes the reference output;
//   - on the GPU host with the CUDA back end's file (nvcc -x cu): `check` runs it and
//     compares with that reference (also on the CPU, against the stand-in CUDA runtime of
//     cuda_emulation/, for atomic updates, whose sums differ in order); `time` times
//     pipeline_device on device buffers with CUDA events (transfers and the device-to-device copy
//     bound timed apart).
//
//   harness CASE_FILE WIDTH HEIGHT write OUT.raw
//   harness CASE_FILE WIDTH HEIGHT check REF.raw
//   harness CASE_FILE WIDTH HEIGHT time RUNS
//
// With HALIDE_PEER_HEADER defined (nvcc only), the harness also links the Halide 14 peer
// that bench/halide_gpu_peer compiled for the pipeline (entry point halide_pipeline):
// `check` compares its output with the reference too, and `time` times it on the same
// device buffers, interleaved with Stipple's kernels, by the same CUDA events: the
// harness hands Halide's runtime the CUDA runtime's primary context, so Halide's kernels
// run on that context's default stream.
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

#if defined(__CUDACC__) && defined(HALIDE_PEER_HEADER)
#include <dlfcn.h>

#include HALIDE_PEER_HEADER
#endif

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

double value(const Array& a, int64_t i) {
  switch (a.type) {
    case STIPPLE_TYPE_F32: return reinterpret_cast<const float*>(a.bytes.data())[i];
    case STIPPLE_TYPE_F64: return reinterpret_cast<const double*>(a.bytes.data())[i];
    case STIPPLE_TYPE_U16: return reinterpret_cast<const uint16_t*>(a.bytes.data())[i];
    case STIPPLE_TYPE_I32: return reinterpret_cast<const int32_t*>(a.bytes.data())[i];
    default: return a.bytes[i];
  }
}

/// Prints how `out` compares with the reference (PREFIX, then PASS or FAIL, the largest
/// error, the share of values equal bit for bit) and whether all are within tolerance.
/// Floats: the CUDA math library's log, pow, sin and cos may differ from glibc's by an
/// ulp or two, so a relative tolerance; integers exactly, or by 1 where a float that
/// close rounded the other way.
bool compare_with_reference(const Array& out, const Array& ref, const char* prefix) {
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
  std::printf("%s%s max_abs_err %.3g exact %.4f%% over_tolerance %lld of %lld\n", prefix,
              bad == 0 ? "PASS" : "FAIL", max_err, 100.0 * exact / count,
              static_cast<long long>(bad), static_cast<long long>(count));
  return bad == 0;
}

#ifdef __CUDACC__
/// Every array on the device (inputs copied there); false if the GPU says no.
bool to_device(const std::vector<Array>& arrays, std::vector<void*>& device) {
  device.assign(arrays.size(), nullptr);
  for (size_t k = 0; k < arrays.size(); ++k) {
    if (cudaMalloc(&device[k], arrays[k].bytes.size()) != cudaSuccess) return false;
    if (k + 1 < arrays.size()) {
      cudaMemcpy(device[k], arrays[k].bytes.data(), arrays[k].bytes.size(), cudaMemcpyHostToDevice);
    }
  }
  return true;
}
#endif

#if defined(__CUDACC__) && defined(HALIDE_PEER_HEADER)
// The Halide peer. Halide's CUDA runtime finds the driver's symbols in the process (the
// driver is opened here with RTLD_GLOBAL: a GPU host may lack the unversioned
// libcuda.so that Halide's runtime would open) and takes the context it is given.
void* primary_context = nullptr;

int acquire_primary_context(void*, void** ctx, bool) {
  *ctx = primary_context;
  return 0;
}
int release_primary_context(void*) { return 0; }

// Halide's default error handler aborts; this one reports, and the failing call returns
// its error code.
void report_halide_error(void*, const char* message) {
  std::printf("HALIDE error: %s | ", message);
}

bool init_halide_peer() {
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
    std::printf("FAIL halide peer: %s\n", dlerror());
    return false;
  }
  using GetCurrent = int (*)(void**);
  auto get_current = reinterpret_cast<GetCurrent>(dlsym(RTLD_DEFAULT, "cuCtxGetCurrent"));
  cudaFree(nullptr);  // makes the runtime's primary context current on this thread
  if (!get_current || get_current(&primary_context) != 0 || !primary_context) {
    std::printf("FAIL halide peer: no current CUDA context\n");
    return false;
  }
  halide_set_error_handler(report_halide_error);
  halide_set_cuda_acquire_context(acquire_primary_context);
  halide_set_cuda_release_context(release_primary_context);
  return true;
}

halide_type_t halide_type_of(int32_t type) {
  switch (type) {
    case STIPPLE_TYPE_F32: return halide_type_t(halide_type_float, 32);
    case STIPPLE_TYPE_F64: return halide_type_t(halide_type_float, 64);
    case STIPPLE_TYPE_U16: return halide_type_t(halide_type_uint, 16);
    case STIPPLE_TYPE_I32: return halide_type_t(halide_type_int, 32);
    default: return halide_type_t(halide_type_uint, 8);
  }
}

/// The pipeline's arrays as Halide buffers over device memory (the same memory Stipple's
/// kernels use), and the arguments of halide_pipeline_argv in the order its metadata
/// gives: input buffers in order, the output buffer, scalars at their defaults (the
/// Halide versions' params default to the .stp's).
struct HalideCall {
  std::vector<std::vector<halide_dimension_t>> shapes;
  std::vector<halide_buffer_t> buffers;
  std::vector<void*> args;

  bool bind(const std::vector<Array>& arrays, const std::vector<void*>& device) {
    shapes.resize(arrays.size());
    buffers.assign(arrays.size(), halide_buffer_t{});
    for (size_t k = 0; k < arrays.size(); ++k) {
      int32_t stride = 1;
      for (int64_t e : arrays[k].extents) {
        shapes[k].push_back(halide_dimension_t(0, static_cast<int32_t>(e), stride));
        stride *= static_cast<int32_t>(e);
      }
      halide_buffer_t& b = buffers[k];
      b.type = halide_type_of(arrays[k].type);
      b.dimensions = static_cast<int32_t>(shapes[k].size());
      b.dim = shapes[k].data();
      if (halide_cuda_wrap_device_ptr(nullptr, &b, reinterpret_cast<uint64_t>(device[k])) != 0) {
        std::printf("FAIL halide peer: halide_cuda_wrap_device_ptr\n");
        return false;
      }
    }
    const halide_filter_metadata_t* md = halide_pipeline_metadata();
    size_t next_input = 0;
    for (int32_t a = 0; a < md->num_arguments; ++a) {
      const halide_filter_argument_t& arg = md->arguments[a];
      if (arg.kind == halide_argument_kind_input_buffer) {
        if (next_input + 1 >= buffers.size()) {
          std::printf("FAIL halide peer: more input buffers than the case has\n");
          return false;
        }
        args.push_back(&buffers[next_input++]);
      } else if (arg.kind == halide_argument_kind_output_buffer) {
        args.push_back(&buffers.back());
      } else if (arg.scalar_def) {
        args.push_back(const_cast<halide_scalar_value_t*>(arg.scalar_def));
      } else {
        std::printf("FAIL halide peer: scalar %s has no default\n", arg.name);
        return false;
      }
    }
    return true;
  }
  int run() { return halide_pipeline_argv(args.data()); }
};

#endif

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
  if (mode == "check") {
    Array ref = out;
    std::ifstream f(arg, std::ios::binary);
    f.read(reinterpret_cast<char*>(ref.bytes.data()),
           static_cast<std::streamsize>(ref.bytes.size()));
    if (!f) {
      std::printf("FAIL no reference %s\n", arg.c_str());
      return 1;
    }
    const int32_t rc = pipeline(descs.data(), params.data());
    if (rc != 0) {
      std::printf("FAIL returned %d\n", rc);
      return 1;
    }
    const bool passed = compare_with_reference(out, ref, "");
#if defined(__CUDACC__) && defined(HALIDE_PEER_HEADER)
    // Halide's output, for the record: its arithmetic is not Stipple's (FMAs, its own exp
    // and pow; halide_bench's tolerance_for says by how much on the CPU), so it does not
    // decide the check.
    std::vector<void*> device;
    HalideCall call;
    if (!init_halide_peer() || !to_device(arrays, device) || !call.bind(arrays, device)) return 1;
    const int hrc = call.run();
    cudaMemcpy(out.bytes.data(), device.back(), out.bytes.size(), cudaMemcpyDeviceToHost);
    if (hrc != 0) {
      std::printf("HALIDE returned %d\n", hrc);
    } else {
      compare_with_reference(out, ref, "HALIDE ");
    }
#endif
    return passed ? 0 : 1;
  }
#ifdef __CUDACC__
  if (mode == "time") {
    const int runs = std::atoi(arg.c_str());
    std::vector<void*> device;
    std::vector<stipple_buffer> ddescs = descs;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float in_ms = 0, out_ms = 0, ms = 0;
    cudaEventRecord(start);
    if (!to_device(arrays, device)) {
      std::printf("FAIL cudaMalloc\n");
      return 1;
    }
    for (size_t k = 0; k < arrays.size(); ++k) ddescs[k].host = device[k];
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&in_ms, start, stop);
    // One run of `call` between CUDA events on the default stream: its milliseconds, or
    // -1 where it failed.
    auto timed = [&](auto&& call) -> float {
      cudaEventRecord(start);
      const int rc = call();
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      if (rc != 0) return -1;
      float elapsed = 0;
      cudaEventElapsedTime(&elapsed, start, stop);
      return elapsed;
    };
#ifdef HALIDE_PEER_HEADER
    HalideCall halide;
    if (!init_halide_peer() || !halide.bind(arrays, device)) return 1;
#endif
    // Stipple's kernels and the peer's alternate, three warm-ups each (the peer's first
    // run loads its module: the driver compiles its PTX then).
    std::vector<float> times, halide_times;
    for (int r = 0; r < runs + 3; ++r) {
      ms = timed([&] { return pipeline_device(ddescs.data(), params.data()); });
      if (ms < 0) {
        std::printf("FAIL returned an error\n");
        return 1;
      }
      if (r >= 3) times.push_back(ms);
#ifdef HALIDE_PEER_HEADER
      ms = timed([&] { return halide.run(); });
      if (ms < 0) {
        std::printf("FAIL the Halide peer returned an error\n");
        return 1;
      }
      if (r >= 3) halide_times.push_back(ms);
#endif
    }
    std::sort(times.begin(), times.end());
    std::sort(halide_times.begin(), halide_times.end());
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
      ms = timed([&] {
        return static_cast<int>(
            cudaMemcpy(copy, device.back(), out.bytes.size(), cudaMemcpyDeviceToDevice));
      });
      if (r >= 3) copies.push_back(ms);
    }
    std::sort(copies.begin(), copies.end());
    const float median = times[times.size() / 2], bound = copies[copies.size() / 2];
    std::printf(
        "TIME %lldx%lld kernels_ms %.4f (min %.4f) copy_bound_ms %.4f ratio %.2f "
        "to_device_ms %.3f from_device_ms %.3f",
        static_cast<long long>(width), static_cast<long long>(height), median, times[0], bound,
        median / bound, in_ms, out_ms);
    if (!halide_times.empty()) {
      const float peer = halide_times[halide_times.size() / 2];
      std::printf(" halide_ms %.4f (min %.4f) halide_ratio %.2f stipple_over_halide %.2f", peer,
                  halide_times[0], peer / bound, median / peer);
    }
    std::printf("\n");
    return 0;
  }
#endif
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
