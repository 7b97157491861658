// Targets, TargetMachines, the optimisation pipeline and emission, shared by the JIT and the AOT
// compiler so that both produce the same code for the same target.
#include "compiler_core/codegen/target_machine.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/Triple.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Vectorize/SLPVectorizer.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "compiler_core/ir/error.h"

namespace stipple::codegen {

void initialize_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    // All of them, not just the native one: `stipple compile --target aarch64` on x86-64.
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
    // LLVM's own command-line options for people reading or debugging generated code, e.g.
    // STIPPLE_LLVM_OPTIONS="-x86-asm-syntax=intel" for `stipple compile --emit asm`.
    const char* user_env = std::getenv("STIPPLE_LLVM_OPTIONS");
    const std::string user = user_env ? user_env : "";
    std::vector<const char*> argv = {"stipple"};
    // Two backend passes that cost compile time and gave no run time we could measure
    // (bench/README.md, "Backend passes left out"): the post-RA list scheduler, which LLVM
    // turns on for the Zen models (an out-of-order core reorders by itself), and AVX-512's
    // domain reassignment (moves GPR bit logic into mask registers). Together about 13% of
    // nl_means's compile time. An option the user sets in STIPPLE_LLVM_OPTIONS wins.
    const llvm::StringMap<llvm::cl::Option*>& known = llvm::cl::getRegisteredOptions();
    const std::pair<const char*, const char*> defaults[] = {
        {"post-RA-scheduler", "-post-RA-scheduler=false"},
        {"disable-x86-domain-reassignment", "-disable-x86-domain-reassignment"}};
    for (const auto& [name, argument] : defaults) {
      if (known.count(name) && user.find(name) == std::string::npos) argv.push_back(argument);
    }
    llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "", nullptr,
                                      "STIPPLE_LLVM_OPTIONS");
  });
}

#if defined(__aarch64__) && defined(__linux__)
// The features the kernel (or qemu-user) tells an arm64 process in its auxiliary vector,
// under LLVM's names (LLVM's own host detection maps /proc/cpuinfo's "Features" line,
// which uses the kernel's hwcap names, to these). Read when /proc/cpuinfo has no such
// line: under qemu-user it is the real machine's x86 text, and the emulated CPU's
// features are only in the auxiliary vector.
static void add_hwcap_features(llvm::StringMap<bool>& features) {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  auto has = [&](unsigned long bits) { return (hwcap & bits) == bits; };
  if (has(HWCAP_FP)) features["fp-armv8"] = true;
  if (has(HWCAP_ASIMD)) features["neon"] = true;
  if (has(HWCAP_CRC32)) features["crc"] = true;
  if (has(HWCAP_ATOMICS)) features["lse"] = true;
  if (has(HWCAP_AES | HWCAP_PMULL)) features["aes"] = true;
  if (has(HWCAP_SHA1 | HWCAP_SHA2)) features["sha2"] = true;
  if (has(HWCAP_FPHP | HWCAP_ASIMDHP)) features["fullfp16"] = true;
  if (has(HWCAP_ASIMDRDM)) features["rdm"] = true;
  if (has(HWCAP_ASIMDDP)) features["dotprod"] = true;
}
#endif

TargetSpec host_target() {
  // What llvm::orc::JITTargetMachineBuilder::detectHost does, so the JIT's TargetMachine
  // and ours agree feature for feature.
  llvm::SubtargetFeatures features;
  llvm::StringMap<bool> host_features;
  const bool detected = llvm::sys::getHostCPUFeatures(host_features);
#if defined(__aarch64__) && defined(__linux__)
  if (!host_features.count("neon")) add_hwcap_features(host_features);
#endif
  if (detected || !host_features.empty()) {
    for (auto& f : host_features) features.AddFeature(f.first(), f.second);
  }
  return TargetSpec{"host", llvm::sys::getProcessTriple(), llvm::sys::getHostCPUName().str(),
                    features.getString()};
}

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = {"host",      "x86-64",    "x86-64-v2",
                                                 "x86-64-v3", "x86-64-v4", "aarch64"};
  return names;
}

TargetSpec named_target(std::string_view name) {
  if (name == "host") return host_target();
  // The host's vendor, OS and environment with the named architecture: a generic CPU for
  // the same kind of system (x86_64-pc-linux-gnu -> aarch64-pc-linux-gnu).
  llvm::Triple triple(llvm::sys::getProcessTriple());
  if (name == "x86-64" || name == "x86-64-v2" || name == "x86-64-v3" || name == "x86-64-v4") {
    triple.setArch(llvm::Triple::x86_64);
    return TargetSpec{std::string(name), triple.str(), std::string(name), ""};
  }
  if (name == "aarch64") {
    triple.setArch(llvm::Triple::aarch64);
    return TargetSpec{std::string(name), triple.str(), "generic", "+neon"};
  }
  std::string known;
  for (const std::string& n : target_names()) known += (known.empty() ? "" : ", ") + n;
  throw UserError("unknown target '" + std::string(name) + "' (known: " + known + ")");
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const TargetSpec& target,
                                                           TargetUse use) {
  initialize_llvm_targets();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  STIPPLE_INTERNAL_CHECK(t != nullptr, "no LLVM target for " + target.triple + ": " + error);
  const bool jit = use == TargetUse::Jit;
  llvm::Optional<llvm::Reloc::Model> reloc;
  if (!jit) reloc = llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> tm(
      t->createTargetMachine(target.triple, target.cpu, target.features, llvm::TargetOptions(),
                             reloc, llvm::None, llvm::CodeGenOpt::Default, jit));
  STIPPLE_INTERNAL_CHECK(tm != nullptr, "cannot create a target machine for " + target.triple +
                                            " (cpu " + target.cpu + ")");
  return tm;
}

