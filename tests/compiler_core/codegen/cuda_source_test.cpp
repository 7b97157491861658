// GPU schedules and the CUDA back end (cuda_source in cpp_source.h), without a GPU:
// - every benchmark pipeline under a random GPU schedule (gpu_schedule.h), lowered and
//   run on the CPU by the JIT (GPU loops run serially there), equals the same pipeline
//   under its CPU hand schedule bit for bit: the lowering of GPU loop nests is right;
// - the CUDA back end writes kernels for each of them, or says which func it cannot place;
// - nvcc (Debian's CUDA 11.8, found by CMake) compiles the files to machine code for
//   sm_80 and sm_90, which runs ptxas: the device code is valid. The quick test takes a
//   few pipelines, the slow one (STIPPLE_CUDA_SOURCE_SLOW) all of them.
// Running the kernels needs a GPU: tests/gpu/device_check.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/cpp_source.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/gpu_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "tests/client/shell.h"
#include "tests/compiler_core/codegen/element_types_cases.h"
#include "tests/datasets/pipeline_test_support.h"

namespace stipple {
namespace {

namespace fs = std::filesystem;
using namespace stipple::testing;  // NOLINT: the pipeline test helpers

const char* const kPipelines[] = {
    "artistic_blur", "bilateral_filter", "bilateral_grid", "bilateral_grid_halide",
    "blur3x3",       "camera_pipe",      "demosaic",       "harris",
    "interpolate",   "local_laplacian",  "max_filter",     "median",
    "nl_means",      "two_pass_blur",    "unsharp",        "unsharp_mask"};

Schedule hand_schedule(const Pipeline& p, const std::string& name) {
  return load_schedule_file(source_path("datasets/pipelines/" + name + ".sched"), p);
}

// The GPU schedule, printed and checked as a user's file would be.
Schedule checked_gpu_schedule(const Pipeline& p, const Schedule& cpu, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string text = print_schedule(random_gpu_schedule(p, cpu, rng), p);
  return compile_schedule(text, "gpu.sched", p, ScheduleTarget::Gpu);
}

std::map<std::string, Buffer> inputs_of(const Pipeline& p, int w, int h, uint32_t seed) {
  std::map<std::string, Buffer> inputs;
  for (const InputDecl& in : p.inputs) {
    const bool two_d = in.dim_names.size() == 2;
    inputs.emplace(in.name,
                   to_buffer(random_image(w, h, two_d ? 1 : 3, seed++), in.type.code, two_d));
  }
  return inputs;
}

std::vector<int64_t> output_extents(const Pipeline& p, const LoweredFunction& f, int w, int h) {
  int dims = 0;
  for (const ExternalBuffer& b : f.buffers) {
    if (b.name == p.output.func) dims = b.dimensions;
  }
  std::vector<int64_t> e = {w, h, 3};
  e.resize(static_cast<size_t>(dims));
  return e;
}

/// The largest |want - got| / (1 + |want|) over the elements of two same-shape buffers.
double max_relative_error(const Buffer& want, const Buffer& got) {
  double worst = 0;
  for (int64_t e = 0; e < want.element_count(); ++e) {
    const double a = want.get_flat(e), b = got.get_flat(e);
    worst = std::max(worst, std::fabs(a - b) / (1 + std::fabs(a)));
  }
  return worst;
}

/// A lowered pipeline printed by both dialects, its function named `pipeline`.
struct PrintedTwice {
  std::string cu, cpp;
};
PrintedTwice print_cuda_and_cpp(const LoweredFunction& f) {
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  PrintedTwice printed;
  printed.cu = codegen::cuda_source(f, opt);
  opt.target = "";
  printed.cpp = codegen::cpp_source(f, opt);
  return printed;
}

TEST(GpuSchedules, RunOnTheCpuEqualTheHandScheduleOnEveryBenchmark) {
  auto jit = codegen::JitCompiler::create();
  const int w = 131, h = 87;  // odd sizes: every tile has a tail
  for (const char* name : kPipelines) {
    SCOPED_TRACE(name);
    const Pipeline p = load_benchmark_pipeline(name);
    const Schedule cpu = hand_schedule(p, name);
    const Schedule gpu = checked_gpu_schedule(p, cpu, 7);
    const LoweredFunction want_f = lower(p, cpu), got_f = lower(p, gpu);
    const auto inputs = inputs_of(p, w, h, 3);
    const std::vector<int64_t> extents = output_extents(p, want_f, w, h);
    const Buffer want = run_lowered(*jit->compile(want_f), want_f, p, inputs, {}, extents);
    const Buffer got = run_lowered(*jit->compile(got_f), got_f, p, inputs, {}, extents);
    ASSERT_EQ(want.size_in_bytes(), got.size_in_bytes());
    const std::string text = print_schedule(gpu, p);
    if (text.find("atomic()") == std::string::npos) {
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size_in_bytes()), 0) << "under\n" << text;
    } else {
      // An atomic update's float sums run in the order of its blocks and threads.
      EXPECT_LE(max_relative_error(want, got), 1e-5) << "under\n" << text;
    }
  }
}

