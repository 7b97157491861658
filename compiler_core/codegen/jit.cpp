// ORC LLJIT for the host: one JITDylib holds every compiled function; each compile builds
// its module in its own LLVMContext, optimises it with the new pass manager at -O3 and
// emits an object with its own TargetMachine (so compiles never share mutable LLVM
// state), then adds the object under a fresh ResourceTracker. The target, pass pipeline
// and emission are target_machine.h's, shared with ahead-of-time compilation (aot.h).
#include "compiler_core/codegen/jit.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/JITEventListener.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/Object/SymbolSize.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "compiler_core/codegen/target_machine.h"
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

// Writes the symbols of every object the JIT loads to /tmp/perf-PID.map, the format perf
// reads for JIT code, and each object to /tmp/perf-PID.N.o. Debian's LLVM 14 is built without
// LLVM_USE_PERF, so its own PerfJITEventListener is not there.
class PerfMapListener : public llvm::JITEventListener {
 public:
  void notifyObjectLoaded(ObjectKey, const llvm::object::ObjectFile& obj,
                          const llvm::RuntimeDyld::LoadedObjectInfo& info) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!out_) {
      out_ = std::fopen(("/tmp/perf-" + std::to_string(::getpid()) + ".map").c_str(), "a");
      if (!out_) return;
    }
    for (const auto& [symbol, size] : llvm::object::computeSymbolSizes(obj)) {
      llvm::Expected<llvm::object::SymbolRef::Type> type = symbol.getType();
      llvm::Expected<llvm::StringRef> name = symbol.getName();
      llvm::Expected<uint64_t> address = symbol.getAddress();
      llvm::Expected<llvm::object::section_iterator> section = symbol.getSection();
      if (!type || !name || !address || !section || *type != llvm::object::SymbolRef::ST_Function ||
          *section == obj.section_end()) {
        llvm::consumeError(type.takeError());
        llvm::consumeError(name.takeError());
        llvm::consumeError(address.takeError());
        llvm::consumeError(section.takeError());
        continue;
      }
      const uint64_t load = info.getSectionLoadAddress(**section);
      const uint64_t start = load + *address - (*section)->getAddress();
      std::fprintf(out_, "%llx %llx %s\n", static_cast<unsigned long long>(start),
                   static_cast<unsigned long long>(size), name->str().c_str());
    }
    std::fflush(out_);
    // perf cannot disassemble JIT code it has no file for: the object itself goes next to
    // the map, so `objdump -d` of it gives the instructions at a symbol's offsets.
    const std::string object =
        "/tmp/perf-" + std::to_string(::getpid()) + "." + std::to_string(objects_++) + ".o";
    if (std::FILE* f = std::fopen(object.c_str(), "wb")) {
      std::fwrite(obj.getData().data(), 1, obj.getData().size(), f);
      std::fclose(f);
    }
  }

 private:
  std::mutex mutex_;
  std::FILE* out_ = nullptr;
  int objects_ = 0;
};

}  // namespace

struct CompiledFunction::Tracker {
  llvm::orc::ResourceTrackerSP rt;
  // Loaded code's JITDylib of its own (JitCompiler::load), removed with it.
  llvm::orc::ExecutionSession* session = nullptr;
  llvm::orc::JITDylib* dylib = nullptr;
};

CompiledFunction::~CompiledFunction() {
  if (!tracker_) return;
  // Removal only fails if the session is already gone; nothing to do about it here.
  if (tracker_->dylib) {
    // The tracker first (its resources go to the dylib's default tracker), then the dylib
    // with all it holds: a tracker released after its dylib's removal makes a new default
    // tracker for the defunct dylib, which nothing frees.
    tracker_->rt = nullptr;
    llvm::consumeError(tracker_->session->removeJITDylib(*tracker_->dylib));
  } else if (tracker_->rt) {
    llvm::consumeError(tracker_->rt->remove());
  }
}

struct JitCompiler::Impl {
  TargetSpec target;  // the host, as target_machine.h detects it
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<uint64_t> next_symbol{0};

  /// The module for `f`, ready for the host: target attributes on every function.
  std::unique_ptr<llvm::Module> build(const LoweredFunction& f, const std::string& symbol,
                                      llvm::LLVMContext& ctx, llvm::TargetMachine& tm) {
    std::unique_ptr<llvm::Module> m = generate_module(f, symbol, ctx, codegen_target(tm));
    prepare_module(*m, tm);
    return m;
  }

  std::unique_ptr<llvm::TargetMachine> target_machine() {
    return create_target_machine(target, TargetUse::Jit);
  }
};

JitCompiler::JitCompiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitCompiler::~JitCompiler() = default;

