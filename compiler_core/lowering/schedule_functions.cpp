// Loop nests, compute and store levels, and regions (see schedule_functions.h).
//
// Names in the generated loop nest (all unique):
//   f.s<k>.<v>        loop variables and stage variables of stage k of f (split loops
//                     get fresh names when the schedule reuses one, e.g. split(x, x, xi))
//   f.rmin.d/rmax.d   the region of f its consumers need (inclusive)
//   f.cmin.d/cmax.d   the region f is computed over: the above widened by its updates'
//                     stores and self-reads, the evaluator's box
//   f.min.d           the min of f's allocation (read by codegen at the Allocate)
// Region names are bound at f's compute level and allocation names at its store level,
// consumers before producers, so a producer's bounds can name its consumers' regions.
#include "compiler_core/lowering/schedule_functions.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/language/source.h"
#include "compiler_core/lowering/bounds_inference.h"
#include "compiler_core/lowering/cse.h"
#include "compiler_core/lowering/inline_functions.h"
#include "compiler_core/lowering/lowering_names.h"
#include "compiler_core/schedule/schedule_loops.h"

namespace stipple::lowering {

namespace {

struct DerivedVar {
  std::string name;
  Expr value;
};

struct StageInfo {
  int index = 0;
  StageLoopNest nest;
  std::vector<std::string> loop_names;  // unique names, parallel to nest.loops (innermost first)
  std::vector<Expr> loop_min, loop_extent;
  std::vector<Expr> lhs;
  Expr value;
  std::vector<ReductionVariable> domain;  // qualified
  std::vector<DerivedVar> derived;        // outermost definition first
  std::vector<Expr> guards;
  bool scatter = false;  // an update whose left side is not only bare pure variables
  /// A scatter whose every site is inside the func's box by construction (the box is the
  /// union of the sites' intervals; infer_region): it stores without checking.
  bool sites_in_box = false;
  std::map<std::string, int> pure_dim;  // qualified pure variable -> dimension (updates)
};

struct FuncInfo {
  const Func* f = nullptr;
  bool is_output = false;
  // An output with updates is realised in its own buffer over the evaluator's (widened)
  // box, named `buffer`, then copied into the caller's buffer.
  bool copy_out = false;
  std::string buffer;
  LoopLevel compute, store;
  std::vector<StageInfo> stages;
  std::vector<std::string> compute_path, store_path;
  std::string compute_key, store_key;
  std::vector<Expr> rmin, rmax, cmin, cmax;  // definitions
};

class Lowerer {
 public:
  Lowerer(const Pipeline& p, const Schedule& s) : p_(p), s_(s), source_("", s.file_name) {}

  Stmt run() {
    find_funcs();
    for (const std::string& name : order_) build_stages(funcs_.at(name));
    for (const std::string& name : order_) {
      if (!promoted_.count(name)) resolve_levels(funcs_.at(name));
    }
    place_promoted();
    // Consumers first: a producer's region is expressed through its consumers' loops.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) infer_region(funcs_.at(*it));
    return wrap_level("", Stmt());
  }

 private:
  // ---- funcs, inlining, stages -------------------------------------------------------

  void find_funcs() {
    std::set<std::string> reachable;
    std::function<void(const std::string&)> reach = [&](const std::string& name) {
      if (!reachable.insert(name).second) return;
      const Func* f = p_.find_func(name);
      STIPPLE_INTERNAL_CHECK(f, "unknown func '" + name + "'");
      for (const std::string& g : called_funcs(*f)) reach(g);
    };
    reach(p_.output.func);
    for (const Func& f : p_.funcs) {
      if (effective_compute_level(s_, p_, f).kind == LevelKind::Inline) inlined_.insert(f.name);
    }
    promote_large_inlined(reachable);
    for (const std::string& name : reachable) {
      if (inlined_.count(name)) continue;
      FuncInfo info;
      info.f = p_.find_func(name);
      info.is_output = name == p_.output.func;
      info.copy_out = info.is_output && !info.f->updates.empty();
      info.buffer = info.copy_out ? name + "$realised" : name;
      bool root = info.is_output || promoted_.count(name);
      info.compute = root ? LoopLevel::root() : effective_compute_level(s_, p_, *info.f);
      info.store = root ? LoopLevel::root() : effective_store_level(s_, p_, *info.f);
      funcs_[name] = info;
    }
    // Callees first, looking through inlined funcs to the realised funcs they call.
    std::set<std::string> done;
    std::function<void(const std::string&, std::set<std::string>&, std::set<std::string>&)>
        callees =
            [&](const std::string& name, std::set<std::string>& seen, std::set<std::string>& out) {
              for (const std::string& g : called_funcs(*p_.find_func(name))) {
                if (!seen.insert(g).second) continue;
                if (inlined_.count(g)) {
                  callees(g, seen, out);
                } else {
                  out.insert(g);
                }
              }
            };
    std::function<void(const std::string&)> visit = [&](const std::string& name) {
      if (!done.insert(name).second) return;
      std::set<std::string> seen{name}, out;
      callees(name, seen, out);
      for (const std::string& g : out) visit(g);
      order_.push_back(name);
    };
    visit(p_.output.func);
  }