// The atomic splat of bilateral_grid's hand GPU schedule, run on the CPU: the same as the
// CPU hand schedule within the rounding of its reordered sums.
TEST(GpuSchedules, TheAtomicSplatEqualsTheHandScheduleWithinRounding) {
  auto jit = codegen::JitCompiler::create();
  const Pipeline p = load_benchmark_pipeline("bilateral_grid");
  const Schedule gpu = load_schedule_file(
      source_path("datasets/pipelines/gpu/bilateral_grid.sched"), p, ScheduleTarget::Gpu);
  const LoweredFunction want_f = lower(p, hand_schedule(p, "bilateral_grid")),
                        got_f = lower(p, gpu);
  const auto inputs = inputs_of(p, 131, 87, 3);
  const std::vector<int64_t> extents = output_extents(p, want_f, 131, 87);
  const Buffer want = run_lowered(*jit->compile(want_f), want_f, p, inputs, {}, extents);
  const Buffer got = run_lowered(*jit->compile(got_f), got_f, p, inputs, {}, extents);
  EXPECT_LE(max_relative_error(want, got), 1e-5);
  EXPECT_GT(max_relative_error(want, got), 0) << "the pixels were summed in the same order";
}

// atomic() stores with atomicAdd in a kernel (threads may add to the same bin at once),
// and as a plain store where the loops run serially (the C++ back end).
// gpu_single_thread(): two_pass_blur's normalising sum (a 0-d func) computed once, in a
// kernel of one block of one thread, instead of at every use; on the CPU, equal to the
// hand schedule bit for bit.
TEST(CudaSource, AZeroDimensionalFuncRunsInOneThread) {
  const Pipeline p = load_benchmark_pipeline("two_pass_blur");
  const std::string text =
      "norm.compute_root().gpu_single_thread()\n"
      "k.compute_root().split(i, io, ii, 32).gpu_blocks(io).gpu_threads(ii)\n"
      "A.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8).gpu_blocks(c)\n"
      "out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8).gpu_blocks(c)\n";
  const Schedule gpu = compile_schedule(text, "gpu.sched", p, ScheduleTarget::Gpu);
  const LoweredFunction f = lower(p, gpu);
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  const std::string cu = codegen::cuda_source(f, opt);
  EXPECT_NE(cu.find("dim3(static_cast<unsigned>(1), 1, 1), dim3(1, 1, 1))(h, norm_buffer"),
            std::string::npos)
      << cu;
  auto jit = codegen::JitCompiler::create();
  const LoweredFunction want_f = lower(p, hand_schedule(p, "two_pass_blur"));
  const auto inputs = inputs_of(p, 131, 87, 3);
  const std::vector<int64_t> extents = output_extents(p, want_f, 131, 87);
  const Buffer want = run_lowered(*jit->compile(want_f), want_f, p, inputs, {}, extents);
  const Buffer got = run_lowered(*jit->compile(f), f, p, inputs, {}, extents);
  ASSERT_EQ(want.size_in_bytes(), got.size_in_bytes());
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size_in_bytes()), 0);
}

