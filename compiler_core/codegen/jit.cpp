// ORC LLJIT for the host: one JITDylib holds every compiled function; each compile builds
// its module in its own LLVMContext, optimises it with the new pass manager at -O3 and
// emits an object with its own TargetMachine (so compiles never share mutable LLVM
// state), then adds the object under a fresh ResourceTracker.
#include "compiler_core/codegen/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <mutex>

#include "compiler_core/ir/error.h"
#include "compiler_core/runtime/thread_pool.h"

namespace stipple::codegen {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

[[noreturn]] void fail(const std::string& what, llvm::Error e) {
  throw_internal_error(__FILE__, __LINE__, what + ": " + llvm::toString(std::move(e)));
}

template <typename T>
T unwrap(llvm::Expected<T> v, const std::string& what) {
  if (!v) fail(what, v.takeError());
  return std::move(*v);
}

void init_llvm_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

}  // namespace

struct CompiledFunction::Tracker {
  llvm::orc::ResourceTrackerSP rt;
};

CompiledFunction::~CompiledFunction() {
  if (tracker_ && tracker_->rt) {
    // Removal only fails if the session is already gone; nothing to do about it here.
    llvm::consumeError(tracker_->rt->remove());
  }
}

struct JitCompiler::Impl {
  llvm::orc::JITTargetMachineBuilder jtmb;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string cpu, features;
  std::atomic<uint64_t> next_symbol{0};

  explicit Impl(llvm::orc::JITTargetMachineBuilder b) : jtmb(std::move(b)) {}

  /// The module for `f`, ready for the host: target attributes on every function.
  std::unique_ptr<llvm::Module> build(const LoweredFunction& f, const std::string& symbol,
                                      llvm::LLVMContext& ctx, llvm::TargetMachine& tm) {
    std::unique_ptr<llvm::Module> m = generate_module(f, symbol, ctx);
    m->setDataLayout(tm.createDataLayout());
    m->setTargetTriple(tm.getTargetTriple().str());
    for (llvm::Function& fn : *m) {
      if (fn.isDeclaration()) continue;
      fn.addFnAttr("target-cpu", cpu);
      fn.addFnAttr("target-features", features);
      fn.addFnAttr(llvm::Attribute::NoUnwind);
    }
    return m;
  }

  static void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
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
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }

  std::unique_ptr<llvm::TargetMachine> target_machine() {
    return unwrap(jtmb.createTargetMachine(), "cannot create a target machine");
  }
};

JitCompiler::JitCompiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitCompiler::~JitCompiler() = default;

std::unique_ptr<JitCompiler> JitCompiler::create() {
  init_llvm_once();
  // detectHost takes the CPU name and features from sys::getHostCPUName and
  // sys::getHostCPUFeatures: code may use every ISA extension the host has.
  auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "cannot detect the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  auto impl = std::make_unique<Impl>(jtmb);
  impl->cpu = jtmb.getCPU();
  impl->features = jtmb.getFeatures().getString();
  impl->jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(),
                     "cannot create the JIT");
  llvm::orc::JITDylib& jd = impl->jit->getMainJITDylib();
  // The runtime the generated code calls, by address (the executable need not export it);
  // libm and libc (expf, memset) from the process.
  llvm::orc::SymbolMap runtime;
  auto add = [&](const char* name, void* address) {
    runtime[impl->jit->mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(address), llvm::JITSymbolFlags::Exported);
  };
  add("stipple_parallel_for", reinterpret_cast<void*>(&stipple_parallel_for));
  add("stipple_malloc", reinterpret_cast<void*>(&stipple_malloc));
  add("stipple_free", reinterpret_cast<void*>(&stipple_free));
  add("stipple_median_f64", reinterpret_cast<void*>(&stipple_median_f64));
  if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    fail("cannot define the runtime symbols", std::move(e));
  }
  jd.addGenerator(unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                             impl->jit->getDataLayout().getGlobalPrefix()),
                         "cannot search the process for symbols"));
  return std::unique_ptr<JitCompiler>(new JitCompiler(std::move(impl)));
}

const std::string& JitCompiler::host_cpu() const { return impl_->cpu; }
const std::string& JitCompiler::host_features() const { return impl_->features; }

std::unique_ptr<CompiledFunction> JitCompiler::compile(const LoweredFunction& f) {
  const auto start = Clock::now();
  std::unique_ptr<CompiledFunction> out(new CompiledFunction());
  out->symbol_ = "stipple_fn_" + std::to_string(impl_->next_symbol.fetch_add(1));

  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::TargetMachine> tm = impl_->target_machine();
  auto t = Clock::now();
  std::unique_ptr<llvm::Module> m = impl_->build(f, out->symbol_, *ctx, *tm);
  out->stats_.generate_ms = ms_since(t);

  t = Clock::now();
  Impl::optimize(*m, *tm);
  out->stats_.optimize_ms = ms_since(t);

  t = Clock::now();
  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    STIPPLE_INTERNAL_CHECK(!tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile),
                           "the host target cannot emit object files");
    pm.run(*m);
  }
  out->stats_.codegen_ms = ms_since(t);

  t = Clock::now();
  out->tracker_ = std::make_unique<CompiledFunction::Tracker>();
  out->tracker_->rt = impl_->jit->getMainJITDylib().createResourceTracker();
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()),
                                                     out->symbol_);
  if (llvm::Error e = impl_->jit->addObjectFile(out->tracker_->rt, std::move(buffer))) {
    fail("cannot add compiled code to the JIT", std::move(e));
  }
  llvm::JITEvaluatedSymbol sym =
      unwrap(impl_->jit->lookup(out->symbol_), "cannot link " + out->symbol_);
  out->entry_ = reinterpret_cast<EntryPoint>(static_cast<uintptr_t>(sym.getAddress()));
  out->stats_.link_ms = ms_since(t);
  out->stats_.total_ms = ms_since(start);
  return out;
}

std::string JitCompiler::llvm_ir(const LoweredFunction& f, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm = impl_->target_machine();
  std::unique_ptr<llvm::Module> m = impl_->build(f, "stipple_ir_dump", ctx, *tm);
  if (optimized) Impl::optimize(*m, *tm);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return os.str();
}

}  // namespace stipple::codegen