  // Inlining a pyramid of funcs that each read several points of the previous one makes
  // expressions exponentially large (interpolate, local_laplacian under the default
  // schedule). An inlined func whose inlined definition would exceed kMaxInlineNodes is
  // computed at root instead: the values are the same, only the work changes.
  static constexpr int64_t kMaxInlineNodes = 4000;

  void promote_large_inlined(const std::set<std::string>& reachable) {
    std::map<std::string, int64_t> size;
    std::function<int64_t(const std::string&)> size_of = [&](const std::string& name) -> int64_t {
      auto it = size.find(name);
      if (it != size.end()) return it->second;
      size[name] = 1;  // no cycles among pure funcs; guards against surprises
      struct Counter : IRVisitor {
        std::function<int64_t(const std::string&)>* size_of;
        const std::set<std::string>* inlined;
        int64_t n = 0;
        using IRVisitor::visit;
#define STIPPLE_COUNT(N)             \
  void visit(const N* op) override { \
    ++n;                             \
    IRVisitor::visit(op);            \
  }
        STIPPLE_COUNT(Cast)
        STIPPLE_COUNT(Add)
        STIPPLE_COUNT(Sub)
        STIPPLE_COUNT(Mul)
        STIPPLE_COUNT(Div)
        STIPPLE_COUNT(Mod)
        STIPPLE_COUNT(Min)
        STIPPLE_COUNT(Max)
        STIPPLE_COUNT(EQ)
        STIPPLE_COUNT(NE)
        STIPPLE_COUNT(LT)
        STIPPLE_COUNT(LE)
        STIPPLE_COUNT(GT)
        STIPPLE_COUNT(GE)
        STIPPLE_COUNT(And)
        STIPPLE_COUNT(Or)
        STIPPLE_COUNT(Not)
        STIPPLE_COUNT(Select)
        STIPPLE_COUNT(Reduce)
        STIPPLE_COUNT(Let)
#undef STIPPLE_COUNT
        void visit(const Call* op) override {
          ++n;
          if (op->call_type == CallType::Func && inlined->count(op->name)) {
            n += (*size_of)(op->name);
          }
          IRVisitor::visit(op);
        }
      } counter;
      counter.size_of = &size_of;
      counter.inlined = &inlined_;
      p_.find_func(name)->value.accept(&counter);
      int64_t n = counter.n + 1;
      if (inlined_.count(name) && n > kMaxInlineNodes) {
        inlined_.erase(name);
        promoted_.insert(name);
        n = 1;
      }
      size[name] = n;
      return n;
    };
    for (const std::string& name : reachable) size_of(name);
  }

  // A promoted func is computed at the innermost compute level of the funcs it calls
  // (callees first, so promoted callees are placed already). Every use of those callees,
  // including the uses through the promoted func, is inside their levels (the checker's
  // rule 3), and those levels are nested, so the innermost one encloses every use of the
  // promoted func too.
  void place_promoted() {
    for (const std::string& name : order_) {
      if (!promoted_.count(name)) continue;
      FuncInfo& fi = funcs_.at(name);
      std::set<std::string> calls;
      for (const StageInfo& st : fi.stages) {
        add_called_funcs(st.value, calls);
        for (const Expr& a : st.lhs) add_called_funcs(a, calls);
      }
      std::vector<std::string> deepest;
      for (const std::string& g : calls) {
        if (g == name) continue;
        const std::vector<std::string>& path = funcs_.at(g).compute_path;
        if (path.size() > deepest.size()) deepest = path;
      }
      if (!deepest.empty()) {
        const auto& [func, stage, loop] = loop_owner_.at(deepest.back());
        fi.compute = fi.store = LoopLevel::at(func, stage, loop);
      }
      resolve_levels(fi);
    }
  }