TEST(CudaSource, AtomicUpdatesAddWithAtomicAdd) {
  const Pipeline hist = compile_pipeline(
      "pipeline hist\ninput in : f32[x, y]\nfunc h(i) = 0.0\n"
      "h(clamp(i32(in(x, y) * 255.0), 0, 255)) += 1.0 for x in in, y in in\n"
      "func out(x, y) = in(x, y) * h(clamp(x, 0, 255))\noutput out\n",
      "hist.stp");
  const Schedule s = compile_schedule(
      "h.split(i, io, ii, 32).gpu_blocks(io).gpu_threads(ii)\n"
      "h.update(0).atomic().gpu_tile(x, y, xo, yo, xi, yi, 16, 16)\n"
      "out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)\n",
      "hist.sched", hist, ScheduleTarget::Gpu);
  const auto [cu, cpp] = print_cuda_and_cpp(lower(hist, s));
  EXPECT_NE(cu.find("atomicAdd(&h(h_s1_site_0), 1.0f);"), std::string::npos) << cu;
  EXPECT_EQ(cpp.find("atomicAdd"), std::string::npos);
  EXPECT_NE(cpp.find("h(h_s1_site_0) = h(h_s1_site_0) + 1.0f;"), std::string::npos) << cpp;
  // gpu_schedule_from gives such an update atomic() over its pixels.
  const std::string derived = print_schedule(gpu_schedule_from(hist, Schedule{}), hist);
  EXPECT_NE(derived.find("h.update(0).atomic().gpu_tile(x, y, xo, yo, xi, yi, 32, 8)"),
            std::string::npos)
      << derived;
}

TEST(CudaSource, FloatDivisionsByAConstantMultiplyByItsReciprocalAndCorrect) {
  const Pipeline p = compile_pipeline(
      "pipeline div\ninput in : f32[x]\n"
      "func out(x) = in(x) / 3.0 + in(x) / 2.0 + in(x) / 10.0 + in(x) / in(x + 1)\n"
      "  + f32(f64(in(x)) / 3.0)\n"
      "output out\n",
      "div.stp");
  const Schedule s = compile_schedule("out.split(x, xo, xi, 64).gpu_blocks(xo).gpu_threads(xi)\n",
                                      "div.sched", p, ScheduleTarget::Gpu);
  const auto [cu, cpp] = print_cuda_and_cpp(lower(p, s));
  // The f32 division by 3 only: by 2 nvcc multiplies by 0.5 itself (exact), by 10 (even)
  // the correction is not always IEEE's, by a value or in f64 there is no reciprocal.
  EXPECT_NE(cu.find("div_by_constant(in(out_s0_x), 3.0f, 0.33333334f)"), std::string::npos) << cu;
  EXPECT_EQ(cu.find(" / 3.0f"), std::string::npos) << cu;
  EXPECT_NE(cu.find(" / 2.0f"), std::string::npos) << cu;
  EXPECT_NE(cu.find(" / 10.0f"), std::string::npos) << cu;
  EXPECT_NE(cu.find(" / in(wrap_add(out_s0_x, 1))"), std::string::npos) << cu;
  EXPECT_NE(cu.find(" / 3.0)"), std::string::npos) << cu;
  // The C++ dialect divides (a CPU's divide is fast, and g++ gives IEEE's quotient).
  EXPECT_EQ(cpp.find("div_by_constant"), std::string::npos);
  EXPECT_NE(cpp.find(" / 3.0f"), std::string::npos) << cpp;
}

