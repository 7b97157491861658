// Property test: thousands of random well-typed expressions (every operator, casts,
// select, && / ||, min/max, intrinsics, input reads under each boundary condition, params,
// reductions of every op, Let) computed by JIT-compiled loop nests and by the reference
// evaluator over a grid of variable values (negative ones included), which must agree bit
// for bit, under four loop nests: serial; x as one 7-lane vector; x split into 4-lane
// vectors with a guard for the tail (masked lanes, and the unmasked copy for full vectors);
// y as the vector lanes (gathers, scatters, and reductions whose bounds vary per lane,
// which fall back to scalar code). Only the C library's functions (exp/log/pow/sin/cos/
// tan/atan2/hypot/tanh) may differ (both call libm, so they should not); the largest
// difference in ulps is printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/ir_printer.h"
#include "tests/compiler_core/codegen/random_expr.h"
#include "tests/compiler_core/interp/ir_builders.h"

namespace stipple {
namespace {

using namespace irb;
using codegen::BufferDescriptor;
using codegen::JitCompiler;
using testing_codegen::ExprGen;
using testing_codegen::kStored;
using testing_codegen::same_value;
using testing_codegen::ulps;

using testing_codegen::GridLoops;
using testing_codegen::kHeight;
using testing_codegen::kMinX;
using testing_codegen::kMinY;
using testing_codegen::kWidth;

/// The loop shapes the batches cycle through: serial, x vectorized with and without a tail,
/// and y vectorized inside a serial x.
constexpr GridLoops kLoopShapes[] = {GridLoops::Serial, GridLoops::VectorX, GridLoops::VectorXTail,
                                     GridLoops::VectorYInside};

TEST(CodegenProperty, RandomExpressionsMatchTheEvaluatorBitForBit) {
  auto jit = JitCompiler::create();
  constexpr int kBatches = 80, kPerBatch = 50;
  std::mt19937 rng(20240611);
  int compared = 0, transcendental_exprs = 0, transcendental_mismatches = 0, vector_batches = 0;
  int64_t max_ulps = 0;
  double compile_ms = 0;
  for (int batch = 0; batch < kBatches; ++batch) {
    BoundaryKind kinds[3];
    for (auto& k : kinds) k = static_cast<BoundaryKind>(rng() % 3);
    std::vector<InputDecl> inputs = {make_input("img", Float32(), {"x", "y"}, kinds[0], 0.25),
                                     make_input("a", UInt8(), {"x"}, kinds[1], 9),
                                     make_input("one", UInt16(), {"x"}, kinds[2], 77)};
    std::vector<ParamDecl> params = {{"p", Float32(), 1.75}, {"k", Int32(), -3}};
    InputImages images;
    images["img"] = random_buffer(ScalarType::Float32, {5, 4}, -4, 4, rng());
    images["a"] = random_buffer(ScalarType::UInt8, {3}, 0, 255.99, rng());
    images["one"] = random_buffer(ScalarType::UInt16, {1}, 0, 65535.99, rng());
    ParamValues param_values = {{"p", 1.75}, {"k", -3}};

    LoweredFunction f;
    f.name = "batch";
    f.inputs = inputs;
    f.params = params;
    std::vector<Expr> exprs;
    std::vector<bool> uses_libm;
    std::vector<Stmt> stores;
    for (int i = 0; i < kPerBatch; ++i) {
      ExprGen g(static_cast<uint32_t>(rng()));
      Type t = kStored[rng() % std::size(kStored)];
      Expr e = g.gen(t, 4);
      std::string name = "out" + std::to_string(i);
      exprs.push_back(e);
      uses_libm.push_back(g.transcendental);
      f.buffers.push_back(ExternalBuffer{name, t, 2});
      stores.push_back(Provide::make(name, e, {var("x"), var("y")}));
    }
    // One loop nest per expression, so that one expression the vectoriser declines (a
    // median) leaves the others vectorised.
    std::vector<Stmt> nests;
    for (const Stmt& store : stores)
      nests.push_back(testing_codegen::grid_loops(kLoopShapes[batch % 4], store));
    f.body = Block::make(nests);
    if (batch % 4 != 0) {
      // The vector loops really are vector code: count the nests whose lanes were emitted.
      const std::string lanes = batch % 4 == 1 ? "<7 x" : batch % 4 == 2 ? "<4 x" : "<5 x";
      const std::string ir = jit->llvm_ir(f, false);
      size_t n = 0;
      for (size_t at = ir.find(lanes); at != std::string::npos; at = ir.find(lanes, at + 1)) ++n;
      EXPECT_GT(n, 0u) << "batch " << batch << " has no " << lanes << " vectors";
      vector_batches += n > 0;
    }
    auto fn = jit->compile(f);
    compile_ms += fn->stats().total_ms;

    std::vector<Buffer> outs;
    std::vector<BufferDescriptor> descs;
    for (const InputDecl& in : inputs) descs.push_back(codegen::describe(images.at(in.name)));
    for (const ExternalBuffer& b : f.buffers) {
      outs.emplace_back(b.type.code, std::vector<int64_t>{kMinX, kMinY},
                        std::vector<int64_t>{kWidth, kHeight});
    }
    for (Buffer& b : outs) descs.push_back(codegen::describe(b));
    const double param_array[] = {1.75, -3};
    ASSERT_EQ((*fn)(descs.data(), param_array), 0);

    for (int i = 0; i < kPerBatch; ++i) {
      Pipeline p = make_pipeline(inputs, {make_func("out", {"x", "y"}, exprs[i])}, "out",
                                 {i32(kWidth), i32(kHeight)}, params);
      Buffer ref =
          evaluate_pipeline_region(p, images, param_values, {kMinX, kMinY}, {kWidth, kHeight});
      ++compared;
      if (uses_libm[i]) ++transcendental_exprs;
      ScalarType t = exprs[i].type().code;
      for (int64_t k = 0; k < ref.element_count(); ++k) {
        if (same_value(t, ref, outs[i], k)) continue;
        if (uses_libm[i]) {
          ++transcendental_mismatches;
          if (Type(t).is_float()) {
            max_ulps = std::max(max_ulps, ulps(t, ref.get_flat(k), outs[i].get_flat(k)));
          }
          continue;
        }
        ADD_FAILURE() << "batch " << batch << " expression " << i << " point " << k
                      << ": evaluator " << ref.get_flat(k) << ", jit " << outs[i].get_flat(k)
                      << "\n"
                      << nests[i];
        break;
      }
    }
  }
  std::printf(
      "compared %d expressions (%d calling libm) at %d points each; %d points of "
      "libm expressions differ, max %lld ulps; mean compile %.1f ms per %d-expression batch\n",
      compared, transcendental_exprs, kWidth * kHeight, transcendental_mismatches,
      static_cast<long long>(max_ulps), compile_ms / kBatches, kPerBatch);
  EXPECT_EQ(compared, kBatches * kPerBatch);
  EXPECT_EQ(vector_batches, kBatches * 3 / 4);
}

}  // namespace
}  // namespace stipple
