// Small helpers for building pipelines by hand in the evaluator's tests: short names for
// IR constructors, operators on Expr, and funcs, inputs and pipelines in one call each.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple::irb {

inline Expr var(const std::string& n) { return Variable::make(n); }
inline Expr rvar(const std::string& n) { return Variable::make(n, VarKind::Reduction); }
inline Expr i32(int64_t v) { return IntImm::make(Int32(), v); }
inline Expr u8(int64_t v) { return IntImm::make(UInt8(), v); }
inline Expr u16(int64_t v) { return IntImm::make(UInt16(), v); }
inline Expr u32(int64_t v) { return IntImm::make(UInt32(), v); }
inline Expr i8(int64_t v) { return IntImm::make(Int8(), v); }
inline Expr i16(int64_t v) { return IntImm::make(Int16(), v); }
inline Expr f32(double v) { return FloatImm::make(Float32(), v); }
inline Expr f64(double v) { return FloatImm::make(Float64(), v); }
inline Expr cast(Type t, Expr e) { return Cast::make(t, std::move(e)); }

inline Expr operator+(Expr a, Expr b) { return Add::make(std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return Sub::make(std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return Mul::make(std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return Div::make(std::move(a), std::move(b)); }
inline Expr operator%(Expr a, Expr b) { return Mod::make(std::move(a), std::move(b)); }
inline Expr operator<(Expr a, Expr b) { return LT::make(std::move(a), std::move(b)); }
inline Expr operator>(Expr a, Expr b) { return GT::make(std::move(a), std::move(b)); }
inline Expr operator<=(Expr a, Expr b) { return LE::make(std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return GE::make(std::move(a), std::move(b)); }
inline Expr operator&&(Expr a, Expr b) { return And::make(std::move(a), std::move(b)); }
inline Expr operator||(Expr a, Expr b) { return Or::make(std::move(a), std::move(b)); }
inline Expr min(Expr a, Expr b) { return Min::make(std::move(a), std::move(b)); }
inline Expr max(Expr a, Expr b) { return Max::make(std::move(a), std::move(b)); }
inline Expr clamp(Expr v, Expr lo, Expr hi) { return min(max(std::move(v), lo), hi); }
inline Expr select(Expr c, Expr t, Expr f) {
  return Select::make(std::move(c), std::move(t), std::move(f));
}
inline Expr intrinsic(Intrinsic op, Expr a) { return Call::make_intrinsic(op, {std::move(a)}); }

inline Expr call(Type t, const std::string& f, std::vector<Expr> args) {
  return Call::make(t, f, std::move(args), CallType::Func);
}
inline Expr input(Type t, const std::string& in, std::vector<Expr> args) {
  return Call::make(t, in, std::move(args), CallType::Input);
}
inline Expr reduce(ReduceOp op, std::vector<ReductionVariable> domain, Expr body) {
  return Reduce::make(op, std::move(domain), std::move(body));
}
inline ReductionVariable rv(const std::string& name, int64_t lo, int64_t hi) {
  return {name, i32(lo), i32(hi)};
}

inline Func make_func(const std::string& name, std::vector<std::string> args, Expr value,
                      std::vector<UpdateDef> updates = {}) {
  Func f;
  f.name = name;
  f.args = std::move(args);
  f.type = value.type();
  f.value = std::move(value);
  f.updates = std::move(updates);
  return f;
}

inline InputDecl make_input(const std::string& name, Type t, std::vector<std::string> dims,
                            BoundaryKind boundary = BoundaryKind::Clamp, double value = 0) {
  return InputDecl{name, t, std::move(dims), boundary, value};
}

inline Pipeline make_pipeline(std::vector<InputDecl> inputs, std::vector<Func> funcs,
                              const std::string& output, std::vector<Expr> extents,
                              std::vector<ParamDecl> params = {}) {
  Pipeline p;
  p.name = "test";
  p.inputs = std::move(inputs);
  p.params = std::move(params);
  p.funcs = std::move(funcs);
  p.output.func = output;
  p.output.extents = std::move(extents);
  return p;
}

/// A zero-filled buffer with mins 0.
inline Buffer zeros(ScalarType t, const std::vector<int64_t>& extents) {
  return Buffer(t, std::vector<int64_t>(extents.size(), 0), extents);
}

/// A buffer of uniformly random values in [lo, hi] (integers for integer types).
inline Buffer random_buffer(ScalarType t, std::vector<int64_t> extents, double lo, double hi,
                            uint32_t seed) {
  Buffer b = zeros(t, extents);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  bool is_int = Type(t).is_int();
  for (int64_t i = 0; i < b.element_count(); ++i) {
    double v = dist(rng);
    b.set_flat(i, is_int ? std::floor(v) : (t == ScalarType::Float32 ? static_cast<float>(v) : v));
  }
  return b;
}

/// Evaluates a closed expression (no variables) by making it the value of a zero-
/// dimensional output func.
inline double eval_scalar(const Expr& e, const InputImages& inputs = {},
                          std::vector<InputDecl> decls = {}) {
  Pipeline p = make_pipeline(std::move(decls), {make_func("out", {}, e)}, "out", {});
  Buffer b = evaluate_pipeline(p, inputs);
  return b.get_flat(0);
}

}  // namespace stipple::irb
