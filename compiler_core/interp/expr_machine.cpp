// Evaluation of ExprProgram nodes, exactly as compiler_core/ir/ir.h defines the IR:
// integers wrap to their type after every operation, f32 is computed in float, select
// and && / || evaluate only what they need, reductions run their first variable fastest.
#include <algorithm>
#include <cmath>

#include "compiler_core/interp/expr_program.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/runtime/exp_f32.h"
#include "compiler_core/runtime/median_order.h"

namespace stipple::interp {

namespace {

// f16 values are held in `f` (compiler_core/ir/scalar_ops.h); no arithmetic node has
// type f16, but comparisons, min, max and select read them as f32.
bool is_f32(ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float16; }
bool is_f64(ScalarType t) { return t == ScalarType::Float64; }

// min and max as select(a < b, a, b) and select(a > b, a, b), per type.
Value min_of(ScalarType t, Value x, Value y) {
  if (is_f32(t)) return x.f < y.f ? x : y;
  if (is_f64(t)) return x.d < y.d ? x : y;
  return x.i < y.i ? x : y;
}
Value max_of(ScalarType t, Value x, Value y) {
  if (is_f32(t)) return x.f > y.f ? x : y;
  if (is_f64(t)) return x.d > y.d ? x : y;
  return x.i > y.i ? x : y;
}
bool less(ScalarType t, Value x, Value y) {
  if (is_f32(t)) return x.f < y.f;
  if (is_f64(t)) return x.d < y.d;
  return x.i < y.i;
}

template <typename F32, typename F64>
Value float_unary(ScalarType t, Value x, F32 f32, F64 f64) {
  return is_f32(t) ? f32_value(f32(x.f)) : f64_value(f64(x.d));
}

[[noreturn]] void out_of_box(const Load& l, int d, int64_t coord) {
  throw_internal_error(__FILE__, __LINE__,
                       "read of func '" + l.name + "' at " + std::to_string(coord) +
                           " in dimension " + std::to_string(d) + " outside its realised box [" +
                           std::to_string(l.min[d]) + ", " +
                           std::to_string(l.min[d] + l.extent[d] - 1) + "]");
}

}  // namespace

Value Machine::eval(int32_t i) {
  const Node& n = p_.nodes[i];
  const ScalarType t = n.type;
  switch (n.op) {
    case Op::Const: return n.imm;
    case Op::Var: return slots_[n.aux];
    case Op::Let: slots_[n.aux] = eval(n.a); return eval(n.b);
    case Op::Add: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(t)) return f32_value(x.f + y.f);
      if (is_f64(t)) return f64_value(x.d + y.d);
      return int_value(wrap(t, x.i + y.i));
    }
    case Op::Sub: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(t)) return f32_value(x.f - y.f);
      if (is_f64(t)) return f64_value(x.d - y.d);
      return int_value(wrap(t, x.i - y.i));
    }
    case Op::Mul: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(t)) return f32_value(x.f * y.f);
      if (is_f64(t)) return f64_value(x.d * y.d);
      // Modulo 2^64, then wrapped (u32 products reach 2^64 - 2^33 + 1, past int64).
      return int_value(
          wrap(t, static_cast<int64_t>(static_cast<uint64_t>(x.i) * static_cast<uint64_t>(y.i))));
    }
    case Op::Div: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(t)) return f32_value(x.f / y.f);
      if (is_f64(t)) return f64_value(x.d / y.d);
      return int_value(wrap(t, floor_div(x.i, y.i)));
    }
    case Op::Mod: {
      Value x = eval(n.a), y = eval(n.b);
      // Float modulo: a - b * floor(a / b), in the operand precision.
      if (is_f32(t)) {
        float q = std::floor(x.f / y.f);
        float p = y.f * q;
        return f32_value(x.f - p);
      }
      if (is_f64(t)) {
        double q = std::floor(x.d / y.d);
        double p = y.d * q;
        return f64_value(x.d - p);
      }
      return int_value(euclid_mod(x.i, y.i));
    }
    case Op::Min: return min_of(t, eval(n.a), eval(n.b));
    case Op::Max: return max_of(t, eval(n.a), eval(n.b));
    case Op::EQ: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(n.operand)) return int_value(x.f == y.f);
      if (is_f64(n.operand)) return int_value(x.d == y.d);
      return int_value(x.i == y.i);
    }
    case Op::NE: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(n.operand)) return int_value(x.f != y.f);
      if (is_f64(n.operand)) return int_value(x.d != y.d);
      return int_value(x.i != y.i);
    }
    case Op::LT: {
      Value x = eval(n.a), y = eval(n.b);
      return int_value(less(n.operand, x, y));
    }
    case Op::GT: {
      Value x = eval(n.a), y = eval(n.b);
      return int_value(less(n.operand, y, x));
    }
    case Op::LE: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(n.operand)) return int_value(x.f <= y.f);
      if (is_f64(n.operand)) return int_value(x.d <= y.d);
      return int_value(x.i <= y.i);
    }
    case Op::GE: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(n.operand)) return int_value(x.f >= y.f);
      if (is_f64(n.operand)) return int_value(x.d >= y.d);
      return int_value(x.i >= y.i);
    }
    case Op::And: return int_value(eval(n.a).i ? eval(n.b).i : 0);
    case Op::Or: return int_value(eval(n.a).i ? 1 : eval(n.b).i);
    case Op::Not: return int_value(!eval(n.a).i);
    case Op::Select: return eval(n.a).i ? eval(n.b) : eval(n.c);
    case Op::Cast: return cast_value(n.operand, t, eval(n.a));
    case Op::Abs: {
      Value x = eval(n.a);
      if (is_f32(t)) return f32_value(std::fabs(x.f));
      if (is_f64(t)) return f64_value(std::fabs(x.d));
      return int_value(wrap(t, x.i < 0 ? -x.i : x.i));  // abs(i32 min) wraps to itself
    }
    case Op::Floor:
      return float_unary(
          t, eval(n.a), [](float v) { return std::floor(v); },
          [](double v) { return std::floor(v); });
    case Op::Ceil:
      return float_unary(
          t, eval(n.a), [](float v) { return std::ceil(v); },
          [](double v) { return std::ceil(v); });
    case Op::Round:  // the default rounding mode rounds half to even
      return float_unary(
          t, eval(n.a), [](float v) { return std::nearbyint(v); },
          [](double v) { return std::nearbyint(v); });
    case Op::Sqrt:
      return float_unary(
          t, eval(n.a), [](float v) { return std::sqrt(v); },
          [](double v) { return std::sqrt(v); });
    case Op::Exp:
      return float_unary(
          t, eval(n.a), [](float v) { return exp_f32(v); }, [](double v) { return std::exp(v); });
    case Op::Log:
      return float_unary(
          t, eval(n.a), [](float v) { return std::log(v); }, [](double v) { return std::log(v); });
    case Op::Sin:
      return float_unary(
          t, eval(n.a), [](float v) { return std::sin(v); }, [](double v) { return std::sin(v); });
    case Op::Cos:
      return float_unary(
          t, eval(n.a), [](float v) { return std::cos(v); }, [](double v) { return std::cos(v); });
    case Op::Pow: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(t)) return f32_value(std::pow(x.f, y.f));
      return f64_value(std::pow(x.d, y.d));
    }
    case Op::Tan:
      return float_unary(
          t, eval(n.a), [](float v) { return std::tan(v); }, [](double v) { return std::tan(v); });
    case Op::Tanh:
      return float_unary(
          t, eval(n.a), [](float v) { return std::tanh(v); },
          [](double v) { return std::tanh(v); });
    case Op::Atan2: {
      Value y = eval(n.a), x = eval(n.b);
      if (is_f32(t)) return f32_value(std::atan2(y.f, x.f));
      return f64_value(std::atan2(y.d, x.d));
    }
    case Op::Hypot: {
      Value x = eval(n.a), y = eval(n.b);
      if (is_f32(t)) return f32_value(std::hypot(x.f, y.f));
      return f64_value(std::hypot(x.d, y.d));
    }
    case Op::Fma: {  // one rounding: std::fma, never a * b + c
      Value a = eval(n.a), b = eval(n.b), c = eval(n.c);
      if (is_f32(t)) return f32_value(std::fma(a.f, b.f, c.f));
      return f64_value(std::fma(a.d, b.d, c.d));
    }
    case Op::LoadFunc: return load_func(n);
    case Op::LoadInput: return load_input(n);
    case Op::Reduce: return reduce(n);
  }
  STIPPLE_INTERNAL_CHECK(false, "unknown evaluator op");
  return int_value(0);
}

