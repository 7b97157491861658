// The schedule checker, in phases: (1) funcs, stages and the shape of levels; (2) each
// stage's directives, building its loop nest (schedule_loops.cpp); (3) the loops that
// compute_at and store_at name; (4) compute_at cycles; (5) every use of a func computed
// at a loop is inside that loop; (6) the store level encloses the compute level; (7) no
// parallel or GPU loop between a func's store and compute levels; (8) a func computed
// inside a GPU kernel has no parallel or GPU loops of its own.
#include "compiler_core/schedule/schedule_checker.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/natural_vectors.h"
#include "compiler_core/schedule/schedule_loops.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "compiler_core/support/files.h"
#include "compiler_core/support/host_probe.h"

namespace stipple {

namespace {

using StageKey = std::pair<std::string, int>;

std::string q(const std::string& name) { return "'" + name + "'"; }

class ScheduleChecker {
 public:
  ScheduleChecker(const Schedule& s, const Pipeline& p, const SourceText& source)
      : s_(s), p_(p), source_(source) {
    for (const Func& f : p_.funcs) funcs_[f.name] = &f;
    for (const Func& f : p_.funcs) collect_calls(f);
    for (const auto& [name, fs] : s_.funcs) ordered_.push_back({&name, &fs});
    // Text order, so that the first error in the text is reported first within a phase.
    std::stable_sort(ordered_.begin(), ordered_.end(), [](const auto& a, const auto& b) {
      return std::pair(a.second->loc.line, a.second->loc.col) <
             std::pair(b.second->loc.line, b.second->loc.col);
    });
  }

  void run() {
    for (const auto& [name, fs] : ordered_) check_func_entry(*name, *fs);
    build_loop_nests();
    for (const auto& [name, fs] : ordered_) {
      if (fs->compute && fs->compute->kind == LevelKind::At)
        resolve_level(*name, *fs->compute, "computed");
      if (fs->store && fs->store->kind == LevelKind::At) resolve_level(*name, *fs->store, "stored");
    }
    for (const auto& [name, fs] : ordered_) check_cycle(*name);
    for (const auto& [name, fs] : ordered_) check_uses(*name);
    for (const auto& [name, fs] : ordered_) check_store(*name);
    for (const auto& [name, fs] : ordered_) check_inside_kernel(*name);
  }

 private:
  [[noreturn]] void error(SourceLoc loc, const std::string& message) const {
    source_.error(loc, message);
  }

  const Func* func(const std::string& name) const {
    auto it = funcs_.find(name);
    return it == funcs_.end() ? nullptr : it->second;
  }
  LoopLevel compute_of(const std::string& name) const {
    return effective_compute_level(s_, p_, *func(name));
  }
  LoopLevel store_of(const std::string& name) const {
    return effective_store_level(s_, p_, *func(name));
  }

  void collect_calls(const Func& f) {
    for (int st = 0; st < stage_count(f); ++st) {
      std::set<std::string> calls;
      if (st == 0) {
        add_called_funcs(f.value, calls);
      } else {
        const UpdateDef& u = f.updates[st - 1];
        for (const Expr& a : u.args) add_called_funcs(a, calls);
        add_called_funcs(u.value, calls);
        for (const ReductionVariable& rv : u.domain) {
          add_called_funcs(rv.min, calls);
          add_called_funcs(rv.max, calls);
        }
      }
      calls.erase(f.name);
      for (const std::string& callee : calls) {
        callees_[f.name].insert(callee);
        direct_uses_[callee].push_back({f.name, st});
      }
    }
  }

  std::string func_list() const {
    std::string out;
    for (size_t i = 0; i < p_.funcs.size() && i < 12; ++i)
      out += (i ? ", " : "") + p_.funcs[i].name;
    if (p_.funcs.size() > 12) out += ", ...";
    return out;
  }

