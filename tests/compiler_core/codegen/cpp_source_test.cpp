// The C++ source back end (compiler_core/codegen/cpp_source.h) against the JIT: the
// generated file is compiled by the system C++ compiler (the one CMake found, -O2; for the
// pipelines with -Wall -Wextra -Werror; always with the header `--emit header` writes
// force-included, so the two must agree), linked with a plain C program that knows only
// that header (cpp_source_driver.c), run on a real photo, and its output compared with the
// JIT's output for the same lowered function, descriptors and params.
//
// - Random expressions (tests/compiler_core/codegen/random_expr.h: every operator, cast,
//   intrinsic, boundary condition and reduction op, Let, select, && and ||) under serial,
//   vectorised, guarded-split and parallel loop nests: bit for bit, except expressions
//   calling exp/log/pow/sin/cos of the C library, which may differ by a few ulps (both
//   sides call the same libm, but g++ folds calls on constants with the correctly rounded
//   MPFR and LLVM with the host's libm).
// - The benchmark pipelines (datasets/pipelines) under their hand schedules and under random
//   legal schedules (random_schedule.h, as the lowering property test draws them):
//   integer outputs bit for bit, float outputs within kFloatUlps, which is 0 (see there
//   for why that holds).
//
// The quick tests take a few pipelines; the slow variant (STIPPLE_CPP_SOURCE_SLOW, label
// `slow`) all sixteen, three random schedules each and more expression batches.
// STIPPLE_CPP_SOURCE_KEEP=1 keeps the generated files (their folder is printed);
// STIPPLE_CPP_SOURCE_CXX=clang++ compiles them with another C++ compiler.
#include "compiler_core/codegen/cpp_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "tests/client/shell.h"
#include "tests/compiler_core/codegen/element_types_cases.h"
#include "tests/compiler_core/codegen/random_expr.h"
#include "tests/compiler_core/lowering/lowering_harness.h"