TEST(CudaSource, WritesKernelsOrSaysWhichFuncItCannotPlace) {
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  for (const char* name : kPipelines) {
    SCOPED_TRACE(name);
    const Pipeline p = load_benchmark_pipeline(name);
    const std::string cu =
        codegen::cuda_source(lower(p, checked_gpu_schedule(p, hand_schedule(p, name), 11)), opt);
    EXPECT_NE(cu.find("__global__ void pipeline_kernel0("), std::string::npos);
    EXPECT_NE(cu.find("int32_t pipeline_device(const stipple_buffer* buffers"), std::string::npos);
  }
  // A histogram scattered over the whole image has no pure loop to map to threads: its
  // update would stay on the host, which cannot read the input in device memory. The
  // checker for a GPU target says so at the line; the back end, given such code anyway,
  // refuses it too.
  // (bilateral_grid's splat has its channel as a pure loop, which a GPU schedule may map to
  // threads; this histogram has none.)
  const Pipeline grid = compile_pipeline(
      "pipeline hist\ninput in : f32[x, y]\nfunc h(i) = 0.0\n"
      "h(clamp(i32(in(x, y) * 255.0), 0, 255)) += 1.0 for x in in, y in in\n"
      "func out(x, y) = in(x, y) * h(clamp(x, 0, 255))\noutput out\n",
      "hist.stp");
  const std::string text =
      "h.split(i, io, ii, 32).gpu_blocks(io).gpu_threads(ii)\n"
      "out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8)\n";
  try {
    compile_schedule(text, "grid.sched", grid, ScheduleTarget::Gpu);
    ADD_FAILURE() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(e.message().find("'h.update(0)' has no pure loop free of dependences"),
              std::string::npos)
        << e.what();
  }
  try {
    codegen::cuda_source(lower(grid, compile_schedule(text, "grid.sched", grid)), opt);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("a read of input 'in' is outside every kernel"),
              std::string::npos)
        << e.what();
  }
  // The default schedule (nothing on the GPU) is refused the same way.
  const Pipeline blur = load_benchmark_pipeline("blur3x3");
  EXPECT_THROW(codegen::cuda_source(lower(blur, Schedule{}), opt), UserError);
}

// The kernels' index arithmetic is 32-bit and their buffers __restrict__, and the unrolled
// rows of a thread leave the loop at the tail guard (exit_guard.h): each measured on an
// H200 (bench/README.md), each gone if its printing were switched off.
TEST(CudaSource, KernelsIndexIn32BitsAndLeaveTheirRowLoopAtTheTail) {
  const Pipeline p = load_benchmark_pipeline("blur3x3");
  const Schedule gpu = load_schedule_file(source_path("datasets/pipelines/gpu/blur3x3.sched"), p,
                                          ScheduleTarget::Gpu);
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  const std::string cu = codegen::cuda_source(lower(p, gpu), opt);
  const std::string kernel = cu.substr(cu.find("__global__ void pipeline_kernel0("));
  EXPECT_NE(kernel.find("const int32_t in_extent[3] = {static_cast<int32_t>("), std::string::npos);
  EXPECT_NE(kernel.find("const float* __restrict__ const in_host"), std::string::npos);
  EXPECT_NE(cu.find("inline int32_t clamp_index(int32_t c, int32_t extent)"), std::string::npos);
  EXPECT_EQ(cu.find("int64_t clamp_index"), std::string::npos);
  const size_t unroll = kernel.find("STIPPLE_UNROLL\n");
  ASSERT_NE(unroll, std::string::npos);
  const size_t loop = kernel.find("for (int32_t", unroll);
  EXPECT_EQ(kernel.find_first_not_of(' ', unroll + 15), loop) << "the macro is the loop's";
  EXPECT_NE(kernel.find(")) break;  // false from here to the loop's end", loop),
            std::string::npos);
}

