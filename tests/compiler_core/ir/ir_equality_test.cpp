// Structural equality and hashing: equal and unequal pairs for every node kind and every
// pipeline field, hash agreement on trees built separately, and a pinned hash value
// (the database keys pipelines by it, so it must not drift between builds).
#include "compiler_core/ir/ir_equality.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "compiler_core/ir/ir_printer.h"
#include "tests/compiler_core/ir/random_ir.h"
#include "tests/compiler_core/ir/sample_pipeline.h"

namespace stipple {
namespace {

using namespace stipple::testing;

// Each case builds a tree twice (must be equal, with equal hashes) and a variant that
// differs in exactly one field (must be unequal). The variants of all cases together must
// also hash to distinct values.
struct Case {
  const char* what;
  std::function<Expr()> make, variant;
};

std::vector<Case> expr_cases() {
  Expr x = var("x"), y = var("y");
  Expr fx = Cast::make(Float32(), x);
  Expr t = LT::make(x, y), f = GT::make(x, y);
  return {
      {"IntImm value", [] { return i32(3); }, [] { return i32(4); }},
      {"IntImm type", [] { return IntImm::make(UInt8(), 3); },
       [] { return IntImm::make(UInt16(), 3); }},
      {"FloatImm value", [] { return f32(0.5); }, [] { return f32(0.25); }},
      {"FloatImm sign of zero", [] { return f32(0.0); }, [] { return f32(-0.0); }},
      {"FloatImm type", [] { return f32(0.5); }, [] { return FloatImm::make(Float64(), 0.5); }},
      {"FloatImm NaN payload",
       [] { return FloatImm::make(Float64(), std::bit_cast<double>(0x7ff8000000000001ULL)); },
       [] { return FloatImm::make(Float64(), std::bit_cast<double>(0x7ff8000000000002ULL)); }},
      {"Cast type", [=] { return Cast::make(Float32(), x); },
       [=] { return Cast::make(Float64(), x); }},
      {"Cast value", [=] { return Cast::make(Float32(), x); },
       [=] { return Cast::make(Float32(), y); }},
      {"Variable name", [] { return var("x"); }, [] { return var("z"); }},
      {"Variable kind", [] { return var("x"); }, [] { return rvar("x"); }},
      {"Let variable type", [] { return Variable::make_typed(Float32(), "t"); },
       [] { return Variable::make_typed(Float64(), "t"); }},
      {"Let variable kind", [] { return Variable::make_typed(Int32(), "x"); },
       [] { return var("x"); }},
      {"Param name", [] { return Param::make(Float32(), "s"); },
       [] { return Param::make(Float32(), "t"); }},
      {"Param type", [] { return Param::make(Float32(), "s"); },
       [] { return Param::make(Int32(), "s"); }},
      {"InputExtent input", [] { return InputExtent::make("in", 0); },
       [] { return InputExtent::make("im", 0); }},
      {"InputExtent dim", [] { return InputExtent::make("in", 0); },
       [] { return InputExtent::make("in", 1); }},
      {"Add operand", [=] { return Add::make(x, y); }, [=] { return Add::make(y, x); }},
      {"Add vs Sub", [=] { return Add::make(x, i32(1)); }, [=] { return Sub::make(x, i32(1)); }},
      {"Sub operand", [=] { return Sub::make(x, y); }, [=] { return Sub::make(x, x); }},
      {"Mul vs Div", [=] { return Mul::make(x, y); }, [=] { return Div::make(x, y); }},
      {"Div operand", [=] { return Div::make(x, i32(2)); }, [=] { return Div::make(x, i32(3)); }},
      {"Mod vs Div", [=] { return Mod::make(x, y); }, [=] { return Div::make(x, y); }},
      {"Min vs Max", [=] { return Min::make(x, y); }, [=] { return Max::make(x, y); }},
      {"Max operand", [=] { return Max::make(x, y); }, [=] { return Max::make(x, i32(0)); }},
      {"EQ vs NE", [=] { return EQ::make(x, y); }, [=] { return NE::make(x, y); }},
      {"NE operand", [=] { return NE::make(x, y); }, [=] { return NE::make(y, y); }},
      {"LT vs GT", [=] { return LT::make(x, y); }, [=] { return GT::make(x, y); }},
      {"GT operand", [=] { return GT::make(x, y); }, [=] { return GT::make(x, i32(7)); }},
      {"LE vs GE", [=] { return LE::make(x, y); }, [=] { return GE::make(x, y); }},
      {"GE operand type", [=] { return GE::make(fx, f32(0)); },
       [=] { return GE::make(Cast::make(Float64(), x), FloatImm::make(Float64(), 0)); }},
      {"And vs Or", [=] { return And::make(t, f); }, [=] { return Or::make(t, f); }},
      {"Or operand", [=] { return Or::make(t, f); }, [=] { return Or::make(f, t); }},
      {"Not operand", [=] { return Not::make(t); }, [=] { return Not::make(f); }},
      {"Select branch", [=] { return Select::make(t, x, y); },
       [=] { return Select::make(t, y, x); }},
      {"Select condition", [=] { return Select::make(t, x, y); },
       [=] { return Select::make(f, x, y); }},
      {"Call name", [=] { return call(Float32(), "f", {x}); },
       [=] { return call(Float32(), "g", {x}); }},
      {"Call type", [=] { return call(Float32(), "f", {x}); },
       [=] { return call(UInt8(), "f", {x}); }},
      {"Call kind", [=] { return call(Float32(), "f", {x}); },
       [=] { return call(Float32(), "f", {x}, CallType::Input); }},
      {"Call args",
       [=] {
         return call(Float32(), "f", {x, y});
       },
       [=] { return call(Float32(), "f", {x}); }},
      {"Call intrinsic", [=] { return intrinsic(Intrinsic::Sin, {fx}); },
       [=] { return intrinsic(Intrinsic::Cos, {fx}); }},
      {"Call new intrinsic",
       [=] {
         return intrinsic(Intrinsic::Atan2, {fx, fx});
       },
       [=] {
         return intrinsic(Intrinsic::Hypot, {fx, fx});
       }},
      {"Reduce op",
       [=] {
         return Reduce::make(ReduceOp::Sum, {{"i", i32(0), i32(2)}}, x);
       },
       [=] {
         return Reduce::make(ReduceOp::Prod, {{"i", i32(0), i32(2)}}, x);
       }},
      {"Reduce bound",
       [=] {
         return Reduce::make(ReduceOp::Median, {{"i", i32(0), i32(2)}}, x);
       },
       [=] {
         return Reduce::make(ReduceOp::Median, {{"i", i32(0), i32(3)}}, x);
       }},
      {"Reduce variable name",
       [=] {
         return Reduce::make(ReduceOp::Minimum, {{"i", i32(0), i32(2)}}, x);
       },
       [=] {
         return Reduce::make(ReduceOp::Minimum, {{"j", i32(0), i32(2)}}, x);
       }},
      {"Reduce domain size",
       [=] {
         return Reduce::make(ReduceOp::Maximum, {{"i", i32(0), i32(2)}}, x);
       },
       [=] {
         return Reduce::make(ReduceOp::Maximum, {{"i", i32(0), i32(2)}, {"j", i32(0), i32(2)}}, x);
       }},
      {"Reduce body",
       [=] {
         return Reduce::make(ReduceOp::ArgMin, {{"i", i32(0), i32(2)}}, x);
       },
       [=] {
         return Reduce::make(ReduceOp::ArgMin, {{"i", i32(0), i32(2)}}, y);
       }},
      {"Let name", [=] { return Let::make("a", x, y); }, [=] { return Let::make("b", x, y); }},
      {"Let value", [=] { return Let::make("a", x, y); }, [=] { return Let::make("a", y, y); }},
  };
}

TEST(IREquality, EveryExpressionNodeKind) {
  std::set<IRNodeType> kinds;
  std::set<uint64_t> variant_hashes;
  for (const Case& c : expr_cases()) {
    Expr a = c.make(), b = c.make(), v = c.variant();
    kinds.insert(a.node_type());
    EXPECT_FALSE(a.same_as(b)) << c.what;
    EXPECT_TRUE(equal(a, b)) << c.what;
    EXPECT_TRUE(equal(a, a)) << c.what;
    EXPECT_EQ(structural_hash(a), structural_hash(b)) << c.what;
    EXPECT_FALSE(equal(a, v)) << c.what;
    EXPECT_FALSE(equal(v, a)) << c.what;
    EXPECT_NE(structural_hash(a), structural_hash(v)) << c.what;
    variant_hashes.insert(structural_hash(v));
  }
  EXPECT_EQ(kinds.size(), 26u);  // every entry of IR_EXPR_NODES
  EXPECT_GT(variant_hashes.size(), expr_cases().size() - 3);
}

TEST(IREquality, FloatsCompareByBits) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(equal(FloatImm::make(Float64(), nan), FloatImm::make(Float64(), nan)));
  EXPECT_EQ(structural_hash(FloatImm::make(Float64(), nan)),
            structural_hash(FloatImm::make(Float64(), nan)));
  EXPECT_FALSE(equal(f32(0.0), f32(-0.0)));
}

TEST(IREquality, UndefinedHandles) {
  EXPECT_TRUE(equal(Expr(), Expr()));
  EXPECT_FALSE(equal(Expr(), i32(0)));
  EXPECT_FALSE(equal(i32(0), Expr()));
  EXPECT_TRUE(equal(Stmt(), Stmt()));
  EXPECT_FALSE(equal(Stmt(), Evaluate::make(i32(0))));
}

TEST(IREquality, EveryStatementNodeKind) {
  Expr x = var("x");
  Stmt e0 = Evaluate::make(i32(0)), e1 = Evaluate::make(i32(1));
  struct StmtCase {
    const char* what;
    std::function<Stmt()> make, variant;
  };
  std::vector<StmtCase> cases = {
      {"LetStmt name", [=] { return LetStmt::make("a", x, e0); },
       [=] { return LetStmt::make("b", x, e0); }},
      {"LetStmt body", [=] { return LetStmt::make("a", x, e0); },
       [=] { return LetStmt::make("a", x, e1); }},
      {"For type", [=] { return For::make("x", i32(0), i32(8), ForType::Serial, e0); },
       [=] { return For::make("x", i32(0), i32(8), ForType::Parallel, e0); }},
      {"For extent", [=] { return For::make("x", i32(0), i32(8), ForType::Vectorized, e0); },
       [=] { return For::make("x", i32(0), i32(4), ForType::Vectorized, e0); }},
      {"For name", [=] { return For::make("x", i32(0), i32(8), ForType::Unrolled, e0); },
       [=] { return For::make("y", i32(0), i32(8), ForType::Unrolled, e0); }},
      {"Provide args", [=] { return Provide::make("f", x, {x}); },
       [=] {
         return Provide::make("f", x, {x, x});
       }},
      {"Provide name", [=] { return Provide::make("f", x, {x}); },
       [=] { return Provide::make("g", x, {x}); }},
      {"Allocate type", [=] { return Allocate::make("b", Float32(), {x}, e0); },
       [=] { return Allocate::make("b", UInt8(), {x}, e0); }},
      {"Allocate extents", [=] { return Allocate::make("b", Float32(), {x}, e0); },
       [=] {
         return Allocate::make("b", Float32(), {x, x}, e0);
       }},
      {"Block order", [=] { return Block::make(e0, e1); }, [=] { return Block::make(e1, e0); }},
      {"Block nesting", [=] { return Block::make(e0, Block::make(e1, e0)); },
       [=] { return Block::make(Block::make(e0, e1), e0); }},
      {"IfThenElse else", [=] { return IfThenElse::make(LT::make(x, i32(0)), e0); },
       [=] { return IfThenElse::make(LT::make(x, i32(0)), e0, e1); }},
      {"IfThenElse condition", [=] { return IfThenElse::make(LT::make(x, i32(0)), e0, e1); },
       [=] { return IfThenElse::make(LE::make(x, i32(0)), e0, e1); }},
      {"Evaluate value", [] { return Evaluate::make(i32(0)); },
       [] { return Evaluate::make(i32(2)); }},
  };
  std::set<IRNodeType> kinds;
  for (const StmtCase& c : cases) {
    Stmt a = c.make(), b = c.make(), v = c.variant();
    kinds.insert(a.node_type());
    EXPECT_TRUE(equal(a, b)) << c.what;
    EXPECT_EQ(structural_hash(a), structural_hash(b)) << c.what;
    EXPECT_FALSE(equal(a, v)) << c.what;
    EXPECT_FALSE(equal(v, a)) << c.what;
    EXPECT_NE(structural_hash(a), structural_hash(v)) << c.what;
  }
  EXPECT_EQ(kinds.size(), 7u);  // every entry of IR_STMT_NODES
}

TEST(IREquality, RandomTreesEqualTheirDeepCopies) {
  RandomIR gen(11);
  std::set<uint64_t> hashes;
  int distinct_texts = 0;
  std::set<std::string> texts;
  for (int iter = 0; iter < 400; iter++) {
    Expr e = gen.expr(gen.numeric_type(), 7);
    Expr copy = deep_copy(e);
    ASSERT_TRUE(equal(e, copy)) << to_string(e);
    ASSERT_EQ(structural_hash(e), structural_hash(copy)) << to_string(e);
    if (texts.insert(to_string(e)).second) {
      distinct_texts++;
      hashes.insert(structural_hash(e));
    }
    Stmt s = gen.stmt(4);
    Stmt scopy = deep_copy(s);
    ASSERT_TRUE(equal(s, scopy)) << to_string(s);
    ASSERT_EQ(structural_hash(s), structural_hash(scopy));
  }
  // Different printed text means different trees; they should not collide.
  EXPECT_EQ(hashes.size(), static_cast<size_t>(distinct_texts));
}

TEST(IREquality, LongBlocksDoNotRecurse) {
  std::vector<Stmt> stmts;
  for (int i = 0; i < 200000; i++) stmts.push_back(Evaluate::make(i32(i % 7)));
  Stmt a = Block::make(stmts), b = Block::make(stmts);
  EXPECT_TRUE(equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  stmts.back() = Evaluate::make(i32(9));
  EXPECT_FALSE(equal(a, Block::make(stmts)));
}

TEST(IREquality, Pipelines) {
  Pipeline p = sample_pipeline();
  EXPECT_TRUE(equal(p, sample_pipeline()));
  EXPECT_EQ(structural_hash(p), structural_hash(sample_pipeline()));
  std::vector<std::pair<const char*, std::function<void(Pipeline&)>>> edits = {
      {"name", [](Pipeline& q) { q.name = "other"; }},
      {"input name", [](Pipeline& q) { q.inputs[0].name = "im"; }},
      {"input type", [](Pipeline& q) { q.inputs[0].type = Float64(); }},
      {"input dims", [](Pipeline& q) { q.inputs[0].dim_names[2] = "k"; }},
      {"boundary", [](Pipeline& q) { q.inputs[2].boundary = BoundaryKind::Mirror; }},
      {"boundary value", [](Pipeline& q) { q.inputs[1].boundary_value = 8; }},
      {"input dropped", [](Pipeline& q) { q.inputs.pop_back(); }},
      {"param name", [](Pipeline& q) { q.params[0].name = "s"; }},
      {"param type", [](Pipeline& q) { q.params[1].type = UInt16(); }},
      {"param default", [](Pipeline& q) { q.params[0].default_value = 1.25; }},
      {"func name", [](Pipeline& q) { q.funcs[0].name = "kk"; }},
      {"func args", [](Pipeline& q) { q.funcs[0].args[0] = "j"; }},
      {"func type", [](Pipeline& q) { q.funcs[0].type = Float64(); }},
      {"func value", [](Pipeline& q) { q.funcs[2].value = i32(1); }},
      {"update dropped", [](Pipeline& q) { q.funcs[3].updates.pop_back(); }},
      {"update args", [](Pipeline& q) { q.funcs[3].updates[1].args[1] = var("x"); }},
      {"update value", [](Pipeline& q) { q.funcs[4].updates[0].value = IntImm::make(UInt8(), 5); }},
      {"update domain", [](Pipeline& q) { q.funcs[3].updates[0].domain[0].min = i32(2); }},
      {"update domain name", [](Pipeline& q) { q.funcs[2].updates[0].domain[0].name = "s"; }},
      {"funcs reordered", [](Pipeline& q) { std::swap(q.funcs[0], q.funcs[1]); }},
      {"output func", [](Pipeline& q) { q.output.func = "blur"; }},
      {"output extents", [](Pipeline& q) { q.output.extents.pop_back(); }},
      {"output metric", [](Pipeline& q) { q.output.metric = ErrorMetric::Rmse; }},
  };
  std::set<uint64_t> hashes{structural_hash(p)};
  for (auto& [what, edit] : edits) {
    Pipeline q = sample_pipeline();
    edit(q);
    EXPECT_FALSE(equal(p, q)) << what;
    EXPECT_FALSE(equal(q, p)) << what;
    EXPECT_TRUE(hashes.insert(structural_hash(q)).second) << what;
  }
}

TEST(IREquality, HashIsPinned) {
  // If this changes, every stored pipeline key changes: bump the database's key version
  // in the same change.
  Expr e = Add::make(Mul::make(var("x"), i32(3)), Cast::make(Int32(), f32(0.5)));
  EXPECT_EQ(structural_hash(e), 0xa4ea4f20494a9b5cull) << std::hex << structural_hash(e);
  Pipeline p;
  p.name = "pinned";
  p.inputs = {{"in", UInt8(), {"x", "y"}, BoundaryKind::Constant, 3}};
  p.params = {{"k", Float32(), 0.5}};
  p.funcs.push_back({"out",
                     {"x", "y"},
                     UInt8(),
                     Add::make(call(UInt8(), "in", {var("x"), var("y")}, CallType::Input),
                               IntImm::make(UInt8(), 1)),
                     {{{var("x"), var("y")}, IntImm::make(UInt8(), 2), {{"r", i32(0), i32(1)}}}}});
  p.output = {"out", {InputExtent::make("in", 0), InputExtent::make("in", 1)}, ErrorMetric::Rmse};
  EXPECT_EQ(structural_hash(p), 0x7be712417f71157bull) << std::hex << structural_hash(p);
}

}  // namespace
}  // namespace stipple
