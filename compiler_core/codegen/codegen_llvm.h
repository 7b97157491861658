// LLVM IR generation for lowered Stipple loop nests (statements and expressions of
// compiler_core/ir/ir.h), with the calling convention that lowering targets. The code it
// produces matches the reference evaluator bit for bit (see README.md for the exceptions
// measured in libm calls, and for the convention itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/lowered_function.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/runtime/buffer.h"
#include "compiler_core/runtime/codegen_runtime.h"  // the helpers generated code calls

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace stipple::codegen {

inline constexpr int kMaxBufferDims = 8;

/// A buffer as generated code sees it; the layout is part of the calling convention.
struct BufferDescriptor {
  void* host = nullptr;
  int32_t type = 0;  // a ScalarType, checked on entry
  int32_t dimensions = 0;
  BufferDim dim[kMaxBufferDims] = {};  // min, extent, stride (elements), int64 each
};
static_assert(offsetof(BufferDescriptor, type) == 8);
static_assert(offsetof(BufferDescriptor, dimensions) == 12);
static_assert(offsetof(BufferDescriptor, dim) == 16);
static_assert(sizeof(BufferDescriptor) == 16 + 24 * kMaxBufferDims);

/// What generated code returns.
enum ErrorCode : int32_t {
  kOk = 0,
  kErrorBufferMismatch = 1,  // a descriptor's type or dimension count is not the declared one
  kErrorOutOfMemory = 2,     // a heap Allocate or a large median's scratch failed
};

/// The generated function: returns an ErrorCode.
using EntryPoint = int32_t (*)(const BufferDescriptor* buffers, const double* params);

/// What code generation may use of the target beyond LLVM's generic IR (codegen_target in
/// target_machine.h reads it off a TargetMachine). The default is portable IR.
struct CodeGenTarget {
  /// x86 AVX-512 VBMI's byte permutes (vpermi2b): vector reads of a small byte table
  /// become table lookups in registers instead of gathers (codegen_byte_table.cpp).
  bool byte_permutes = false;
  /// A float compare and select is one min or max instruction (x86: vminps/vmaxps): a
  /// float median runs a network of those before the integer keys' (emit_vector_median).
  /// Elsewhere (AArch64 has no such instruction without fast-math flags) a comparator
  /// would cost three instructions against the keys' two, so the keys alone.
  bool float_select_min_max = false;
  /// x86 F16C (vcvtph2ps, vcvtps2ph): f16 values of funcs convert in one instruction per
  /// vector instead of the portable integer steps (codegen_f16.cpp).
  bool f16_conversions = false;
};

/// Generates a module defining `symbol` with the EntryPoint signature (plus private
/// closure functions for parallel loops). Throws InternalError on IR it cannot handle
/// (an unbound variable, a Provide to an unknown buffer, a type mismatch).
std::unique_ptr<llvm::Module> generate_module(const LoweredFunction& f, const std::string& symbol,
                                              llvm::LLVMContext& context,
                                              const CodeGenTarget& target = {});

/// A descriptor of a Buffer (which must outlive every use of the descriptor).
BufferDescriptor describe(Buffer& buffer);
BufferDescriptor describe(const Buffer& buffer);

/// A func's buffer (an allocation of generated code) holds fewer elements than this, so
/// that offsets within it are i32 values, as Halide limits its buffers to 2^31 bytes: a
/// gather of 16 lanes is then one instruction over i32 offsets instead of two over i64
/// ones (bilateral_grid's slice 0.9x). A larger allocation fails with kErrorOutOfMemory.
/// Inputs and outputs, the caller's buffers, have no such limit.
inline constexpr int64_t kMaxAllocationElements = int64_t{1} << 31;

/// Outputs above this size are written with non-temporal stores where a vector store
/// covers whole aligned cache lines: half a 32 MiB last-level cache, so that the output
/// and the inputs it is computed from do not fit in it together, the stored lines would
/// be evicted before anyone reads them, and a normal store first reads each line from
/// memory (a third more traffic for a DRAM-bound stencil; glibc's memcpy makes the same
/// choice above a threshold). At 64 MiB (twice the cache) the 1920x1080 RGB f32 outputs
/// (24 MiB) were cached stores: 16 MiB made blur3x3 22% and demosaic 20% faster, and
/// unsharp_mask 7-9%, with compute-bound pipelines unchanged (bench/README.md). A machine
/// with a much larger cache would want a larger threshold; glibc's figure for the cache
/// is not to be trusted under a hypervisor (it said 320 MiB for this VM's 32), so it is
/// a constant.
constexpr int64_t kStreamingStoreBytes = int64_t{16} << 20;

}  // namespace stipple::codegen