  std::string unique(const std::string& name) {
    if (used_names_.insert(name).second) return name;
    std::string n = names_.fresh(name);
    used_names_.insert(n);
    return n;
  }

  void build_stages(FuncInfo& fi) {
    const Func& f = *fi.f;
    for (int k = 0; k < stage_count(f); ++k) {
      StageInfo st;
      st.index = k;
      st.nest = stage_loop_nest(s_, p_, f, k, source_);
      const std::string prefix = f.name + ".s" + std::to_string(k) + ".";
      std::map<std::string, std::string> renames;
      std::map<std::string, std::pair<Expr, Expr>> range;  // unique name -> (min, extent)
      std::map<std::string, std::string> current;          // loop name -> unique name
      auto cmin = [&](size_t d) { return var(dim_name(f.name, "cmin", d)); };
      auto cextent = [&](size_t d) {
        return Add::make(Sub::make(var(dim_name(f.name, "cmax", d)), cmin(d)), i32(1));
      };
      if (k == 0) {
        for (size_t d = 0; d < f.args.size(); ++d) {
          std::string u = unique(prefix + f.args[d]);
          renames[f.args[d]] = u;
          current[f.args[d]] = u;
          range[u] = {cmin(d), cextent(d)};
          st.lhs.push_back(var(u));
        }
        st.value = inline_and_qualify(f.value, p_, inlined_, renames, names_);
      } else {
        const UpdateDef& u = f.updates[k - 1];
        for (size_t d = 0; d < u.args.size(); ++d) {
          const Variable* v = u.args[d].as<Variable>();
          if (v && v->kind == VarKind::Pure) {
            std::string n = unique(prefix + v->name);
            renames[v->name] = n;
            current[v->name] = n;
            range[n] = {cmin(d), cextent(d)};
            st.pure_dim[n] = static_cast<int>(d);
          } else {
            st.scatter = true;
          }
        }
        for (const ReductionVariable& rv : u.domain) {
          std::string n = unique(prefix + rv.name);
          // Bounds of a domain see only constants and earlier domain variables' names.
          ReductionVariable q{n, inline_and_qualify(rv.min, p_, inlined_, renames, names_),
                              inline_and_qualify(rv.max, p_, inlined_, renames, names_)};
          renames[rv.name] = n;
          current[rv.name] = n;
          range[n] = {q.min, Add::make(Sub::make(q.max, q.min), i32(1))};
          st.domain.push_back(q);
        }
        for (const Expr& a : u.args) {
          st.lhs.push_back(inline_and_qualify(a, p_, inlined_, renames, names_));
        }
        st.value = inline_and_qualify(u.value, p_, inlined_, renames, names_);
      }
      // Splits, in order: the old variable becomes a value computed from the new loops.
      struct Split {
        std::string old_u, outer_u, inner_u;
        int64_t factor;
        TailStrategy tail;
        bool lane;  // a vector or unrolled lane loop
      };
      std::vector<Split> splits;
      for (const SplitStep& sp : st.nest.splits) {
        Split x{current.at(sp.old_var),
                unique(prefix + sp.outer),
                unique(prefix + sp.inner),
                sp.factor,
                sp.tail,
                sp.inner.find('.') != std::string::npos};
        current[sp.outer] = x.outer_u;
        current[sp.inner] = x.inner_u;
        auto [old_min, old_extent] = range.at(x.old_u);
        Expr f_e = i32(x.factor);
        range[x.outer_u] = {i32(0), Div::make(Add::make(old_extent, i32(x.factor - 1)), f_e)};
        range[x.inner_u] = {i32(0), f_e};
        splits.push_back(x);
      }
      for (auto it = splits.rbegin(); it != splits.rend(); ++it) {
        auto [old_min, old_extent] = range.at(it->old_u);
        Expr f_e = i32(it->factor);
        Expr base = Mul::make(var(it->outer_u), f_e);
        if (it->tail == TailStrategy::ShiftInwards) {
          // The last iteration ends at the edge (some points are computed twice); the
          // guard below still covers extents smaller than the factor.
          base = Min::make(base, Max::make(Sub::make(old_extent, f_e), i32(0)));
        }
        // round_up and auto are lowered as guard_with_if: always exact.
        Expr value = Add::make(Add::make(old_min, base), var(it->inner_u));
        st.derived.push_back({it->old_u, value});
        Expr hi = Sub::make(Add::make(old_min, old_extent), i32(1));
        VarInfo info;
        info.kind = VarInfo::Kind::Let;
        info.min = value;
        info.clamp_lo = old_min;
        info.clamp_hi = hi;
        info.never = true;
        table_[it->old_u] = info;
        st.guards.push_back(LE::make(var(it->old_u), hi));
      }
      if (!st.nest.loops.empty() && st.nest.loops.back().name == kGpuSingleThreadLoop) {
        // gpu_single_thread(): one iteration, which the stage's code does not read.
        const std::string u = unique(prefix + "gpu_single");
        current[kGpuSingleThreadLoop] = u;
        range[u] = {i32(0), i32(1)};
      }
      for (const Loop& l : st.nest.loops) {
        std::string u = current.at(l.name);
        st.loop_names.push_back(u);
        loop_owner_[u] = {f.name, k, l.name};
        st.loop_min.push_back(range.at(u).first);
        st.loop_extent.push_back(range.at(u).second);
      }
      // A serial inner loop whose outer loop encloses it stops at the edge (the guard then
      // always holds), so that a split of a small region does not run `factor` empty
      // iterations. Lane loops keep their constant extent.
      for (const Split& x : splits) {
        if (x.lane) continue;
        auto pos = [&](const std::string& n) {
          auto it = std::find(st.loop_names.begin(), st.loop_names.end(), n);
          return it == st.loop_names.end() ? -1 : static_cast<int>(it - st.loop_names.begin());
        };
        int i = pos(x.inner_u), j = pos(x.outer_u);
        if (i < 0 || j < i) continue;
        Expr old_extent = range.at(x.old_u).second;
        Expr f_e = i32(x.factor);
        Expr base = Mul::make(var(x.outer_u), f_e);
        if (x.tail == TailStrategy::ShiftInwards) {
          base = Min::make(base, Max::make(Sub::make(old_extent, f_e), i32(0)));
        }
        st.loop_extent[i] = Min::make(f_e, Sub::make(old_extent, base));
      }
      fi.stages.push_back(std::move(st));
    }
  }