  // Phase 1 ------------------------------------------------------------------------------
  void check_func_entry(const std::string& name, const FuncSchedule& fs) {
    const Func* f = func(name);
    if (!f) {
      if (p_.find_input(name)) {
        error(fs.loc, q(name) + " is an input; only funcs are scheduled");
      }
      error(fs.loc, "unknown func " + q(name) + "; the pipeline's funcs are " + func_list());
    }
    for (const auto& [stage, st] : fs.stages) {
      if (stage >= 1 && stage < stage_count(*f)) continue;
      if (stage == 0) continue;
      size_t n = f->updates.size();
      error(st.loc, n == 0 ? q(name) + " has no update definitions; update(" +
                                 std::to_string(stage - 1) + ") does not exist"
                           : q(name) + " has " + std::to_string(n) + " update definition" +
                                 (n == 1 ? "" : "s") + "; update(" + std::to_string(stage - 1) +
                                 ") does not exist");
    }
    bool is_output = name == p_.output.func;
    if (is_output) {
      if (fs.compute && fs.compute->kind != LevelKind::Root) {
        error(fs.compute->loc, "the output func " + q(name) + " is always computed at root");
      }
      if (fs.store && fs.store->kind != LevelKind::Root) {
        error(fs.store->loc, "the output func " + q(name) + " is always stored at root");
      }
    }
    if (fs.compute && fs.compute->kind == LevelKind::Inline && !f->updates.empty()) {
      error(fs.compute->loc, q(name) +
                                 " has update definitions, so it cannot be inlined; use "
                                 "compute_root() or compute_at(...)");
    }
    if (fs.store && fs.store->kind == LevelKind::Inline) {
      error(fs.store->loc, "a store level cannot be inline");
    }
    if (compute_of(name).kind == LevelKind::Inline) {
      std::string fix = "; give it compute_root() or compute_at(...)";
      if (fs.store)
        error(fs.store->loc, q(name) + " is inlined, so it has no storage to place" + fix);
      for (const auto& [stage, st] : fs.stages) {
        for (const Directive& d : st.directives) {
          if (find_directive_spec(d.name)->scope != DirectiveScope::Stage) continue;
          error(d.loc, q(name) + " is inlined, so it has no loops to schedule" + fix);
        }
      }
    }
    check_bounds(*f, fs);
    check_approximation(*f, fs);
  }

  // bound(v, min, extent): only the output's for now (a func's region is otherwise what
  // its consumers read, and a bound smaller than that would need a check where it is
  // computed), each pure variable at most once, a non-empty i32 range.
  void check_bounds(const Func& f, const FuncSchedule& fs) {
    std::set<std::string> bounded;
    for (const RegionBound& b : region_bounds(s_, f.name)) {
      if (f.name != p_.output.func) {
        error(b.loc, "bound(...) fixes the region of the output, and " + q(f.name) +
                         " is not the output (" + q(p_.output.func) + " is)");
      }
      if (std::find(f.args.begin(), f.args.end(), b.var) == f.args.end()) {
        std::string vars;
        for (const std::string& a : f.args) vars += (vars.empty() ? "" : ", ") + a;
        error(b.loc,
              q(b.var) + " is not a variable of " + q(f.name) + "'s definition (" + vars + ")");
      }
      if (!bounded.insert(b.var).second) {
        error(b.loc, q(f.name) + " is already bounded in " + q(b.var) + "; bound it once");
      }
      const int64_t limit = int64_t{1} << 31;
      if (b.extent < 1 || b.min < -limit || b.min + b.extent > limit) {
        error(b.loc, "bound(" + b.var + ", " + std::to_string(b.min) + ", " +
                         std::to_string(b.extent) +
                         "): the extent must be at least 1 and the range within i32");
      }
    }
  }

