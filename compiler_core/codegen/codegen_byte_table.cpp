// Vector reads of a small table of bytes (a tone curve, a gamma table: camera_pipe's
// 1024-entry u8 curve) as lookups in registers.
//
// A vector of lanes reading such a table at data-dependent indices is otherwise a gather:
// x86 gathers no bytes, so a vpgatherdd of the i32 word at each element (load_lanes). On
// AMD's cores a 16-lane gather costs tens of cycles; the two gathers of camera_pipe's
// curve per 32 pixels were 42% of its run time. With AVX-512 VBMI, vpermi2b picks 64
// bytes out of 128 by the low 7 bits of 64 byte indices in one instruction. The table,
// loaded 128 bytes at a time (loop-invariant loads LICM hoists out of the pixel loop:
// a func's buffer carries its own alias tag), is looked up chunk by chunk: for chunk t
// every lane permutes, and the lanes whose index lies in that chunk (index / 128 == t)
// keep the result. A table of n bytes costs ceil(n / 128) permutes, compares and selects
// per vector of up to 64 lanes, and no memory access per lane, so no lane can fault:
// masked-off lanes look up whatever index they hold and read zero afterwards, as the
// masked gather would give.
//
// It applies to buffers of one dimension and 1-byte elements whose size is a
// compile-time constant (func allocations), a multiple of 64 up to kMaxPermutedTableBytes
// (the sizes of tables indexed by bits: 64, 256, 1024), so that the table is whole
// vectors, loaded plainly and hoisted (LLVM 14 hoists no masked load); and only where a
// vector has at least 4 lanes per chunk, so that the permutes, compares and selects stay
// fewer than the gather's cost per lane: measured on Zen 5 at 32 lanes and 8 chunks.
// Inputs, whose extents are known only when called, keep the gather: the size test is all
// it takes.
#include <llvm/IR/IntrinsicsX86.h>

#include "compiler_core/codegen/codegen_internal.h"

namespace stipple::codegen {

namespace {

/// Tables up to this size are looked up by permutes: 8 chunks of 128 bytes, 16 zmm
/// registers of table next to the loop's own, against a gather per 16 lanes.
constexpr int64_t kMaxPermutedTableBytes = 1024;
/// The lanes of one byte permute (a 512-bit vector of bytes).
constexpr int kPermuteLanes = 64;
/// The table bytes one permute chooses from (two vectors).
constexpr int64_t kChunkBytes = 2 * kPermuteLanes;
/// The fewest lanes a vector needs per chunk of its table (see above).
constexpr int64_t kMinLanesPerChunk = 4;

}  // namespace

llvm::Value* CodeGen::byte_table_lookup(const BufferInfo& buf,
                                        const std::vector<llvm::Value*>& coords) {
  if (!target_.byte_permutes || buf.dims != 1 || bytes_of(buf.type) != 1 || buf.inner_stride != 1 ||
      lanes_ > kPermuteLanes || coords.size() != 1 || !coords[0]->getType()->isVectorTy()) {
    return nullptr;
  }
  const auto* extent = llvm::dyn_cast<llvm::ConstantInt>(buf.extent[0]);
  if (!extent) return nullptr;
  const int64_t n = extent->getSExtValue();
  const int64_t chunks = (n + kChunkBytes - 1) / kChunkBytes;
  if (n < 1 || n > kMaxPermutedTableBytes || n % kPermuteLanes != 0 ||
      chunks * kMinLanesPerChunk > lanes_) {
    return nullptr;
  }
  llvm::Type* byte = b_.getInt8Ty();
  auto* bytes64 = llvm::FixedVectorType::get(byte, kPermuteLanes);

  // Each lane's element index from the buffer's min (0 <= index < n for every active lane:
  // lowering allocates the region its readers read), repeated to fill 64 lanes.
  llvm::Value* min = b_.CreateTrunc(buf.min[0], b_.getInt32Ty());
  llvm::Value* index = b_.CreateSub(coords[0], b_.CreateVectorSplat(lanes_, min));
  std::vector<int> repeat(kPermuteLanes);
  for (int l = 0; l < kPermuteLanes; ++l) repeat[l] = l % lanes_;
  index = b_.CreateShuffleVector(index, index, repeat);
  // vpermi2b reads the low 7 bits of a byte index; the chunk is index / 128 (< 8).
  llvm::Value* low = b_.CreateTrunc(index, bytes64);
  llvm::Value* chunk_of_lane = b_.CreateTrunc(b_.CreateLShr(index, 7), bytes64);

  llvm::Function* permute =
      llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_avx512_vpermi2var_qi_512);
  llvm::Value* table = b_.CreateBitCast(buf.host, byte->getPointerTo());
  // 64 bytes of the table from `offset`; past its end (the second half of the last
  // chunk of a table of 64 * odd bytes, which no lane reads) zero.
  auto table_vector = [&](int64_t offset) -> llvm::Value* {
    if (offset >= n) return llvm::Constant::getNullValue(bytes64);
    llvm::Value* p = b_.CreateBitCast(b_.CreateConstInBoundsGEP1_64(byte, table, offset),
                                      bytes64->getPointerTo());
    return b_.CreateAlignedLoad(bytes64, p, llvm::Align(1));
  };
  llvm::Value* result = llvm::Constant::getNullValue(bytes64);
  for (int64_t t = 0; t < chunks; ++t) {
    llvm::Value* looked_up = b_.CreateCall(
        permute,
        {table_vector(t * kChunkBytes), low, table_vector(t * kChunkBytes + kPermuteLanes)});
    llvm::Value* in_chunk = b_.CreateICmpEQ(
        chunk_of_lane, b_.CreateVectorSplat(kPermuteLanes, b_.getInt8(static_cast<uint8_t>(t))));
    result = t == 0 ? looked_up : b_.CreateSelect(in_chunk, looked_up, result);
  }
  std::vector<int> first(lanes_);
  for (int l = 0; l < lanes_; ++l) first[l] = l;
  result = b_.CreateShuffleVector(result, result, first);
  if (mask_)
    result = b_.CreateSelect(mask_, result, llvm::Constant::getNullValue(result->getType()));
  return result;
}

}  // namespace stipple::codegen
