// Ahead-of-time compilation in process (compiler_core/codegen/aot.h): the optimised IR is
// the JIT's exactly; objects for cross targets are ELF files for the right machine; the
// C header's constants, defaults and collisions; function names and --emit spellings.
// (tests/client/aot_link_test.cpp links the output into a real program.)
#include "compiler_core/codegen/aot.h"

#include <gtest/gtest.h>
#include <llvm/Support/CommandLine.h>

#include <regex>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/target_machine.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::codegen {
namespace {

constexpr const char* kProgram = R"(pipeline small
input  img : u8[x, y]  mirror
input  mask : f32[x, y, c]  constant(0.25)
param  gain : f32 = 1.5
param  radius : i32 = 3
func blur(x, y) = sum(i in -radius..radius : f32(img(x + i, y))) * gain
func out(x, y, c) = blur(x, y) * mask(x, y, c)
output out size(img.width, img.height, 3)
)";

constexpr const char* kSchedule = "out.parallel(y).vectorize(x, 8)\nblur.compute_at(out, y)\n";

struct Fixture {
  Pipeline p = compile_pipeline(kProgram, "small.stp");
  LoweredFunction f = lower(p, compile_schedule(kSchedule, "small.sched", p));
};

AotOptions options(const std::string& symbol, const std::string& target = "host") {
  AotOptions o;
  o.symbol = symbol;
  o.target = target;
  o.pipeline_file = "small.stp";
  o.output_name = "out";
  o.output_extents = {"img.width", "img.height", "3"};
  return o;
}

/// Text of a module without the lines that name where it came from.
std::string body_of(const std::string& ir, const std::string& symbol) {
  std::string out;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("; ModuleID", 0) == 0 || line.rfind("source_filename", 0) == 0) continue;
    out += std::regex_replace(line, std::regex(symbol), "SYMBOL") + "\n";
  }
  return out;
}

uint16_t elf_machine(const std::string& obj) {
  EXPECT_GT(obj.size(), 64u);
  EXPECT_EQ(obj.substr(0, 4),
            "\x7f"
            "ELF");
  return static_cast<uint16_t>(static_cast<unsigned char>(obj[18]) |
                               (static_cast<unsigned char>(obj[19]) << 8));
}

// The backend leaves out the post-RA list scheduler and AVX-512 domain reassignment
// (compile time; target_machine.cpp): both LLVM options are set as if on the command line.
TEST(Aot, BackendLeavesOutPostRaSchedulingAndDomainReassignment) {
  initialize_llvm_targets();
  const llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  ASSERT_TRUE(options.count("post-RA-scheduler"));
  ASSERT_TRUE(options.count("disable-x86-domain-reassignment"));
  auto* post_ra = static_cast<llvm::cl::opt<bool>*>(options.lookup("post-RA-scheduler"));
  auto* domain =
      static_cast<llvm::cl::opt<bool>*>(options.lookup("disable-x86-domain-reassignment"));
  // An occurrence, not just the value: the scheduler pass reads its option only when given.
  EXPECT_EQ(post_ra->getNumOccurrences(), 1);
  EXPECT_FALSE(post_ra->getValue());
  EXPECT_EQ(domain->getNumOccurrences(), 1);
  EXPECT_TRUE(domain->getValue());
}

TEST(Aot, HostLlvmIrIsExactlyWhatTheJitOptimises) {
  Fixture fx;
  AotOutputs out = compile_ahead_of_time(fx.f, {EmitKind::LlvmIr}, options("small_fn"));
  const std::string jit_ir = JitCompiler::create()->llvm_ir(fx.f, /*optimized=*/true);
  EXPECT_EQ(body_of(out.at(EmitKind::LlvmIr), "small_fn"), body_of(jit_ir, "stipple_ir_dump"));
  EXPECT_NE(out.at(EmitKind::LlvmIr).find("define i32 @small_fn("), std::string::npos);
}