Value Machine::load_func(const Node& n) {
  const Load& l = p_.loads[n.aux];
  if (!l.data) {
    throw_internal_error(__FILE__, __LINE__,
                         "read of func '" + l.name + "', which bounds inference left unrealised");
  }
  int64_t offset = 0;
  for (int d = 0; d < l.dims; ++d) {
    int64_t coord = arg_value(l.arg[d]);
    int64_t c = coord - l.min[d];
    if (c < 0 || c >= l.extent[d]) out_of_box(l, d, coord);
    offset += c * l.stride[d];
  }
  return load_element(l.type, l.data, offset);
}

Value Machine::load_input(const Node& n) {
  const Load& l = p_.loads[n.aux];
  int64_t offset = 0;
  bool outside = false;
  for (int d = 0; d < l.dims; ++d) {
    int64_t c = arg_value(l.arg[d]);
    if (c < 0 || c >= l.extent[d]) {
      switch (l.boundary) {
        case BoundaryKind::Clamp: c = clamp_coordinate(c, l.extent[d]); break;
        case BoundaryKind::Mirror: c = mirror_coordinate(c, l.extent[d]); break;
        case BoundaryKind::Constant: outside = true; break;
      }
    }
    offset += c * l.stride[d];
  }
  // Every index is evaluated before the constant is returned, as a compiled back end would.
  if (outside) return l.constant;
  return load_element(l.type, l.data, offset);
}

