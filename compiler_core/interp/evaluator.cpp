// The reference evaluator's driver: validate, order the funcs, infer their boxes, then
// realise each func over its box (pure definition at every point, then each update in
// order) and cut the requested region out of the output func.
#include "compiler_core/interp/evaluator.h"

#include <algorithm>
#include <exception>
#include <thread>

#include "compiler_core/interp/bounds_inference.h"
#include "compiler_core/interp/evaluation_setup.h"
#include "compiler_core/interp/expr_program.h"
#include "compiler_core/ir/error.h"

namespace stipple {

using interp::ConstantEnv;
using interp::ExprCompiler;
using interp::ExprProgram;
using interp::Machine;
using interp::RealisedFuncs;

namespace {

// Below this many points a second thread costs more than it saves.
constexpr int64_t kMinPointsPerThread = 8192;

/// Sets `coords` to the point at flat index `i` of a dense box (dimension 0 fastest).
void point_at(int64_t i, const Buffer& buf, std::vector<int64_t>& coords) {
  for (int d = 0; d < buf.dimensions(); ++d) {
    coords[d] = buf.min(d) + i % buf.extent(d);
    i /= buf.extent(d);
  }
}

/// Evaluates a func's pure definition at every point of its buffer, over up to two
/// threads that split the points (each point is independent of every other).
void realise_pure(const ConstantEnv& env, const RealisedFuncs& funcs, const Func& f, Buffer& buf) {
  ExprProgram program;
  ExprCompiler compiler(env, funcs, "", program);
  for (const std::string& arg : f.args) compiler.bind(arg);  // slots 0..n-1 are the args
  int32_t root = compiler.compile(f.value);
  STIPPLE_INTERNAL_CHECK(program.nodes[root].type == buf.type(),
                         "func '" + f.name + "' has a definition of another type");

  const int dims = buf.dimensions();
  auto run = [&](int64_t begin, int64_t end) {
    Machine m(program);
    std::vector<int64_t> coords(dims);
    point_at(begin, buf, coords);
    for (int d = 0; d < dims; ++d) m.slot(d) = int_value(coords[d]);
    void* data = buf.data();
    ScalarType type = buf.type();
    for (int64_t i = begin; i < end; ++i) {
      store_element(type, data, i, m.eval(root));
      // Step to the next point, dimension 0 fastest.
      for (int d = 0; d < dims; ++d) {
        Value& s = m.slot(d);
        if (s.i < buf.min(d) + buf.extent(d) - 1) {
          ++s.i;
          break;
        }
        s.i = buf.min(d);
      }
    }
  };

  const int64_t total = buf.element_count();
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  int64_t threads = std::min<int64_t>({2, hw, std::max<int64_t>(1, total / kMinPointsPerThread)});
  if (threads <= 1) {
    run(0, total);
    return;
  }
  std::exception_ptr error;
  int64_t half = total / 2;
  std::thread worker([&] {
    try {
      run(half, total);
    } catch (...) {
      error = std::current_exception();
    }
  });
  try {
    run(0, half);
  } catch (...) {
    worker.join();
    throw;
  }
  worker.join();
  if (error) std::rethrow_exception(error);
}

/// Runs one update definition: pure variables over the func's box (last dimension
/// outermost), then the reduction variables (the first one innermost); every iteration
/// evaluates the value and the store position and stores.
void realise_update(const ConstantEnv& env, const RealisedFuncs& funcs, const Func& f,
                    const UpdateDef& u, Buffer& buf) {
  ExprProgram program;
  ExprCompiler bounds_compiler(env, funcs, f.name, program);
  std::vector<int32_t> lo_nodes, hi_nodes;
  for (const ReductionVariable& rv : u.domain) {
    lo_nodes.push_back(bounds_compiler.compile(rv.min));
    hi_nodes.push_back(bounds_compiler.compile(rv.max));
  }

  // Loop variables from outermost to innermost: their slot and range.
  struct Loop {
    int32_t slot;
    int64_t lo, hi;
  };
  std::vector<Loop> loops;
  ExprCompiler compiler(env, funcs, f.name, program);
  const int dims = buf.dimensions();
  STIPPLE_INTERNAL_CHECK(static_cast<int>(u.args.size()) == dims,
                         "update of '" + f.name + "' with the wrong number of arguments");
  for (int d = dims - 1; d >= 0; --d) {
    const Variable* v = u.args[d].as<Variable>();
    if (v && v->kind == VarKind::Pure) {
      loops.push_back({compiler.bind(v->name), buf.min(d), buf.min(d) + buf.extent(d) - 1});
    }
  }
  {
    Machine bounds(program);
    std::vector<Loop> rloops;
    for (size_t r = 0; r < u.domain.size(); ++r) {
      int64_t lo = bounds.eval(lo_nodes[r]).i, hi = bounds.eval(hi_nodes[r]).i;
      if (lo > hi) return;  // an empty domain: the update does nothing
      rloops.push_back({compiler.bind(u.domain[r].name), lo, hi});
    }
    loops.insert(loops.end(), rloops.rbegin(), rloops.rend());
  }
  std::vector<int32_t> lhs;
  for (const Expr& a : u.args) lhs.push_back(compiler.compile(a));
  int32_t value = compiler.compile(u.value);
  STIPPLE_INTERNAL_CHECK(program.nodes[value].type == buf.type(),
                         "update of '" + f.name + "' has a value of another type");

  Machine m(program);
  for (const Loop& l : loops) m.slot(l.slot) = int_value(l.lo);
  std::vector<int64_t> site(dims);
  for (;;) {
    for (int d = 0; d < dims; ++d) site[d] = m.eval(lhs[d]).i;
    // A store outside the box can only come from an index with no bounds (a data-dependent
    // scatter); nothing outside the box is ever read, so the store is skipped, and so is
    // its value, whose read of the same site would be outside the box too.
    if (buf.contains(site)) {
      Value v = m.eval(value);
      store_element(buf.type(), buf.data(), buf.offset_of(site), v);
    }
    size_t k = loops.size();
    while (k > 0) {
      const Loop& l = loops[k - 1];
      Value& s = m.slot(l.slot);
      if (s.i < l.hi) {
        ++s.i;
        break;
      }
      s.i = l.lo;
      --k;
    }
    if (k == 0) return;
  }
}

struct Plan {
  ConstantEnv env;
  std::vector<const Func*> order;
  std::map<std::string, FuncBox> boxes;
};

Plan make_plan(const Pipeline& pipeline, const InputImages& inputs, const ParamValues& params,
               const std::vector<int64_t>& mins, const std::vector<int64_t>& extents) {
  Plan plan;
  plan.env = interp::make_constant_env(pipeline, inputs, params);
  plan.order = interp::order_funcs(pipeline, pipeline.output.func);
  const Func* out = plan.order.back();
  if (mins.size() != out->args.size() || extents.size() != out->args.size()) {
    throw UserError("the region has " + std::to_string(extents.size()) +
                    " dimensions but output func '" + out->name + "' has " +
                    std::to_string(out->args.size()));
  }
  FuncBox region;
  for (size_t d = 0; d < mins.size(); ++d) {
    if (extents[d] <= 0) {
      throw UserError("the region's extent in dimension " + std::to_string(d) + " is " +
                      std::to_string(extents[d]) + "; it must be positive");
    }
    region.min.push_back(mins[d]);
    region.max.push_back(mins[d] + extents[d] - 1);
  }
  plan.boxes = interp::infer_boxes(plan.env, plan.order, region);
  return plan;
}

/// The part [mins, mins + extents) of a buffer that contains it, with those mins.
Buffer crop(const Buffer& src, const std::vector<int64_t>& mins,
            const std::vector<int64_t>& extents) {
  bool same = true;
  for (int d = 0; d < src.dimensions(); ++d) {
    same = same && src.min(d) == mins[d] && src.extent(d) == extents[d];
  }
  if (same) return src;
  Buffer out(src.type(), mins, extents);
  std::vector<int64_t> coords(mins.size());
  int bytes = bytes_of(src.type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    point_at(i, out, coords);
    std::memcpy(static_cast<std::byte*>(out.data()) + i * bytes,
                static_cast<const std::byte*>(src.data()) + src.offset_of(coords) * bytes, bytes);
  }
  return out;
}

}  // namespace

std::map<std::string, FuncBox> infer_func_boxes(const Pipeline& pipeline, const InputImages& inputs,
                                                const ParamValues& params,
                                                const std::vector<int64_t>& mins,
                                                const std::vector<int64_t>& extents) {
  return make_plan(pipeline, inputs, params, mins, extents).boxes;
}

Buffer evaluate_pipeline_region(const Pipeline& pipeline, const InputImages& inputs,
                                const ParamValues& params, const std::vector<int64_t>& mins,
                                const std::vector<int64_t>& extents) {
  Plan plan = make_plan(pipeline, inputs, params, mins, extents);
  RealisedFuncs funcs;
  for (const Func* f : plan.order) {
    auto found = plan.boxes.find(f->name);
    if (found == plan.boxes.end()) continue;  // never read
    const FuncBox& box = found->second;
    std::vector<int64_t> extent;
    for (size_t d = 0; d < box.min.size(); ++d) extent.push_back(box.max[d] - box.min[d] + 1);
    Buffer buf(f->type.code, box.min, extent);
    realise_pure(plan.env, funcs, *f, buf);
    funcs[f->name] = buf;  // shares the data, so updates see their own stores
    for (const UpdateDef& u : f->updates) realise_update(plan.env, funcs, *f, u, buf);
  }
  return crop(funcs.at(plan.order.back()->name), mins, extents);
}

std::vector<int64_t> output_extents(const Pipeline& pipeline, const InputImages& inputs,
                                    const ParamValues& params) {
  ConstantEnv env = interp::make_constant_env(pipeline, inputs, params);
  ExprProgram program;
  RealisedFuncs none;
  ExprCompiler compiler(env, none, "", program);
  std::vector<int64_t> extents;
  for (size_t d = 0; d < pipeline.output.extents.size(); ++d) {
    int32_t node = compiler.compile(pipeline.output.extents[d]);
    int64_t e = Machine(program).eval(node).i;
    if (e <= 0) {
      throw UserError("the output's extent in dimension " + std::to_string(d) + " is " +
                      std::to_string(e) + "; it must be positive");
    }
    extents.push_back(e);
  }
  return extents;
}

Buffer evaluate_pipeline(const Pipeline& pipeline, const InputImages& inputs,
                         const ParamValues& params) {
  std::vector<int64_t> extents = output_extents(pipeline, inputs, params);
  std::vector<int64_t> mins(extents.size(), 0);
  return evaluate_pipeline_region(pipeline, inputs, params, mins, extents);
}

}  // namespace stipple
