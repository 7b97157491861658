// The back-end interface (backend.h): the registry, each back end's files equal to what
// its generator writes directly, callables, and targets or kinds a back end cannot serve
// reported as values.
#include "compiler_core/codegen/backend.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler_core/codegen/cpp_source.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/runtime/buffer.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::codegen {
namespace {

constexpr const char* kProgram = R"(pipeline small
input  img : u8[x, y]  mirror
func blur(x, y) = (f32(img(x - 1, y)) + f32(img(x, y)) + f32(img(x + 1, y))) / 3
output blur size(img.width, img.height)
)";

struct Fixture {
  Pipeline p = compile_pipeline(kProgram, "small.stp");
  LoweredFunction f = lower(p, compile_schedule("blur.vectorize(x, 8)\n", "small.sched", p));
};

BackendRequest request(std::vector<EmitKind> kinds, const std::string& target = "host") {
  BackendRequest r;
  r.kinds = std::move(kinds);
  r.options.symbol = "small";
  r.options.target = target;
  r.options.output_name = "blur";
  return r;
}

TEST(Backend, RegisteredOnceAndFoundByNameAndKind) {
  ASSERT_EQ(backends().size(), 3u);
  ASSERT_NE(find_backend("llvm-cpu"), nullptr);
  ASSERT_NE(find_backend("cpp-source"), nullptr);
  ASSERT_NE(find_backend("cuda-source"), nullptr);
  EXPECT_EQ(find_backend("cuda"), nullptr);
  EXPECT_EQ(&backend_for(EmitKind::Object), find_backend("llvm-cpu"));
  EXPECT_EQ(&backend_for(EmitKind::Header), find_backend("llvm-cpu"));
  EXPECT_EQ(&backend_for(EmitKind::CppSource), find_backend("cpp-source"));
  EXPECT_EQ(&backend_for(EmitKind::CudaSource), find_backend("cuda-source"));
  // A kind two back ends write goes to the one that serves the target.
  EXPECT_EQ(&backend_for(EmitKind::Header, "cuda-sm_90"), find_backend("cuda-source"));
  EXPECT_EQ(&backend_for(EmitKind::Header, "x86-64-v3"), find_backend("llvm-cpu"));
  EXPECT_EQ(&backend_for(EmitKind::Ptx, "cuda-sm_80"), find_backend("cuda-source"));
  // With none serving it, the first that writes the kind, to say why not.
  EXPECT_EQ(&backend_for(EmitKind::Ptx, "host"), find_backend("cuda-source"));
  EXPECT_EQ(emit_kind_names(),
            (std::vector<std::string>{"obj", "asm", "llvm", "header", "cpp", "cu", "ptx"}));
  // The CUDA back end serves only GPU targets, and says which.
  EXPECT_EQ(find_backend("cuda-source")->unsupported_target("cuda-sm_90"), "");
  EXPECT_NE(find_backend("cuda-source")->unsupported_target("host").find("cuda-sm_90"),
            std::string::npos);
  // and the CPU back ends refuse a GPU target, pointing to --emit cu.
  EXPECT_NE(find_backend("cpp-source")->unsupported_target("cuda-sm_90").find("--emit cu"),
            std::string::npos);
  EXPECT_NE(find_backend("llvm-cpu")->unsupported_target("cuda-sm_80").find("--emit cu"),
            std::string::npos);
}

TEST(Backend, FilesAreTheGeneratorsOwn) {
  Fixture x;
  BackendRequest llvm = request({EmitKind::LlvmIr, EmitKind::Header}, "x86-64-v3");
  BackendResult r = find_backend("llvm-cpu")->compile(x.f, llvm);
  ASSERT_TRUE(r.ok()) << r.unsupported;
  EXPECT_EQ(r.artefact->files, compile_ahead_of_time(x.f, llvm.kinds, llvm.options));
  EXPECT_EQ(r.artefact->callable, nullptr);

  BackendRequest cpp = request({EmitKind::CppSource}, "aarch64");
  BackendResult c = find_backend("cpp-source")->compile(x.f, cpp);
  ASSERT_TRUE(c.ok()) << c.unsupported;
  EXPECT_EQ(c.artefact->files.at(EmitKind::CppSource), cpp_source(x.f, cpp.options));
}

TEST(Backend, TheLlvmCpuBackEndMakesCallables) {
  Fixture x;
  BackendRequest req = request({});
  req.callable = true;
  BackendResult r = find_backend("llvm-cpu")->compile(x.f, req);
  ASSERT_TRUE(r.ok()) << r.unsupported;
  ASSERT_NE(r.artefact->callable, nullptr);
  Buffer img(ScalarType::UInt8, {16, 4});
  Buffer out = run_lowered(*r.artefact->callable, x.f, x.p, {{"img", img}}, {}, {16, 4});
  EXPECT_EQ(out.dimensions(), 2);
  EXPECT_EQ(out.extent(0), 16);
}