// A buffer of 2^31 elements or more is refused before anything runs or is copied; the
// generated fits_kernel_index is exact at the limit. Compiled as C++ against the tests'
// stand-in CUDA runtime (tests/gpu/cuda_emulation), with a main in the same file.
TEST(CudaSource, BuffersSpanningTwoToThe31ElementsAreRefused) {
  const Pipeline p = load_benchmark_pipeline("blur3x3");
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  const std::string cu = codegen::cuda_source(
      lower(p, load_schedule_file(source_path("datasets/pipelines/gpu/blur3x3.sched"), p,
                                  ScheduleTarget::Gpu)),
      opt);
  const fs::path dir =
      fs::temp_directory_path() / ("stipple-cuda-limit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "main.cpp") << cu << R"(
#include <cstdio>
stipple_buffer image(int64_t w, int64_t h, int64_t c) {
  stipple_buffer b = {};
  b.type = STIPPLE_TYPE_F32;
  b.dimensions = 3;
  b.dim[0] = {0, w, 1};
  b.dim[1] = {0, h, w};
  b.dim[2] = {0, c, w * h};
  return b;
}
int main() {
  // 65536 x 32768 x 1 spans 2^31 - 1 elements from the first to the last: the most there is.
  const bool at_limit = fits_kernel_index(image(65536, 32768, 1));
  const bool past_limit = fits_kernel_index(image(65536, 32769, 1));
  const bool planes_past = fits_kernel_index(image(1024, 1024, 2049));
  stipple_buffer buffers[2] = {image(65536, 32769, 1), image(65536, 32769, 1)};
  // No memory behind them: refused before any is touched, by both entry points.
  const int device = pipeline_device(buffers, nullptr);
  const int host = pipeline(buffers, nullptr);
  std::printf("%d %d %d %d %d\n", at_limit, past_limit, planes_past, device, host);
}
)";
  const testing_cli::Result build = testing_cli::shell(
      "c++ -std=c++17 -O1 -I " + source_path("tests/gpu/cuda_emulation") + " -x c++ " +
      (dir / "main.cpp").string() + " -o " + (dir / "main").string());
  ASSERT_EQ(build.exit_code, 0) << build.output;
  const testing_cli::Result run = testing_cli::shell((dir / "main").string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "1 0 0 4 4\n");
  fs::remove_all(dir);
}

// The printed division run: the CUDA file compiled as C++ against the stand-in runtime
// (tests/gpu/cuda_emulation), x / 3 for zeros, infinities, NaN, subnormals (3 * 2^-149 among
// them) and random bit patterns, bit for bit IEEE's quotient computed here.
TEST(CudaSource, APrintedDivisionByThreeIsIeeesQuotient) {
  const Pipeline p = compile_pipeline(
      "pipeline div3\ninput in : f32[x]\nfunc out(x) = in(x) / 3.0\noutput out\n", "div3.stp");
  const Schedule s = compile_schedule("out.split(x, xo, xi, 64).gpu_blocks(xo).gpu_threads(xi)\n",
                                      "div3.sched", p, ScheduleTarget::Gpu);
  const std::string cu = print_cuda_and_cpp(lower(p, s)).cu;
  ASSERT_NE(cu.find("div_by_constant("), std::string::npos);
  std::vector<uint32_t> dividends = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                                     0x7FC00000u, 0x00000001u, 0x00000003u, 0x80000003u,
                                     0x0000000Fu, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu,
                                     0x3F800000u, 0x40400000u, 0xC0400000u, 0x34000000u};
  std::mt19937 rng(31);
  while (dividends.size() < 4096) dividends.push_back(static_cast<uint32_t>(rng()));
  const fs::path dir =
      fs::temp_directory_path() / ("stipple-cuda-div-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream in(dir / "in.bin", std::ios::binary);
    in.write(reinterpret_cast<const char*>(dividends.data()),
             static_cast<std::streamsize>(dividends.size() * sizeof(uint32_t)));
  }
  std::ofstream(dir / "main.cpp") << cu << R"(
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
  std::vector<float> in(4096), out(4096);
  FILE* f = std::fopen(argv[1], "rb");
  if (f == nullptr || std::fread(in.data(), sizeof(float), in.size(), f) != in.size()) return 2;
  std::fclose(f);
  stipple_buffer buffers[2] = {};
  for (int i = 0; i < 2; ++i) {
    buffers[i].host = i == 0 ? in.data() : out.data();
    buffers[i].type = STIPPLE_TYPE_F32;
    buffers[i].dimensions = 1;
    buffers[i].dim[0] = {0, 4096, 1};
  }
  if (pipeline(buffers, nullptr) != 0) return 3;
  f = std::fopen(argv[2], "wb");
  std::fwrite(out.data(), sizeof(float), out.size(), f);
  std::fclose(f);
}
)";
  const testing_cli::Result build = testing_cli::shell(
      "c++ -std=c++17 -O1 -I " + source_path("tests/gpu/cuda_emulation") + " -x c++ " +
      (dir / "main.cpp").string() + " -o " + (dir / "main").string());
  ASSERT_EQ(build.exit_code, 0) << build.output;
  const testing_cli::Result run = testing_cli::shell(
      (dir / "main").string() + " " + (dir / "in.bin").string() + " " + (dir / "out.bin").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<uint32_t> quotients(dividends.size());
  std::ifstream(dir / "out.bin", std::ios::binary)
      .read(reinterpret_cast<char*>(quotients.data()),
            static_cast<std::streamsize>(quotients.size() * sizeof(uint32_t)));
  int wrong = 0;
  for (size_t i = 0; i < dividends.size(); ++i) {
    float x, got;
    std::memcpy(&x, &dividends[i], sizeof x);
    std::memcpy(&got, &quotients[i], sizeof got);
    const float want = x / 3.0f;
    uint32_t want_bits;
    std::memcpy(&want_bits, &want, sizeof want);
    if (quotients[i] != want_bits && !(std::isnan(got) && std::isnan(want)) && ++wrong <= 5) {
      ADD_FAILURE() << std::hexfloat << x << " / 3: " << got << ", IEEE " << want;
    }
  }
  EXPECT_EQ(wrong, 0);
  fs::remove_all(dir);
}

