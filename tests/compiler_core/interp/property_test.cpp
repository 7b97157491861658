// Property test: random expression trees over i8, i16, i32, u8, u16, u32, f32 and f64
// (arithmetic, min/max, select, casts, also through f16, intrinsics, input reads under every
// boundary condition, calls of a func through clamped indices, small reductions) evaluated by the
// evaluator and by a tiny recursive evaluator written here from ir.h's rules, which must agree bit
// for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;

// ------------------------------------------------------------------------------------
// The reference: values as double (exact for every type; f32 values are floats).

struct Ref {
  const Buffer* a = nullptr;  // u8 input "a"
  const Buffer* b = nullptr;  // f32 input "b"
  BoundaryKind a_kind{}, b_kind{};
  std::map<std::string, int64_t> vars;

  static double wrap_int(Type t, double v) {
    // v is an exact integer below 2^64 in magnitude; reduce it modulo 2^bits.
    double m = std::ldexp(1.0, t.bits());
    double r = std::fmod(v, m);
    if (r < 0) r += m;
    if (t.is_signed() && r >= std::ldexp(1.0, t.bits() - 1)) r -= m;
    return r;
  }
  // The nearest f16 value, ties to even, by scaling rather than by bits (independent of
  // scalar_ops.h): the spacing is 2^(e - 10) for 2^e <= |v| < 2^(e + 1), and 2^-24 below
  // 2^-14; from 65520 up (where 65504 + half a spacing rounds up) infinity.
  static double to_f16(double v) {
    if (std::isnan(v) || std::isinf(v) || v == 0) return v;
    const int e = std::max(std::ilogb(v), -14);
    const double q = std::ldexp(1.0, e - 10);
    const double r = std::nearbyint(v / q) * q;  // v / q is exact: a power of two
    if (std::abs(r) > 65504) return std::copysign(INFINITY, v);
    return r == 0 ? std::copysign(0.0, v) : r;
  }
  static double to_type(Type t, double v) {  // a float result rounded to its type
    if (t.code == ScalarType::Float16) return to_f16(v);
    return t.code == ScalarType::Float32 ? static_cast<float>(v) : v;
  }
  static double cast(Type from, Type to, double v) {
    if (to.is_float()) return to_type(to, v);
    if (to.is_bool()) return v != 0;
    if (from.is_float()) {
      if (std::isnan(v)) return 0;
      if (v >= to.max_value()) return to.max_value();
      if (v <= to.min_value()) return to.min_value();
      return std::trunc(v);
    }
    return wrap_int(to, v);
  }
  static int64_t boundary(BoundaryKind k, int64_t c, int64_t w, bool* outside) {
    if (c >= 0 && c < w) return c;
    if (k == BoundaryKind::Constant) {
      *outside = true;
      return 0;
    }
    if (k == BoundaryKind::Clamp) return c < 0 ? 0 : w - 1;
    if (w == 1) return 0;
    c %= 2 * (w - 1);  // reflection repeats with this period; the folding does the rest
    while (c < 0 || c >= w) c = c < 0 ? -c : 2 * (w - 1) - c;
    return c;
  }

