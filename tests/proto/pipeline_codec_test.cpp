// The pipeline proto codec: IR -> proto -> bytes -> proto -> IR gives an equal pipeline
// that prints identically, for hand-built and random IR covering every node kind; and
// malformed input (random bytes, every truncation, mutated bytes, missing operands,
// unknown enum values, ill-typed nodes, bad references, hostile nesting) is always a
// UserError, never a crash or an InternalError.
#include "proto/pipeline_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_printer.h"
#include "tests/compiler_core/ir/random_ir.h"
#include "tests/compiler_core/ir/sample_pipeline.h"

namespace stipple {
namespace {

using namespace stipple::testing;

/// Parses a message with the codec's nesting limit (protobuf's default of 100 is too few).
template <typename M>
bool parse_deep(M* m, const std::string& bytes) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetRecursionLimit(kProtoRecursionLimit);
  return m->ParseFromCodedStream(&in);
}

Pipeline through_bytes(const Pipeline& p) {
  std::string bytes;
  EXPECT_TRUE(to_proto(p).SerializeToString(&bytes));
  EXPECT_EQ(bytes, serialize_pipeline(p));
  proto::Pipeline m;
  EXPECT_TRUE(parse_deep(&m, bytes));
  Pipeline direct = from_proto(m);
  Pipeline parsed = parse_pipeline_bytes(bytes);
  EXPECT_TRUE(equal(direct, parsed));
  return parsed;
}

void expect_round_trip(const Pipeline& p) {
  Pipeline q = through_bytes(p);
  EXPECT_TRUE(equal(p, q)) << to_string(p) << "\n---\n" << to_string(q);
  EXPECT_EQ(to_string(p), to_string(q));
  EXPECT_EQ(structural_hash(p), structural_hash(q));
  // Serialisation is deterministic: the same pipeline always gives the same bytes.
  EXPECT_EQ(serialize_pipeline(p), serialize_pipeline(q));
}

/// Runs `f`, which must throw a UserError whose message contains `needle`.
void expect_user_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning \"" << needle << "\"";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  // Any other exception (InternalError included) propagates and fails the test.
}

TEST(PipelineCodec, SamplePipelineRoundTrips) { expect_round_trip(sample_pipeline()); }

TEST(PipelineCodec, EveryBoundaryAndMetric) {
  for (BoundaryKind b : {BoundaryKind::Clamp, BoundaryKind::Mirror, BoundaryKind::Constant}) {
    for (ErrorMetric m : {ErrorMetric::Lab, ErrorMetric::Rmse}) {
      Pipeline p = sample_pipeline();
      p.inputs[0].boundary = b;
      p.inputs[0].boundary_value = b == BoundaryKind::Constant ? -0.125 : 0;
      p.output.metric = m;
      expect_round_trip(p);
    }
  }
}

TEST(PipelineCodec, ExtremeDeclarationValues) {
  Pipeline p = sample_pipeline();
  p.inputs[1].boundary_value = 255;
  p.inputs[0].boundary = BoundaryKind::Constant;
  p.inputs[0].boundary_value = -0.0;
  p.params[0].default_value = static_cast<float>(0.1);
  p.params[1].default_value = -2147483648.0;
  p.params[2].default_value = 1e-310;  // subnormal
  p.params.push_back({"hu", UInt16(), 65535});
  p.params.push_back({"bu", UInt8(), 0});
  Pipeline q = through_bytes(p);
  EXPECT_TRUE(equal(p, q));
  EXPECT_TRUE(std::signbit(q.inputs[0].boundary_value));
}

// One expression through bytes on its own (RandomIR's names are not declared anywhere, so
// the pipeline-level reference checks do not apply).
Expr round_trip_expr(const Expr& e) {
  std::string bytes;
  EXPECT_TRUE(to_proto(e).SerializeToString(&bytes));
  proto::Expr m;
  EXPECT_TRUE(parse_deep(&m, bytes));
  return from_proto(m);
}