  // ---- levels ------------------------------------------------------------------------

  static std::string key_of(const LoopLevel& l) {
    if (l.kind != LevelKind::At) return "";
    return l.func + "#" + std::to_string(l.stage) + "#" + l.var;
  }

  std::vector<std::string> path_of(const LoopLevel& l) {
    if (l.kind != LevelKind::At) return {};
    FuncInfo& g = funcs_.at(l.func);
    std::vector<std::string> path = resolve_levels(g);
    const StageInfo& st = g.stages.at(l.stage);
    int idx = st.nest.find(l.var);
    STIPPLE_INTERNAL_CHECK(idx >= 0, "no loop '" + l.var + "' in " + stage_name(l.func, l.stage));
    for (int i = static_cast<int>(st.loop_names.size()) - 1; i >= idx; --i) {
      path.push_back(st.loop_names[i]);
    }
    return path;
  }

  // Resolves f's compute and store paths (and its loops' table entries); returns the
  // compute path.
  std::vector<std::string> resolve_levels(FuncInfo& fi) {
    if (resolved_.count(fi.f->name)) return fi.compute_path;
    resolved_.insert(fi.f->name);
    fi.compute_path = path_of(fi.compute);
    fi.store_path = path_of(fi.store);
    fi.compute_key = key_of(fi.compute);
    fi.store_key = key_of(fi.store);
    for (StageInfo& st : fi.stages) {
      std::vector<std::string> path = fi.compute_path;
      for (int i = static_cast<int>(st.loop_names.size()) - 1; i >= 0; --i) {
        path.push_back(st.loop_names[i]);
        VarInfo info;
        info.kind = VarInfo::Kind::Loop;
        info.min = st.loop_min[i];
        info.extent = st.loop_extent[i];
        info.path = path;
        table_[st.loop_names[i]] = info;
      }
    }
    return fi.compute_path;
  }