  // Approximations the perforation rewrite cannot apply, with the reason (what
  // compiler_core/perforation/ does not implement yet among them).
  void check_approximation(const Func& f, const FuncSchedule& fs) {
    FuncApproximation a = func_approximation(s_, p_, f, source_);
    if (a.stores_samples() && fs.compute && fs.compute->kind == LevelKind::Inline) {
      error(fs.compute->loc, q(f.name) +
                                 " is perforated, so its computed points are stored; it cannot "
                                 "be inlined");
    }
    if (!a.channels_from.empty()) {
      const Func* from = p_.find_func(a.channels_from);
      if (from && func_approximation(s_, p_, *from, source_).changes_values()) {
        error(a.channels_loc, q(f.name) + " takes channels from " + q(a.channels_from) +
                                  ", which is approximated itself; take them from an exact "
                                  "func");
      }
    }
    if (!a.perforation) return;
    const Perforation& pf = *a.perforation;
    if (!pf.importance_map.empty()) {
      const Func* map = p_.find_func(pf.importance_map);
      if (map && func_approximation(s_, p_, *map, source_).changes_values()) {
        error(pf.loc, q(f.name) + "'s importance map " + q(pf.importance_map) +
                          " is approximated itself; use an exact func");
      }
    }
    const bool grid = pf.sampling == SamplingKind::Grid;
    const bool smooth = pf.reconstruction == ReconstructionKind::Gaussian ||
                        pf.reconstruction == ReconstructionKind::VaryingGaussian;
    if (grid && smooth) {
      error(pf.loc, std::string(reconstruction_kind_name(pf.reconstruction)) +
                        " reconstruction of grid samples is not implemented yet; use nearest or "
                        "linear (or adaptive or importance sampling)");
    }
    if (!grid) {
      const char* how = sampling_kind_name(pf.sampling);
      if (pf.reconstruction == ReconstructionKind::Linear) {
        error(pf.loc, std::string("linear reconstruction needs grid sampling; reconstruct ") + how +
                          " samples with nearest, gaussian or varying_gaussian");
      }
      if (f.args.size() != 2 && f.args.size() != 3) {
        error(pf.loc, std::string(how) +
                          " sampling applies to funcs of 2 or 3 dimensions (x, y "
                          "and channels); " +
                          q(f.name) + " has " + std::to_string(f.args.size()));
      }
      if (p_.output.extents.size() < f.args.size()) {
        error(pf.loc, std::string(how) +
                          " sampling places points over the output's extents; "
                          "the output has fewer dimensions than " +
                          q(f.name));
      }
      if (pf.compacted && f.name != p_.output.func) {
        error(pf.loc, q(f.name) +
                          "'s points cannot be compacted: only the output's are (the "
                          "reconstruction of any other func reads it outside the image too)");
      }
      if (pf.sampling == SamplingKind::Importance && pf.importance_map.empty() &&
          !importance_source(p_)) {
        error(pf.loc,
              "importance sampling computes its map from an input image of 2 or 3 "
              "dimensions; the pipeline has none (give a map: importance(f, map = func))");
      }
      // The mask and the reconstruction are whole-image passes at root: f is computed at
      // root, and adaptive sampling's coarse grid (computed first, at root too) needs
      // what f reads there.
      if (fs.compute && fs.compute->kind == LevelKind::At) {
        error(fs.compute->loc, q(f.name) + " is perforated by " + how +
                                   " sampling, whose reconstruction reads all of it: compute "
                                   "it at root");
      }
      if (pf.sampling == SamplingKind::Adaptive) {
        std::vector<std::string> todo(callees_[f.name].begin(), callees_[f.name].end());
        std::set<std::string> seen;
        while (!todo.empty()) {
          std::string g = todo.back();
          todo.pop_back();
          if (!seen.insert(g).second || !func(g)) continue;
          LoopLevel l = compute_of(g);
          if (l.kind == LevelKind::At) {
            error(l.loc, q(g) + " is computed at a loop of " + q(l.func) + ", but " + q(f.name) +
                             "'s adaptive sampling reads it at root (its coarse "
                             "grid is computed first)");
          }
          if (l.kind == LevelKind::Inline) {
            for (const std::string& h : callees_[g]) todo.push_back(h);
          }
        }
      }
    }
  }

  // Phase 2 ------------------------------------------------------------------------------
  void build_loop_nests() {
    // Stages in text order first, so the first bad directive in the text is reported.
    for (const auto& [name, fs] : ordered_) {
      for (const auto& [stage, st] : fs->stages) build(*func(*name), stage);
    }
    for (const Func& f : p_.funcs) {
      if (compute_of(f.name).kind == LevelKind::Inline) continue;
      for (int st = 0; st < stage_count(f); ++st) build(f, st);
    }
  }

  void build(const Func& f, int stage) {
    StageKey key{f.name, stage};
    if (nests_.count(key)) return;
    nests_[key] = stage_loop_nest(s_, p_, f, stage, source_);
  }

  const StageLoopNest& nest(const std::string& func, int stage) const {
    auto it = nests_.find({func, stage});
    STIPPLE_INTERNAL_CHECK(it != nests_.end(), "no loop nest for " + stage_name(func, stage));
    return it->second;
  }