// The element types added later are appended to the wire enum: the older numbers keep
// their meaning, and each new type travels as its own number.
TEST(PipelineCodec, NewElementTypesHaveAppendedWireNumbers) {
  EXPECT_EQ(proto::SCALAR_TYPE_FLOAT64, 6);
  const std::pair<Type, proto::ScalarType> added[] = {{Int8(), proto::SCALAR_TYPE_INT8},
                                                      {Int16(), proto::SCALAR_TYPE_INT16},
                                                      {UInt32(), proto::SCALAR_TYPE_UINT32},
                                                      {Float16(), proto::SCALAR_TYPE_FLOAT16}};
  int expected = 7;
  for (const auto& [t, wire] : added) {
    EXPECT_EQ(static_cast<int>(wire), expected++);
    Expr e = Cast::make(t, Param::make(Float32(), "p"));
    EXPECT_EQ(to_proto(e).cast().type().code(), wire) << to_string(t);
    EXPECT_TRUE(equal(round_trip_expr(e), e)) << to_string(t);
  }
}

TEST(PipelineCodec, RandomExpressionsOfEveryKindRoundTrip) {
  RandomIR gen(99);
  std::set<std::string> kinds;
  for (int iter = 0; iter < 600; iter++) {
    Expr e = gen.expr(iter % 7 == 0 ? Bool() : gen.numeric_type(), 7);
    Expr back = round_trip_expr(e);
    ASSERT_TRUE(equal(e, back)) << to_string(e) << "\n" << to_string(back);
    ASSERT_EQ(to_string(e), to_string(back));
    // Record which node kinds the proto carried, from the printed node names.
    proto::Expr m = to_proto(e);
    kinds.insert(proto::Expr::descriptor()->FindFieldByNumber(m.node_case())->name());
    std::string debug = m.DebugString();
    for (const auto* field :
         {"int_imm",     "float_imm", "cast", "variable", "param", "input_extent", "add",
          "sub",         "mul",       "div",  "mod",      "min",   "max",          "eq",
          "ne",          "lt",        "le",   "gt",       "ge",    "logical_and",  "logical_or",
          "logical_not", "select",    "call", "reduce",   "let"}) {
      if (debug.find(std::string(field) + " {") != std::string::npos) kinds.insert(field);
    }
  }
  EXPECT_EQ(kinds.size(), 26u) << "every expression node kind should have been exercised";
}

TEST(PipelineCodec, RandomStatementsRoundTrip) {
  RandomIR gen(5);
  std::set<proto::Stmt::NodeCase> cases;
  for (int iter = 0; iter < 300; iter++) {
    Stmt s = gen.stmt(5);
    proto::Stmt m = to_proto(s);
    std::string bytes;
    ASSERT_TRUE(m.SerializeToString(&bytes));
    proto::Stmt parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    Stmt back = from_proto(parsed);
    ASSERT_TRUE(equal(s, back)) << to_string(s) << "\n" << to_string(back);
    ASSERT_EQ(to_string(s), to_string(back));
    cases.insert(m.node_case());
  }
  EXPECT_EQ(cases.size(), 7u);
}

TEST(PipelineCodec, LongBlocksStayFlat) {
  std::vector<Stmt> stmts;
  for (int i = 0; i < 20000; i++) stmts.push_back(Evaluate::make(i32(i)));
  Stmt s = Block::make(Block::make(stmts[0], stmts[1]), Block::make(stmts));
  proto::Stmt m = to_proto(s);
  ASSERT_EQ(m.block().stmts_size(), 20001);
  EXPECT_EQ(m.block().stmts(0).block().stmts_size(), 2);  // the left-nested Block stays nested
  EXPECT_TRUE(equal(from_proto(m), s));
}

// A pipeline whose output func's value is a chain of `depth` additions.
Pipeline deep_pipeline(int depth) {
  Pipeline p;
  p.name = "deep";
  p.inputs = {{"in", Int32(), {"x"}, BoundaryKind::Clamp, 0}};
  Expr e = var("x");
  for (int i = 0; i < depth; i++) e = Add::make(e, i32(i));
  p.funcs.push_back({"out", {"x"}, Int32(), e, {}});
  p.output = {"out", {InputExtent::make("in", 0)}, ErrorMetric::Rmse};
  return p;
}