  // ---- regions -----------------------------------------------------------------------

  void add_let(const std::string& name, const Expr& def, const std::vector<std::string>& path) {
    VarInfo info;
    info.kind = VarInfo::Kind::Let;
    info.min = def;
    info.path = path;
    table_[name] = info;
  }

  static void walk_stage(
      const StageInfo& st, BoundsContext& ctx,
      const std::function<void(const Call*, const std::vector<SInterval>&)>& cb) {
    for (const ReductionVariable& rv : st.domain) {
      for_each_func_call(rv.min, ctx, cb);
      for_each_func_call(rv.max, ctx, cb);
    }
    for (const Expr& a : st.lhs) for_each_func_call(a, ctx, cb);
    for_each_func_call(st.value, ctx, cb);
  }

  [[noreturn]] void unbounded(const std::string& callee, size_t d, const std::string& where) {
    throw UserError("cannot infer the bounds of func '" + callee + "' (dimension " +
                    std::to_string(d) + "): its index at " + where +
                    " is unbounded; clamp the index");
  }

  void infer_region(FuncInfo& fi) {
    const Func& f = *fi.f;
    const size_t dims = f.args.size();
    if (fi.is_output) {
      // The caller's buffer, or the schedule's bound where it has one: constants, which
      // the regions of the funcs before it are computed from (the back end checks that the
      // buffer spans the bound).
      std::map<std::string, RegionBound> bounds;
      for (const RegionBound& b : region_bounds(s_, f.name)) bounds[b.var] = b;
      for (size_t d = 0; d < dims; ++d) {
        Expr lo = var(dim_name(f.name, "min", d));
        Expr hi = Sub::make(Add::make(lo, var(dim_name(f.name, "extent", d))), i32(1));
        if (auto it = bounds.find(f.args[d]); it != bounds.end()) {
          lo = i32(it->second.min);
          hi = i32(it->second.min + it->second.extent - 1);
        }
        fi.rmin.push_back(lo);
        fi.rmax.push_back(hi);
      }
    } else {
      BoundsContext ctx(table_, fi.compute_path);
      // The candidate ends of each dimension, without repeats: many call sites read the
      // same points, and a Min over distinct candidates stays small.
      std::vector<std::vector<Expr>> lo(dims), hi(dims);
      auto add_unique = [](std::vector<Expr>& v, const Expr& e) {
        for (const Expr& x : v) {
          if (cheap_equal(x, e)) return;
        }
        v.push_back(e);
      };
      bool any = false;
      for (const std::string& name : order_) {
        if (name == f.name) continue;
        const FuncInfo& c = funcs_.at(name);
        for (const StageInfo& st : c.stages) {
          walk_stage(st, ctx, [&](const Call* call, const std::vector<SInterval>& args) {
            if (call->name != f.name) return;
            for (size_t d = 0; d < dims; ++d) {
              if (!args[d].bounded()) unbounded(f.name, d, "a call in '" + c.f->name + "'");
              add_unique(lo[d], args[d].min);
              add_unique(hi[d], args[d].max);
            }
            any = true;
          });
        }
      }
      STIPPLE_INTERNAL_CHECK(any, "func '" + f.name + "' is realised but never called");
      for (size_t d = 0; d < dims; ++d) {
        Expr mn = lo[d][0], mx = hi[d][0];
        for (size_t i = 1; i < lo[d].size(); ++i) mn = Min::make(mn, lo[d][i]);
        for (size_t i = 1; i < hi[d].size(); ++i) mx = Max::make(mx, hi[d][i]);
        fi.rmin.push_back(mn);
        fi.rmax.push_back(mx);
      }
    }
    std::vector<SInterval> own(dims);
    for (size_t d = 0; d < dims; ++d) {
      add_let(dim_name(f.name, "rmin", d), fi.rmin[d], fi.compute_path);
      add_let(dim_name(f.name, "rmax", d), fi.rmax[d], fi.compute_path);
      own[d] = {var(dim_name(f.name, "rmin", d)), var(dim_name(f.name, "rmax", d)), false};
    }
    // The func's own updates widen the region (the evaluator's box): where they store
    // with a bounded index, and where they read the func itself other than the site being
    // stored. The output is computed over the caller's buffer only.
    if (!fi.is_output || fi.copy_out) {
      for (StageInfo& st : fi.stages) {
        if (st.index == 0) continue;
        BoundsContext ctx(table_, fi.compute_path);
        for (const auto& [name, d] : st.pure_dim) {
          ctx.push(name,
                   {var(dim_name(f.name, "rmin", d)), var(dim_name(f.name, "rmax", d)), false});
        }
        for (const ReductionVariable& rv : st.domain) {
          ctx.push(rv.name, {ctx.interval_of(rv.min).min, ctx.interval_of(rv.max).max, false});
        }
        // With every dimension's interval bounded, the box contains every site the stage
        // can compute (pure variables stand bare on the left side, the language's rule,
        // and loop over the box), so its stores need no check.
        bool in_box = true;
        for (size_t d = 0; d < dims; ++d) {
          SInterval iv = ctx.interval_of(st.lhs[d]);
          if (iv.bounded()) own[d] = interval_union(own[d], iv);
          in_box = in_box && iv.bounded();
        }
        st.sites_in_box = in_box;
        walk_stage(st, ctx, [&](const Call* call, const std::vector<SInterval>& args) {
          if (call->name != f.name) return;
          bool same_site = true;
          for (size_t d = 0; same_site && d < dims; ++d)
            same_site = equal(call->args[d], st.lhs[d]);
          if (same_site) return;
          for (size_t d = 0; d < dims; ++d) {
            if (!args[d].bounded()) unbounded(f.name, d, "an update of '" + f.name + "'");
            own[d] = interval_union(own[d], args[d]);
          }
        });
      }
    }
    for (size_t d = 0; d < dims; ++d) {
      fi.cmin.push_back(own[d].min);
      fi.cmax.push_back(own[d].max);
      add_let(dim_name(f.name, "cmin", d), own[d].min, fi.compute_path);
      add_let(dim_name(f.name, "cmax", d), own[d].max, fi.compute_path);
    }
  }