#ifdef STIPPLE_NVCC
// nvcc -cubin runs ptxas for the architecture: the kernels assemble for Ampere and Hopper.
TEST(CudaSource, NvccBuildsMachineCodeForSm80AndSm90) {
  const fs::path dir = fs::temp_directory_path() / ("stipple-cuda-" + std::to_string(::getpid()));
  fs::create_directories(dir);
#ifdef STIPPLE_CUDA_SOURCE_SLOW
  std::vector<std::string> names(std::begin(kPipelines), std::end(kPipelines));
#else
  std::vector<std::string> names = {"blur3x3", "camera_pipe", "median"};
#endif
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Pipeline p = load_benchmark_pipeline(name);
    const fs::path cu = dir / (name + ".cu");
    std::ofstream(cu) << codegen::cuda_source(
        lower(p, checked_gpu_schedule(p, hand_schedule(p, name), 5)), opt);
    for (const char* arch : {"sm_80", "sm_90"}) {
      const testing_cli::Result r = testing_cli::shell(
          std::string(STIPPLE_NVCC) + " -ccbin " + STIPPLE_NVCC_HOST_COMPILER +
          " -std=c++17 -O2 -fmad=false --expt-relaxed-constexpr -arch=" + arch + " -cubin " +
          cu.string() + " -o " + (dir / (name + "." + arch + ".cubin")).string());
      EXPECT_EQ(r.exit_code, 0) << arch << "\n" << r.output;
    }
  }
  fs::remove_all(dir);
}