TEST(PipelineCodec, DeepExpressions) {
  // Past protobuf's default nesting limit of 100, as deep as the language allows, and more.
  for (int depth : {150, 300, kMaxProtoIrDepth - 5}) expect_round_trip(deep_pipeline(depth));
  expect_user_error([] { to_proto(deep_pipeline(kMaxProtoIrDepth + 10)); }, "nested deeper");
}

TEST(PipelineCodec, HostileNestingIsRejected) {
  // Messages nested far beyond the limits, built without the IR: the protobuf parser's
  // recursion limit or our depth limit must stop them.
  for (int depth : {kMaxProtoIrDepth + 50, 3000}) {
    proto::Pipeline m = to_proto(deep_pipeline(1));
    proto::Expr* e = m.mutable_funcs(0)->mutable_value();
    e->Clear();
    for (int i = 0; i < depth; i++) e = e->mutable_logical_not()->mutable_a();
    e->mutable_int_imm()->mutable_type()->set_code(proto::SCALAR_TYPE_BOOL);
    e->mutable_int_imm()->mutable_type()->set_lanes(1);
    std::string bytes = m.SerializeAsString();
    expect_user_error([&] { parse_pipeline_bytes(bytes); }, "invalid pipeline proto");
    expect_user_error([&] { from_proto(m); }, "nested deeper");
  }
}

