// The code generator's private state, shared by codegen_stmt.cpp (statements, buffers,
// parallel closures) and codegen_expr.cpp (expressions). Not part of the library's API.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler_core/codegen/codegen_llvm.h"

namespace stipple::codegen {

/// The largest lane stride of a row read loaded as one stretch (row_stride), and the most
/// elements one load of such a stretch spans (wider rows are loaded in pieces).
inline constexpr int64_t kMaxRowStride = 8;
inline constexpr int64_t kMaxRowSpan = 128;
inline constexpr int64_t kMaxLaneDivisor = 16;
/// A gather of 1- or 2-byte elements from an allocation reads a word this wide at each
/// element (x86 gathers no bytes); allocations of such elements have this many bytes of
/// room after their last element.
inline constexpr int64_t kGatherWordBytes = 4;

/// A buffer in scope: an external one (loaded from its descriptor on entry) or a local
/// Allocate. Every field is an SSA value of the current function.
struct BufferInfo {
  std::string name;
  ScalarType type = ScalarType::Int32;
  int dims = 0;
  bool is_input = false;
  const InputDecl* decl = nullptr;                // inputs only
  llvm::Value* host = nullptr;                    // i8*
  std::vector<llvm::Value*> min, extent, stride;  // i64 each
  /// Outputs only (i1): larger than kStreamingStoreBytes, so whole-line vector stores
  /// bypass the cache (store_lanes); nullptr elsewhere.
  llvm::Value* stream = nullptr;
  /// Every element's offset fits in i32: allocations, which emit_allocate limits to fewer
  /// than 2^31 elements (lane_pointers computes gathers' offsets in i32 then).
  bool narrow_offsets = false;
  /// The constant stride of dimension 0 in elements (LoweredFunction::inner_strides): 1
  /// but for a caller's interleaved buffer. Only a buffer where it is 1 has dense rows.
  int64_t inner_stride = 1;
};

/// Whether `e` mentions any of `names` as a variable; with `or_loads`, also whether it
/// reads a func or an input, reduces or binds a Let (codegen_reductions.cpp).
bool mentions(const Expr& e, const std::set<std::string>& names, bool or_loads);

class CodeGen {
 public:
  CodeGen(const LoweredFunction& f, llvm::Module& module, const CodeGenTarget& target);
  /// Emits the entry point under `symbol`.
  void generate(const std::string& symbol);

 private:
  // ---- types and small helpers (codegen_stmt.cpp)
  llvm::Type* value_type(Type t);   // Bool is i1
  llvm::Type* memory_type(Type t);  // Bool is i8, f16 is i16 (its bits)
  llvm::Value* i32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  llvm::Value* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  llvm::AllocaInst* entry_alloca(llvm::Type* t, const std::string& name,
                                 llvm::Value* count = nullptr);
  llvm::BasicBlock* new_block(const std::string& name);
  llvm::FunctionCallee runtime(const std::string& name);
  void set_status(int32_t code);

