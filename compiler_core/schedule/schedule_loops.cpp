// Loop nests of stages: default order, dependence analysis of updates, and the stage
// directives split, tile, reorder, vectorize, parallel and unroll (rules: LOOPS.md).
#include "compiler_core/schedule/schedule_loops.h"

#include <algorithm>
#include <optional>

#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/schedule/natural_vectors.h"

namespace stipple {

int StageLoopNest::find(const std::string& name) const {
  for (size_t i = 0; i < loops.size(); ++i) {
    if (loops[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string StageLoopNest::describe() const {
  std::string out;
  for (const Loop& l : loops) {
    if (!out.empty()) out += ", ";
    out += l.name;
  }
  return out.empty() ? "none" : out;
}

namespace {

// Self-reads of the func being updated, and the names bound by reductions in the value.
class SelfReads : public IRVisitor {
 public:
  explicit SelfReads(const std::string& func) : func_(func) {}
  std::vector<const Call*> reads;
  std::vector<std::string> bound;

  using IRVisitor::visit;
  void visit(const Call* op) override {
    if (op->call_type == CallType::Func && op->name == func_) reads.push_back(op);
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) bound.push_back(rv.name);
    IRVisitor::visit(op);
  }
  void visit(const Let* op) override {
    bound.push_back(op->name);
    IRVisitor::visit(op);
  }

 private:
  const std::string& func_;
};

bool is_var(const Expr& e, const std::string& name) {
  const Variable* v = e.as<Variable>();
  return v && v->name == name;
}

// Why iterating `var` of update u in another order could change the result, or "" when
// it cannot: `var` must stand bare at some position i of the left side (so different
// iterations write different sites) and every self-read must read position i at `var`
// itself (so an iteration reads only sites that it alone writes).
std::string dependence_reason(const Func& f, const UpdateDef& u, const std::string& var,
                              const SelfReads& reads) {
  int pos = -1;
  for (size_t i = 0; i < u.args.size(); ++i) {
    if (is_var(u.args[i], var)) {
      pos = static_cast<int>(i);
      break;
    }
  }
  if (pos < 0) {
    return "different iterations of '" + var + "' may write the same site of '" + f.name + "'";
  }
  if (std::find(reads.bound.begin(), reads.bound.end(), var) != reads.bound.end()) {
    return "its value binds another '" + var + "'";
  }
  for (const Call* c : reads.reads) {
    if (!is_var(c->args[pos], var)) {
      return "it reads " + to_string(Expr(c)) + ", another site along '" + var + "'";
    }
  }
  return "";
}

}  // namespace

std::string atomic_update_error(const Func& f, int stage) {
  const std::string name = "'" + stage_name(f.name, stage) + "'";
  if (stage == 0) return "atomic() applies to an update; " + name + " is a pure definition";
  const UpdateDef& u = f.updates[stage - 1];
  const Expr rest = addend_to_own_site(u.value, f.name, u.args);
  if (!rest.defined()) {
    return "atomic() needs an update that adds to the site it writes, f(...) += e; " + name +
           " is " + to_string(u.value);
  }
  SelfReads reads(f.name);
  rest.accept(&reads);
  if (!reads.reads.empty()) {
    return "atomic() needs an update whose added value does not read '" + f.name + "'; " + name +
           " reads " + to_string(Expr(reads.reads[0]));
  }
  if (f.type != Float32() && f.type != Int32() && f.type != UInt32() && f.type != Float64()) {
    return "atomic() adds f32, f64, i32 or u32 values (CUDA's atomicAdd); '" + f.name + "' is " +
           to_string(f.type);
  }
  return "";
}

StageLoopNest default_loop_nest(const Func& f, int stage) {
  STIPPLE_INTERNAL_CHECK(stage >= 0 && stage < stage_count(f), "no stage " + std::to_string(stage));
  StageLoopNest nest;
  auto add = [&](const std::string& name, bool reduction) {
    Loop l;
    l.name = name;
    l.origin = name;
    l.reduction = reduction;
    nest.loops.push_back(l);
    nest.ever.push_back(name);
  };
  if (stage == 0) {
    for (const std::string& a : f.args) add(a, false);
    return nest;
  }
  const UpdateDef& u = f.updates[stage - 1];
  for (const ReductionVariable& rv : u.domain) add(rv.name, true);
  for (const Expr& a : u.args) {
    const Variable* v = a.as<Variable>();
    if (v && v->kind == VarKind::Pure) add(v->name, false);
  }
  SelfReads reads(f.name);
  u.value.accept(&reads);
  for (Loop& l : nest.loops) l.dependent = !dependence_reason(f, u, l.origin, reads).empty();
  return nest;
}

namespace {

class DirectiveApplier {
 public:
  DirectiveApplier(StageLoopNest& nest, const Func& f, int stage, bool is_output,
                   const Directive& d, const SourceText& source)
      : nest_(nest), f_(f), stage_(stage), is_output_(is_output), d_(d), source_(source) {}

  void run() {
    const std::string& n = d_.name;
    if (n == "split") return split(0, 1, 2, 3, 4);
    if (n == "tile") return tile();
    if (n == "reorder") return reorder(d_.args.size());
    if (n == "vectorize") return vectorize();
    if (n == "parallel") return parallel();
    if (n == "unroll") return unroll();
    if (n == "gpu_blocks") return gpu_loops(ForType::GpuBlock);
    if (n == "gpu_threads") return gpu_loops(ForType::GpuThread);
    if (n == "gpu_tile") return gpu_tile();
    if (n == "atomic") return atomic();
    if (n == "gpu_single_thread") return gpu_single_thread();
    STIPPLE_INTERNAL_CHECK(false, "stage directive " + n + " has no meaning in the checker");
  }

 private:
  [[noreturn]] void error(SourceLoc loc, const std::string& message) const {
    source_.error(loc, message);
  }
  SourceLoc arg_loc(size_t i) const { return d_.args[i].loc; }
  std::string stage() const { return "'" + stage_name(f_.name, stage_) + "'"; }

  // The index of the loop named by argument i, or an error saying which loops exist.
  int loop_arg(size_t i) const {
    const std::string& name = d_.var(i);
    // Lane loops ("x.vector") are not identifiers: the text cannot name them, and neither
    // may a schedule built in code.
    int idx = name.find('.') == std::string::npos ? nest_.find(name) : -1;
    if (idx >= 0) return idx;
    for (auto it = nest_.splits.rbegin(); it != nest_.splits.rend(); ++it) {
      if (it->old_var == name && it->outer != name) {
        error(arg_loc(i), "loop '" + name + "' of " + stage() + " was split into '" + it->outer +
                              "' and '" + it->inner + "'; name one of those");
      }
    }
    error(arg_loc(i), stage() + " has no loop '" + name +
                          "' here; its loops, innermost first, are " + nest_.describe());
  }

  bool ever(const std::string& name) const {
    return std::find(nest_.ever.begin(), nest_.ever.end(), name) != nest_.ever.end();
  }

  void fresh(size_t i, const std::string& allowed_old) const {
    const std::string& name = d_.var(i);
    if (name != allowed_old && ever(name)) {
      error(arg_loc(i),
            "'" + name + "' already names a loop of " + stage() + "; new loops need new names");
    }
  }

  std::string dependence_text(const Loop& l) const {
    const UpdateDef& u = f_.updates[stage_ - 1];
    SelfReads reads(f_.name);
    u.value.accept(&reads);
    return dependence_reason(f_, u, l.origin, reads);
  }

  // `gpu`: the loop is to become a GPU block or thread loop, which an atomic update's
  // dependences allow (atomic() admits only updates whose one dependence is that
  // iterations write the same site, which the atomic add makes safe).
  void require_independent(int idx, size_t arg, const char* verb, bool gpu = false) const {
    const Loop& l = nest_.loops[idx];
    if (!l.dependent || (gpu && nest_.atomic)) return;
    std::string hint;
    if (nest_.atomic) {
      hint = "; atomic() makes its iterations safe to run on GPU threads, not CPU threads";
    } else if (gpu && atomic_update_error(f_, stage_).empty()) {
      hint = "; give the stage atomic() first to sum into the same sites atomically";
    }
    error(arg_loc(arg), std::string("cannot ") + verb + " loop '" + l.name + "' of " + stage() +
                            ": the update carries a dependence along '" + l.origin + "' (" +
                            dependence_text(l) + ")" + hint);
  }

  void atomic() {
    const std::string why = atomic_update_error(f_, stage_);
    if (!why.empty()) error(d_.loc, why);
    if (nest_.atomic) error(d_.loc, stage() + " is already atomic");
    nest_.atomic = true;
  }

  void require_not_parallel(int idx, size_t arg, const char* verb) const {
    const ForType t = nest_.loops[idx].for_type;
    if (t == ForType::Parallel || is_gpu_loop(t)) {
      const char* what = t == ForType::Parallel   ? "parallel"
                         : t == ForType::GpuBlock ? "a GPU block loop"
                                                  : "a GPU thread loop";
      error(arg_loc(arg), "loop '" + nest_.loops[idx].name + "' is already " + what + "; " + verb +
                              " it before making it " + what);
    }
  }

  TailStrategy tail_arg(size_t i) const {
    if (i >= d_.args.size()) return TailStrategy::Auto;
    std::optional<TailStrategy> t = parse_tail_strategy(d_.var(i));
    if (!t) {
      error(arg_loc(i), "unknown tail strategy '" + d_.var(i) +
                            "'; use auto, round_up, guard_with_if or shift_inwards");
    }
    if (*t == TailStrategy::RoundUp && is_output_) {
      error(arg_loc(i),
            "round_up would write past the edge of the output buffer; use auto, guard_with_if "
            "or shift_inwards");
    }
    if ((*t == TailStrategy::RoundUp || *t == TailStrategy::ShiftInwards) && stage_ > 0) {
      error(arg_loc(i), std::string(tail_strategy_name(*t)) +
                            " would run some iterations of an update twice or outside its "
                            "domain; use auto or guard_with_if");
    }
    return *t;
  }

  // Replaces the loop at idx by `inner` (same position) with `outer` just outside it.
  void do_split(int idx, const std::string& outer, const std::string& inner, int64_t factor,
                TailStrategy tail, ForType inner_type) {
    Loop o = nest_.loops[idx];
    Loop in = o;
    SplitStep step{o.name, outer, inner, factor, tail};
    o.name = outer;
    in.name = inner;
    if (inner_type != ForType::Serial) {
      in.for_type = inner_type;
      in.lanes = factor;
    }
    nest_.loops[idx] = in;
    nest_.loops.insert(nest_.loops.begin() + idx + 1, o);
    nest_.splits.push_back(step);
    if (!ever(outer)) nest_.ever.push_back(outer);
    nest_.ever.push_back(inner);
  }

  void split(size_t a_old, size_t a_outer, size_t a_inner, size_t a_factor, size_t a_tail) {
    int idx = loop_arg(a_old);
    require_not_parallel(idx, a_old, "split");
    const std::string old = d_.var(a_old);
    const std::string& outer = d_.var(a_outer);
    const std::string& inner = d_.var(a_inner);
    if (inner == outer) {
      error(arg_loc(a_inner), "the outer and inner loops of a split need different names");
    }
    if (inner == old) {
      error(arg_loc(a_inner),
            "the inner loop needs a new name; only the outer loop may keep the name '" + old + "'");
    }
    fresh(a_outer, old);
    fresh(a_inner, "");
    int64_t factor = d_.integer(a_factor);
    if (factor < 1) {
      error(arg_loc(a_factor),
            "the split factor must be positive, found " + std::to_string(factor));
    }
    // The lowering counts a split's outer loop as (extent + factor - 1) / factor in 32-bit
    // arithmetic, with extents up to 2^30 (the evaluator's box limit); a larger factor
    // would wrap it and the loop would silently not run (issue #24).
    if (factor > kMaxSplitFactor) {
      error(arg_loc(a_factor), "the split factor must be at most " +
                                   std::to_string(kMaxSplitFactor) + ", found " +
                                   std::to_string(factor));
    }
    TailStrategy tail = tail_arg(a_tail);
    do_split(idx, outer, inner, factor, tail, ForType::Serial);
  }

  void tile() {
    if (d_.var(0) == d_.var(1)) error(arg_loc(1), "tile needs two different loops");
    for (size_t i = 2; i < 6; ++i) {
      for (size_t j = 2; j < i; ++j) {
        if (d_.var(i) == d_.var(j)) {
          error(arg_loc(i), "'" + d_.var(i) +
                                "' is given twice; the four new loops of a tile need "
                                "different names");
        }
      }
    }
    loop_arg(1);  // report a missing y before changing anything
    split(0, 2, 4, 6, 8);
    split(1, 3, 5, 7, 8);
    // reorder(xi, yi, xo, yo)
    reorder_names({d_.var(4), d_.var(5), d_.var(2), d_.var(3)});
  }

  void reorder(size_t n) {
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) {
      loop_arg(i);
      for (size_t j = 0; j < i; ++j) {
        if (d_.var(j) == d_.var(i))
          error(arg_loc(i), "'" + d_.var(i) + "' appears twice in reorder");
      }
      names.push_back(d_.var(i));
    }
    reorder_names(names);
  }

  void reorder_names(const std::vector<std::string>& names) {
    std::vector<int> positions;
    for (const std::string& n : names) positions.push_back(nest_.find(n));
    std::vector<Loop> moved;
    for (int p : positions) moved.push_back(nest_.loops[p]);
    std::sort(positions.begin(), positions.end());
    std::vector<Loop> before = nest_.loops;
    for (size_t i = 0; i < positions.size(); ++i) nest_.loops[positions[i]] = moved[i];
    // Loops along which the update carries a dependence keep their relative order, unless
    // the update is atomic: its sums then run in no fixed order anyway.
    if (nest_.atomic) return;
    std::vector<const Loop*> old_dep, new_dep;
    for (const Loop& l : before) {
      if (l.dependent) old_dep.push_back(&l);
    }
    for (const Loop& l : nest_.loops) {
      if (l.dependent) new_dep.push_back(&l);
    }
    for (size_t i = 0; i < old_dep.size(); ++i) {
      if (old_dep[i]->name != new_dep[i]->name) {
        error(d_.loc, "this reorder would change the order of loops '" + old_dep[i]->name +
                          "' and '" + new_dep[i]->name + "' of " + stage() +
                          ", which carries a dependence along '" + old_dep[i]->origin + "' (" +
                          dependence_text(*old_dep[i]) + ")");
      }
    }
  }

  void vectorize() {
    int idx = loop_arg(0);
    if (d_.args[1].kind != ScheduleArgKind::Int) {
      // compile_schedule resolves a valid vectors(k) for its target (natural_vectors.h);
      // what is left here is wrong, or a schedule checked without a target.
      const std::optional<int64_t> k = vector_register_count(d_.args[1]);
      if (!k) {
        error(arg_loc(1),
              "the vector width is a number of lanes (vectorize(x, 8)) or of native vector "
              "registers (vectorize(x, vectors(2)))");
      }
      if (!valid_vector_register_count(*k)) {
        error(d_.args[1].args[0].loc,
              "vectors(k) takes 1, 2 or 4 registers, found " + std::to_string(*k));
      }
      error(arg_loc(1),
            "vectors(k) is resolved for a target when a schedule is compiled for it "
            "(compile_schedule); this schedule was checked without one");
    }
    int64_t width = d_.integer(1);
    if (width < 2 || width > 64 || (width & (width - 1)) != 0) {
      error(arg_loc(1),
            "the vector width must be a power of two from 2 to 64, found " + std::to_string(width));
    }
    require_independent(idx, 0, "vectorize");
    require_not_parallel(idx, 0, "vectorize");
    if (idx != 0) {
      error(arg_loc(0), "only the innermost loop can be vectorized; '" + d_.var(0) + "' of " +
                            stage() + " has '" + nest_.loops[0].name +
                            "' inside it (loops, innermost first: " + nest_.describe() + ")");
    }
    do_split(idx, d_.var(0), d_.var(0) + ".vector", width, TailStrategy::Auto, ForType::Vectorized);
  }

  void parallel() {
    int idx = loop_arg(0);
    require_independent(idx, 0, "parallelize");
    if (nest_.loops[idx].for_type == ForType::Parallel) {
      error(arg_loc(0), "loop '" + d_.var(0) + "' is already parallel");
    }
    if (is_gpu_loop(nest_.loops[idx].for_type)) {
      error(arg_loc(0), "loop '" + d_.var(0) +
                            "' is a GPU loop; its iterations already run in "
                            "parallel on the GPU");
    }
    nest_.loops[idx].for_type = ForType::Parallel;
  }

  // gpu_blocks(x[, y[, z]]) / gpu_threads(...): the named loops become the kernel's grid or
  // block dimensions, the first named x. Their shape as a whole is checked once the
  // stage's directives are all applied (check_gpu_loops).
  void gpu_loops(ForType type) {
    refuse_after_single_thread();
    for (size_t i = 0; i < d_.args.size(); ++i) {
      const int idx = loop_arg(i);
      for (size_t j = 0; j < i; ++j) {
        if (d_.var(j) == d_.var(i)) error(arg_loc(i), "'" + d_.var(i) + "' is given twice");
      }
      require_independent(idx, i,
                          type == ForType::GpuBlock ? "map to GPU blocks" : "map to GPU threads",
                          /*gpu=*/true);
      Loop& l = nest_.loops[idx];
      if (l.for_type == ForType::Vectorized || l.for_type == ForType::Unrolled) {
        error(arg_loc(i), "loop '" + l.name + "' is a lane loop; name a loop of the stage");
      }
      if (l.for_type == ForType::Parallel || is_gpu_loop(l.for_type)) {
        error(arg_loc(i), "loop '" + l.name + "' is already " +
                              (l.for_type == ForType::Parallel   ? std::string("parallel")
                               : l.for_type == ForType::GpuBlock ? "a GPU block loop"
                                                                 : "a GPU thread loop"));
      }
      l.for_type = type;
    }
  }

  // gpu_tile(x, y, xo, yo, xi, yi, fx, fy[, tail]) = tile(...), gpu_blocks(xo, yo),
  // gpu_threads(xi, yi), as Halide's gpu_tile.
  void gpu_tile() {
    refuse_after_single_thread();
    // Both tiled loops become GPU loops: neither may carry a dependence (unless atomic).
    require_independent(loop_arg(0), 0, "map to GPU blocks and threads", /*gpu=*/true);
    require_independent(loop_arg(1), 1, "map to GPU blocks and threads", /*gpu=*/true);
    tile();
    const int xi = nest_.find(d_.var(4)), yi = nest_.find(d_.var(5));
    const int xo = nest_.find(d_.var(2)), yo = nest_.find(d_.var(3));
    nest_.loops[xo].for_type = nest_.loops[yo].for_type = ForType::GpuBlock;
    nest_.loops[xi].for_type = nest_.loops[yi].for_type = ForType::GpuThread;
  }

  // A stage run by gpu_single_thread() has its one GPU loop; mapping another would put block
  // loops on both sides of its serial loops, which the kernel check reports only as a span.
  void refuse_after_single_thread() {
    if (nest_.find(kGpuSingleThreadLoop) >= 0) {
      error(d_.loc, stage() +
                        " runs in one GPU thread (gpu_single_thread()); its loops stay "
                        "serial, so none can map to GPU blocks or threads");
    }
  }

  // gpu_single_thread(): a one-iteration GPU block loop outside every loop of the stage, so
  // that its loops run serially in the one thread of a one-block kernel.
  void gpu_single_thread() {
    for (const Loop& l : nest_.loops) {
      if (l.for_type == ForType::Parallel || is_gpu_loop(l.for_type)) {
        error(d_.loc, stage() + " already has " +
                          (l.for_type == ForType::Parallel ? "a parallel loop" : "GPU loops") +
                          " ('" + l.name + "'); gpu_single_thread() runs it in one thread");
      }
    }
    Loop single;
    single.name = single.origin = kGpuSingleThreadLoop;
    single.for_type = ForType::GpuBlock;
    nest_.loops.push_back(single);
    nest_.ever.push_back(single.name);
  }

  void unroll() {
    int idx = loop_arg(0);
    int64_t n = d_.integer(1);
    if (n < 2 || n > 64) {
      error(arg_loc(1), "the unroll factor must be from 2 to 64, found " + std::to_string(n));
    }
    require_not_parallel(idx, 0, "unroll");
    std::string inner = d_.var(0) + ".unroll";
    if (ever(inner)) error(arg_loc(0), "loop '" + d_.var(0) + "' is already unrolled");
    do_split(idx, d_.var(0), inner, n, TailStrategy::Auto, ForType::Unrolled);
  }

  StageLoopNest& nest_;
  const Func& f_;
  int stage_;
  bool is_output_;
  const Directive& d_;
  const SourceText& source_;
};

}  // namespace

void apply_stage_directive(StageLoopNest& nest, const Func& f, int stage, bool is_output,
                           const Directive& d, const SourceText& source) {
  DirectiveApplier(nest, f, stage, is_output, d, source).run();
}

int64_t gpu_thread_extent(const StageLoopNest& nest, int index) {
  const std::string& name = nest.loops[index].name;
  for (const SplitStep& step : nest.splits) {
    if (step.inner == name) return step.factor;
  }
  return 0;
}

void check_gpu_loops(const StageLoopNest& nest, const Func& f, int stage, SourceLoc loc,
                     SourceLoc parallel_loc, const SourceText& source) {
  const std::string where = "'" + stage_name(f.name, stage) + "'";
  auto fail = [&](const std::string& message) { source.error(loc, message); };
  // Innermost first: [other loops] [thread band] [block band] [other serial loops].
  int first_thread = -1, last_thread = -1, first_block = -1, last_block = -1;
  bool parallel = false;
  for (int i = 0; i < static_cast<int>(nest.loops.size()); ++i) {
    const ForType t = nest.loops[i].for_type;
    parallel = parallel || t == ForType::Parallel;
    if (t == ForType::GpuThread) {
      if (first_thread < 0) first_thread = i;
      last_thread = i;
    }
    if (t == ForType::GpuBlock) {
      if (first_block < 0) first_block = i;
      last_block = i;
    }
  }
  if (first_block < 0 && first_thread < 0) return;
  if (parallel) {
    loc = parallel_loc;
    fail(where +
         " has GPU loops and a parallel loop; a kernel's loops run on the GPU, and a "
         "parallel loop around one would launch kernels from several threads");
  }
  if (first_block < 0) {
    fail(where +
         " has GPU thread loops but no GPU block loop outside them; add gpu_blocks or "
         "use gpu_tile (loops, innermost first: " +
         nest.describe() + ")");
  }
  if (last_block - first_block + 1 > 3) fail(where + " has more than three GPU block loops");
  for (int i = first_block; i <= last_block; ++i) {
    if (nest.loops[i].for_type != ForType::GpuBlock) {
      fail("the GPU block loops of " + where + " must be adjacent, but '" + nest.loops[i].name +
           "' is between them (loops, innermost first: " + nest.describe() + ")");
    }
  }
  if (first_thread < 0) return;
  if (last_thread + 1 != first_block) {
    fail("the GPU thread loops of " + where +
         " must be directly inside its GPU block loops (loops, innermost first: " +
         nest.describe() + ")");
  }
  if (last_thread - first_thread + 1 > 3) fail(where + " has more than three GPU thread loops");
  int64_t threads = 1;
  for (int i = first_thread; i <= last_thread; ++i) {
    const Loop& l = nest.loops[i];
    if (l.for_type != ForType::GpuThread) {
      fail("the GPU thread loops of " + where + " must be adjacent, but '" + l.name +
           "' is between them (loops, innermost first: " + nest.describe() + ")");
    }
    const int64_t extent = gpu_thread_extent(nest, i);
    if (extent == 0) {
      fail("GPU thread loop '" + l.name + "' of " + where +
           " is not the inner loop of a split, so its thread count is unknown; split it first "
           "(or use gpu_tile)");
    }
    if (i - first_thread == 2 && extent > kMaxGpuThreadsZ) {
      fail("GPU thread loop '" + l.name + "' of " + where + " has " + std::to_string(extent) +
           " threads; the third thread dimension allows at most " +
           std::to_string(kMaxGpuThreadsZ));
    }
    threads *= extent;
  }
  if (threads > kMaxGpuThreadsPerBlock) {
    fail(where + " has " + std::to_string(threads) +
         " GPU threads per block; a block has at most " + std::to_string(kMaxGpuThreadsPerBlock));
  }
}

StageLoopNest stage_loop_nest(const Schedule& s, const Pipeline& p, const Func& f, int stage,
                              const SourceText& source) {
  StageLoopNest nest = default_loop_nest(f, stage);
  std::optional<SourceLoc> gpu_loc;
  std::optional<SourceLoc> parallel_loc;
  const FuncSchedule* fs = s.find(f.name);
  if (!fs) return nest;
  auto it = fs->stages.find(stage);
  if (it == fs->stages.end()) return nest;
  for (const Directive& d : it->second.directives) {
    // Approximations change the func's definition (approximation.h), bound its region:
    // neither its loops.
    if (find_directive_spec(d.name)->scope != DirectiveScope::Stage) continue;
    apply_stage_directive(nest, f, stage, f.name == p.output.func, d, source);
    if (d.name.rfind("gpu_", 0) == 0) gpu_loc = d.loc;
    if (d.name == "parallel") parallel_loc = d.loc;
  }
  if (gpu_loc) check_gpu_loops(nest, f, stage, *gpu_loc, parallel_loc.value_or(*gpu_loc), source);
  return nest;
}

}  // namespace stipple
