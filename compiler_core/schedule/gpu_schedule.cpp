// GPU schedules from CPU ones (gpu_schedule.h).
#include "compiler_core/schedule/gpu_schedule.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "compiler_core/schedule/schedule_loops.h"

namespace stipple {

namespace {

// A loop name not yet used by the stage: `base`, else base_2, base_3, ...
std::string unused_name(const StageLoopNest& nest, const std::string& base) {
  std::string n = base;
  for (int k = 2; std::find(nest.ever.begin(), nest.ever.end(), n) != nest.ever.end(); ++k) {
    n = base + "_" + std::to_string(k);
  }
  return n;
}

// Appends to `out` the directives that map `loops` (innermost first, one or two of them)
// to a kernel: one loop split into blocks of t1 threads, two tiled over tx x ty threads.
// Returns the new loops, innermost first (the thread loops, then the block loops).
std::vector<std::string> map_to_kernel(const StageLoopNest& nest,
                                       const std::vector<std::string>& loops, int64_t tx,
                                       int64_t ty, int64_t t1, std::vector<Directive>& out) {
  auto name = [](const std::string& n) { return ScheduleArg::make_name(n); };
  if (loops.size() == 1) {
    const std::string& v = loops[0];
    const std::string o = unused_name(nest, v + "o"), i = unused_name(nest, v + "i");
    out.push_back(Directive::make("split", {name(v), name(o), name(i), ScheduleArg::make_int(t1)}));
    out.push_back(Directive::make("gpu_blocks", {name(o)}));
    out.push_back(Directive::make("gpu_threads", {name(i)}));
    return {i, o};
  }
  const std::string& x = loops[0];
  const std::string& y = loops[1];
  const std::string xo = unused_name(nest, x + "o"), yo = unused_name(nest, y + "o");
  const std::string xi = unused_name(nest, x + "i"), yi = unused_name(nest, y + "i");
  out.push_back(
      Directive::make("gpu_tile", {name(x), name(y), name(xo), name(yo), name(xi), name(yi),
                                   ScheduleArg::make_int(tx), ScheduleArg::make_int(ty)}));
  return {xi, yi, xo, yo};
}

// The GPU directives of one stage: its first two pure loops (those along which the stage
// carries no dependence) tiled over blocks and threads, a third as a block dimension too;
// a single pure loop split into blocks and threads. An update that scatters (a histogram,
// a splat) has its work in reduction loops that carry a dependence: with fewer than two
// pure loops to map, it sums atomically over its first one or two reduction loops
// instead, its pure loops inside each thread. Empty when it has no loop to map.
std::vector<Directive> gpu_directives(const Func& f, int stage, int64_t tx, int64_t ty,
                                      int64_t t1) {
  const StageLoopNest nest = default_loop_nest(f, stage);
  std::vector<std::string> pure, scattering;  // innermost first
  for (const Loop& l : nest.loops) {
    if (!l.reduction && !l.dependent) pure.push_back(l.name);
    if (l.reduction && l.dependent) scattering.push_back(l.name);
  }
  std::vector<Directive> out;
  if (stage > 0 && pure.size() < 2 && !scattering.empty() &&
      atomic_update_error(f, stage).empty()) {
    out.push_back(Directive::make("atomic", {}));
    if (scattering.size() > 2) scattering.resize(2);
    const std::vector<std::string> mapped = map_to_kernel(nest, scattering, tx, ty, t1, out);
    if (!pure.empty()) {  // the pure loop inside the threads
      std::vector<ScheduleArg> inner_first = {ScheduleArg::make_name(pure[0])};
      for (const std::string& n : mapped) inner_first.push_back(ScheduleArg::make_name(n));
      out.push_back(Directive::make("reorder", inner_first));
    }
    return out;
  }
  if (pure.empty()) return out;
  // Loops between x and y in the default nest (reduction loops of an update) stay inside
  // the tile's thread loops; reorder puts the tile's loops innermost-last as gpu_tile
  // needs them adjacent: the reduction loops run serially in each thread.
  map_to_kernel(nest, {pure.begin(), pure.begin() + std::min<size_t>(pure.size(), 2)}, tx, ty, t1,
                out);
  if (pure.size() >= 3) {
    // The third pure loop must sit directly outside yo: only when nothing is between.
    out.push_back(Directive::make("gpu_blocks", {ScheduleArg::make_name(pure[2])}));
  }
  return out;
}

const int64_t kShapes[][2] = {{32, 8}, {16, 16}, {64, 4}, {8, 8}, {32, 4}, {128, 2}, {16, 8}};

Schedule make_gpu_schedule(const Pipeline& p, const Schedule& cpu,
                           const std::function<GpuTileShape()>& shape_of_stage) {
  Schedule out;
  out.file_name = cpu.file_name + " (GPU)";
  for (const Func& f : p.funcs) {
    const bool is_output = f.name == p.output.func;
    const LevelKind level = effective_compute_level(cpu, p, f).kind;
    FuncSchedule fs;
    // Approximations and bounds stay (they change what the func computes, not where).
    if (const FuncSchedule* c = cpu.find(f.name)) {
      auto it = c->stages.find(0);
      if (it != c->stages.end()) {
        for (const Directive& d : it->second.directives) {
          if (find_directive_spec(d.name)->scope != DirectiveScope::Stage) {
            fs.stages[0].directives.push_back(d);
          }
        }
      }
    }
    const bool realised = is_output || level != LevelKind::Inline || !f.updates.empty();
    if (!realised || (f.args.empty() && f.updates.empty())) {
      if (!is_output && !fs.stages.empty()) fs.compute = LoopLevel::inlined();
      if (!fs.stages.empty()) out.funcs[f.name] = fs;
      continue;  // inlined (a func with no variables is cheap to recompute per use)
    }
    if (!is_output) fs.compute = LoopLevel::root();
    for (int st = 0; st < stage_count(f); ++st) {
      const GpuTileShape shape = shape_of_stage();
      std::vector<Directive> ds = gpu_directives(f, st, shape.x, shape.y, shape.threads_1d);
      for (Directive& d : ds) fs.stages[st].directives.push_back(std::move(d));
    }
    out.funcs[f.name] = fs;
  }
  return out;
}

}  // namespace

Schedule gpu_schedule_from(const Pipeline& p, const Schedule& cpu, const GpuTileShape& shape) {
  return make_gpu_schedule(p, cpu, [&] { return shape; });
}

Schedule random_gpu_schedule(const Pipeline& p, const Schedule& cpu, std::mt19937& rng) {
  return make_gpu_schedule(p, cpu, [&] {
    std::uniform_int_distribution<size_t> pick(0, std::size(kShapes) - 1);
    const size_t k = pick(rng);
    GpuTileShape s;
    s.x = kShapes[k][0];
    s.y = kShapes[k][1];
    s.threads_1d = int64_t{32} << std::uniform_int_distribution<int>(0, 3)(rng);
    return s;
  });
}

}  // namespace stipple
