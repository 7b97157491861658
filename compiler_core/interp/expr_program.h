// The compact form the evaluator runs: IR expressions compiled once per definition into a
// flat array of small nodes, evaluated per point with a switch.
//
//   ExprCompiler: Expr -> nodes. Variables become slots, params and input extents become
//                 constants, calls point straight at the realised buffers of callee
//                 funcs and at the input buffers, constant subtrees are folded.
//   Machine:      evaluates a node of a program with its own slots (one per thread).
//
// Why not walk the Expr tree: a per-point virtual dispatch and a string lookup for every
// variable and call would make the oracle too slow for full-size benchmark images.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/interp/evaluation_setup.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple::interp {

enum class Op : uint8_t {
  Const,
  Var,
  Let,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Min,
  Max,
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
  And,
  Or,
  Not,
  Select,
  Cast,
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
  LoadFunc,
  LoadInput,
  Reduce,
};

struct Node {
  Op op = Op::Const;
  ScalarType type = ScalarType::Int32;     // the result's type
  ScalarType operand = ScalarType::Int32;  // the operands' type (comparisons, casts)
  int32_t a = -1, b = -1, c = -1;          // child nodes
  int32_t aux = -1;  // Var/Let: slot; LoadFunc/LoadInput: load index; Reduce: reduce index
  Value imm{};       // Const
};

inline constexpr int kMaxDims = 8;

/// One index of a load. Most indices are a variable plus a constant (x + i, y - 1):
/// those are computed inline as slot_a + slot_b + offset (wrapped to i32) instead of
/// through a few nodes each; anything else is the node `node`.
struct LoadArg {
  int32_t node = -1;
  int32_t slot_a = -1, slot_b = -1;
  int64_t offset = 0;
};

/// A call to a func or an input with everything about its buffer resolved.
struct Load {
  std::string name;
  const void* data = nullptr;
  ScalarType type = ScalarType::Float32;
  int dims = 0;
  int64_t min[kMaxDims] = {}, extent[kMaxDims] = {}, stride[kMaxDims] = {};
  int32_t first_arg = 0;  // index into ExprProgram::args of the first argument node
  LoadArg arg[kMaxDims];  // the same arguments, for evaluation
  BoundaryKind boundary = BoundaryKind::Clamp;  // inputs only
  Value constant{};                             // inputs with a Constant boundary
};

struct ReduceInfo {
  ReduceOp op = ReduceOp::Sum;
  ScalarType body_type = ScalarType::Int32;
  int32_t body = -1;
  int32_t factor = -1;  // FusedSum: the product's b (body is its a)
  // Per variable, first (innermost) first: its slot and its bound nodes.
  std::vector<int32_t> slots, mins, maxs;
};

struct ExprProgram {
  std::vector<Node> nodes;
  std::vector<int32_t> args;
  std::vector<Load> loads;
  std::vector<ReduceInfo> reduces;
  int num_slots = 0;
};

/// Realised funcs by name, for resolving calls.
using RealisedFuncs = std::map<std::string, Buffer>;

class ExprCompiler {
 public:
  /// `mutable_func` names a func whose buffer changes while the program runs (the func
  /// being updated): loads from it are never folded into constants.
  ExprCompiler(const ConstantEnv& env, const RealisedFuncs& funcs, std::string mutable_func,
               ExprProgram& program)
      : env_(env), funcs_(funcs), mutable_func_(std::move(mutable_func)), p_(program) {}

  /// Brings a variable into scope (for a definition's pure and reduction variables).
  int32_t bind(const std::string& name);
  /// Compiles an expression; returns its root node.
  int32_t compile(const Expr& e);

 private:
  int32_t add(Node n);
  int32_t compile_call(const Call* op);
  int32_t compile_reduce(const Reduce* op);
  int32_t fold(int32_t node);
  LoadArg load_arg(int32_t node) const;
  Load resolve_load(const Call* op) const;

  const ConstantEnv& env_;
  const RealisedFuncs& funcs_;
  std::string mutable_func_;
  ExprProgram& p_;
  std::vector<std::pair<std::string, int32_t>> scope_;  // innermost last
};

/// Evaluates nodes of one program. Holds the variable slots and scratch space, so each
/// thread needs its own Machine.
class Machine {
 public:
  explicit Machine(const ExprProgram& p) : p_(p), slots_(p.num_slots) {}
  Value& slot(int32_t s) { return slots_[s]; }
  Value eval(int32_t node);

 private:
  int64_t arg_value(const LoadArg& a) {
    if (a.node >= 0) return eval(a.node).i;
    int64_t v = a.offset;
    if (a.slot_a >= 0) v += slots_[a.slot_a].i;
    if (a.slot_b >= 0) v += slots_[a.slot_b].i;
    return wrap(ScalarType::Int32, v);
  }
  Value load_func(const Node& n);
  Value load_input(const Node& n);
  Value reduce(const Node& n);
  template <typename F>
  bool for_each_point(const ReduceInfo& r, F&& f);

  const ExprProgram& p_;
  std::vector<Value> slots_;
  std::vector<double> median_scratch_;
};

}  // namespace stipple::interp