  double eval(const Expr& e) {
    Type t = e.type();
    if (auto* op = e.as<IntImm>()) return static_cast<double>(op->value);
    if (auto* op = e.as<FloatImm>()) return op->value;
    if (auto* op = e.as<Variable>()) return static_cast<double>(vars.at(op->name));
    if (auto* op = e.as<Cast>()) return cast(op->value.type(), t, eval(op->value));
    if (auto* op = e.as<Add>()) return arith(t, eval(op->a), eval(op->b), '+');
    if (auto* op = e.as<Sub>()) return arith(t, eval(op->a), eval(op->b), '-');
    if (auto* op = e.as<Mul>()) return arith(t, eval(op->a), eval(op->b), '*');
    if (auto* op = e.as<Div>()) return arith(t, eval(op->a), eval(op->b), '/');
    if (auto* op = e.as<Mod>()) return arith(t, eval(op->a), eval(op->b), '%');
    if (auto* op = e.as<Min>()) {
      double x = eval(op->a), y = eval(op->b);
      return x < y ? x : y;
    }
    if (auto* op = e.as<Max>()) {
      double x = eval(op->a), y = eval(op->b);
      return x > y ? x : y;
    }
    if (auto* op = e.as<LT>()) return eval(op->a) < eval(op->b);
    if (auto* op = e.as<GE>()) return eval(op->a) >= eval(op->b);
    if (auto* op = e.as<EQ>()) return eval(op->a) == eval(op->b);
    if (auto* op = e.as<And>()) return eval(op->a) != 0 && eval(op->b) != 0;
    if (auto* op = e.as<Or>()) return eval(op->a) != 0 || eval(op->b) != 0;
    if (auto* op = e.as<Not>()) return eval(op->a) == 0;
    if (auto* op = e.as<Select>()) {
      return eval(op->condition) != 0 ? eval(op->true_value) : eval(op->false_value);
    }
    if (auto* op = e.as<Call>()) return call(op);
    if (auto* op = e.as<Reduce>()) return reduce(op);
    ADD_FAILURE() << "reference cannot evaluate " << node_type_name(e.node_type());
    return 0;
  }

  double arith(Type t, double x, double y, char op) {
    if (t.code == ScalarType::Float32) {
      float a = static_cast<float>(x), b = static_cast<float>(y);
      switch (op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return a / b;
        default: {
          float q = std::floor(a / b);
          float p = b * q;
          return a - p;
        }
      }
    }
    if (t.code == ScalarType::Float64) {
      switch (op) {
        case '+': return x + y;
        case '-': return x - y;
        case '*': return x * y;
        case '/': return x / y;
        default: {
          double q = std::floor(x / y);
          double p = y * q;
          return x - p;
        }
      }
    }
    switch (op) {
      case '+': return wrap_int(t, x + y);
      case '-': return wrap_int(t, x - y);
      case '*': {
        // The exact product can exceed 2^53; multiply in 64-bit unsigned arithmetic.
        uint64_t p = static_cast<uint64_t>(static_cast<int64_t>(x)) *
                     static_cast<uint64_t>(static_cast<int64_t>(y));
        return wrap_int(t, static_cast<double>(p & 0xffffffffu));
      }
      case '/': return y == 0 ? 0 : wrap_int(t, std::floor(x / y));
      default: {
        if (y == 0) return 0;
        double r = x - y * std::floor(x / y);
        return r < 0 ? r - y : r;
      }
    }
  }

  double call(const Call* op) {
    Type t = op->type;
    switch (op->intrinsic) {
      case Intrinsic::Abs: {
        double v = std::abs(eval(op->args[0]));
        return t.is_int() ? wrap_int(t, v) : v;
      }
      case Intrinsic::Floor: return std::floor(eval(op->args[0]));
      case Intrinsic::Ceil: return std::ceil(eval(op->args[0]));
      case Intrinsic::Round: {
        double v = eval(op->args[0]);
        double r = std::floor(v + 0.5);
        if (r - v == 0.5 && std::fmod(r, 2) != 0) r -= 1;  // a tie goes to the even side
        return to_type(t, std::copysign(r, v));            // -0.3 rounds to -0
      }
      case Intrinsic::Sqrt: {
        double v = eval(op->args[0]);
        return t.code == ScalarType::Float32 ? std::sqrt(static_cast<float>(v)) : std::sqrt(v);
      }
      case Intrinsic::None: break;
      default: ADD_FAILURE() << "unexpected intrinsic"; return 0;
    }
    bool outside = false;
    int64_t i = static_cast<int64_t>(eval(op->args[0]));
    if (op->name == "g") return wrap_int(Int32(), static_cast<double>(i * 3 - 7));
    const Buffer* buf = op->name == "a" ? a : b;
    BoundaryKind k = op->name == "a" ? a_kind : b_kind;
    int64_t c = boundary(k, i, buf->extent(0), &outside);
    if (outside) return op->name == "a" ? 7 : 0.5;
    return buf->get_flat(c);
  }