std::unique_ptr<JitCompiler> JitCompiler::create() {
  initialize_llvm_targets();
  // host_target takes the CPU name and features from sys::getHostCPUName and
  // sys::getHostCPUFeatures: code may use every ISA extension the host has.
  return create(host_target());
}

std::unique_ptr<JitCompiler> JitCompiler::create(const TargetSpec& target) {
  initialize_llvm_targets();
  auto impl = std::make_unique<Impl>();
  impl->target = target;
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(impl->target.triple)};
  jtmb.setCPU(impl->target.cpu);
  jtmb.getFeatures() = llvm::SubtargetFeatures(impl->target.features);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  llvm::orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(jtmb);
  // STIPPLE_JIT_PERF=1 tells `perf` the JIT's symbols (/tmp/perf-PID.map, which perf
  // report reads by itself): every parallel loop body is a function named after its stage and loop,
  // so a profile splits the run time by stage.
  if (const char* perf = std::getenv("STIPPLE_JIT_PERF"); perf && *perf && *perf != '0') {
    builder.setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession& es, const llvm::Triple&) {
      auto layer = std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
          es, [] { return std::make_unique<llvm::SectionMemoryManager>(); });
      static PerfMapListener listener;
      layer->registerJITEventListener(listener);
      return llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>>(std::move(layer));
    });
  }
  impl->jit = unwrap(builder.create(), "cannot create the JIT");
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
  add("stipple_libm_lanes", reinterpret_cast<void*>(&stipple_libm_lanes));
  if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    fail("cannot define the runtime symbols", std::move(e));
  }
  jd.addGenerator(unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                             impl->jit->getDataLayout().getGlobalPrefix()),
                         "cannot search the process for symbols"));
  return std::unique_ptr<JitCompiler>(new JitCompiler(std::move(impl)));
}

std::string code_generator_version() {
  std::string v = LLVM_VERSION_STRING;
  const char* options = std::getenv("STIPPLE_LLVM_OPTIONS");
  if (options && *options) v += std::string(" (STIPPLE_LLVM_OPTIONS=") + options + ")";
  return v;
}

HostCpu jit_host_cpu() {
  const TargetSpec t = host_target();
  return {t.cpu, t.features};
}

const std::string& JitCompiler::host_cpu() const { return impl_->target.cpu; }
const std::string& JitCompiler::host_features() const { return impl_->target.features; }

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
  optimize_module(*m, *tm);
  out->stats_.optimize_ms = ms_since(t);

  t = Clock::now();
  std::string object = emit_machine_code(*m, *tm, llvm::CGFT_ObjectFile);
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
  out->object_ = std::move(object);
  return out;
}

std::unique_ptr<CompiledFunction> JitCompiler::load(const std::string& object,
                                                    const std::string& symbol) {
  const auto start = Clock::now();
  std::unique_ptr<CompiledFunction> out(new CompiledFunction());
  out->symbol_ = symbol;
  out->object_ = object;
  llvm::Expected<llvm::orc::JITDylib&> jd = impl_->jit->createJITDylib(
      "stipple_loaded_" + std::to_string(impl_->next_symbol.fetch_add(1)));
  if (!jd) throw UserError("cannot load stored code: " + llvm::toString(jd.takeError()));
  // The runtime symbols are the main JITDylib's (defined there, or found in the process).
  jd->addToLinkOrder(impl_->jit->getMainJITDylib());
  out->tracker_ = std::make_unique<CompiledFunction::Tracker>();
  out->tracker_->rt = jd->createResourceTracker();
  out->tracker_->session = &impl_->jit->getExecutionSession();
  out->tracker_->dylib = &*jd;
  auto buffer =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), symbol);
  if (llvm::Error e = impl_->jit->addObjectFile(out->tracker_->rt, std::move(buffer))) {
    throw UserError("cannot load stored code: " + llvm::toString(std::move(e)));
  }
  llvm::Expected<llvm::JITEvaluatedSymbol> sym = impl_->jit->lookup(*jd, symbol);
  if (!sym) {
    throw UserError("cannot load stored code: no entry point " + symbol + ": " +
                    llvm::toString(sym.takeError()));
  }
  out->entry_ = reinterpret_cast<EntryPoint>(static_cast<uintptr_t>(sym->getAddress()));
  out->stats_.link_ms = out->stats_.total_ms = ms_since(start);
  return out;
}

std::string JitCompiler::llvm_ir(const LoweredFunction& f, bool optimized) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::TargetMachine> tm = impl_->target_machine();
  std::unique_ptr<llvm::Module> m = impl_->build(f, "stipple_ir_dump", ctx, *tm);
  if (optimized) optimize_module(*m, *tm);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return os.str();
}

}  // namespace stipple::codegen
