// Vector reads of a small byte table as byte permutes (codegen_byte_table.cpp): for a
// target with AVX-512 VBMI the read is vpermi2b lookups and no gather, for one without it
// the word gather; and on the host, every table size (a partial last chunk, a partial last
// vector, one entry), table start, element type and vector width, with vector tails,
// gives the evaluator's values. On a host without VBMI the values still hold, through the
// gather.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <iostream>
#include <memory>
#include <string>

#include "compiler_core/codegen/codegen_llvm.h"
#include "compiler_core/codegen/target_machine.h"
#include "jit_vs_evaluator.h"

namespace stipple::codegen {
namespace {

/// A table of `entries` elements of `type` starting at `first`, read at the input's
/// values clamped into it.
std::string table_pipeline(const std::string& type, int64_t entries, int64_t first) {
  const std::string last = std::to_string(first + entries - 1);
  return "pipeline g\ninput in : u16[x, y]\nfunc t(i) = " + type + "((i * 37 + 11) % 251 - 60)\n" +
         "func out(x, y) = i32(t(clamp(i32(in(x, y)), " + std::to_string(first) + ", " + last +
         ")))\noutput out\n";
}

std::string unoptimized_ir(const std::string& src, const std::string& sched,
                           const TargetSpec& target) {
  Pipeline p = compile_pipeline(src, "g.stp");
  LoweredFunction f = lower(p, compile_schedule(sched, "g.sched", p));
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(target, TargetUse::AheadOfTime);
  std::unique_ptr<llvm::Module> m = generate_module(f, "g", ctx, codegen_target(*tm));
  std::string ir;
  llvm::raw_string_ostream os(ir);
  m->print(os, nullptr);
  return os.str();
}

constexpr const char* kPermute = "@llvm.x86.avx512.vpermi2var.qi.512";
// The table's word gather (the u16 input's edge reads gather halves).
constexpr const char* kGather = "@llvm.masked.gather.v32i32";

TEST(ByteTable, PermutesWhereTheTargetHasVbmiAndGathersWhereNot) {
  const std::string src = table_pipeline("u8", 1024, 0);
  const std::string sched = "t.compute_root()\nout.vectorize(x, 32)";
  const TargetSpec icelake{"icelake", "x86_64-pc-linux-gnu", "icelake-server", ""};
  ASSERT_TRUE(codegen_target(*create_target_machine(icelake, TargetUse::Jit)).byte_permutes);
  const std::string with = unoptimized_ir(src, sched, icelake);
  // 8 chunks of 128 bytes, in each vector loop the partition made (a full one, a tail).
  EXPECT_NE(with.find(kPermute), std::string::npos) << with;
  EXPECT_EQ(with.find(kGather), std::string::npos) << with;
  for (const char* name : {"x86-64-v4", "x86-64-v3", "aarch64"}) {
    const TargetSpec without = named_target(name);
    EXPECT_FALSE(codegen_target(*create_target_machine(without, TargetUse::Jit)).byte_permutes)
        << name;
    const std::string ir = unoptimized_ir(src, sched, without);
    EXPECT_EQ(ir.find(kPermute), std::string::npos) << name;
    EXPECT_NE(ir.find(kGather), std::string::npos) << name;
  }
  // 256 bytes at 16 lanes are 2 chunks, 4 lanes or more each: permuted. 1024 bytes at 16
  // lanes would be 8 chunks of 2 lanes (more work than the gather): gathered.
  const std::string narrow = "t.compute_root()\nout.vectorize(x, 16)";
  EXPECT_NE(unoptimized_ir(table_pipeline("u8", 256, 3), narrow, icelake).find(kPermute),
            std::string::npos);
  EXPECT_EQ(unoptimized_ir(src, narrow, icelake).find(kPermute), std::string::npos);
  // Larger tables, sizes that are not whole vectors, 2-byte elements and inputs keep the
  // gather.
  for (const std::string& other :
       {table_pipeline("u8", 1088, 0), table_pipeline("u8", 1000, 0), table_pipeline("u16", 64, 0),
        std::string("pipeline g\ninput lut : u8[i]\ninput in : u16[x, y]\n"
                    "func out(x, y) = i32(lut(clamp(i32(in(x, y)), 0, 99)))\n"
                    "output out size(in.width, in.height)\n")}) {
    const std::string sched_other =
        other.find("func t") != std::string::npos ? sched : std::string("out.vectorize(x, 32)");
    const std::string ir = unoptimized_ir(other, sched_other, icelake);
    EXPECT_EQ(ir.find(kPermute), std::string::npos) << other;
  }
}

TEST(ByteTable, LookupsEqualTheEvaluator) {
  const bool host_permutes =
      codegen_target(*create_target_machine(host_target(), TargetUse::Jit)).byte_permutes;
  if (!host_permutes) std::cout << "this host has no byte permutes: the values test gathers\n";
  // Inputs from 0 to 1300: below, inside and past every table, so that the clamps reach
  // both ends. Serial and in a parallel loop (its closure captures the table).
  int permuted = 0;
  for (const char* type : {"u8", "i8"}) {
    for (int64_t entries : {1, 5, 64, 100, 128, 192, 256, 640, 1000, 1024}) {
      for (int64_t first : {0, 7}) {
        for (int width : {8, 16, 32, 64}) {
          for (const char* where : {"", ".parallel(y)"}) {
            const std::string src = table_pipeline(type, entries, first);
            const std::string sched =
                "t.compute_root()\nout.vectorize(x, " + std::to_string(width) + ")" + where;
            const int64_t w = 2 * width + 3;  // full vectors and a tail
            Buffer in(ScalarType::UInt16, {w, 3});
            for (int64_t i = 0; i < in.element_count(); ++i) in.set_flat(i, (i * 389) % 1301);
            jit_test::Result r = jit_test::run_both(src, sched, {{"in", in}}, {w, 3});
            const std::string what = std::string(type) + " table of " + std::to_string(entries) +
                                     " from " + std::to_string(first) + ", " + sched;
            jit_test::expect_same(r, what);
            const bool eligible = entries % 64 == 0 && (entries + 127) / 128 * 4 <= width;
            const bool uses_permutes = r.ir.find(kPermute) != std::string::npos;
            EXPECT_EQ(uses_permutes, host_permutes && eligible) << what;
            permuted += uses_permutes;
          }
        }
      }
    }
  }
  if (host_permutes) {
    EXPECT_GT(permuted, 0);
  }
}

}  // namespace
}  // namespace stipple::codegen