  // ---- statements --------------------------------------------------------------------

  Stmt build_stage(const FuncInfo& fi, const StageInfo& st) {
    const Func& f = *fi.f;
    // A scatter computes each computed site coordinate once, bound by a Let before its
    // bounds check, and the check, the store and the value's read of the same site use it.
    // Unconditional at the top of the iteration, the coordinates and the pixel reads in
    // them are shared by iterations that differ only in a bare variable of the site (the
    // channels of a bilateral grid's splat, unrolled or hoisted out of an inner channel
    // loop by LLVM), which short-circuited copies inside the check's `&&` were not.
    // Evaluating them unconditionally is what the evaluator does: it computes the site,
    // then skips it when it is outside the box.
    std::vector<Expr> lhs = st.lhs;
    Expr value = st.value;
    std::vector<std::pair<std::string, Expr>> site_lets;
    if (st.scatter) {
      for (size_t d = 0; d < lhs.size(); ++d) {
        if (lhs[d].as<Variable>() || lhs[d].as<IntImm>()) continue;
        const std::string name =
            f.name + ".s" + std::to_string(st.index) + ".site." + std::to_string(d);
        site_lets.emplace_back(name, lhs[d]);
        lhs[d] = var(name);
      }
      value = same_site_reads(value, f.name, st.lhs, lhs);
    }
    const bool atomic = st.nest.atomic;
    Stmt body = fi.copy_out ? provide(fi.buffer, rename_calls(value, f.name, fi.buffer),
                                      rename_calls(lhs, f.name, fi.buffer), atomic)
                            : provide(f.name, value, lhs, atomic);
    if (st.scatter) {
      // The evaluator skips stores outside the func's box (only an unbounded scatter
      // index, or one of the output's, can leave it), and with them their values.
      Expr inside;
      for (size_t d = 0; d < lhs.size() && !st.sites_in_box; ++d) {
        Expr c = And::make(GE::make(lhs[d], var(dim_name(f.name, "cmin", d))),
                           LE::make(lhs[d], var(dim_name(f.name, "cmax", d))));
        inside = inside.defined() ? And::make(inside, c) : c;
      }
      if (inside.defined()) body = IfThenElse::make(inside, body);
      for (auto it = site_lets.rbegin(); it != site_lets.rend(); ++it) {
        body = LetStmt::make(it->first, it->second, body);
      }
    }
    if (!st.guards.empty()) {
      Expr g = st.guards[0];
      for (size_t i = 1; i < st.guards.size(); ++i) g = And::make(g, st.guards[i]);
      body = IfThenElse::make(g, body);
    }
    for (auto it = st.derived.rbegin(); it != st.derived.rend(); ++it) {
      body = LetStmt::make(it->name, it->value, body);
    }
    for (size_t i = 0; i < st.loop_names.size(); ++i) {
      body = wrap_level(key_of(LoopLevel::at(f.name, st.index, st.nest.loops[i].name)), body);
      body = For::make(st.loop_names[i], st.loop_min[i], st.loop_extent[i],
                       st.nest.loops[i].for_type, body);
    }
    return body;
  }