namespace stipple {
namespace {

namespace fs = std::filesystem;
using codegen::AotOptions;
using codegen::BufferDescriptor;
using testing_cli::Result;
using testing_cli::shell;

// The float tolerance of the pipelines' outputs, in units in the last place: none. Measured
// over every benchmark pipeline under its hand schedule and random schedules (the slow
// variant), with g++ 12 and clang++ 14 at -O2: 0 ulps everywhere. It holds because the LLVM
// code itself is exact IEEE arithmetic in program order (no fast-math flags, no FMA
// contraction, reductions folded in iteration order, codegen README), vector code computes
// each lane as the scalar loop, and the generated C++ performs the same operations in the
// same types and order: g++ in ISO mode (-std=c++17) does not contract a * b + c, Clang is
// told not to by `#pragma STDC FP_CONTRACT OFF`, neither reassociates without -ffast-math,
// Stipple's f32 exp uses explicit std::fma (one rounding, like the hardware FMA the JIT
// emits), and libm calls go to the same glibc functions (logf, powf, ...) at run time. So a
// difference of even one ulp means a real semantic difference and fails the test.
constexpr int64_t kFloatUlps = 0;
// The random expressions that call exp/log/pow/sin/cos may differ by this much (the others
// must be bit-exact): those calls often take constant arguments, which g++ folds at compile
// time with MPFR (correctly rounded) and LLVM with the host's libm, which is not correctly
// rounded for every input. Measured: 0 so far.
constexpr int64_t kLibmUlps = 4;

constexpr const char* kSymbol = "stipple_cpp_test";

/// The C++ compiler: CMake's, or STIPPLE_CPP_SOURCE_CXX (to check another, e.g. clang++).
std::string cxx() {
  const char* other = std::getenv("STIPPLE_CPP_SOURCE_CXX");
  return other ? other : STIPPLE_CXX_COMPILER;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Compiles generated C++ with the system compiler and runs it through the driver; also
/// runs the JIT on the same function. One per test; thread-safe.
class Harness {
 public:
  Harness() : jit_(codegen::JitCompiler::create()) {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("stipple-cpp-source-" + std::to_string(::getpid()) + "-" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The driver is plain C against the header of a function named kSymbol; every such
    // header declares the same function, so one object serves every pipeline.
    LoweredFunction none;
    none.body = Evaluate::make(IntImm::make(Int32(), 0));
    std::ofstream(path("pipeline.h")) << codegen::c_header(none, options("none"));
    Result cc = shell(std::string(STIPPLE_C_COMPILER) +
                      " -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I" + dir_.string() + " -c " +
                      testing_cli::source("tests/compiler_core/codegen/cpp_source_driver.c") +
                      " -o " + path("driver.o"));
    EXPECT_EQ(cc.exit_code, 0) << cc.output;
  }
  ~Harness() {
    if (std::getenv("STIPPLE_CPP_SOURCE_KEEP")) {
      std::printf("generated files kept in %s\n", dir_.string().c_str());
    } else {
      fs::remove_all(dir_);
    }
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static AotOptions options(const std::string& label) {
    AotOptions opt;
    opt.symbol = kSymbol;
    opt.pipeline_file = label;
    return opt;
  }

  /// What one run of both back ends gave.
  struct Run {
    std::string error;     // "" when both ran and returned STIPPLE_OK
    bool jit_oom = false;  // the JIT's code returned kErrorOutOfMemory (the run is skipped)
    std::vector<Buffer> jit, cpp;
    std::string source;    // the generated file's path
    double compile_s = 0;  // in the C++ compiler
  };

  /// Runs `f` on `inputs` (in f.inputs' order) into outputs shaped like `outputs` (one per
  /// f.buffers, mins included), params as given, with both back ends. `strict`: the file
  /// must compile without warnings under -Wall -Wextra (random expressions are not held to
  /// that: `u16(y) > 65535` is a tautology the compiler rightly points out).
  Run run(const LoweredFunction& f, const std::string& label, const std::vector<Buffer>& inputs,
          const std::vector<Buffer>& outputs, const std::vector<double>& params, bool strict,
          const std::string& output_name = "") {
    Run r;
    const std::string base = path("p" + std::to_string(next_++));
    AotOptions opt = options(label);
    opt.output_name = output_name;
    r.source = base + ".cpp";
    std::ofstream(base + ".cpp") << codegen::cpp_source(f, opt);
    std::ofstream(base + ".h") << codegen::c_header(f, opt);

    // The JIT's output.
    std::vector<BufferDescriptor> descs;
    for (const Buffer& in : inputs) descs.push_back(codegen::describe(in));
    for (const Buffer& o : outputs) {
      std::vector<int64_t> mins, extents;
      for (int d = 0; d < o.dimensions(); ++d) {
        mins.push_back(o.min(d));
        extents.push_back(o.extent(d));
      }
      r.jit.emplace_back(o.type(), mins, extents);
      r.cpp.emplace_back(o.type(), mins, extents);
    }
    for (Buffer& o : r.jit) descs.push_back(codegen::describe(o));
    auto fn = jit_->compile(f);
    const int32_t jit_rc = (*fn)(descs.data(), params.data());
    if (jit_rc == codegen::kErrorOutOfMemory) {
      r.jit_oom = true;
      return r;
    }
    if (jit_rc != 0) {
      r.error = label + ": the JIT's code returned " + std::to_string(jit_rc);
      return r;
    }

    // The job file: every descriptor, input data, params.
    {
      std::ofstream job(base + ".job", std::ios::binary);
      auto put = [&](const void* p, size_t n) { job.write(static_cast<const char*>(p), n); };
      const int32_t counts[2] = {static_cast<int32_t>(descs.size()),
                                 static_cast<int32_t>(params.size())};
      put(counts, sizeof counts);
      for (size_t k = 0; k < descs.size(); ++k) {
        const bool is_output = k >= inputs.size();
        const Buffer& b = is_output ? r.cpp[k - inputs.size()] : inputs[k];
        const int32_t header[4] = {descs[k].type, descs[k].dimensions, is_output ? 1 : 0, 0};
        int64_t shape[3 * codegen::kMaxBufferDims] = {};
        for (int d = 0; d < descs[k].dimensions; ++d) {
          shape[d] = descs[k].dim[d].min;
          shape[codegen::kMaxBufferDims + d] = descs[k].dim[d].extent;
          shape[2 * codegen::kMaxBufferDims + d] = descs[k].dim[d].stride;
        }
        const int64_t size = static_cast<int64_t>(b.size_in_bytes());
        put(header, sizeof header);
        put(shape, sizeof shape);
        put(&size, sizeof size);
        if (!is_output) put(b.data(), b.size_in_bytes());
      }
      put(params.data(), params.size() * sizeof(double));
    }

    // Compile (the header force-included: it must agree with the file), link, run.
    const auto t0 = std::chrono::steady_clock::now();
    Result build =
        shell(cxx() + " -O2 -std=c++17 -pthread" + (strict ? " -Wall -Wextra -Werror" : "") +
              " -include " + base + ".h " + base + ".cpp " + path("driver.o") + " -o " + base);
    r.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (build.exit_code != 0) {
      r.error = label + ": " + base + ".cpp does not compile:\n" + build.output.substr(0, 4000);
      return r;
    }
    Result ran = shell(base + " " + base + ".job " + base + ".out");
    if (ran.exit_code != 0 || ran.output != "rc=0\n") {
      r.error = label + ": the compiled C++ returned " + ran.output + " (exit " +
                std::to_string(ran.exit_code) + ")";
      return r;
    }
    const std::string got = read_file(base + ".out");
    size_t at = 0;
    for (Buffer& o : r.cpp) {
      if (at + o.size_in_bytes() > got.size()) {
        r.error = label + ": the driver wrote " + std::to_string(got.size()) + " bytes";
        return r;
      }
      std::memcpy(o.data(), got.data() + at, o.size_in_bytes());
      at += o.size_in_bytes();
    }
    return r;
  }

  codegen::JitCompiler& jit() { return *jit_; }

 private:
  fs::path dir_;
  std::unique_ptr<codegen::JitCompiler> jit_;
  std::atomic<int> next_{0};
};

/// Compares two outputs: integers bit for bit, floats within `max_ulps` (NaNs equal to
/// NaNs). "" when they agree; `worst` receives the largest float difference in ulps.
std::string compare_outputs(const Buffer& jit, const Buffer& cpp, int64_t max_ulps,
                            int64_t* worst) {
  const ScalarType t = jit.type();
  const bool fl = Type(t).is_float();
  for (int64_t i = 0; i < jit.element_count(); ++i) {
    if (testing_codegen::same_value(t, jit, cpp, i)) continue;
    const double a = jit.get_flat(i), b = cpp.get_flat(i);
    if (fl) {
      const int64_t u = testing_codegen::ulps(t, a, b);
      *worst = std::max(*worst, u);
      if (u <= max_ulps) continue;
    }
    std::ostringstream os;
    os.precision(17);
    os << "element " << i << " (";
    int64_t r = i;
    for (int d = 0; d < jit.dimensions(); ++d) {
      os << (d ? ", " : "") << jit.min(d) + r % jit.extent(d);
      r /= jit.extent(d);
    }
    os << "): JIT " << a << ", C++ " << b;
    return os.str();
  }
  return "";
}

// ---------------------------------------------------------------------------------------
// Random expressions

using testing_codegen::GridLoops;
using testing_codegen::kHeight;
using testing_codegen::kMinX;
using testing_codegen::kMinY;
using testing_codegen::kWidth;

/// The loop shapes the batches cycle through: serial, vectorized with and without a tail,
/// and parallel rows (the generated file's std::thread parallel-for).
constexpr GridLoops kExpressionLoops[] = {GridLoops::Serial, GridLoops::VectorX,
                                          GridLoops::VectorXTail, GridLoops::ParallelY};

void run_expression_batches(int batches, uint32_t seed) {
  using namespace irb;
  Harness h;
  constexpr int kPerBatch = 50;
  std::mt19937 rng(seed);
  int compared = 0, libm_exprs = 0, libm_differing = 0;
  int64_t worst_libm = 0;
  double compile_s = 0;
  for (int batch = 0; batch < batches; ++batch) {
    BoundaryKind kinds[3];
    for (auto& k : kinds) k = static_cast<BoundaryKind>(rng() % 3);
    LoweredFunction f;
    f.name = "batch";
    f.inputs = {make_input("img", Float32(), {"x", "y"}, kinds[0], 0.25),
                make_input("a", UInt8(), {"x"}, kinds[1], 9),
                make_input("one", UInt16(), {"x"}, kinds[2], 77)};
    f.params = {{"p", Float32(), 1.75}, {"k", Int32(), -3}};
    const std::vector<Buffer> inputs = {random_buffer(ScalarType::Float32, {5, 4}, -4, 4, rng()),
                                        random_buffer(ScalarType::UInt8, {3}, 0, 255.99, rng()),
                                        random_buffer(ScalarType::UInt16, {1}, 0, 65535.99, rng())};
    std::vector<Expr> exprs;
    std::vector<bool> uses_libm;
    std::vector<Stmt> nests;
    std::vector<Buffer> outputs;
    for (int i = 0; i < kPerBatch; ++i) {
      testing_codegen::ExprGen g(static_cast<uint32_t>(rng()));
      const Type t = testing_codegen::kStored[rng() % std::size(testing_codegen::kStored)];
      exprs.push_back(g.gen(t, 4));
      uses_libm.push_back(g.transcendental);
      const std::string name = "out" + std::to_string(i);
      f.buffers.push_back(ExternalBuffer{name, t, 2});
      nests.push_back(testing_codegen::grid_loops(
          kExpressionLoops[batch % 4], Provide::make(name, exprs.back(), {var("x"), var("y")})));
      outputs.emplace_back(t.code, std::vector<int64_t>{kMinX, kMinY},
                           std::vector<int64_t>{kWidth, kHeight});
    }
    f.body = Block::make(nests);
    if (batch % 4 == 3) {
      // One parallel loop over y around every expression's x loop (the JIT captures all in
      // scope per parallel closure: fifty closures would take it half a minute).
      std::vector<Stmt> rows;
      for (const Stmt& n : nests) rows.push_back(n.as<For>()->body);
      f.body = For::make("y", i32(kMinY), i32(kHeight), ForType::Parallel, Block::make(rows));
    }
    Harness::Run r = h.run(f, "batch " + std::to_string(batch), inputs, outputs, {1.75, -3},
                           /*strict=*/false);
    ASSERT_EQ(r.error, "") << r.source;
    ASSERT_FALSE(r.jit_oom);
    compile_s += r.compile_s;
    for (int i = 0; i < kPerBatch; ++i) {
      ++compared;
      libm_exprs += uses_libm[i];
      int64_t worst = 0;
      const std::string diff =
          compare_outputs(r.jit[i], r.cpp[i], uses_libm[i] ? kLibmUlps : 0, &worst);
      if (worst > 0) ++libm_differing;
      worst_libm = std::max(worst_libm, worst);
      EXPECT_EQ(diff, "") << "batch " << batch << " expression " << i << " in " << r.source << ":\n"
                          << nests[i];
    }
  }
  std::printf(
      "compared %d expressions (%d calling libm; %d of those differ somewhere, by at most %lld "
      "ulps) at %d points each; %.1f s compiling C++\n",
      compared, libm_exprs, libm_differing, static_cast<long long>(worst_libm), kWidth * kHeight,
      compile_s);
  EXPECT_EQ(compared, batches * kPerBatch);
}

// ---------------------------------------------------------------------------------------
// Benchmark pipelines

/// A pipeline with inputs from a real photo: the 256x192 photo of a footballer (its top-left
/// width x height corner), gray inputs from its green channel.
struct PhotoCase {
  PhotoCase(const std::string& stp, int64_t width, int64_t height)
      : pipeline(load_pipeline_file(stp)) {
    const Buffer photo =
        read_image(std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/people-256x192.png");
    const Buffer rgb = testing_lowering::crop_photo(photo, width, height);
    Buffer gray(rgb.type(), {width, height});
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        const int64_t at[] = {x, y, 1}, to[] = {x, y};
        gray.set(to, rgb.get(at));
      }
    }
    for (const InputDecl& in : pipeline.inputs) {
      images[in.name] = photo_to_input(in.dim_names.size() == 2 ? gray : rgb, in, "people");
      inputs.push_back(images[in.name]);
    }
    extents = output_extents(pipeline, images);
    for (const ParamDecl& p : pipeline.params) params.push_back(p.default_value);
  }

  /// The output box: the whole output, or without `inset` columns and rows at each side
  /// of x and y (a box whose mins are not 0).
  Buffer output(int64_t inset) const {
    std::vector<int64_t> mins(extents.size(), 0), ext = extents;
    for (size_t d = 0; d < 2 && d < ext.size(); ++d) {
      mins[d] = inset;
      ext[d] = std::max<int64_t>(extents[d] - 2 * inset, 1);
    }
    return Buffer(pipeline.find_func(pipeline.output.func)->type.code, mins, ext);
  }

  Pipeline pipeline;
  InputImages images;
  std::vector<Buffer> inputs;
  std::vector<int64_t> extents;
  std::vector<double> params;
};

struct SweepStats {
  std::mutex mutex;
  int compared = 0, skipped = 0, float_outputs = 0;
  int64_t worst_ulps = 0;
  double compile_s = 0;
};

/// Lowers `c` under `s` and compares the two back ends; failures are test failures.
void compare_schedule(Harness& h, const PhotoCase& c, const Schedule& s, const std::string& label,
                      int64_t inset, SweepStats& stats) {
  const std::string text = print_schedule(s, c.pipeline);
  LoweredFunction f;
  try {
    check_schedule(s, c.pipeline);
    f = lower(c.pipeline, s);
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << " does not lower: " << e.what() << "\n" << text;
    return;
  }
  Harness::Run r = h.run(f, label, c.inputs, {c.output(inset)}, c.params, /*strict=*/true,
                         c.pipeline.output.func);
  std::lock_guard<std::mutex> lock(stats.mutex);
  stats.compile_s += r.compile_s;
  if (r.jit_oom) {
    ++stats.skipped;  // as the lowering property test: a failed allocation is not compared
    return;
  }
  if (!r.error.empty()) {
    ADD_FAILURE() << r.error << "\nschedule:\n" << text;
    return;
  }
  ++stats.compared;
  int64_t worst = 0;
  const std::string diff = compare_outputs(r.jit[0], r.cpp[0], kFloatUlps, &worst);
  if (Type(r.jit[0].type()).is_float()) ++stats.float_outputs;
  stats.worst_ulps = std::max(stats.worst_ulps, worst);
  EXPECT_EQ(diff, "") << label << " (" << r.source << ") under schedule:\n" << text;
}

/// The pipelines whose file name contains one of `only` (all when empty): the hand
/// schedule on the whole photo corner (width x height), then `random` random legal
/// schedules on a 24x18 corner with an output box inset by 2, over two threads.
void run_pipelines(const std::vector<std::string>& only, int64_t width, int64_t height, int random,
                   uint64_t seed) {
  Harness h;
  std::vector<std::string> paths;
  for (const std::string& p : testing_lowering::benchmark_paths()) {
    bool take = only.empty();
    for (const std::string& o : only) take = take || fs::path(p).stem() == o;
    if (take) paths.push_back(p);
  }
  ASSERT_EQ(paths.size(), only.empty() ? 16u : only.size());
  SweepStats stats;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < paths.size(); k = next++) {
      const auto start = std::chrono::steady_clock::now();
      const std::string name = fs::path(paths[k]).stem().string();
      PhotoCase hand(paths[k], width, height);
      const std::string sched = paths[k].substr(0, paths[k].size() - 4) + ".sched";
      compare_schedule(h, hand, load_schedule_file(sched, hand.pipeline), name + " (hand)", 0,
                       stats);
      if (random > 0) {
        PhotoCase small(paths[k], 24, 18);
        std::mt19937_64 rng(seed + k);
        for (int i = 0; i < random; ++i) {
          compare_schedule(h, small, random_schedule(small.pipeline, rng),
                           name + " (random " + std::to_string(i) + ")", 2, stats);
        }
      }
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard<std::mutex> lock(stats.mutex);
      std::printf("%-24s %d schedule(s) in %.1f s\n", name.c_str(), 1 + random, secs);
      std::fflush(stdout);
    }
  };
  std::thread helper(worker);
  worker();
  helper.join();
  std::printf(
      "%d schedules compared (%d with float outputs, largest difference %lld ulps; %d skipped "
      "for a failed allocation); %.1f s compiling C++\n",
      stats.compared, stats.float_outputs, static_cast<long long>(stats.worst_ulps), stats.skipped,
      stats.compile_s);
  EXPECT_EQ(stats.compared + stats.skipped, static_cast<int>(paths.size()) * (1 + random));
  EXPECT_EQ(stats.skipped, 0);
}

#ifdef STIPPLE_CPP_SOURCE_SLOW

// The full sweep (label `slow`): every benchmark pipeline under its hand schedule on the
// whole 256x192 photo and under three random legal schedules; 30 expression batches.
TEST(CppSourceSlow, EveryPipelineHandAndRandomSchedulesMatchTheJit) {
  run_pipelines({}, 256, 192, 3, 20261123);
}

TEST(CppSourceSlow, ThirtyRandomExpressionBatchesMatchTheJit) { run_expression_batches(30, 977); }

#else

// Two batches of fifty expressions per loop nest.
TEST(CppSource, RandomExpressionsMatchTheJitBitForBit) { run_expression_batches(8, 20261123); }

// Five pipelines under their hand schedules on the 256x192 photo and one random schedule
// each: float outputs with f32 exp and parallel tiles (two_pass_blur; 256x192 leaves partial
// tiles), a median, integer outputs from a u16 input with a mirror boundary (camera_pipe:
// u8), a 2-D mirrored input (demosaic), and a grid of histogram-like updates
// (bilateral_grid).
// tan, atan2, hypot, tanh and fma, in f32 and f64, and Lets of f32, f64 and bool values,
// under serial and vectorised loops: the generated C++ calls the same C library functions
// (std::fma for fma) as the JIT, on values that are not constants, so bit for bit.
TEST(CppSource, NewIntrinsicsAndLetsMatchTheJitBitForBit) {
  using namespace irb;
  Harness h;
  LoweredFunction f;
  f.name = "intrinsics";
  f.inputs = {make_input("img", Float32(), {"x", "y"}, BoundaryKind::Mirror, 0)};
  const std::vector<Buffer> inputs = {random_buffer(ScalarType::Float32, {5, 4}, -30, 30, 77)};
  Expr a = input(Float32(), "img", {var("x"), var("y")});
  Expr b = input(Float32(), "img", {Add::make(var("x"), i32(2)), Sub::make(var("y"), i32(1))});
  std::vector<Expr> exprs;
  for (Type t : {Float32(), Float64()}) {
    Expr x = t == Float32() ? a : Cast::make(t, a), y = t == Float32() ? b : Cast::make(t, b);
    Expr tv = Variable::make_typed(t, "t");
    exprs.push_back(Call::make_intrinsic(Intrinsic::Tan, {x}));
    exprs.push_back(Call::make_intrinsic(Intrinsic::Atan2, {x, y}));
    exprs.push_back(Call::make_intrinsic(Intrinsic::Hypot, {x, y}));
    exprs.push_back(Call::make_intrinsic(Intrinsic::Tanh, {x}));
    exprs.push_back(Call::make_intrinsic(Intrinsic::Fma, {x, y, Mul::make(x, x)}));
    exprs.push_back(Let::make("t", Mul::make(x, y), Add::make(Mul::make(tv, tv), tv)));
    exprs.push_back(
        Let::make("c", LT::make(x, y), Select::make(Variable::make_typed(Bool(), "c"), x, y)));
  }
  std::vector<Stmt> nests;
  std::vector<Buffer> outputs;
  for (size_t i = 0; i < exprs.size(); ++i) {
    const std::string name = "out" + std::to_string(i);
    f.buffers.push_back(ExternalBuffer{name, exprs[i].type(), 2});
    nests.push_back(
        testing_codegen::grid_loops(i % 2 ? GridLoops::VectorX : GridLoops::Serial,
                                    Provide::make(name, exprs[i], {var("x"), var("y")})));
    outputs.emplace_back(exprs[i].type().code, std::vector<int64_t>{kMinX, kMinY},
                         std::vector<int64_t>{kWidth, kHeight});
  }
  f.body = Block::make(nests);
  Harness::Run r = h.run(f, "intrinsics", inputs, outputs, {}, /*strict=*/false);
  ASSERT_EQ(r.error, "") << r.source;
  for (size_t i = 0; i < exprs.size(); ++i) {
    int64_t worst = 0;
    EXPECT_EQ(compare_outputs(r.jit[i], r.cpp[i], 0, &worst), "")
        << "expression " << i << " in " << r.source << ":\n"
        << nests[i];
  }
}

// i8, i16, u32 and f16 (f16 elements as uint16_t bits with the f16 helpers' conversions),
// serial and vectorised, against the evaluator bit for bit (NaN payloads aside), the
// generated file compiling without warnings.
TEST(CppSource, NewElementTypesMatchTheEvaluator) {
  Harness h;
  const std::map<std::string, Buffer> images = element_types::random_inputs(7);
  const std::vector<int64_t> extents = {element_types::kWidth, element_types::kHeight};
  for (const element_types::Case& c : element_types::kCases) {
    Pipeline p = compile_pipeline(std::string(element_types::kInputs) + c.funcs, "t.stp");
    const Buffer ref = evaluate_pipeline_region(p, images, {}, {0, 0}, extents);
    std::vector<Buffer> inputs;
    for (const InputDecl& in : p.inputs) inputs.push_back(images.at(in.name));
    for (const std::string& sched : element_types::schedules_of(c)) {
      LoweredFunction f = lower(p, compile_schedule(sched, "t.sched", p));
      Harness::Run r = h.run(f, c.name, inputs, {Buffer(ref.type(), extents)}, {},
                             /*strict=*/true, p.output.func);
      ASSERT_EQ(r.error, "") << c.name << " under '" << sched << "'";
      for (int64_t i = 0; i < ref.element_count(); ++i) {
        ASSERT_TRUE(testing_codegen::same_value(ref.type(), ref, r.cpp[0], i))
            << c.name << " under '" << sched << "', element " << i << ": C++ "
            << r.cpp[0].get_flat(i) << ", evaluator " << ref.get_flat(i) << " (" << r.source << ")";
      }
    }
  }
}

TEST(CppSource, FivePipelinesMatchTheJit) {
  run_pipelines({"two_pass_blur", "median", "camera_pipe", "demosaic", "bilateral_grid"}, 256, 192,
                1, 20261124);
}

TEST(CppSource, EmitKindAndTheFilesShape) {
  EXPECT_EQ(codegen::parse_emit_kind("cpp"), codegen::EmitKind::CppSource);
  EXPECT_EQ(codegen::emit_kind_name(codegen::EmitKind::CppSource), "cpp");
  EXPECT_EQ(codegen::emit_kind_extension(codegen::EmitKind::CppSource), ".cpp");

  const std::string stp = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/two_pass_blur.stp";
  Pipeline p = load_pipeline_file(stp);
  Schedule s = load_schedule_file(stp.substr(0, stp.size() - 4) + ".sched", p);
  LoweredFunction f = lower(p, s);
  AotOptions opt;
  opt.symbol = "blur";
  opt.target = "no such target";  // the C++ source needs none
  opt.pipeline_file = "two_pass_blur.stp";
  opt.schedule_file = "two_pass_blur.sched";
  opt.output_name = "out";
  codegen::AotOutputs out = codegen::emit_files(f, {codegen::EmitKind::CppSource}, opt);
  ASSERT_EQ(out.size(), 1u);
  const std::string& text = out.at(codegen::EmitKind::CppSource);
  EXPECT_EQ(text, codegen::cpp_source(f, opt));
  for (const char* expected :
       {"// blur.cpp: a Stipple pipeline", "two_pass_blur.stp", "two_pass_blur.sched",
        "c++ -O2 -std=c++17 -pthread -c blur.cpp", "Generated by `stipple compile --emit cpp`",
        "extern \"C\" {", "int32_t blur(const stipple_buffer* buffers, const double* params) {",
        "typedef struct stipple_buffer {",
        // Names from the IR, one statement per line, the parallel loop and the exp.
        "const float sigma = static_cast<float>(params[0]);",
        "const int32_t h = saturating_cast<int32_t>(params[1]);", "parallel_for(0, ",
        "[&](int32_t out_s0_yo)", "exp_f32(",
        "out(out_s0_x, out_s0_y, out_s0_c) = ", "return STIPPLE_ERROR_BUFFER_MISMATCH;"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
  // No runtime library: none of its functions is called.
  for (const char* runtime : {"stipple_parallel_for", "stipple_malloc", "stipple_median_f64"}) {
    EXPECT_EQ(text.find(runtime), std::string::npos) << runtime;
  }
  opt.symbol = "bad name";
  EXPECT_THROW(codegen::cpp_source(f, opt), UserError);
}

TEST(CppSource, ABoundOutputIsCheckedOnEntry) {
  // bound(c, 0, 3): the loop nest is built for channels 0..2, so the source refuses an
  // output that does not span exactly them, as the object file does (bilateral_grid's hand
  // schedule, in FivePipelinesMatchTheJit, runs the accepted case).
  Pipeline p = compile_pipeline(
      "pipeline b\ninput in : f32[x, y, c]\nfunc out(x, y, c) = in(x, y, 2 - c)\noutput out\n",
      "b.stp");
  LoweredFunction f = lower(p, compile_schedule("out.bound(c, 0, 3)", "b.sched", p));
  AotOptions opt;
  opt.symbol = "b";
  const std::string text = codegen::cpp_source(f, opt);
  EXPECT_NE(text.find("buffers[1].dim[2].min != 0 || buffers[1].dim[2].extent != 3"),
            std::string::npos)
      << text;
}

TEST(CppSource, AWrongDescriptorIsRefusedWithTheHeadersCode) {
  // buffers[0] declared f32 but passed as u8: STIPPLE_ERROR_BUFFER_MISMATCH, as the
  // object file does; then a dense dimension 0 is required too.
  using namespace irb;
  Harness h;
  LoweredFunction f;
  f.inputs = {make_input("in", Float32(), {"x"}, BoundaryKind::Clamp, 0)};
  f.buffers = {ExternalBuffer{"out", Float32(), 1}};
  f.body = For::make("x", var("out.min.0"), var("out.extent.0"), ForType::Serial,
                     Provide::make("out", input(Float32(), "in", {var("x")}), {var("x")}));
  Buffer in(ScalarType::UInt8, {4});
  Buffer out(ScalarType::Float32, {4});
  Harness::Run r = h.run(f, "wrong type", {in}, {out}, {}, /*strict=*/true);
  // The JIT refuses first; the driver is then not run. Run the driver by hand.
  EXPECT_EQ(r.error, "wrong type: the JIT's code returned 1");
  const std::string base = r.source.substr(0, r.source.size() - 4);
  Result build = shell(cxx() + " -O2 -std=c++17 -pthread -include " + base + ".h " + base +
                       ".cpp " + h.path("driver.o") + " -o " + base);
  ASSERT_EQ(build.exit_code, 0) << build.output;
  {
    std::ofstream job(base + ".job", std::ios::binary);
    const int32_t counts[2] = {2, 0};
    job.write(reinterpret_cast<const char*>(counts), sizeof counts);
    for (int k = 0; k < 2; ++k) {
      const int32_t header[4] = {k == 0 ? 1 : 4, 1, k, 0};  // u8 input, f32 output
      int64_t shape[3 * codegen::kMaxBufferDims] = {};
      shape[codegen::kMaxBufferDims] = 4;
      shape[2 * codegen::kMaxBufferDims] = 1;
      const int64_t size = 16;
      job.write(reinterpret_cast<const char*>(header), sizeof header);
      job.write(reinterpret_cast<const char*>(shape), sizeof shape);
      job.write(reinterpret_cast<const char*>(&size), sizeof size);
      if (k == 0) job.write(std::string(16, '\0').data(), 16);
    }
  }
  Result ran = shell(base + " " + base + ".job " + base + ".out");
  EXPECT_EQ(ran.exit_code, 3) << ran.output;
  EXPECT_EQ(ran.output, "rc=1\n");
}

#endif

}  // namespace
}  // namespace stipple