  double reduce(const Reduce* op) {
    const ReductionVariable& rv = op->domain[0];
    int64_t lo = static_cast<int64_t>(eval(rv.min)), hi = static_cast<int64_t>(eval(rv.max));
    Type t = op->body.type();
    std::vector<double> vals;
    for (int64_t r = lo; r <= hi; ++r) {
      vars[rv.name] = r;
      vals.push_back(eval(op->body));
    }
    vars.erase(rv.name);
    switch (op->op) {
      case ReduceOp::Sum: {
        double acc = 0;
        for (double v : vals) acc = arith(t, acc, v, '+');
        return acc;
      }
      case ReduceOp::Maximum: {
        double acc = t.min_value();
        for (double v : vals) acc = acc > v ? acc : v;
        return acc;
      }
      case ReduceOp::ArgMin: {
        if (vals.empty()) return -1;
        size_t best = 0;
        for (size_t i = 1; i < vals.size(); ++i) {
          if (vals[i] < vals[best]) best = i;
        }
        return static_cast<double>(best);
      }
      default: ADD_FAILURE() << "unexpected reduction"; return 0;
    }
  }
};

// ------------------------------------------------------------------------------------
// The generator.

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  Type random_type() {
    static const Type types[] = {Int32(),   UInt8(), UInt16(), Float32(),
                                 Float64(), Int8(),  Int16(),  UInt32()};
    return types[pick(static_cast<int>(std::size(types)))];
  }

  Expr constant(Type t) {
    if (t.is_float()) {
      static const double specials[] = {0.5, -2.5, 1.5, 3.25, -0.0, 1e6, -7.75, 100.7};
      if (coin(0.5)) return FloatImm::make(t, specials[pick(8)]);
      return FloatImm::make(t, std::uniform_real_distribution<double>(-300, 300)(rng_));
    }
    if (t.code == ScalarType::Int32 && coin(0.2)) {
      static const int64_t extremes[] = {2147483647, -2147483647 - 1, 65536, -1, 0};
      return IntImm::make(t, extremes[pick(5)]);
    }
    if (t.bits() < 64 && coin(0.15)) {  // the type's own extremes
      return IntImm::make(t, static_cast<int64_t>(coin(0.5) ? t.min_value() : t.max_value()));
    }
    int64_t lo = t.is_signed() ? -20 : 0;
    int64_t hi = static_cast<int64_t>(std::min(t.max_value(), 300.0));
    return IntImm::make(t, std::uniform_int_distribution<int64_t>(lo, hi)(rng_));
  }

  Expr as_type(Type t, Expr e) { return e.type() == t ? e : Cast::make(t, e); }

  // Input reads and calls take index expressions of less than `depth`.
  Expr leaf(Type t, int depth) {
    switch (pick(depth > 0 ? 5 : 3)) {
      case 0:
      case 1: return constant(t);
      case 2: {
        std::vector<std::string> names = {"x", "y"};
        if (in_reduce_) names.push_back("r");
        const std::string& name = names[pick(static_cast<int>(names.size()))];
        return as_type(t, Variable::make(name, name == "r" ? VarKind::Reduction : VarKind::Pure));
      }
      case 3: {
        Expr idx = expr(Int32(), std::min(depth - 1, 2));
        return as_type(t, pick(2) ? input(UInt8(), "a", {idx}) : input(Float32(), "b", {idx}));
      }
      default: {
        Expr idx = clamp(expr(Int32(), std::min(depth - 1, 2)), i32(-8), i32(8));
        return as_type(t, call(Int32(), "g", {idx}));
      }
    }
  }

  Expr condition(int depth) {
    if (depth > 0 && coin(0.3)) {
      switch (pick(3)) {
        case 0: return And::make(condition(depth - 1), condition(depth - 1));
        case 1: return Or::make(condition(depth - 1), condition(depth - 1));
        default: return Not::make(condition(depth - 1));
      }
    }
    Type t = random_type();
    Expr a = expr(t, depth - 1), b = expr(t, depth - 1);
    switch (pick(3)) {
      case 0: return LT::make(a, b);
      case 1: return GE::make(a, b);
      default: return EQ::make(a, b);
    }
  }

  Expr expr(Type t, int depth) {
    if (depth <= 0 || coin(0.2)) return leaf(t, depth);
    int d = depth - 1;
    switch (pick(t.is_float() ? 14 : 12)) {
      case 0: return Add::make(expr(t, d), expr(t, d));
      case 1: return Sub::make(expr(t, d), expr(t, d));
      case 2: return Mul::make(expr(t, d), expr(t, d));
      case 3: return Div::make(expr(t, d), expr(t, d));
      case 4: return Mod::make(expr(t, d), expr(t, d));
      case 5: return Min::make(expr(t, d), expr(t, d));
      case 6: return Max::make(expr(t, d), expr(t, d));
      case 7: return Select::make(condition(d), expr(t, d), expr(t, d));
      case 8:
        // Sometimes through f16: rounded, then converted on (exactly, to a float).
        if (coin(0.25)) return Cast::make(t, Cast::make(Float16(), expr(random_type(), d)));
        return Cast::make(t, expr(random_type(), d));
      case 9: return Call::make_intrinsic(Intrinsic::Abs, {expr(t, d)});
      case 10:
      case 11: {
        if (in_reduce_) return expr(t, d);
        in_reduce_ = true;
        static const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Maximum, ReduceOp::ArgMin};
        ReduceOp op = ops[pick(3)];
        Type body_type = op == ReduceOp::ArgMin ? random_type() : t;
        Expr body = expr(body_type, d);
        in_reduce_ = false;
        int64_t lo = pick(4) - 1, hi = lo + pick(4) - 1;  // sometimes empty
        return as_type(t, Reduce::make(op, {{"r", i32(lo), i32(hi)}}, body));
      }
      case 12: {
        static const Intrinsic ops[] = {Intrinsic::Floor, Intrinsic::Ceil, Intrinsic::Round};
        return Call::make_intrinsic(ops[pick(3)], {expr(t, d)});
      }
      default: return Call::make_intrinsic(Intrinsic::Sqrt, {expr(t, d)});
    }
  }

  std::mt19937 rng_;

 private:
  bool in_reduce_ = false;
};