  // Phase 3 ------------------------------------------------------------------------------
  void resolve_level(const std::string& name, const LoopLevel& l, const char* verb) {
    std::string where = std::string(verb) == "computed" ? "compute_at" : "store_at";
    if (l.func == name) error(l.loc, q(name) + " cannot be " + verb + " at one of its own loops");
    const Func* target = func(l.func);
    if (!target) {
      if (p_.find_input(l.func)) error(l.loc, q(l.func) + " is an input and has no loops");
      error(l.loc, "unknown func " + q(l.func) + " in " + where + "; the pipeline's funcs are " +
                       func_list());
    }
    if (l.stage < 0 || l.stage >= stage_count(*target)) {
      error(l.loc, q(l.func) + " has no stage " + stage_name(l.func, l.stage));
    }
    if (compute_of(l.func).kind == LevelKind::Inline) {
      error(l.loc, q(l.func) + " is inlined, so it has no loops to " +
                       (where == "compute_at" ? "compute" : "store") + " " + q(name) +
                       " at; give " + q(l.func) + " compute_root() or compute_at(...)");
    }
    const StageLoopNest& n = nest(l.func, l.stage);
    if (l.var.find('.') == std::string::npos && n.find(l.var) >= 0) return;
    for (auto it = n.splits.rbegin(); it != n.splits.rend(); ++it) {
      if (it->old_var == l.var && it->outer != l.var) {
        error(l.loc, "loop " + q(l.var) + " of " + q(stage_name(l.func, l.stage)) +
                         " was split into " + q(it->outer) + " and " + q(it->inner) +
                         "; name one of those");
      }
    }
    error(l.loc, q(stage_name(l.func, l.stage)) + " has no loop " + q(l.var) +
                     "; its loops, innermost first, are " + n.describe());
  }

  // Phase 4 ------------------------------------------------------------------------------
  void check_cycle(const std::string& name) {
    std::vector<std::string> chain{name};
    std::string cur = name;
    while (true) {
      LoopLevel l = compute_of(cur);
      if (l.kind != LevelKind::At) return;
      cur = l.func;
      if (cur == name) {
        // "'A' is computed inside 'B', which is computed inside 'A'"
        std::string text = q(name);
        for (size_t i = 1; i <= chain.size(); ++i) {
          text += (i == 1 ? " is computed inside " : ", which is computed inside ") +
                  q(i < chain.size() ? chain[i] : name);
        }
        error(s_.find(name)->compute->loc, "compute_at cycle: " + text);
      }
      if (std::find(chain.begin(), chain.end(), cur) != chain.end()) return;  // another's cycle
      chain.push_back(cur);
    }
  }

  // Phase 5 ------------------------------------------------------------------------------
  // The non-inlined stages where `name` is used: uses inside inlined funcs move to
  // where those funcs are used.
  const std::set<StageKey>& use_sites(const std::string& name) {
    auto memo = sites_.find(name);
    if (memo != sites_.end()) return memo->second;
    std::set<StageKey> out;
    auto uses = direct_uses_.find(name);
    if (uses != direct_uses_.end()) {
      for (const StageKey& u : uses->second) {
        if (compute_of(u.first).kind == LevelKind::Inline) {
          const std::set<StageKey>& inner = use_sites(u.first);
          out.insert(inner.begin(), inner.end());
        } else {
          out.insert(u);
        }
      }
    }
    return sites_[name] = out;
  }

  bool uses_transitively(const std::string& consumer, const std::string& producer) const {
    std::set<std::string> seen;
    std::vector<std::string> todo{consumer};
    while (!todo.empty()) {
      std::string f = todo.back();
      todo.pop_back();
      auto it = callees_.find(f);
      if (it == callees_.end()) continue;
      for (const std::string& c : it->second) {
        if (c == producer) return true;
        if (seen.insert(c).second) todo.push_back(c);
      }
    }
    return false;
  }

  int loop_index(const std::string& func, int stage, const std::string& var) const {
    int i = nest(func, stage).find(var);
    STIPPLE_INTERNAL_CHECK(i >= 0, "unresolved loop " + var);
    return i;
  }

  // Whether position (func, stage, var) -- somewhere inside loop var of that stage -- is
  // inside (or at) loop `outer`. Walks outwards through the compute levels.
  bool inside(std::string func, int stage, std::string var, const LoopLevel& outer) const {
    while (true) {
      if (func == outer.func && stage == outer.stage) {
        return var.empty() || loop_index(func, stage, var) <= loop_index(func, stage, outer.var);
      }
      LoopLevel l = compute_of(func);
      if (l.kind != LevelKind::At) return false;
      func = l.func;
      stage = l.stage;
      var = l.var;
    }
  }