// compile_for_host is how every caller runs code here: a blur computed by it equals one
// computed by hand from the same bytes (a mirror boundary, then a float mean).
TEST(Backend, CompileForHostGivesTheCallableOfTheRegistry) {
  Fixture x;
  std::shared_ptr<CompiledFunction> fn = compile_for_host(x.f);
  ASSERT_NE(fn, nullptr);
  EXPECT_GT(fn->stats().total_ms, 0);
  Buffer img(ScalarType::UInt8, {16, 4});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t i = 0; i < 16; ++i) img.data_as<uint8_t>()[y * 16 + i] = uint8_t(i * 13 + y * 7);
  Buffer out = run_lowered(*fn, x.f, x.p, {{"img", img}}, {}, {16, 4});
  const uint8_t* in = img.data_as<uint8_t>();
  for (int64_t y = 0; y < 4; ++y) {
    for (int64_t i = 0; i < 16; ++i) {
      auto at = [&](int64_t k) {
        if (k < 0) k = -k;       // mirror, edge not repeated: -1 reads 1
        if (k > 15) k = 30 - k;  // 16 reads 14
        return float(in[y * 16 + k]);
      };
      const float want = (at(i - 1) + at(i) + at(i + 1)) / 3;
      EXPECT_EQ(out.data_as<float>()[y * 16 + i], want) << i << "," << y;
    }
  }
}

// Code kept from a compile (its object file and entry symbol) loads again as a callable
// that computes the same, also while the original is alive (its symbol is then taken in
// the main JITDylib: each load gets a JITDylib of its own), and twice over; bytes that are
// no object file are a UserError, not a crash.
TEST(Backend, KeptCodeLoadsAgainAndComputesTheSame) {
  Fixture x;
  std::shared_ptr<CompiledFunction> fn = compile_for_host(x.f);
  ASSERT_FALSE(fn->object().empty());
  Buffer img(ScalarType::UInt8, {19, 3});
  for (int64_t i = 0; i < img.element_count(); ++i) img.data_as<uint8_t>()[i] = uint8_t(i * 29);
  const Buffer want = run_lowered(*fn, x.f, x.p, {{"img", img}}, {}, {19, 3});
  for (int copy = 0; copy < 2; ++copy) {
    std::shared_ptr<CompiledFunction> again = load_for_host(fn->object(), fn->symbol());
    ASSERT_NE(again, nullptr);
    EXPECT_NE(again->entry(), fn->entry());  // its own code, not the original's
    EXPECT_EQ(again->object(), fn->object());
    const Buffer got = run_lowered(*again, x.f, x.p, {{"img", img}}, {}, {19, 3});
    EXPECT_TRUE(got.same_contents(want));
  }
  EXPECT_THROW(load_for_host("not an object file", fn->symbol()), UserError);
  EXPECT_THROW(load_for_host(fn->object(), "no_such_symbol"), UserError);
}

// run_lowered_into computes into the caller's buffer, as the timing loops call it (the
// output's allocation is not timed): every element is written, whatever the buffer held
// (NaNs here), and equals a fresh run's; a buffer of another type or with mins not 0 is
// refused before the code runs.
TEST(Backend, RunLoweredIntoWritesEveryElementOfTheCallersBuffer) {
  Fixture x;
  std::shared_ptr<CompiledFunction> fn = compile_for_host(x.f);
  Buffer img(ScalarType::UInt8, {21, 5});
  for (int64_t i = 0; i < img.element_count(); ++i) img.data_as<uint8_t>()[i] = uint8_t(i * 37);
  const Buffer fresh = run_lowered(*fn, x.f, x.p, {{"img", img}}, {}, {21, 5});
  Buffer reused(ScalarType::Float32, {21, 5});
  for (int64_t i = 0; i < reused.element_count(); ++i) reused.data_as<float>()[i] = NAN;
  run_lowered_into(*fn, x.f, x.p, {{"img", img}}, {}, reused);
  for (int64_t i = 0; i < fresh.element_count(); ++i) {
    EXPECT_EQ(reused.data_as<float>()[i], fresh.data_as<float>()[i]) << i;
  }
  Buffer wrong_type(ScalarType::UInt8, {21, 5});
  EXPECT_THROW(run_lowered_into(*fn, x.f, x.p, {{"img", img}}, {}, wrong_type), InternalError);
  Buffer shifted(ScalarType::Float32, {1, 0}, {21, 5});
  EXPECT_THROW(run_lowered_into(*fn, x.f, x.p, {{"img", img}}, {}, shifted), InternalError);
}

TEST(Backend, WhatABackEndCannotServeIsAValueWithAReason) {
  Fixture x;
  BackendResult target = find_backend("llvm-cpu")->compile(x.f, request({EmitKind::Object}, "vax"));
  EXPECT_FALSE(target.ok());
  EXPECT_NE(target.unsupported.find("no target 'vax'"), std::string::npos) << target.unsupported;

  BackendResult kind = find_backend("cpp-source")->compile(x.f, request({EmitKind::Object}));
  EXPECT_FALSE(kind.ok());
  EXPECT_NE(kind.unsupported.find("does not write obj"), std::string::npos) << kind.unsupported;

  BackendRequest callable = request({}, "aarch64");
  callable.callable = true;
  EXPECT_FALSE(find_backend("llvm-cpu")->compile(x.f, callable).ok());
  callable.options.target = "host";
  EXPECT_FALSE(find_backend("cpp-source")->compile(x.f, callable).ok());
}

}  // namespace
}  // namespace stipple::codegen