// --emit ptx: the kernels alone, as PTX that ptxas assembles; --emit header for a GPU
// target: both entry points, the GPU codes, valid C99 (a C program takes their addresses).
TEST(CudaSource, EmitsPtxAndAHeaderForAGpuTarget) {
  ::setenv("STIPPLE_NVCC", STIPPLE_NVCC, 1);  // Debian's CUDA 11.8, as on a fresh machine
  const Pipeline p = load_benchmark_pipeline("blur3x3");
  const LoweredFunction f =
      lower(p, load_schedule_file(source_path("datasets/pipelines/gpu/blur3x3.sched"), p,
                                  ScheduleTarget::Gpu));
  codegen::AotOptions opt;
  opt.symbol = "blur";
  opt.target = "cuda-sm_80";
  opt.output_name = p.output.func;
  const codegen::AotOutputs out =
      codegen::emit_files(f, {codegen::EmitKind::Ptx, codegen::EmitKind::Header}, opt);
  const std::string& ptx = out.at(codegen::EmitKind::Ptx);
  EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry "), std::string::npos);
  EXPECT_NE(ptx.find("blur_kernel0"), std::string::npos);
  const fs::path dir = fs::temp_directory_path() / ("stipple-ptx-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "blur.ptx") << ptx;
  const std::string ptxas = fs::path(STIPPLE_NVCC).parent_path() / "ptxas";
  const testing_cli::Result assembled =
      testing_cli::shell(ptxas + " -arch=sm_80 " + (dir / "blur.ptx").string() + " -o " +
                         (dir / "blur.cubin").string());
  EXPECT_EQ(assembled.exit_code, 0) << assembled.output;

  const std::string& header = out.at(codegen::EmitKind::Header);
  EXPECT_NE(header.find("for target cuda-sm_80"), std::string::npos) << header;
  std::ofstream(dir / "blur.h") << header;
  std::ofstream(dir / "app.c") << R"(#include "blur.h"
int main(void) {
  int32_t (*host)(const stipple_buffer*, const double*) = blur;
  int32_t (*device)(const stipple_buffer*, const double*) = blur_device;
  return (host != 0) + (device != 0) + STIPPLE_ERROR_DEVICE + STIPPLE_ERROR_BUFFER_TOO_LARGE +
         BLUR_BUFFER_COUNT == 11 ? 0 : 1;
}
)";
  const testing_cli::Result c =
      testing_cli::shell("cc -std=c99 -Wall -Wextra -Werror -pedantic -c " +
                         (dir / "app.c").string() + " -o " + (dir / "app.o").string());
  EXPECT_EQ(c.exit_code, 0) << c.output;
  fs::remove_all(dir);
}

// i8, i16, u32 and f16 (uint16_t bits and the f16 helpers, on the device too) compile
// without a warning.
TEST(CudaSource, NvccBuildsTheNewElementTypes) {
  const fs::path dir =
      fs::temp_directory_path() / ("stipple-cuda-types-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_80";
  for (const element_types::Case& c : element_types::kCases) {
    SCOPED_TRACE(c.name);
    const Pipeline p = compile_pipeline(std::string(element_types::kInputs) + c.funcs, "t.stp");
    std::string sched = "out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n";
    if (p.find_func("t")) {
      sched +=
          "t.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n"
          "t.update(0).gpu_tile(x, y, xo, yo, xi, yi, 8, 8)\n";
    }
    const fs::path cu = dir / (std::string(c.name) + ".cu");
    std::ofstream(cu) << codegen::cuda_source(lower(p, compile_schedule(sched, "t.sched", p)), opt);
    const testing_cli::Result r = testing_cli::shell(
        std::string(STIPPLE_NVCC) + " -ccbin " + STIPPLE_NVCC_HOST_COMPILER +
        " -std=c++17 -O2 -fmad=false --expt-relaxed-constexpr -arch=sm_80 -cubin " + cu.string() +
        " -o " + (dir / (std::string(c.name) + ".cubin")).string() + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  }
  fs::remove_all(dir);
}
#else
TEST(CudaSource, NvccBuildsMachineCodeForSm80AndSm90) {
  GTEST_FAIL() << "CMake found no nvcc: deploy/install-deps.sh installs Debian's CUDA toolkit";
}
#endif

}  // namespace
}  // namespace stipple