TEST(PipelineCodec, RandomBytesNeverCrash) {
  std::mt19937_64 rng(1);
  int accepted = 0;
  for (int iter = 0; iter < 20000; iter++) {
    std::string bytes(rng() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    try {
      parse_pipeline_bytes(bytes);
      accepted++;
    } catch (const UserError&) {
    }
  }
  EXPECT_EQ(accepted, 0);  // random bytes are never a complete, valid pipeline
}

TEST(PipelineCodec, EveryTruncationIsAUserError) {
  std::string bytes = serialize_pipeline(sample_pipeline());
  ASSERT_GT(bytes.size(), 500u);
  for (size_t n = 0; n < bytes.size(); n++) {
    expect_user_error([&] { parse_pipeline_bytes(std::string_view(bytes).substr(0, n)); },
                      "invalid pipeline proto");
  }
  EXPECT_TRUE(equal(parse_pipeline_bytes(bytes), sample_pipeline()));
}

TEST(PipelineCodec, MutatedBytesAreRejectedOrValid) {
  std::string good = serialize_pipeline(sample_pipeline());
  std::mt19937_64 rng(2);
  int rejected = 0, accepted = 0;
  for (int iter = 0; iter < 5000; iter++) {
    std::string bytes = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; f++)
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    try {
      Pipeline p = parse_pipeline_bytes(bytes);
      // Whatever was accepted is a consistent pipeline: it converts and prints again.
      expect_round_trip(p);
      accepted++;
    } catch (const UserError&) {
      rejected++;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);  // e.g. a flipped character in a name or a changed constant
}

// Edits of a valid message, each of which must be rejected with a message naming it.
struct Malformation {
  const char* needle;
  std::function<void(proto::Pipeline&)> edit;
};

proto::Expr& func_value(proto::Pipeline& m, const std::string& name) {
  for (proto::Func& f : *m.mutable_funcs()) {
    if (f.name() == name) return *f.mutable_value();
  }
  ADD_FAILURE() << "no func " << name;
  return *m.mutable_funcs(0)->mutable_value();
}

TEST(PipelineCodec, MalformedMessagesAreUserErrors) {
  std::vector<Malformation> cases = {
      {"format version 0", [](proto::Pipeline& m) { m.clear_format_version(); }},
      {"format version 2", [](proto::Pipeline& m) { m.set_format_version(2); }},
      {"pipeline without a name", [](proto::Pipeline& m) { m.clear_name(); }},
      {"without an output", [](proto::Pipeline& m) { m.clear_output(); }},
      // Missing operands.
      {"missing second operand of multiplication",
       [](proto::Pipeline& m) { func_value(m, "scan").mutable_mul()->clear_b(); }},
      {"expression with no node set",
       [](proto::Pipeline& m) { func_value(m, "k").mutable_call()->mutable_args(0)->Clear(); }},
      {"missing body of a reduction",
       [](proto::Pipeline& m) { func_value(m, "blur").mutable_reduce()->clear_body(); }},
      {"missing upper bound of j",
       [](proto::Pipeline& m) {
         func_value(m, "blur").mutable_reduce()->mutable_domain(1)->clear_max();
       }},
      {"missing condition of a select",
       [](proto::Pipeline& m) { func_value(m, "small").mutable_select()->clear_condition(); }},
      {"missing definition of func hist",
       [](proto::Pipeline& m) { m.mutable_funcs(2)->clear_value(); }},
      {"missing value of an update of func scan",
       [](proto::Pipeline& m) { m.mutable_funcs(3)->mutable_updates(0)->clear_value(); }},
      {"has no type", [](proto::Pipeline& m) { m.mutable_inputs(0)->clear_type(); }},
      {"reduction over no variables",
       [](proto::Pipeline& m) { func_value(m, "blur").mutable_reduce()->clear_domain(); }},
      // Unknown enum values.
      {"unknown scalar type 99",
       [](proto::Pipeline& m) {
         m.mutable_params(0)->mutable_type()->set_code(static_cast<proto::ScalarType>(99));
       }},
      {"unknown scalar type 0",
       [](proto::Pipeline& m) { m.mutable_funcs(0)->mutable_type()->clear_code(); }},
      {"unknown boundary kind 42",
       [](proto::Pipeline& m) {
         m.mutable_inputs(1)->set_boundary(static_cast<proto::BoundaryKind>(42));
       }},
      {"unknown error metric 0", [](proto::Pipeline& m) { m.mutable_output()->clear_metric(); }},
      {"unknown call type 9",
       [](proto::Pipeline& m) {
         func_value(m, "k").mutable_call()->set_call_type(static_cast<proto::CallType>(9));
       }},
      {"unknown intrinsic 77",
       [](proto::Pipeline& m) {
         func_value(m, "k").mutable_call()->set_intrinsic(static_cast<proto::Intrinsic>(77));
       }},
      {"unknown reduction 0",
       [](proto::Pipeline& m) { func_value(m, "blur").mutable_reduce()->clear_op(); }},
      {"unknown variable kind 5",
       [](proto::Pipeline& m) {
         func_value(m, "scan")
             .mutable_mul()
             ->mutable_a()
             ->mutable_cast()
             ->mutable_value()
             ->mutable_call()
             ->mutable_args(0)
             ->mutable_variable()
             ->set_kind(static_cast<proto::VarKind>(5));
       }},
      {"variable x of type f32",
       [](proto::Pipeline& m) {
         proto::Variable* v = func_value(m, "scan")
                                  .mutable_mul()
                                  ->mutable_a()
                                  ->mutable_cast()
                                  ->mutable_value()
                                  ->mutable_call()
                                  ->mutable_args(0)
                                  ->mutable_variable();
         v->mutable_type()->set_code(proto::SCALAR_TYPE_FLOAT32);
         v->mutable_type()->set_lanes(1);
       }},
      {"fma with 2 arguments",
       [](proto::Pipeline& m) {
         proto::Call* c = func_value(m, "k").mutable_call();
         c->set_intrinsic(proto::INTRINSIC_FMA);
         c->set_name("fma");
         *c->add_args() = c->args(0);
       }},
      {"0 lanes", [](proto::Pipeline& m) { m.mutable_funcs(0)->mutable_type()->set_lanes(0); }},
      // Types the make() functions would reject.
      {"multiplication of mismatched types f64 and f32",
       [](proto::Pipeline& m) {
         *func_value(m, "scan").mutable_mul()->mutable_b() = to_proto(f32(1));
       }},
      {"select with a condition of type i32",
       [](proto::Pipeline& m) {
         *func_value(m, "small").mutable_select()->mutable_condition() = to_proto(i32(1));
       }},
      {"integer constant 300 does not fit u8",
       [](proto::Pipeline& m) {
         func_value(m, "small")
             .mutable_select()
             ->mutable_false_value()
             ->mutable_int_imm()
             ->set_value(300);
       }},
      {"float constant of type i32",
       [](proto::Pipeline& m) {
         proto::Expr& e = func_value(m, "hist");
         e.mutable_float_imm()->mutable_type()->set_code(proto::SCALAR_TYPE_INT32);
         e.mutable_float_imm()->mutable_type()->set_lanes(1);
       }},
      {"integer constant of type f32",
       [](proto::Pipeline& m) {
         func_value(m, "hist").mutable_int_imm()->mutable_type()->set_code(
             proto::SCALAR_TYPE_FLOAT32);
       }},
      {"with an index of type f32",
       [](proto::Pipeline& m) {
         proto::Call* c = func_value(m, "blur")
                              .mutable_reduce()
                              ->mutable_body()
                              ->mutable_mul()
                              ->mutable_b()
                              ->mutable_call();
         *c->mutable_args(0) = to_proto(f32(0));
       }},
      {"exp with 2 arguments",
       [](proto::Pipeline& m) {
         *func_value(m, "k").mutable_call()->add_args() = to_proto(f32(0));
       }},
      {"sqrt of type i32",
       [](proto::Pipeline& m) {
         proto::Call* c = func_value(m, "k").mutable_call();
         c->set_intrinsic(proto::INTRINSIC_SQRT);
         c->set_name("sqrt");
         *c->mutable_args(0) = to_proto(i32(1));
       }},
      {"intrinsic exp named sin",
       [](proto::Pipeline& m) { func_value(m, "k").mutable_call()->set_name("sin"); }},
      {"! of non-bool operand",
       [](proto::Pipeline& m) {
         *func_value(m, "hist").mutable_logical_not()->mutable_a() = to_proto(i32(1));
       }},
      {"&& of type i32",
       [](proto::Pipeline& m) {
         proto::BinaryOp* op = func_value(m, "hist").mutable_logical_and();
         *op->mutable_a() = to_proto(i32(1));
         *op->mutable_b() = to_proto(i32(2));
       }},
      {"bounds of reduction variable i are not i32",
       [](proto::Pipeline& m) {
         *func_value(m, "blur").mutable_reduce()->mutable_domain(0)->mutable_min() =
             to_proto(f32(0));
       }},
      {"func hist of type i32 defined by a value of type f32",
       [](proto::Pipeline& m) { func_value(m, "hist") = to_proto(f32(0)); }},
      {"update of func scan with a value of type i32",
       [](proto::Pipeline& m) {
         *m.mutable_funcs(3)->mutable_updates(0)->mutable_value() = to_proto(i32(0));
       }},
      {"update of func scan with 1 indices, not 2",
       [](proto::Pipeline& m) {
         m.mutable_funcs(3)->mutable_updates(0)->mutable_args()->RemoveLast();
       }},
      {"func small of type bool",
       [](proto::Pipeline& m) {
         m.mutable_funcs(4)->mutable_type()->set_code(proto::SCALAR_TYPE_BOOL);
       }},
      // References.
      {"call to undeclared func kk",
       [](proto::Pipeline& m) {
         func_value(m, "blur")
             .mutable_reduce()
             ->mutable_body()
             ->mutable_mul()
             ->mutable_a()
             ->mutable_call()
             ->set_name("kk");
       }},
      {"call to func k with 2 arguments, not 1",
       [](proto::Pipeline& m) {
         proto::Call* c = func_value(m, "blur")
                              .mutable_reduce()
                              ->mutable_body()
                              ->mutable_mul()
                              ->mutable_a()
                              ->mutable_call();
         *c->add_args() = to_proto(i32(0));
       }},
      {"call to input in of type f64, not f32",
       [](proto::Pipeline& m) {
         proto::Call* c = func_value(m, "blur")
                              .mutable_reduce()
                              ->mutable_body()
                              ->mutable_mul()
                              ->mutable_b()
                              ->mutable_call();
         c->mutable_type()->set_code(proto::SCALAR_TYPE_FLOAT64);
       }},
      {"call to undeclared input in",
       [](proto::Pipeline& m) { m.mutable_inputs(0)->set_name("im"); }},
      {"use of undeclared param sigma",
       [](proto::Pipeline& m) { m.mutable_params(0)->set_name("s"); }},
      {"param gain used with the wrong type",
       [](proto::Pipeline& m) {
         m.mutable_params(2)->mutable_type()->set_code(proto::SCALAR_TYPE_FLOAT32);
       }},
      {"extent of dimension 2 of input depth, which has 2",
       [](proto::Pipeline& m) {
         *m.mutable_output()->mutable_extents(0) = to_proto(InputExtent::make("depth", 2));
       }},
      {"extent of undeclared input nope",
       [](proto::Pipeline& m) {
         *m.mutable_output()->mutable_extents(0) = to_proto(InputExtent::make("nope", 0));
       }},
      {"output of undeclared func nope",
       [](proto::Pipeline& m) { m.mutable_output()->set_func("nope"); }},
      {"output with 2 extents for func misc of 3 dimensions",
       [](proto::Pipeline& m) { m.mutable_output()->mutable_extents()->RemoveLast(); }},
      {"name k declared twice", [](proto::Pipeline& m) { m.mutable_funcs(1)->set_name("k"); }},
      {"input lut with 0 dimensions",
       [](proto::Pipeline& m) { m.mutable_inputs(1)->clear_dim_names(); }},
      {"param h has default 2.5, which i32 cannot hold",
       [](proto::Pipeline& m) { m.mutable_params(1)->set_default_value(2.5); }},
      {"func blur has variable x twice",
       [](proto::Pipeline& m) { m.mutable_funcs(1)->set_args(1, "x"); }},
  };
  const proto::Pipeline good = to_proto(sample_pipeline());
  for (const Malformation& c : cases) {
    SCOPED_TRACE(c.needle);
    proto::Pipeline m = good;
    c.edit(m);
    expect_user_error([&] { from_proto(m); }, c.needle);
    std::string bytes = m.SerializeAsString();
    expect_user_error([&] { parse_pipeline_bytes(bytes); }, c.needle);
  }
}

TEST(PipelineCodec, MalformedStatements) {
  proto::Stmt s = to_proto(For::make("x", i32(0), i32(4), ForType::Serial, Evaluate::make(i32(0))));
  s.mutable_for_loop()->set_for_type(static_cast<proto::ForType>(12));
  expect_user_error([&] { from_proto(s); }, "unknown loop type 12");
  s = to_proto(Block::make(Evaluate::make(i32(0)), Evaluate::make(i32(1))));
  s.mutable_block()->mutable_stmts()->RemoveLast();
  expect_user_error([&] { from_proto(s); }, "block of fewer than two statements");
  s = to_proto(IfThenElse::make(LT::make(var("x"), i32(0)), Evaluate::make(i32(0))));
  *s.mutable_if_then_else()->mutable_condition() = to_proto(i32(1));
  expect_user_error([&] { from_proto(s); }, "if with a condition of type i32");
  s = to_proto(Allocate::make("b", Float32(), {i32(4)}, Evaluate::make(i32(0))));
  s.mutable_allocate()->clear_body();
  expect_user_error([&] { from_proto(s); }, "missing body of allocation b");
  s.Clear();
  expect_user_error([&] { from_proto(s); }, "statement with no node set");
}

}  // namespace
}  // namespace stipple