bool same_value(Type t, double got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  return got == want && (!t.is_float() || std::signbit(got) == std::signbit(want));
}

TEST(InterpProperty, RandomExpressionsMatchARecursiveReference) {
  const int trials = 3000;
  const BoundaryKind kinds[] = {BoundaryKind::Clamp, BoundaryKind::Mirror, BoundaryKind::Constant};
  for (int trial = 0; trial < trials; ++trial) {
    Gen gen(1000 + trial);
    Type t = gen.random_type();
    Expr e = gen.expr(t, 5);
    BoundaryKind ak = kinds[gen.pick(3)], bk = kinds[gen.pick(3)];
    Buffer a = random_buffer(ScalarType::UInt8, {5 + gen.pick(3)}, 0, 256, trial);
    Buffer b = random_buffer(ScalarType::Float32, {1 + gen.pick(6)}, -50, 50, trial + 7);
    Pipeline p = make_pipeline(
        {make_input("a", UInt8(), {"x"}, ak, 7), make_input("b", Float32(), {"x"}, bk, 0.5)},
        {make_func("out", {"x", "y"}, e), make_func("g", {"i"}, var("i") * i32(3) - i32(7))}, "out",
        {i32(6), i32(4)});
    Buffer out;
    try {
      out = evaluate_pipeline(p, {{"a", a}, {"b", b}});
    } catch (const std::exception& ex) {
      FAIL() << "trial " << trial << ": " << ex.what();
    }
    Ref ref{&a, &b, ak, bk, {}};
    for (int64_t y = 0; y < 4; ++y) {
      for (int64_t x = 0; x < 6; ++x) {
        ref.vars = {{"x", x}, {"y", y}};
        double want = ref.eval(e);
        int64_t c[2] = {x, y};
        double got = out.get(c);
        ASSERT_TRUE(same_value(t, got, want))
            << "trial " << trial << " at (" << x << ", " << y << "): got " << got << ", want "
            << want << " for an expression of type " << to_string(t);
      }
    }
  }
}

}  // namespace
}  // namespace stipple