TEST(Aot, ObjectsForEachTargetAreElfForItsMachine) {
  Fixture fx;
  constexpr uint16_t kX86_64 = 62, kAArch64 = 183;
  for (const std::string& target : aot_target_names()) {
    SCOPED_TRACE(target);
    AotOutputs out =
        compile_ahead_of_time(fx.f, {EmitKind::Object, EmitKind::Assembly, EmitKind::LlvmIr},
                              options("small_fn", target));
    ASSERT_EQ(out.size(), 3u);
    const uint16_t machine = elf_machine(out.at(EmitKind::Object));
    if (target == "aarch64") {
      EXPECT_EQ(machine, kAArch64);
    } else if (target != "host") {
      EXPECT_EQ(machine, kX86_64);
    }
    // The exported symbol, and the parallel loop's call into the runtime.
    EXPECT_NE(out.at(EmitKind::Object).find("small_fn"), std::string::npos);
    EXPECT_NE(out.at(EmitKind::Object).find("stipple_parallel_for"), std::string::npos);
    EXPECT_NE(out.at(EmitKind::Assembly).find("small_fn:"), std::string::npos);
    if (target != "host" && target != "aarch64") {
      EXPECT_NE(out.at(EmitKind::LlvmIr).find("\"target-cpu\"=\"" + target + "\""),
                std::string::npos);
    }
  }
}

TEST(Aot, ObjectsArePositionIndependent) {
  // PIC code takes the parallel closure's address relative to the instruction pointer
  // (static code would use an absolute `movl $closure`, a relocation PIE links reject)
  // and calls the runtime through the PLT.
  Fixture fx;
  AotOutputs out = compile_ahead_of_time(fx.f, {EmitKind::Assembly}, options("small_fn", "x86-64"));
  const std::string& s = out.at(EmitKind::Assembly);
  EXPECT_TRUE(std::regex_search(s, std::regex(R"(leaq\s+small_fn\.[A-Za-z0-9_.]+\(%rip\))"))) << s;
  EXPECT_NE(s.find("callq\tstipple_parallel_for@PLT"), std::string::npos) << s;
  EXPECT_FALSE(std::regex_search(s, std::regex(R"(\$small_fn)"))) << s;
}

TEST(Aot, HeaderListsBuffersParamsAndDefaultsInOrder) {
  Fixture fx;
  const std::string h = c_header(fx.f, options("small_fn", "x86-64"));
  for (const char* expected : {
           "int32_t small_fn(const stipple_buffer* buffers, const double* params);",
           "SMALL_FN_BUFFER_COUNT = 3,",
           "SMALL_FN_BUFFER_IMG = 0,",
           "SMALL_FN_BUFFER_IMG_TYPE = STIPPLE_TYPE_U8,",
           "SMALL_FN_BUFFER_IMG_DIMENSIONS = 2,",
           "SMALL_FN_BUFFER_MASK = 1,",
           "SMALL_FN_BUFFER_MASK_TYPE = STIPPLE_TYPE_F32,",
           "SMALL_FN_BUFFER_MASK_DIMENSIONS = 3,",
           "SMALL_FN_BUFFER_OUT = 2,",
           "SMALL_FN_PARAM_COUNT = 2,",
           "SMALL_FN_PARAM_GAIN = 0,",
           "SMALL_FN_PARAM_RADIUS = 1,",
           "#define SMALL_FN_PARAM_GAIN_DEFAULT 1.5\n",
           "#define SMALL_FN_PARAM_RADIUS_DEFAULT 3.0\n",
           "#define SMALL_FN_PARAM_DEFAULTS { 1.5, 3.0 }\n",
           "input img: u8, 2 dimensions (x, y), boundary mirror",
           "input mask: f32, 3 dimensions (x, y, c), boundary constant(0.25)",
           "output out: f32, 3 dimensions",
           "radius: i32, default 3\n",
           "(img.width, img.height, 3)",
           "for target x86-64 (x86_64-",
           "STIPPLE_TYPE_U16 = 2,",
           "STIPPLE_TYPE_F64 = 5,",
           // Appended later, existing codes unchanged.
           "STIPPLE_TYPE_I8 = 6,",
           "STIPPLE_TYPE_I16 = 7,",
           "STIPPLE_TYPE_U32 = 8,",
           "STIPPLE_TYPE_F16 = 9,",
           "STIPPLE_ERROR_OUT_OF_MEMORY = 2,",
           "sizeof(stipple_buffer) == 208",
           "#ifndef STIPPLE_AOT_SMALL_FN_H",
           "libstipple_runtime.a",
       }) {
    EXPECT_NE(h.find(expected), std::string::npos) << expected << "\n" << h;
  }
  // A header per pipeline: the shared part is guarded so that two can be included.
  EXPECT_NE(h.find("#ifndef STIPPLE_AOT_COMMON"), std::string::npos);
}