CodeGenTarget codegen_target(const llvm::TargetMachine& tm) {
  CodeGenTarget t;
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  // The features of the TargetMachine's CPU and feature string together: "host" names
  // every feature, x86-64-v4 none (its CPU implies AVX-512 but not VBMI).
  t.float_select_min_max = tm.getTargetTriple().getArch() == llvm::Triple::x86_64;
  t.byte_permutes = tm.getTargetTriple().getArch() == llvm::Triple::x86_64 &&
                    sti->checkFeatures("+avx512vbmi,+avx512bw");
  t.f16_conversions =
      tm.getTargetTriple().getArch() == llvm::Triple::x86_64 && sti->checkFeatures("+f16c");
  return t;
}

void prepare_module(llvm::Module& m, const llvm::TargetMachine& tm) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple().str());
  const std::string cpu = tm.getTargetCPU().str();
  const std::string features = tm.getTargetFeatureString().str();
  for (llvm::Function& fn : m) {
    if (fn.isDeclaration()) continue;
    fn.addFnAttr("target-cpu", cpu);
    if (!features.empty()) fn.addFnAttr("target-features", features);
    fn.addFnAttr(llvm::Attribute::NoUnwind);
  }
}

namespace {

bool has_vector_values(const llvm::Function& fn) {
  for (const llvm::BasicBlock& bb : fn) {
    for (const llvm::Instruction& inst : bb) {
      if (inst.getType()->isVectorTy()) return true;
    }
  }
  return false;
}

// LLVM's SLP vectoriser, on the functions the schedule left scalar only. Where a schedule
// vectorises, it says what runs in vectors (codegen_vector.cpp), as in Halide, and SLP
// found nothing there worth its time: on the hand schedules of Halide's apps it was 10-22%
// of compile time (local_laplacian 358 -> 293 ms, interpolate 208 -> 167, Zen 5) for no
// run time we could measure (issue #26). On scalar code it still pays: the default
// schedule of the bilateral filter, whose 9x9 window LLVM unrolls, runs in 2.9 s with it
// and 4.8 s without. Each parallel loop body is a function of its own (codegen_stmt.cpp),
// so the choice is made per parallel loop nest; the serial stages of a pipeline share
// its entry function, and one vectorised serial stage leaves them all to the schedule.
class ScalarFunctionSLPPass : public llvm::PassInfoMixin<ScalarFunctionSLPPass> {
 public:
  llvm::PreservedAnalyses run(llvm::Function& fn, llvm::FunctionAnalysisManager& am) {
    if (has_vector_values(fn)) return llvm::PreservedAnalyses::all();
    return slp_.run(fn, am);
  }

 private:
  llvm::SLPVectorizerPass slp_;
};

}  // namespace

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // A short function pipeline instead of -O3, which costs about twice the compile time for
  // the same code here: codegen emits straight loop nests with explicit vector code and no
  // calls to inline, so what it needs is accumulators in registers (SROA), redundancy
  // removed (EarlyCSE, GVN), invariants hoisted out of the loops (LICM, after rotation),
  // small reduction loops unrolled, unrolled scalar code packed (SLP, where the schedule did
  // not vectorise: ScalarFunctionSLPPass) and two rounds of
  // InstCombine and SimplifyCFG. -O3's eight InstCombines were 20% of nl_means's compile
  // time and its loop unswitching copies loops on every guard. Measured on the benchmark
  // pipelines (bench/README.md): compile time down 25-50% (nl_means 151 -> 79 ms), run
  // time within the noise (0-8%). LLVM's loop vectoriser stays out: schedules vectorise
  // explicitly (`vectorize`, codegen_vector.cpp), as in Halide.
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass());
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::InstCombinePass());
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LoopRotatePass());
    lpm.addPass(llvm::LICMPass());
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::GVNPass());
  // Full unrolling only (constant trip counts under the threshold). LLVM's partial and
  // runtime unrolling are on where the CPU's scheduling model gives a loop buffer size
  // (znver3, which LLVM 14 calls Zen 4, but not the generic model it gives Zen 5): they
  // doubled nl_means's IR and its compile time on Zen 4 (247 -> 106 ms without them), and
  // the hand schedules ran no faster with them (two_pass_blur 19.3 ms with, 14.6 without;
  // bilateral_filter 349 and 311; bench/README.md). Schedules unroll explicitly (`unroll`),
  // as in Halide.
  fpm.addPass(llvm::LoopUnrollPass(llvm::LoopUnrollOptions(/*OptLevel=*/2)
                                       .setPartial(false)
                                       .setRuntime(false)
                                       .setUpperBound(false)));
  fpm.addPass(ScalarFunctionSLPPass());
  fpm.addPass(llvm::InstCombinePass());
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LICMPass());
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  fpm.addPass(llvm::SimplifyCFGPass());
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);
}

std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm,
                              llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  STIPPLE_INTERNAL_CHECK(!tm.addPassesToEmitFile(pm, os, nullptr, kind),
                         "target " + tm.getTargetTriple().str() + " cannot emit this file type");
  pm.run(m);
  return std::string(out.data(), out.size());
}

}  // namespace stipple::codegen