  void check_uses(const std::string& name) {
    const FuncSchedule* fs = s_.find(name);
    if (!fs->compute || fs->compute->kind != LevelKind::At) return;
    const LoopLevel& l = *fs->compute;
    if (!uses_transitively(l.func, name)) {
      error(l.loc, q(l.func) + " does not use " + q(name) +
                       ", directly or through other funcs; compute it at a loop of a func that "
                       "uses it");
    }
    for (const StageKey& site : use_sites(name)) {
      // An empty var stands for the whole body of the using stage.
      if (inside(site.first, site.second, "", l)) continue;
      error(l.loc, q(name) + " is also used by " + q(stage_name(site.first, site.second)) +
                       ", outside loop " + q(l.var) + " of " + q(stage_name(l.func, l.stage)) +
                       "; every use of a func must be inside the loop it is computed at");
    }
  }

  // Phases 6 and 7 -----------------------------------------------------------------------
  void check_store(const std::string& name) {
    const FuncSchedule* fs = s_.find(name);
    if (!fs->store || fs->store->kind == LevelKind::Inline) return;
    LoopLevel c = compute_of(name);
    const LoopLevel& st = *fs->store;
    if (c.kind == LevelKind::Inline || c == st) return;
    std::string where = st.kind == LevelKind::Root
                            ? "root"
                            : "loop " + q(st.var) + " of " + q(stage_name(st.func, st.stage));
    if (c.kind == LevelKind::Root) {
      error(st.loc, q(name) + " is stored at " + where +
                        ", inside its compute level (root); store a func at or outside the "
                        "level it is computed at");
    }
    if (st.kind == LevelKind::At && !inside(c.func, c.stage, c.var, st)) {
      error(st.loc, q(name) + " is stored at " + where + ", which is not outside loop " + q(c.var) +
                        " of " + q(stage_name(c.func, c.stage)) +
                        " where it is computed; store a func at or outside the level it is "
                        "computed at");
    }
    // Loops from the compute level outwards to (not including) the store level.
    std::string func = c.func, var = c.var;
    int stage = c.stage;
    while (true) {
      const StageLoopNest& n = nest(func, stage);
      bool last = st.kind == LevelKind::At && func == st.func && stage == st.stage;
      int end = last ? n.find(st.var) : static_cast<int>(n.loops.size());
      for (int i = n.find(var); i < end; ++i) {
        const ForType t = n.loops[i].for_type;
        if (t == ForType::Parallel || is_gpu_loop(t)) {
          const std::string kind = t == ForType::Parallel ? "parallel loop " : "GPU loop ";
          error(st.loc, q(name) + " is stored at " + where + " but computed inside the " + kind +
                            q(n.loops[i].name) + " of " + q(stage_name(func, stage)) +
                            ", so its threads would share one buffer; store it inside the " +
                            kind.substr(0, kind.size() - 1));
        }
      }
      if (last) return;
      LoopLevel l = compute_of(func);
      if (l.kind != LevelKind::At) return;
      func = l.func;
      stage = l.stage;
      var = l.var;
    }
  }

  // Phase 8 ------------------------------------------------------------------------------
  // A func computed inside a GPU kernel runs in each of the kernel's threads: it cannot
  // launch kernels or start threads of its own.
  // The GPU loop (and its stage) that func `name` is computed inside, walking outwards
  // through the compute levels; empty when it is computed outside every kernel.
  std::pair<std::string, std::string> enclosing_gpu_loop(const std::string& name) const {
    LoopLevel l = compute_of(name);
    while (l.kind == LevelKind::At) {
      const StageLoopNest& n = nest(l.func, l.stage);
      for (int i = n.find(l.var); i < static_cast<int>(n.loops.size()); ++i) {
        if (is_gpu_loop(n.loops[i].for_type)) return {n.loops[i].name, stage_name(l.func, l.stage)};
      }
      l = compute_of(l.func);
    }
    return {};
  }

