// The Stipple IR: expression and statement nodes, in the manner of Halide's IR.
//
// Semantics (the reference evaluator implements exactly these; back ends must match):
// - Integer arithmetic wraps modulo 2^bits (u8, u16, u32 unsigned; i8, i16, i32 two's
//   complement): u32 4294967295 + 1 == 0, i8 127 + 1 == -128. Unsigned types divide,
//   compare and convert to float as unsigned numbers. Both operands of a binary node have
//   one type: the language never converts implicitly between two typed operands.
// - f16 (IEEE binary16) is a storage type. Only these nodes may have type f16: FloatImm,
//   Cast (to f16: rounds to nearest even, an f64 directly and not through f32; 1/3 gives
//   0.333251953125, 65520 and above give infinity; from f16: exact), Call (a load of an
//   f16 func or input), Variable, Param, Select, Let and the comparisons' operands; no
//   arithmetic, Min, Max, intrinsic or Reduce is made of f16 operands (their makers
//   refuse). The language widens every f16 value used in an expression to f32, so f16
//   arithmetic happens in f32, and a func or output whose value is f16 stores it rounded.
//   Back ends hold an f16 value in an f32 register (its exact widening) and convert at
//   loads and stores, with the integer steps of ir/scalar_ops.h (NaN becomes 0x7e00).
// - Integer `/` rounds towards negative infinity and `%` is Euclidean (the result is
//   never negative); for integers x / 0 == 0 and x % 0 == 0, so no program can trap.
// - Float arithmetic is IEEE in the operand type: f32 is computed in single precision,
//   without fused multiply-adds (only the `fma` intrinsic fuses, always); float `%` is
//   a - b * floor(a / b) (NaN for b == 0); float min/max are select(a < b, a, b) and
//   select(a > b, a, b), as in Halide.
// - Casts between integer types wrap (i8(200) == -56, u32(-1) == 4294967295); float to
//   integer truncates towards zero and saturates to the target's range, NaN becoming 0
//   (LLVM's fptosi.sat / fptoui.sat); integer to float rounds to nearest.
// - `round` rounds half to even; `floor`, `ceil`, `round` keep the float type.
// - Select evaluates only the chosen branch; `&&` and `||` short-circuit. A Let computes
//   its value once, before its body.
// - Reductions iterate their variables with the first one innermost; `median` of n
//   values is the element at index (n-1)/2 after sorting (the lower median) by a total
//   order: IEEE 754 totalOrder, -NaN first and +NaN last (runtime/median_order.h);
//   `argmin` returns the 0-based position of the first minimum in iteration order.
//
// Nodes are immutable structs with public fields, built by validating `make` functions,
// and shared through reference-counted handles (Expr, Stmt) with a checked `as<T>()`.
// IR_EXPR_NODES / IR_STMT_NODES list every node once; the visitor and mutator bases
// are generated from those lists, so adding a node updates every base class.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/ir/type.h"

namespace stipple {

#define IR_EXPR_NODES(X) \
  X(IntImm)              \
  X(FloatImm)            \
  X(Cast)                \
  X(Variable)            \
  X(Param)               \
  X(InputExtent)         \
  X(Add)                 \
  X(Sub)                 \
  X(Mul)                 \
  X(Div)                 \
  X(Mod)                 \
  X(Min)                 \
  X(Max)                 \
  X(EQ)                  \
  X(NE)                  \
  X(LT)                  \
  X(LE)                  \
  X(GT)                  \
  X(GE)                  \
  X(And)                 \
  X(Or)                  \
  X(Not)                 \
  X(Select)              \
  X(Call)                \
  X(Reduce)              \
  X(Let)

#define IR_STMT_NODES(X) \
  X(LetStmt)             \
  X(For)                 \
  X(Provide)             \
  X(Allocate)            \
  X(Block)               \
  X(IfThenElse)          \
  X(Evaluate)

enum class IRNodeType : uint8_t {
#define IR_ENUM(N) N,
  IR_EXPR_NODES(IR_ENUM) IR_STMT_NODES(IR_ENUM)
#undef IR_ENUM
};

const char* node_type_name(IRNodeType t);

class IRVisitor;
class IRMutator;
struct Expr;
struct Stmt;

struct IRNode {
  explicit IRNode(IRNodeType t) : node_type(t) {}
  virtual ~IRNode() = default;
  IRNode(const IRNode&) = delete;
  IRNode& operator=(const IRNode&) = delete;