/// Runs f(value) over the reduction's domain, first variable fastest. False when the
/// domain is empty.
template <typename F>
bool Machine::for_each_point(const ReduceInfo& r, F&& f) {
  const size_t nv = r.slots.size();
  int64_t lo[kMaxDims * 2], hi[kMaxDims * 2];
  STIPPLE_INTERNAL_CHECK(nv <= kMaxDims * 2, "reduction over more than 16 variables");
  for (size_t v = 0; v < nv; ++v) {
    lo[v] = eval(r.mins[v]).i;
    hi[v] = eval(r.maxs[v]).i;
    if (lo[v] > hi[v]) return false;
  }
  for (size_t v = 0; v < nv; ++v) slots_[r.slots[v]] = int_value(lo[v]);
  for (;;) {
    f(eval(r.body));
    size_t v = 0;
    for (; v < nv; ++v) {
      Value& s = slots_[r.slots[v]];
      if (s.i < hi[v]) {
        ++s.i;
        break;
      }
      s.i = lo[v];
    }
    if (v == nv) return true;
  }
}

Value Machine::reduce(const Node& n) {
  const ReduceInfo& r = p_.reduces[n.aux];
  const ScalarType t = r.body_type;
  switch (r.op) {
    case ReduceOp::Sum: {
      if (is_f32(t)) {
        float acc = 0;
        for_each_point(r, [&](Value v) { acc += v.f; });
        return f32_value(acc);
      }
      if (is_f64(t)) {
        double acc = 0;
        for_each_point(r, [&](Value v) { acc += v.d; });
        return f64_value(acc);
      }
      uint64_t acc = 0;  // modulo 2^64, then wrapped: the same as wrapping every step
      for_each_point(r, [&](Value v) { acc += static_cast<uint64_t>(v.i); });
      return int_value(wrap(t, static_cast<int64_t>(acc)));
    }
    case ReduceOp::FusedSum: {
      // body is the product's a: each point adds a * b rounded once, with the sum.
      if (is_f32(t)) {
        float acc = 0;
        for_each_point(r, [&](Value a) { acc = std::fma(a.f, eval(r.factor).f, acc); });
        return f32_value(acc);
      }
      double acc = 0;
      for_each_point(r, [&](Value a) { acc = std::fma(a.d, eval(r.factor).d, acc); });
      return f64_value(acc);
    }
    case ReduceOp::Prod: {
      if (is_f32(t)) {
        float acc = 1;
        for_each_point(r, [&](Value v) { acc *= v.f; });
        return f32_value(acc);
      }
      if (is_f64(t)) {
        double acc = 1;
        for_each_point(r, [&](Value v) { acc *= v.d; });
        return f64_value(acc);
      }
      uint64_t acc = 1;
      for_each_point(r, [&](Value v) { acc *= static_cast<uint64_t>(v.i); });
      return int_value(wrap(t, static_cast<int64_t>(acc)));
    }
    case ReduceOp::Minimum: {
      Value acc = value_from_double(t, Type(t).max_value());
      for_each_point(r, [&](Value v) { acc = min_of(t, acc, v); });
      return acc;
    }
    case ReduceOp::Maximum: {
      Value acc = value_from_double(t, Type(t).min_value());
      for_each_point(r, [&](Value v) { acc = max_of(t, acc, v); });
      return acc;
    }
    case ReduceOp::Median: {
      // Values as doubles (exact for every type) on a shared stack, so that a median
      // nested in another median's body keeps its own part.
      size_t base = median_scratch_.size();
      for_each_point(r, [&](Value v) { median_scratch_.push_back(to_double(t, v)); });
      size_t count = median_scratch_.size() - base;
      if (count == 0) return value_from_double(t, 0);
      auto first = median_scratch_.begin() + static_cast<ptrdiff_t>(base);
      auto nth = first + static_cast<ptrdiff_t>((count - 1) / 2);
      // A total order (IEEE 754 totalOrder): any selection algorithm agrees on the bits.
      std::nth_element(first, nth, median_scratch_.end(), median_less);
      double m = *nth;
      median_scratch_.resize(base);
      return value_from_double(t, m);
    }
    case ReduceOp::ArgMin: {
      int64_t index = 0, best_index = -1;
      Value best{};
      for_each_point(r, [&](Value v) {
        if (best_index < 0 || less(t, v, best)) {
          best = v;
          best_index = index;
        }
        ++index;
      });
      return int_value(wrap(ScalarType::Int32, best_index));
    }
  }
  STIPPLE_INTERNAL_CHECK(false, "unknown reduction");
  return int_value(0);
}

}  // namespace stipple::interp
