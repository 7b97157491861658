// A hand-built pipeline that uses every expression node the checker produces, every
// boundary kind, updates with and without reduction domains, f64 values and u8/u16
// constants; with its expected .stp text. Shared by the printer and proto codec tests.
#pragma once

#include <string>

#include "compiler_core/ir/pipeline.h"

namespace stipple::testing {

inline Expr var(const std::string& n) { return Variable::make(n); }
inline Expr rvar(const std::string& n) { return Variable::make(n, VarKind::Reduction); }
inline Expr i32(int64_t v) { return IntImm::make(Int32(), v); }
inline Expr f32(double v) { return FloatImm::make(Float32(), v); }
inline Expr call(Type t, const std::string& n, std::vector<Expr> args,
                 CallType ct = CallType::Func) {
  return Call::make(t, n, std::move(args), ct);
}
inline Expr intrinsic(Intrinsic op, std::vector<Expr> args) {
  return Call::make_intrinsic(op, std::move(args));
}

inline Pipeline sample_pipeline() {
  Pipeline p;
  p.name = "sample";
  p.inputs = {
      {"in", Float32(), {"x", "y", "c"}, BoundaryKind::Mirror, 0},
      {"lut", UInt8(), {"i"}, BoundaryKind::Constant, 7},
      {"depth", UInt16(), {"x", "y"}, BoundaryKind::Clamp, 0},
  };
  p.params = {{"sigma", Float32(), 1.5}, {"h", Int32(), 2}, {"gain", Float64(), 0.1}};
  Expr sigma = Param::make(Float32(), "sigma");
  Expr h = Param::make(Int32(), "h");
  Expr gain = Param::make(Float64(), "gain");
  Expr x = var("x"), y = var("y"), c = var("c");
  auto in = [](Expr a, Expr b, Expr ch) {
    return call(Float32(), "in", {std::move(a), std::move(b), std::move(ch)}, CallType::Input);
  };
  auto depth = [&]() { return call(UInt16(), "depth", {x, y}, CallType::Input); };

  // func k(i) = exp((0.0 - f32(i * i)) / (2.0 * sigma * sigma))
  Expr i = var("i");
  p.funcs.push_back({"k",
                     {"i"},
                     Float32(),
                     intrinsic(Intrinsic::Exp,
                               {Div::make(Sub::make(f32(0), Cast::make(Float32(), Mul::make(i, i))),
                                          Mul::make(Mul::make(f32(2), sigma), sigma))}),
                     {}});

  // func blur(x, y, c) = sum(i in 0 - h..h, j in 0..1 : k(i) * in(x - i, y + j, c))
  Expr ri = rvar("i"), rj = rvar("j");
  p.funcs.push_back(
      {"blur",
       {"x", "y", "c"},
       Float32(),
       Reduce::make(
           ReduceOp::Sum, {{"i", Sub::make(i32(0), h), h}, {"j", i32(0), i32(1)}},
           Mul::make(call(Float32(), "k", {ri}), in(Sub::make(x, ri), Add::make(y, rj), c))),
       {}});

  // func hist(b) = 0
  // hist(i32(lut(r % lut.width))) = hist(i32(lut(r % lut.width))) + 1 for r in 0..in.width - 1
  Expr r = rvar("r");
  Expr bin = Cast::make(
      Int32(), call(UInt8(), "lut", {Mod::make(r, InputExtent::make("lut", 0))}, CallType::Input));
  p.funcs.push_back({"hist",
                     {"b"},
                     Int32(),
                     i32(0),
                     {{{bin},
                       Add::make(call(Int32(), "hist", {bin}), i32(1)),
                       {{"r", i32(0), Sub::make(InputExtent::make("in", 0), i32(1))}}}}});

  // func scan(x, y) = f64(in(x, y, 0)) * gain
  // scan(x, y) = scan(x, y) + 0.5 * scan(x - 1, y) for x in 1..in.width - 1
  // scan(x, y) = scan(x, y) / 2.0                    (a pure update: no domain)
  Expr rx = rvar("x");
  p.funcs.push_back(
      {"scan",
       {"x", "y"},
       Float64(),
       Mul::make(Cast::make(Float64(), in(x, y, i32(0))), gain),
       {{{rx, y},
         Add::make(call(Float64(), "scan", {rx, y}),
                   Mul::make(FloatImm::make(Float64(), 0.5),
                             call(Float64(), "scan", {Sub::make(rx, i32(1)), y}))),
         {{"x", i32(1), Sub::make(InputExtent::make("in", 0), i32(1))}}},
        {{x, y}, Div::make(call(Float64(), "scan", {x, y}), FloatImm::make(Float64(), 2)), {}}}});

  // func small(x, y) = select(depth(x, y) > 100 && !(x < 0) || y == 3,
  //                           u8(min(depth(x, y), 255)), 3)
  // small(x, y) = u8(4)                          (a u8 constant as an update's whole value)
  Expr cond = Or::make(
      And::make(GT::make(depth(), IntImm::make(UInt16(), 100)), Not::make(LT::make(x, i32(0)))),
      EQ::make(y, i32(3)));
  p.funcs.push_back(
      {"small",
       {"x", "y"},
       UInt8(),
       Select::make(cond, Cast::make(UInt8(), Min::make(depth(), IntImm::make(UInt16(), 255))),
                    IntImm::make(UInt8(), 3)),
       {{{x, y}, IntImm::make(UInt8(), 4), {}}}});

  // func gate(x, y) = select(x % 2 != 0 && y / 2 <= in.height || x >= y,
  //                          minimum(i in 0..2 : x + i),
  //                          maximum(i in 0..2 : median(j in 0..2 : y * j - i)))
  Expr gate_cond = Or::make(And::make(NE::make(Mod::make(x, i32(2)), i32(0)),
                                      LE::make(Div::make(y, i32(2)), InputExtent::make("in", 1))),
                            GE::make(x, y));
  p.funcs.push_back(
      {"gate",
       {"x", "y"},
       Int32(),
       Select::make(gate_cond,
                    Reduce::make(ReduceOp::Minimum, {{"i", i32(0), i32(2)}}, Add::make(x, ri)),
                    Reduce::make(ReduceOp::Maximum, {{"i", i32(0), i32(2)}},
                                 Reduce::make(ReduceOp::Median, {{"j", i32(0), i32(2)}},
                                              Sub::make(Mul::make(y, rj), ri)))),
       {}});

  // func misc(x, y, c) = f32(argmin(i in 0..in.channels - 1 : abs(in(x, y, i) - 0.5)))
  //     + pow(sqrt(max(blur(x, y, c), 0.0)), 2.0) * f32(f64(0.25))
  //     - round(ceil(log(sin(f32(x)) * cos(f32(y)) + 2.0)))
  //     + f32(prod(j in 0..1 : scan(x + j, y)))
  //     + floor(f32(u16(-3) % 7))
  Expr argmin =
      Reduce::make(ReduceOp::ArgMin, {{"i", i32(0), Sub::make(InputExtent::make("in", 2), i32(1))}},
                   intrinsic(Intrinsic::Abs, {Sub::make(in(x, y, ri), f32(0.5))}));
  Expr power = Mul::make(
      intrinsic(Intrinsic::Pow, {intrinsic(Intrinsic::Sqrt,
                                           {Max::make(call(Float32(), "blur", {x, y, c}), f32(0))}),
                                 f32(2)}),
      Cast::make(Float32(), FloatImm::make(Float64(), 0.25)));
  Expr trig = intrinsic(
      Intrinsic::Round,
      {intrinsic(
          Intrinsic::Ceil,
          {intrinsic(Intrinsic::Log,
                     {Add::make(Mul::make(intrinsic(Intrinsic::Sin, {Cast::make(Float32(), x)}),
                                          intrinsic(Intrinsic::Cos, {Cast::make(Float32(), y)})),
                                f32(2))})})});
  Expr prod = Cast::make(Float32(), Reduce::make(ReduceOp::Prod, {{"j", i32(0), i32(1)}},
                                                 call(Float64(), "scan", {Add::make(x, rj), y})));
  Expr fl = intrinsic(
      Intrinsic::Floor,
      {Cast::make(Float32(), Mod::make(Cast::make(UInt16(), i32(-3)), IntImm::make(UInt16(), 7)))});
  p.funcs.push_back(
      {"misc",
       {"x", "y", "c"},
       Float32(),
       Add::make(Add::make(Sub::make(Add::make(Cast::make(Float32(), argmin), power), trig), prod),
                 fl),
       {}});

  p.output = {"misc",
              {InputExtent::make("in", 0), InputExtent::make("in", 1), InputExtent::make("in", 2)},
              ErrorMetric::Lab};
  return p;
}

inline const char* sample_pipeline_text() {
  return R"(pipeline sample

input in : f32[x, y, c] mirror
input lut : u8[i] constant(7)
input depth : u16[x, y]
param sigma : f32 = 1.5
param h : i32 = 2
param gain : f64 = 0.1

func k(i) = exp((0.0 - f32(i * i)) / (2.0 * sigma * sigma))
func blur(x, y, c) = sum(i in 0 - h..h, j in 0..1 : k(i) * in(x - i, y + j, c))
func hist(b) = 0
hist(i32(lut(r % lut.width))) = hist(i32(lut(r % lut.width))) + 1 for r in 0..in.width - 1
func scan(x, y) = f64(in(x, y, 0)) * gain
scan(x, y) = scan(x, y) + 0.5 * scan(x - 1, y) for x in 1..in.width - 1
scan(x, y) = scan(x, y) / 2.0
func small(x, y) = select(depth(x, y) > 100 && !(x < 0) || y == 3, u8(min(depth(x, y), 255)), 3)
small(x, y) = 4
func gate(x, y) = select(x % 2 != 0 && y / 2 <= in.height || x >= y, minimum(i in 0..2 : x + i), maximum(i in 0..2 : median(j in 0..2 : y * j - i)))
func misc(x, y, c) = f32(argmin(i in 0..in.channels - 1 : abs(in(x, y, i) - 0.5))) + pow(sqrt(max(blur(x, y, c), 0.0)), 2.0) * f32(f64(0.25)) - round(ceil(log(sin(f32(x)) * cos(f32(y)) + 2.0))) + f32(prod(j in 0..1 : scan(x + j, y))) + floor(f32(u16(-3) % 7))

output misc size(in.width, in.height, in.channels) metric lab
)";
}

}  // namespace stipple::testing