TEST(Aot, HeaderWithoutParamsStillInitialisesAnArray) {
  Fixture fx;
  fx.f.params.clear();
  const std::string h = c_header(fx.f, options("small_fn"));
  EXPECT_NE(h.find("SMALL_FN_PARAM_COUNT = 0,"), std::string::npos);
  EXPECT_NE(h.find("#define SMALL_FN_PARAM_DEFAULTS { 0.0 /* no params */ }"), std::string::npos);
}

TEST(Aot, HeaderConstantsThatCollideAreAUserError) {
  Fixture fx;
  // "Img" and "img" are different .stp names but one constant, SMALL_FN_BUFFER_IMG.
  fx.f.inputs[1].name = "Img";
  EXPECT_THROW(c_header(fx.f, options("small_fn")), UserError);
  Fixture fy;
  fy.f.params[1].name = "gain_default";  // SMALL_FN_PARAM_GAIN_DEFAULT twice
  EXPECT_THROW(c_header(fy.f, options("small_fn")), UserError);
}

TEST(Aot, FunctionNamesFromStemsAreCIdentifiers) {
  EXPECT_EQ(c_function_name_from("two_pass_blur"), "two_pass_blur");
  EXPECT_EQ(c_function_name_from("3x3-blur.v2"), "p_3x3_blur_v2");
  EXPECT_EQ(c_function_name_from("_x"), "p_x");
  EXPECT_EQ(c_function_name_from("int"), "int_pipeline");
  EXPECT_EQ(c_function_name_from("main"), "main_pipeline");
  EXPECT_EQ(c_function_name_from("stipple_malloc"), "stipple_malloc_pipeline");
  EXPECT_EQ(c_function_name_from(""), "pipeline");
  EXPECT_EQ(c_function_name_from("caf\xc3\xa9"), "caf__");
  for (const char* stem : {"two_pass_blur", "3x3-blur.v2", "_x", "int", "main", "", "a b"}) {
    EXPECT_NO_THROW(check_c_function_name(c_function_name_from(stem))) << stem;
  }
  for (const char* bad : {"", "3d", "my-fn", "a b", "int", "class", "_blur", "stipple_free",
                          "stipple_buffer", "main"}) {
    EXPECT_THROW(check_c_function_name(bad), UserError) << bad;
  }
}

TEST(Aot, EmitKindsAndTargetsHaveTheirSpellings) {
  for (EmitKind k : {EmitKind::Object, EmitKind::Assembly, EmitKind::LlvmIr, EmitKind::Header}) {
    EXPECT_EQ(parse_emit_kind(emit_kind_name(k)), k);
  }
  EXPECT_EQ(emit_kind_extension(EmitKind::Object), ".o");
  EXPECT_EQ(emit_kind_extension(EmitKind::LlvmIr), ".ll");
  EXPECT_THROW(parse_emit_kind("exe"), UserError);
  EXPECT_EQ(aot_target_names().front(), "host");
  EXPECT_NE(describe_target("x86-64-v3").find("cpu x86-64-v3"), std::string::npos);
  EXPECT_NE(describe_target("aarch64").find("aarch64"), std::string::npos);
  EXPECT_THROW(describe_target("sparc"), UserError);
  Fixture fx;
  EXPECT_THROW(compile_ahead_of_time(fx.f, {EmitKind::Object}, options("small_fn", "sparc")),
               UserError);
  EXPECT_THROW(compile_ahead_of_time(fx.f, {EmitKind::Object}, options("not valid")), UserError);
}

}  // namespace
}  // namespace stipple::codegen