  // The store of a stage. A value `select(c, a, b)` whose a or b has a reduction (a
  // perforated func computes its body only where its sample mask is set) becomes a
  // branch, so that the reduction runs only where it is selected; in vector code a
  // vector with no lane selected skips it (emit_vector_if).
  static Stmt provide(const std::string& name, const Expr& value, const std::vector<Expr>& lhs,
                      bool atomic) {
    if (const Select* sel = value.as<Select>()) {
      if (has_reduction(sel->true_value) || has_reduction(sel->false_value)) {
        return IfThenElse::make(sel->condition, provide(name, sel->true_value, lhs, atomic),
                                provide(name, sel->false_value, lhs, atomic));
      }
    }
    return Provide::make(name, value, lhs, atomic);
  }

  /// `value` with its reads of func `name` at exactly the site `site` (argument by
  /// argument) reading at `renamed` instead.
  static Expr same_site_reads(const Expr& value, const std::string& name,
                              const std::vector<Expr>& site, const std::vector<Expr>& renamed) {
    struct SiteRenamer : IRMutator {
      const std::string* name;
      const std::vector<Expr>*site, *renamed;
      using IRMutator::visit;
      Expr visit(const Call* op) override {
        bool same =
            op->call_type == CallType::Func && op->name == *name && op->args.size() == site->size();
        for (size_t d = 0; same && d < site->size(); ++d) same = equal(op->args[d], (*site)[d]);
        if (same) return Call::make(op->type, op->name, *renamed, op->call_type);
        return IRMutator::visit(op);
      }
    } r;
    r.name = &name;
    r.site = &site;
    r.renamed = &renamed;
    return r.mutate(value);
  }

  static bool has_reduction(const Expr& e) {
    struct Finder : IRVisitor {
      bool found = false;
      using IRVisitor::visit;
      void visit(const Reduce*) override { found = true; }
    } finder;
    e.accept(&finder);
    return finder.found;
  }

  static Expr rename_calls(const Expr& e, const std::string& from, const std::string& to) {
    struct Renamer : IRMutator {
      const std::string *from, *to;
      using IRMutator::visit;
      Expr visit(const Call* op) override {
        bool changed = false;
        std::vector<Expr> args = mutate_exprs(op->args, &changed);
        if (op->call_type == CallType::Func && op->name == *from) {
          return Call::make(op->type, *to, args, op->call_type);
        }
        return changed ? (op->call_type == CallType::Intrinsic
                              ? Call::make_intrinsic(op->intrinsic, args)
                              : Call::make(op->type, op->name, args, op->call_type))
                       : Expr(op);
      }
    } r;
    r.from = &from;
    r.to = &to;
    return r.mutate(e);
  }
  static std::vector<Expr> rename_calls(const std::vector<Expr>& v, const std::string& from,
                                        const std::string& to) {
    std::vector<Expr> out;
    for (const Expr& e : v) out.push_back(rename_calls(e, from, to));
    return out;
  }