  // ---- scope
  void push_var(const std::string& name, llvm::Value* v) { vars_.emplace_back(name, v); }
  void pop_var() { vars_.pop_back(); }
  llvm::Value* find_var(const std::string& name) const;
  const BufferInfo& find_buffer(const std::string& name) const;
  llvm::Value* element_pointer(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  /// `c` as an expression plus the constant its i64 add/sub spine adds (`x + 2` -> x, 2).
  std::pair<llvm::Value*, int64_t> split_constant_addend(llvm::Value* c);

  // ---- alias information (codegen_alias.cpp)
  /// Records the object `buf`'s host pointer points into (an allocation, a pointer loaded
  /// from a descriptor or a closure), so that its accesses are tagged as its own.
  void note_buffer(const BufferInfo& buf);
  /// Tags every load and store of a noted buffer, in every function of the module, with
  /// its buffer's TBAA tag: accesses to different buffers never alias.
  void tag_buffer_accesses();
  std::unordered_map<const llvm::Value*, std::string> buffer_objects_;

  // ---- statements (codegen_stmt.cpp)
  void emit(const Stmt& s);
  void emit_for(const For* op);
  void emit_parallel_for(const For* op, llvm::Value* min, llvm::Value* extent);
  /// A serial loop split into the iterations where the input reads it can analyse lie
  /// inside the image (emitted with those reads unchecked) and the rest; false, emitting
  /// nothing, when it has no such reads (codegen_loop_partition.cpp).
  bool emit_partitioned_loop(const For* op, llvm::Value* min, llvm::Value* extent);
  /// floor(a / k) of an i64 value and a positive constant.
  llvm::Value* floor_div_i64(llvm::Value* a, int64_t k);
  void emit_provide(const Provide* op);
  void emit_allocate(const Allocate* op);
  /// A loop running `body(i)` for i in [min, min + extent), i32 values.
  void emit_counted_loop(const std::string& name, llvm::Value* min, llvm::Value* extent,
                         const std::function<void(llvm::Value*)>& body);
  /// A loop for i in [lo, hi] inclusive (the caller has checked lo <= hi).
  void emit_inclusive_loop(const std::string& name, llvm::Value* lo, llvm::Value* hi,
                           const std::function<void(llvm::Value*)>& body);

  // ---- vector code (codegen_vector.cpp): a Vectorized loop of constant extent W is one
  // vector iteration; values that depend on its variable are <W x T> vectors, the rest
  // stay scalars and are broadcast where they meet vectors.
  /// Emits a Vectorized loop as vector code when its body allows; false when it does not
  /// (the caller then emits a scalar loop).
  bool emit_vector_for(const For* op, llvm::Value* min, llvm::Value* extent);
  bool vector_mode() const { return lanes_ > 1; }
  /// `v` broadcast to the current lanes (unchanged when already a vector or not vectorising).
  llvm::Value* widen(llvm::Value* v);
  /// Broadcasts one of a scalar/vector pair so that both have the same shape.
  void unify(llvm::Value*& a, llvm::Value*& c);
  /// `scalar` as a vector type when `like` is a vector.
  llvm::Type* shaped(llvm::Type* scalar, const llvm::Value* like) const;
  /// The lane stride of an i32 value: 0 for a scalar, s when the vector is known to be
  /// lane0 + s * <0, 1, ...>, nullopt when unknown.
  std::optional<int64_t> lane_stride(llvm::Value* v) const;
  void record_lane_stride(llvm::Value* result, IRNodeType op, llvm::Value* a, llvm::Value* c);
  /// The active lanes combined with `cond` (a vector i1), or its negation.
  llvm::Value* masked_with(llvm::Value* cond, bool negate);
  /// Loads/stores of buffer elements at i32 coordinates (scalars or vectors): one vector
  /// access when dimension 0 advances by one per lane and the others are uniform, else a
  /// gather/scatter; masked by the active lanes.
  llvm::Value* load_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  void store_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords,
                   llvm::Value* value);
  /// True when `coords` address consecutive elements lane by lane: dimension 0 advances
  /// by one per lane, the others are uniform and dimension 0 is dense (stride 1).
  bool dense_lanes(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) const;
  /// The stride s in memory of a row read: dimension 0 advances by a constant per lane,
  /// the other coordinates are uniform, and lane l reads the element s * l (1 to
  /// kMaxRowStride) past lane 0's, the coordinate step times the buffer's inner_stride;
  /// 0 otherwise. Rows with s > 1 (a grid perforated stage reading its producer at x * s,
  /// a channel of an interleaved image) are loaded as one contiguous stretch and shuffled
  /// (strided_row) rather than gathered lane by lane.
  int64_t row_stride(const BufferInfo& buf, const std::vector<llvm::Value*>& coords) const;
  /// Lanes base, base + s, ..., base + (lanes - 1) * s of memory at `p` (elements of type
  /// et): masked loads of the (lanes - 1) * s + 1 elements they span, in pieces of at most
  /// kMaxRowSpan (nothing past the last lane is touched), then shuffles. Under `mask`
  /// only the active lanes' elements are read; the others read zero.
  llvm::Value* strided_row(llvm::Type* et, llvm::Value* p, int64_t stride, llvm::Align align,
                           llvm::Value* mask = nullptr);
  llvm::Value* lane_pointers(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  /// Lanes reading a func's small table of bytes as lookups in registers (byte permutes,
  /// CodeGenTarget::byte_permutes); nullptr where that does not apply
  /// (codegen_byte_table.cpp).
  llvm::Value* byte_table_lookup(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  void emit_vector_if(const IfThenElse* op, llvm::Value* cond);
  /// Stipple's f32 exp of a scalar or of every lane, bit for bit stipple::exp_f32
  /// (compiler_core/runtime/exp_f32.h).
  llvm::Value* emit_expf(llvm::Value* x);
  /// A median with constant bounds as a sorting network over the lanes.
  llvm::Value* emit_vector_median(const Reduce* op);
  /// The lower median of `wires` by Batcher's network with `exchange` as its comparator
  /// (returning the lower and the upper output).
  llvm::Value* median_network(
      std::vector<llvm::Value*> wires,
      const std::function<std::pair<llvm::Value*, llvm::Value*>(llvm::Value*, llvm::Value*)>&
          exchange);
  /// The integer key a median sorts `v` by (or, with `inverse`, the value of a key).
  llvm::Value* median_key(llvm::Value* v, Type t, bool inverse);

  // ---- expressions (codegen_expr.cpp)
  llvm::Value* emit(const Expr& e);
  llvm::Value* emit_cast(ScalarType from, ScalarType to, llvm::Value* v);
  /// fpto[su]i.sat of a float vector v to the integer vector type ty, in vector
  /// instructions (emit_cast).
  llvm::Value* emit_saturating_vector_cast(ScalarType to, llvm::Value* v, llvm::Type* ty);
  // ---- f16 (codegen_f16.cpp): held as f32, converted at loads, stores and casts
  llvm::Value* f16_bits_to_f32(llvm::Value* h);
  llvm::Value* f32_to_f16_bits(llvm::Value* v);
  llvm::Value* f64_to_f32_round_odd(llvm::Value* d);
  llvm::Value* emit_round_to_f16(ScalarType from, llvm::Value* v);
  /// The f32 value of f16 bits that generated code stored (a func's, whose NaNs are all
  /// 0x7e00 with a sign): one F16C conversion where the target has it.
  llvm::Value* f16_func_bits_to_f32(llvm::Value* h);
  /// A loaded element as a value (Bool from i8, f16 from its bits), and back.
  llvm::Value* from_memory(Type t, llvm::Value* v);
  llvm::Value* to_memory(Type t, llvm::Value* v);
  llvm::Value* emit_binary(IRNodeType op, Type t, llvm::Value* a, llvm::Value* c);
  /// a * b + c rounded once (llvm.fma), scalars broadcast to the vector operands' shape.
  llvm::Value* emit_fma(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  llvm::Value* emit_compare(IRNodeType op, Type operand, llvm::Value* a, llvm::Value* c);
  llvm::Value* emit_div_mod(bool is_div, Type t, llvm::Value* a, llvm::Value* c);
  // ---- division by a function-invariant divisor (codegen_division.cpp)
  /// i32 `a / divisor` or `a % divisor` for a divisor made of params, input extents and
  /// constants (not a constant itself): a multiply and shifts by numbers computed once in
  /// the entry block; nullptr when `divisor` is not such a value.
  llvm::Value* emit_invariant_div_mod(bool is_div, Type t, llvm::Value* a, const Expr& divisor);
  struct DivisorMagic {
    llvm::Value* negative;    // i1: divisor < 0
    llvm::Value* nonzero;     // i32: -1, or 0 for a zero divisor
    llvm::Value* magnitude;   // i32 a: |divisor| read as unsigned, 1 for 0
    llvm::Value* multiplier;  // i32 m, read as unsigned: ceil(2^shift / a)
    llvm::Value* shift;       // i64: 31 + ceil(log2 a)
  };
  /// The divisor's magic numbers, emitted in `invariant_block_` on first use.
  const DivisorMagic& divisor_magic(const Expr& divisor);
  /// The current function's entry block (it dominates every loop): where values the same
  /// for the whole function are computed, before its terminator.
  llvm::BasicBlock* invariant_block_ = nullptr;
  std::map<std::string, DivisorMagic> divisor_magic_;  // by the divisor's printed text
  llvm::Value* emit_select(const Select* op);
  llvm::Value* emit_logical(bool is_and, const Expr& a, const Expr& c);
  llvm::Value* emit_call(const Call* op);
  /// A coordinate of a func buffer access (Provide or func Call): emit(e) with the scalar
  /// i32 adds, subtractions and multiplications of its linear spine marked nsw, the vector
  /// ones noted for lane0_index() (codegen_index.cpp says why that is sound).
  llvm::Value* emit_func_index(const Expr& e);
  /// Lane 0 of an i32 coordinate (the value itself for a scalar) as an i64 index: the
  /// spine emit_func_index made, rebuilt in i64 with nsw and the sign extension at its
  /// leaves (so that sibling coordinates share their extended terms).
  llvm::Value* lane0_index(llvm::Value* c);
  /// The element lane 0 of an access at `coords` addresses (dense, strided and window
  /// accesses start there).
  llvm::Value* lane0_pointer(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  /// Lane 0 of v up to multiples of s (a power of two): a window's phase without the
  /// loop's own terms (codegen_vector.cpp).
  llvm::Value* phase_terms(llvm::Value* v, int64_t s);
  llvm::Value* emit_intrinsic(const Call* op);
  llvm::Value* emit_input_load(const Call* op);
  /// An input read at i32 coordinates (scalars or vectors) with the input's boundary.
  llvm::Value* input_with_boundary(const BufferInfo& buf, Type type,
                                   const std::vector<llvm::Value*>& coords_i32);
  /// The i64 coordinate `c` (scalar or vector) of dimension `d` mapped inside the image by
  /// the input's boundary condition; under a constant boundary also ORs "c is outside"
  /// into `*outside` (null: none yet), where the constant replaces the value read.
  llvm::Value* boundary_coordinate(const BufferInfo& buf, int d, llvm::Value* c,
                                   llvm::Value** outside);
  /// The constant boundary's value as an element of `type`.
  llvm::Value* boundary_constant(const BufferInfo& buf, Type type);
  /// A read of `coords` (scalars, or a gather of lanes) with no boundary check: the caller
  /// knows every lane is inside the image.
  llvm::Value* input_inside(const BufferInfo& buf, Type type,
                            const std::vector<llvm::Value*>& coords_i32);
  /// The element (scalar coordinates) or lanes (a gather) at i64 coordinates inside the
  /// image.
  llvm::Value* load_input(const BufferInfo& buf, Type type,
                          const std::vector<llvm::Value*>& coords);
  /// A vector read of the input row at `coords` (dimension 0 dense), with no boundary
  /// check: the caller knows the row is inside the image.
  llvm::Value* input_row(const BufferInfo& buf, Type type, const std::vector<llvm::Value*>& coords);
  /// A prefetch of the element `stride[1]` elements past `p` (element type `et`): the same
  /// columns of the input's next row.
  void prefetch_next_row(const BufferInfo& buf, llvm::Type* et, llvm::Value* p);
  /// Whether the row of lanes at `coords` (dimension 0 dense) lies inside the image.
  llvm::Value* row_inside(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  /// row_inside in dimension 0 only: whether the lanes' span lies inside the image's width.
  llvm::Value* lanes_inside(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  llvm::Value* emit_reduce(const Reduce* op);
  llvm::Value* emit_reduce_body(const Reduce* op);  // emit_reduce without the bookkeeping
  /// Emits `emit_copy` (the code of a group of reductions over one domain, returning their
  /// values) once, or, in vector code when the reductions read input rows at coordinates
  /// affine in their variables, twice: a copy with those reads unchecked, taken when every
  /// corner of the domain reads inside the image, and the general copy
  /// (codegen_input_rows.cpp).
  std::vector<llvm::Value*> versioned_for_input_rows(
      const std::vector<const Reduce*>& group,
      const std::function<std::vector<llvm::Value*>()>& emit_copy);
  /// Emits every group of two or more fold reductions over the same domain that `value`
  /// always evaluates as one loop nest (codegen_reductions.cpp); emit_reduce then returns
  /// their values from fused_values_.
  void emit_fused_reductions(const Expr& value);
  /// Sum/prod/minimum/maximum reductions over one domain, in one loop nest.
  std::vector<llvm::Value*> emit_folds(const std::vector<const Reduce*>& group);
  llvm::Value* constant_of(Type t, double v);
  llvm::Value* unary_intrinsic(llvm::Intrinsic::ID id, llvm::Value* v);
  /// A C library function (a StippleLibmOp; y only for pow, atan2 and hypot) of scalars
  /// or of all lanes.
  llvm::Value* libm(int32_t op, llvm::Value* x, llvm::Value* y);
  /// Runs `per_point()` over the domain of a group of reductions (the same for all, each
  /// with its own variable names, all bound at every point), first variable innermost.
  /// `empty` is true when the domain is empty (no point evaluated).
  void emit_reduction_loops(const std::vector<const Reduce*>& group, llvm::Value** empty,
                            const std::function<void()>& per_point);

  const LoweredFunction& f_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  const CodeGenTarget target_;
  llvm::Function* fn_ = nullptr;        // the function being generated
  llvm::AllocaInst* status_ = nullptr;  // its i32 error code
  int closure_count_ = 0;
  bool streaming_stores_ = false;  // the current function emitted a non-temporal store

  int lanes_ = 1;                       // lanes of the vector loop being emitted, 1 outside one
  llvm::Value* mask_ = nullptr;         // active lanes (<lanes x i1>); null: all lanes active
  int64_t masked_loads_ = 0;            // masked func loads emitted so far (emit_vector_if)
  int64_t unversioned_under_mask_ = 0;  // reductions left unversioned under a mask, so far
  int reduction_depth_ = 0;             // reductions whose body is being emitted
  std::unordered_map<llvm::Value*, int64_t> lane_strides_;  // see lane_stride()
  /// The vector Add/Sub/Mul of func coordinates' spines (emit_func_index), for lane0_index().
  std::unordered_set<llvm::Value*> index_spine_;
  /// Vectors that are n / s plus a uniform offset, n advancing by one per lane and s a
  /// constant from 2 to kMaxLaneDivisor (a read of grid samples at x / s, an upsampling):
  /// lane l is lane 0 plus (phase + l) / s, where phase is lane 0's n modulo s
  /// (window_load).
  struct LaneDivision {
    llvm::Value* numerator;
    int64_t divisor;
  };
  std::unordered_map<llvm::Value*, LaneDivision> lane_divisions_;
  void record_lane_division(llvm::Value* result, llvm::Value* numerator, const Expr& divisor);
  /// A load of lanes whose dimension-0 coordinates are a LaneDivision (the others
  /// uniform, no mask): a masked load of the elements the lanes cover and a shuffle, one
  /// per phase, chosen by a branch on the phase. nullptr when not such a load.
  llvm::Value* window_load(const BufferInfo& buf, const std::vector<llvm::Value*>& coords);
  /// A read-only zero of type `t` in the module: what a uniform load under a mask with no
  /// lane active reads instead of its element (load_lanes).
  llvm::Constant* zero_slot(llvm::Type* t);
  std::map<llvm::Type*, llvm::GlobalVariable*> zero_slots_;
  /// Input reads known to lie inside the image where they are being emitted
  /// (versioned_for_input_rows, emit_partitioned_loop): read without a check.
  std::set<const Call*> inside_rows_;
  /// Input reads whose loop was partitioned, while its general (edge) copy is emitted:
  /// reductions over only these are not versioned (emit_partitioned_loop).
  std::set<const Call*> edge_reads_;
  /// Guards known to hold where they are being emitted (a partitioned loop's interior):
  /// their body runs unconditionally.
  std::set<const IfThenElse*> true_guards_;
  /// Guards of a partitioned loop while its general copy is emitted: their vector bodies
  /// get no unmasked copy (emit_vector_if).
  std::set<const IfThenElse*> edge_guards_;
  std::map<const Reduce*, llvm::Value*> fused_values_;  // see emit_fused_reductions

  std::vector<std::pair<std::string, llvm::Value*>> vars_;  // innermost last
  std::vector<BufferInfo> buffers_;                         // innermost last
  std::map<std::string, llvm::Value*> params_;              // converted to their types
};

}  // namespace stipple::codegen
