// The size of a run from the evaluator's plan (see the header).
#include "compiler_core/interp/work_limits.h"

#include <fmt/format.h>

#include "compiler_core/interp/bounds_inference.h"
#include "compiler_core/interp/evaluation_setup.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple {

namespace {

/// The body evaluations of the reductions in an expression, per evaluation of the
/// expression: a reduction over n points counts n times (1 + its body's own), so nested
/// reductions multiply. Domain bounds depend on constants only (LANGUAGE.md).
class ReductionWork : public IRVisitor {
 public:
  ReductionWork(bounds::IntervalScope& scope, const bounds::IntervalConstants& k)
      : scope_(scope), k_(k) {}
  double work = 0;

  using IRVisitor::visit;
  void visit(const Reduce* op) override {
    double n = 1;
    for (const bounds::Interval& r : interp::domain_intervals(op->domain, scope_, k_)) {
      n *= r.extent();
    }
    ReductionWork inner(scope_, k_);
    op->body.accept(&inner);
    work += n * (1 + inner.work);
  }

 private:
  bounds::IntervalScope& scope_;
  const bounds::IntervalConstants& k_;
};

double reduction_work(const Expr& e, const interp::ConstantEnv& env) {
  bounds::IntervalScope scope;
  interp::EnvConstants k(env);
  ReductionWork w(scope, k);
  e.accept(&w);
  return w.work;
}

}  // namespace

std::string approximate_size_text(double bytes) {
  const double kib = 1024, mib = kib * 1024, gib = mib * 1024, tib = gib * 1024;
  if (bytes >= tib) return fmt::format("{:.1f} TiB", bytes / tib);
  if (bytes >= gib) return fmt::format("{:.1f} GiB", bytes / gib);
  if (bytes >= mib) return fmt::format("{:.1f} MiB", bytes / mib);
  if (bytes >= kib) return fmt::format("{:.1f} KiB", bytes / kib);
  return fmt::format("{:.0f} bytes", bytes);
}

WorkEstimate estimate_work(const Pipeline& pipeline, const InputImages& inputs,
                           const ParamValues& params, const std::vector<int64_t>& extents) {
  const interp::ConstantEnv env = interp::make_constant_env(pipeline, inputs, params);
  const std::vector<int64_t> mins(extents.size(), 0);
  WorkEstimate w;
  for (const auto& [name, box] : infer_func_boxes(pipeline, inputs, params, mins, extents)) {
    const Func* f = pipeline.find_func(name);
    STIPPLE_INTERNAL_CHECK(f, "a box for an unknown func '" + name + "'");
    double points = 1;
    std::vector<double> extent;
    for (size_t d = 0; d < box.min.size(); ++d) {
      extent.push_back(double(box.max[d] - box.min[d] + 1));
      points *= extent.back();
    }
    const double bytes = points * bytes_of(f->type.code);
    w.buffer_bytes += bytes;
    if (bytes > w.largest_func_bytes) {
      w.largest_func_bytes = bytes;
      w.largest_func = name;
    }
    w.points += points * (1 + reduction_work(f->value, env));
    for (const UpdateDef& u : f->updates) {
      // The update's pure dimensions span the box; its domain is evaluated in full.
      double update_points = 1;
      for (size_t d = 0; d < u.args.size() && d < extent.size(); ++d) {
        if (u.args[d].as<Variable>()) update_points *= extent[d];
      }
      bounds::IntervalScope scope;
      interp::EnvConstants k(env);
      for (const bounds::Interval& r : interp::domain_intervals(u.domain, scope, k)) {
        update_points *= r.extent();
      }
      w.points += update_points * (1 + reduction_work(u.value, env));
    }
  }
  return w;
}

void check_compiled_run(const Pipeline& pipeline, const InputImages& inputs,
                        const ParamValues& params, const std::vector<int64_t>& extents,
                        const WorkLimits& limits) {
  WorkEstimate e;
  try {
    e = estimate_work(pipeline, inputs, params, extents);
  } catch (const UserError&) {
    return;  // no evaluator plan (inputs and params were validated by output_extents)
  }
  check_work_limits(e, limits);
}

void check_work_limits(const WorkEstimate& e, const WorkLimits& limits) {
  auto raise = [](const std::string& option) {
    return option.empty() ? std::string() : " (raise it with " + option + ")";
  };
  if (e.buffer_bytes > limits.max_buffer_bytes) {
    throw UserError(fmt::format(
        "this run would realise {} of buffers (the largest, {}, {}), over the limit of {}{}",
        approximate_size_text(e.buffer_bytes), e.largest_func,
        approximate_size_text(e.largest_func_bytes), approximate_size_text(limits.max_buffer_bytes),
        raise(limits.memory_option)));
  }
  if (e.points > limits.max_points) {
    throw UserError(fmt::format(
        "this run would compute {:.3g} points (pixels of every func, update and reduction "
        "step), over the limit of {:.3g}{}",
        e.points, limits.max_points, raise(limits.work_option)));
  }
}

}  // namespace stipple
