// The lowering driver: a plain list of passes.
#include "compiler_core/lowering/lower.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/lowering/bound_gpu_allocations.h"
#include "compiler_core/lowering/fold_constants.h"
#include "compiler_core/lowering/hoist_invariant_reductions.h"
#include "compiler_core/lowering/schedule_functions.h"
#include "compiler_core/lowering/simplify_modulo.h"
#include "compiler_core/lowering/sliding_window.h"
#include "compiler_core/lowering/storage_folding.h"
#include "compiler_core/perforation/apply_perforation.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple {

namespace {

// STIPPLE_DUMP_PASSES=1 (any value but 0) dumps every pass to stderr.
bool dump_passes_from_environment() {
  const char* v = std::getenv("STIPPLE_DUMP_PASSES");
  return v && *v && std::string(v) != "0";
}

}  // namespace

PassObserver print_passes(std::ostream& os) {
  return [&os](const std::string& pass, const std::string& ir) {
    os << "== " << pass << " ==\n" << ir;
    if (!ir.empty() && ir.back() != '\n') os << '\n';
  };
}

LoweredFunction lower(const Pipeline& original, const Schedule& approximated,
                      const PassObserver& after_pass) {
  PassObserver observe = after_pass;
  if (!observe && dump_passes_from_environment()) observe = print_passes(std::cerr);
  auto log = [&](const char* pass, const Stmt& s) {
    if (observe) observe(pass, to_string(s));
  };

  // Approximations first: everything below sees an ordinary pipeline and schedule.
  perforation::PerforatedPipeline perforated =
      perforation::apply_perforation(original, approximated);
  const Pipeline& p = perforated.pipeline;
  const Schedule& s = perforated.schedule;
  if (has_approximation(approximated)) {
    try {
      check_schedule(s, p);
    } catch (const CompileError& e) {
      throw UserError(std::string("the schedule is legal, but not once its approximations are "
                                  "applied: ") +
                      e.what());
    }
  }
  if (observe) observe("apply_perforation", to_string(p));
  const Func* out = p.find_func(p.output.func);
  STIPPLE_INTERNAL_CHECK(out, "no output func '" + p.output.func + "'");

  // Inlining, bounds inference and CSE run inside schedule_functions, per stage and level
  // (schedule_functions.h says why).
  Stmt body = lowering::schedule_functions(p, s);
  log("schedule_functions", body);
  body = lowering::hoist_invariant_reductions(body);
  log("hoist_invariant_reductions", body);
  lowering::SlidingResult slid = lowering::sliding_window(body, p);
  body = slid.stmt;
  log("sliding_window", body);
  body = lowering::storage_folding(body, slid.slid);
  log("storage_folding", body);
  body = lowering::simplify_modulo(body);
  log("simplify_modulo", body);
  body = lowering::bound_gpu_allocations(body);
  log("bound_gpu_allocations", body);
  body = lowering::fold_constants(body);
  log("fold_constants", body);

  LoweredFunction f;
  f.name = p.name;
  f.body = body;
  f.inputs = p.inputs;
  f.params = p.params;
  ExternalBuffer result{out->name, out->type, static_cast<int>(out->args.size()), {}};
  for (const RegionBound& b : region_bounds(s, out->name)) {
    const auto d = std::find(out->args.begin(), out->args.end(), b.var) - out->args.begin();
    result.fixed.push_back({static_cast<int>(d), b.min, b.extent});
  }
  f.buffers.push_back(std::move(result));
  return f;
}

std::string lowered_text(const Pipeline& p, const Schedule& s) {
  return to_string(lower(p, s).body);
}

}  // namespace stipple