  void check_inside_kernel(const std::string& name) {
    const FuncSchedule* fs = s_.find(name);
    if (!fs->compute || fs->compute->kind != LevelKind::At) return;
    const LoopLevel& c = *fs->compute;
    const auto [kernel_loop, kernel_stage] = enclosing_gpu_loop(name);
    if (kernel_loop.empty()) return;
    const Func& f = *func(name);
    for (int st = 0; st < stage_count(f); ++st) {
      for (const Loop& l : nest(name, st).loops) {
        if (l.for_type == ForType::Parallel || is_gpu_loop(l.for_type)) {
          error(c.loc, q(name) + " is computed inside GPU loop " + q(kernel_loop) + " of " +
                           q(kernel_stage) + ", so it runs inside that kernel, but its loop " +
                           q(l.name) + " of " + q(stage_name(name, st)) + " is " +
                           (l.for_type == ForType::Parallel ? "parallel" : "a GPU loop") +
                           "; make it a serial loop, or compute " + q(name) +
                           " outside the kernel");
        }
      }
    }
  }

 public:
  // For a GPU target: every stage of a func that is not inlined runs in a GPU kernel.
  void check_gpu_placement() const {
    for (const Func& f : p_.funcs) {
      if (compute_of(f.name).kind == LevelKind::Inline) continue;
      if (!enclosing_gpu_loop(f.name).first.empty()) continue;
      for (int st = 0; st < stage_count(f); ++st) {
        const std::vector<Loop>& loops = nest(f.name, st).loops;
        if (std::any_of(loops.begin(), loops.end(),
                        [](const Loop& l) { return l.for_type == ForType::GpuBlock; })) {
          continue;
        }
        const std::string stage = q(stage_name(f.name, st));
        std::string why;
        if (f.name == p_.output.func && st == 0) {
          why = "the output " + stage + " has no GPU loops; give it gpu_tile or gpu_blocks";
        } else if (f.args.empty()) {
          why = stage +
                " is computed at root, outside every GPU kernel, and has no variable to "
                "map to GPU threads; give it gpu_single_thread(), inline it, or compute it "
                "at a loop inside a kernel";
        } else if (st > 0 && std::none_of(loops.begin(), loops.end(), [](const Loop& l) {
                     return !l.reduction && !l.dependent;
                   })) {
          why = stage +
                " has no pure loop free of dependences to map to GPU threads (an update "
                "that scatters over its whole domain, such as a histogram, can add "
                "atomically: give it atomic() and map its reduction loops)";
        } else {
          why = stage +
                " has no GPU loops and is not computed inside a kernel, so it would run "
                "on the host, which cannot reach the GPU's memory; give it gpu_tile or "
                "gpu_blocks, compute it at a loop inside another func's kernel, or inline "
                "it";
        }
        const FuncSchedule* fs = s_.find(f.name);
        if (fs) {
          auto it = fs->stages.find(st);
          error(it != fs->stages.end() ? it->second.loc : fs->loc, why);
        }
        throw UserError((s_.file_name == Schedule{}.file_name ? std::string("the default schedule")
                                                              : s_.file_name) +
                        ": " + why);
      }
    }
  }

 private:
  const Schedule& s_;
  const Pipeline& p_;
  const SourceText& source_;
  std::map<std::string, const Func*> funcs_;
  std::map<std::string, std::set<std::string>> callees_;
  std::map<std::string, std::vector<StageKey>> direct_uses_;
  std::map<std::string, std::set<StageKey>> sites_;
  std::map<StageKey, StageLoopNest> nests_;
  std::vector<std::pair<const std::string*, const FuncSchedule*>> ordered_;
};

}  // namespace

void check_schedule(const Schedule& s, const Pipeline& p, const SourceText* source,
                    ScheduleTarget target) {
  SourceText empty("", s.file_name);
  ScheduleChecker checker(s, p, source ? *source : empty);
  checker.run();
  if (target == ScheduleTarget::Gpu) checker.check_gpu_placement();
}

Schedule compile_schedule(std::string_view text, const std::string& file_name, const Pipeline& p,
                          ScheduleTarget target, int vector_bytes) {
  Schedule s = parse_schedule(text, file_name);
  SourceText source(text, file_name);
  resolve_vector_widths(s, p, vector_bytes > 0 ? vector_bytes : host_vector_bytes());
  check_schedule(s, p, &source, target);
  return s;
}

Schedule load_schedule_file(const std::string& path, const Pipeline& p, ScheduleTarget target,
                            int vector_bytes) {
  return compile_schedule(read_text_file(path, "schedule"), path, p, target, vector_bytes);
}

}  // namespace stipple