  mutable std::atomic<int> ref_count{0};
  const IRNodeType node_type;
};

struct BaseExprNode : IRNode {
  BaseExprNode(IRNodeType t, Type ty) : IRNode(t), type(ty) {}
  virtual void accept(IRVisitor* v) const = 0;
  virtual Expr mutate_with(IRMutator* m) const = 0;
  Type type;
};

struct BaseStmtNode : IRNode {
  explicit BaseStmtNode(IRNodeType t) : IRNode(t) {}
  virtual void accept(IRVisitor* v) const = 0;
  virtual Stmt mutate_with(IRMutator* m) const = 0;
};

/// Intrusive reference-counted pointer to an immutable IR node.
template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(const T* p) : ptr_(p) { incref(); }
  IntrusivePtr(const IntrusivePtr& o) : ptr_(o.ptr_) { incref(); }
  IntrusivePtr(IntrusivePtr&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  ~IntrusivePtr() { decref(); }
  IntrusivePtr& operator=(IntrusivePtr o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  const T* get() const { return ptr_; }
  const T* operator->() const { return ptr_; }
  const T& operator*() const { return *ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  bool same_as(const IntrusivePtr& o) const { return ptr_ == o.ptr_; }

 private:
  void incref() {
    if (ptr_) ptr_->ref_count.fetch_add(1, std::memory_order_relaxed);
  }
  void decref() {
    if (ptr_ && ptr_->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ptr_;
  }
  const T* ptr_ = nullptr;
};

struct Expr : IntrusivePtr<BaseExprNode> {
  Expr() = default;
  Expr(const BaseExprNode* n) : IntrusivePtr(n) {}
  Type type() const { return get()->type; }
  IRNodeType node_type() const { return get()->node_type; }
  void accept(IRVisitor* v) const { get()->accept(v); }
  /// The node as T, or nullptr when it is another kind of node.
  template <typename T>
  const T* as() const {
    if (defined() && get()->node_type == T::kNodeType) return static_cast<const T*>(get());
    return nullptr;
  }
};

struct Stmt : IntrusivePtr<BaseStmtNode> {
  Stmt() = default;
  Stmt(const BaseStmtNode* n) : IntrusivePtr(n) {}
  IRNodeType node_type() const { return get()->node_type; }
  void accept(IRVisitor* v) const { get()->accept(v); }
  template <typename T>
  const T* as() const {
    if (defined() && get()->node_type == T::kNodeType) return static_cast<const T*>(get());
    return nullptr;
  }
};

template <typename T>
struct ExprNode : BaseExprNode {
  explicit ExprNode(Type t) : BaseExprNode(T::kNodeType, t) {}
  void accept(IRVisitor* v) const override;
  Expr mutate_with(IRMutator* m) const override;
};

template <typename T>
struct StmtNode : BaseStmtNode {
  StmtNode() : BaseStmtNode(T::kNodeType) {}
  void accept(IRVisitor* v) const override;
  Stmt mutate_with(IRMutator* m) const override;
};

// ---------------------------------------------------------------------------------------
// Expressions

struct IntImm : ExprNode<IntImm> {
  static constexpr IRNodeType kNodeType = IRNodeType::IntImm;
  using ExprNode::ExprNode;
  int64_t value = 0;
  /// An integer constant of an integer or Bool type; the value must fit the type.
  static Expr make(Type t, int64_t value);
};

struct FloatImm : ExprNode<FloatImm> {
  static constexpr IRNodeType kNodeType = IRNodeType::FloatImm;
  using ExprNode::ExprNode;
  double value = 0;
  /// A float constant; for f32 the value is rounded to single precision.
  static Expr make(Type t, double value);
};

struct Cast : ExprNode<Cast> {
  static constexpr IRNodeType kNodeType = IRNodeType::Cast;
  using ExprNode::ExprNode;
  Expr value;
  static Expr make(Type t, Expr value);
};

/// Pure: a func's variable (x, y, c); Reduction: bound by a Reduce node or an update
/// definition's domain; Let: bound by a Let node (`let t = ... in ...` in the language,
/// and the lowering's own Lets).
enum class VarKind : uint8_t { Pure, Reduction, Let };

/// A variable. Pure and reduction variables are i32; a Let-bound one has the type of
/// the Let's value (make_typed).
struct Variable : ExprNode<Variable> {
  static constexpr IRNodeType kNodeType = IRNodeType::Variable;
  using ExprNode::ExprNode;
  std::string name;
  VarKind kind = VarKind::Pure;
  /// An i32 pure or reduction variable (the lowering's loop variables are Pure too).
  static Expr make(const std::string& name, VarKind kind = VarKind::Pure);
  /// A use of the variable a Let binds, of the type of the Let's value: VarKind::Let.
  static Expr make_typed(Type t, const std::string& name);
};

/// A pipeline parameter (`param sigma : f32 = 4.0`), of the parameter's type.
struct Param : ExprNode<Param> {
  static constexpr IRNodeType kNodeType = IRNodeType::Param;
  using ExprNode::ExprNode;
  std::string name;
  static Expr make(Type t, const std::string& name);
};

/// The extent of dimension `dim` of an input image: in.width (0), in.height (1),
/// in.channels (2). i32.
struct InputExtent : ExprNode<InputExtent> {
  static constexpr IRNodeType kNodeType = IRNodeType::InputExtent;
  using ExprNode::ExprNode;
  std::string input;
  int dim = 0;
  static Expr make(const std::string& input, int dim);
};

template <typename T>
struct BinaryNode : ExprNode<T> {
  using ExprNode<T>::ExprNode;
  Expr a, b;
};

/// Arithmetic nodes: both operands have the same type, which is the result type.
struct Add : BinaryNode<Add> {
  static constexpr IRNodeType kNodeType = IRNodeType::Add;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Sub : BinaryNode<Sub> {
  static constexpr IRNodeType kNodeType = IRNodeType::Sub;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Mul : BinaryNode<Mul> {
  static constexpr IRNodeType kNodeType = IRNodeType::Mul;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Div : BinaryNode<Div> {
  static constexpr IRNodeType kNodeType = IRNodeType::Div;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Mod : BinaryNode<Mod> {
  static constexpr IRNodeType kNodeType = IRNodeType::Mod;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Min : BinaryNode<Min> {
  static constexpr IRNodeType kNodeType = IRNodeType::Min;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Max : BinaryNode<Max> {
  static constexpr IRNodeType kNodeType = IRNodeType::Max;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};

/// Comparisons: operands of one type; the result is Bool.
struct EQ : BinaryNode<EQ> {
  static constexpr IRNodeType kNodeType = IRNodeType::EQ;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct NE : BinaryNode<NE> {
  static constexpr IRNodeType kNodeType = IRNodeType::NE;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct LT : BinaryNode<LT> {
  static constexpr IRNodeType kNodeType = IRNodeType::LT;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct LE : BinaryNode<LE> {
  static constexpr IRNodeType kNodeType = IRNodeType::LE;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct GT : BinaryNode<GT> {
  static constexpr IRNodeType kNodeType = IRNodeType::GT;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct GE : BinaryNode<GE> {
  static constexpr IRNodeType kNodeType = IRNodeType::GE;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};

/// Logical nodes: Bool operands, Bool result.
struct And : BinaryNode<And> {
  static constexpr IRNodeType kNodeType = IRNodeType::And;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Or : BinaryNode<Or> {
  static constexpr IRNodeType kNodeType = IRNodeType::Or;
  using BinaryNode::BinaryNode;
  static Expr make(Expr a, Expr b);
};
struct Not : ExprNode<Not> {
  static constexpr IRNodeType kNodeType = IRNodeType::Not;
  using ExprNode::ExprNode;
  Expr a;
  static Expr make(Expr a);
};

struct Select : ExprNode<Select> {
  static constexpr IRNodeType kNodeType = IRNodeType::Select;
  using ExprNode::ExprNode;
  Expr condition, true_value, false_value;
  static Expr make(Expr condition, Expr true_value, Expr false_value);
};

enum class CallType : uint8_t { Func, Input, Intrinsic };

/// Math intrinsics. Abs keeps the operand type (and wraps for i32 min); the rest take
/// and return floats, all operands of one type. Pow, Atan2 (atan2(y, x)) and Hypot take
/// two operands, Fma (fma(a, b, c) = a * b + c rounded once) three, the rest one. Exp
/// in f32 is Stipple's own function (runtime/exp_f32.h); Log, Pow, Sin, Cos, Tan, Atan2,
/// Hypot, Tanh and f64 Exp are the C library's (logf, log, ...), called by the evaluator
/// and by generated code alike; Fma is exact (std::fma), the rest are IEEE operations.
enum class Intrinsic : uint8_t {
  None,
  Abs,
  Floor,
  Ceil,
  Round,
  Sqrt,
  Exp,
  Log,
  Pow,
  Sin,
  Cos,
  Tan,
  Atan2,
  Hypot,
  Tanh,
  Fma,
};
const char* intrinsic_name(Intrinsic op);
/// The number of operands of an intrinsic (0 for None).
size_t intrinsic_arity(Intrinsic op);

/// A call to a func (value at a point), to an input image (a pixel, with the input's
/// boundary condition applied), or to a math intrinsic.
struct Call : ExprNode<Call> {
  static constexpr IRNodeType kNodeType = IRNodeType::Call;
  using ExprNode::ExprNode;
  std::string name;  // func or input name; the intrinsic's name for intrinsics
  CallType call_type = CallType::Func;
  Intrinsic intrinsic = Intrinsic::None;
  std::vector<Expr> args;
  static Expr make(Type t, const std::string& name, std::vector<Expr> args, CallType call_type);
  static Expr make_intrinsic(Intrinsic op, std::vector<Expr> args);
};

/// One variable of a reduction: `name in min..max`, both bounds inclusive, i32.
struct ReductionVariable {
  std::string name;
  Expr min, max;
};

/// FusedSum is the language's `sum` of a float product (the front end's contraction,
/// compiler_core/language/contraction.h): its body is a Mul, and each point folds as
/// acc = fma(a, b, acc), the product never rounded on its own. Its own op rather than a
/// Sum whose body happens to be a product, because inlining a func into a Sum's body can
/// make it one without changing what the program computes.
enum class ReduceOp : uint8_t { Sum, Prod, Minimum, Maximum, Median, ArgMin, FusedSum };
const char* reduce_op_name(ReduceOp op);

/// An inline reduction: `sum(i in -h..h, j in 0..2 : body)`. The type is the body's
/// type, except ArgMin which is i32. An empty domain gives 0 for sum, 1 for prod, the
/// type's largest (minimum) or smallest (maximum) value, 0 for median and -1 for argmin.
struct Reduce : ExprNode<Reduce> {
  static constexpr IRNodeType kNodeType = IRNodeType::Reduce;
  using ExprNode::ExprNode;
  ReduceOp op = ReduceOp::Sum;
  std::vector<ReductionVariable> domain;
  Expr body;
  static Expr make(ReduceOp op, std::vector<ReductionVariable> domain, Expr body);
};
/// The product a FusedSum folds (its body), or null for any other reduction.
const Mul* fused_product(const Reduce* op);

/// `let name = value in body`: body with `name` (Variables of kind Let, of value's type)
/// bound to value, which is computed once, before body. The type is body's type.
struct Let : ExprNode<Let> {
  static constexpr IRNodeType kNodeType = IRNodeType::Let;
  using ExprNode::ExprNode;
  std::string name;
  Expr value, body;
  static Expr make(const std::string& name, Expr value, Expr body);
};

// ---------------------------------------------------------------------------------------
// Statements (the loop nests that lowering produces)

struct LetStmt : StmtNode<LetStmt> {
  static constexpr IRNodeType kNodeType = IRNodeType::LetStmt;
  std::string name;
  Expr value;
  Stmt body;
  static Stmt make(const std::string& name, Expr value, Stmt body);
};

/// GpuBlock and GpuThread loops are the grid and the block of a GPU kernel (Halide's
/// GPUBlock and GPUThread): the CUDA back end launches the band of them as one kernel, and
/// the CPU back ends, which validate GPU schedules against the evaluator, run them as
/// serial loops.
enum class ForType : uint8_t { Serial, Parallel, Vectorized, Unrolled, GpuBlock, GpuThread };
const char* for_type_name(ForType t);
inline bool is_gpu_loop(ForType t) { return t == ForType::GpuBlock || t == ForType::GpuThread; }

struct For : StmtNode<For> {
  static constexpr IRNodeType kNodeType = IRNodeType::For;
  std::string name;
  Expr min, extent;
  ForType for_type = ForType::Serial;
  Stmt body;
  static Stmt make(const std::string& name, Expr min, Expr extent, ForType for_type, Stmt body);
};

/// Stores `value` into func `name` at the multi-dimensional site `args`.
struct Provide : StmtNode<Provide> {
  static constexpr IRNodeType kNodeType = IRNodeType::Provide;
  std::string name;
  Expr value;
  std::vector<Expr> args;
  /// An atomic update's store (the schedule's atomic()): value is `name(args) + e`, and
  /// the read, the add and the write happen as one atomic add, since other GPU threads
  /// may add to the same site. Back ends that run the loops serially store it as it is.
  bool atomic = false;
  static Stmt make(const std::string& name, Expr value, std::vector<Expr> args,
                   bool atomic = false);
};

/// Allocates storage for `name` with the given per-dimension extents around `body`.
struct Allocate : StmtNode<Allocate> {
  static constexpr IRNodeType kNodeType = IRNodeType::Allocate;
  std::string name;
  Type type;
  std::vector<Expr> extents;
  Stmt body;
  static Stmt make(const std::string& name, Type type, std::vector<Expr> extents, Stmt body);
};

struct Block : StmtNode<Block> {
  static constexpr IRNodeType kNodeType = IRNodeType::Block;
  /// Frees a right-nested chain of Blocks iteratively: a long statement list must not
  /// overflow the stack when it is destroyed.
  ~Block() override;
  Stmt first, rest;
  static Stmt make(Stmt first, Stmt rest);
  /// Folds a list into nested Blocks; undefined for an empty list.
  static Stmt make(const std::vector<Stmt>& stmts);
};

struct IfThenElse : StmtNode<IfThenElse> {
  static constexpr IRNodeType kNodeType = IRNodeType::IfThenElse;
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

struct Evaluate : StmtNode<Evaluate> {
  static constexpr IRNodeType kNodeType = IRNodeType::Evaluate;
  Expr value;
  static Stmt make(Expr value);
};

// Convenience constructors for tests and passes.
Expr make_const(Type t, double value);
Expr make_zero(Type t);
Expr make_one(Type t);

}  // namespace stipple