  // The output's realised buffer copied into the caller's, over the caller's box.
  Stmt copy_out(const FuncInfo& fi) {
    const Func& f = *fi.f;
    std::vector<Expr> site;
    for (size_t d = 0; d < f.args.size(); ++d)
      site.push_back(var(f.name + ".copy." + std::to_string(d)));
    Stmt body = Provide::make(f.name, Call::make(f.type, fi.buffer, site, CallType::Func), site);
    for (size_t d = 0; d < f.args.size(); ++d) {
      body = For::make(f.name + ".copy." + std::to_string(d), var(dim_name(f.name, "min", d)),
                       var(dim_name(f.name, "extent", d)), ForType::Serial, body);
    }
    return body;
  }

  // The code at one level: regions of the funcs computed here (consumers first), the
  // allocations stored here, the computations (producers first), then `inner`.
  Stmt wrap_level(const std::string& key, Stmt inner) {
    std::vector<const FuncInfo*> comp, stored;
    for (const std::string& name : order_) {
      const FuncInfo& fi = funcs_.at(name);
      if (fi.compute_key == key) comp.push_back(&fi);
      if (fi.store_key == key && (!fi.is_output || fi.copy_out)) stored.push_back(&fi);
    }
    if (comp.empty() && stored.empty()) return inner;
    std::vector<Stmt> stmts;
    for (const FuncInfo* fi : comp) {
      for (const StageInfo& st : fi->stages) stmts.push_back(build_stage(*fi, st));
      if (fi->copy_out) stmts.push_back(copy_out(*fi));
    }
    if (inner.defined()) stmts.push_back(inner);
    Stmt body = stmts.size() == 1 ? stmts[0] : Block::make(stmts);
    for (const FuncInfo* fi : stored) {
      const Func& f = *fi->f;
      std::vector<Expr> extents;
      std::vector<std::pair<std::string, Expr>> mins;
      bool same = fi->store_key == fi->compute_key;
      BoundsContext ctx(table_, fi->store_path);
      for (size_t d = 0; d < f.args.size(); ++d) {
        Expr lo = var(dim_name(f.name, "cmin", d)), hi = var(dim_name(f.name, "cmax", d));
        if (!same) {
          lo = ctx.interval_of(lo).min;
          hi = ctx.interval_of(hi).max;
          if (!lo.defined() || !hi.defined()) unbounded(f.name, d, "its store level");
        }
        std::string min_name = dim_name(fi->buffer, "min", d);
        mins.emplace_back(min_name, cse(lo, names_));
        extents.push_back(
            cse(Max::make(Add::make(Sub::make(hi, var(min_name)), i32(1)), i32(0)), names_));
      }
      body = Allocate::make(fi->buffer, f.type, extents, body);
      for (auto it = mins.rbegin(); it != mins.rend(); ++it) {
        body = LetStmt::make(it->first, it->second, body);
      }
    }
    for (const FuncInfo* fi : comp) {
      const Func& f = *fi->f;
      size_t dims = f.args.size();
      for (size_t d = dims; d-- > 0;) {
        body = LetStmt::make(dim_name(f.name, "cmax", d), cse(fi->cmax[d], names_), body);
        body = LetStmt::make(dim_name(f.name, "cmin", d), cse(fi->cmin[d], names_), body);
      }
      for (size_t d = dims; d-- > 0;) {
        body = LetStmt::make(dim_name(f.name, "rmax", d), cse(fi->rmax[d], names_), body);
        body = LetStmt::make(dim_name(f.name, "rmin", d), cse(fi->rmin[d], names_), body);
      }
    }
    return body;
  }

  const Pipeline& p_;
  const Schedule& s_;
  SourceText source_;
  NameGen names_;
  std::set<std::string> used_names_;
  std::set<std::string> inlined_;
  std::set<std::string> promoted_;
  std::map<std::string, std::tuple<std::string, int, std::string>> loop_owner_;
  std::map<std::string, FuncInfo> funcs_;
  std::vector<std::string> order_;  // realised funcs, callees first
  std::set<std::string> resolved_;
  VarTable table_;
};

}  // namespace

Stmt schedule_functions(const Pipeline& p, const Schedule& s) { return Lowerer(p, s).run(); }

}  // namespace stipple::lowering
