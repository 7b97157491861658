// The loop nest of one stage under its directives: the naming and resolution rules of
// LOOPS.md, implemented once for the checker, the random schedule generator and the
// lowering. Applying a directive that breaks a rule throws the CompileError the checker
// reports (at the directive's or the offending argument's location).
#pragma once

#include <string>
#include <vector>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/source.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

struct Loop {
  std::string name;        // an identifier, or "v.vector" / "v.unroll" for the lanes of v
  std::string origin;      // the stage variable it was split from (x, y, r, ...)
  bool reduction = false;  // origin is a reduction variable of an update
  /// Reordering, vectorising or parallelising this loop could change the result: the
  /// update carries a dependence along origin (LOOPS.md, "dependences").
  bool dependent = false;
  ForType for_type = ForType::Serial;
  int64_t lanes = 0;  // for a vectorised or unrolled lane loop: its constant extent
};

/// The loop gpu_single_thread() adds outermost: a GPU block loop of one iteration. The
/// name is no identifier, so no directive can name it.
inline constexpr const char* kGpuSingleThreadLoop = "gpu.single";

/// The largest split or tile factor a schedule may give (2^24): the lowering counts an
/// outer loop in 32 bits as (extent + factor - 1) / factor, extents reach 2^30.
inline constexpr int64_t kMaxSplitFactor = int64_t{1} << 24;

/// The most threads a GPU block may have (CUDA's limit on every GPU since sm_20), and the
/// most per dimension: x and y 1024, z 64.
inline constexpr int64_t kMaxGpuThreadsPerBlock = 1024;
inline constexpr int64_t kMaxGpuThreadsZ = 64;

/// One split, in application order. Vectorize and unroll are recorded as splits whose
/// outer loop keeps the old name and whose inner loop is the lane loop.
struct SplitStep {
  std::string old_var, outer, inner;
  int64_t factor = 1;
  TailStrategy tail = TailStrategy::Auto;
};

struct StageLoopNest {
  std::vector<Loop> loops;  // innermost first
  std::vector<SplitStep> splits;
  /// Every name a loop of this stage has had (variables, split results, lane loops).
  std::vector<std::string> ever;
  /// atomic(): the update is `f(site) = f(site) + e` with e not reading f, stored as an
  /// atomic add, so its loops may map to GPU blocks and threads even where different
  /// iterations write the same site (LOOPS.md, "Atomic updates").
  bool atomic = false;

  /// The index of the loop called `name` (0 = innermost), or -1.
  int find(const std::string& name) const;
  /// "xi, yi, xo, yo, c" (innermost first), or "none".
  std::string describe() const;
};

/// The stage's loops before any directive: for the pure definition, the func's pure
/// variables with dimension 0 innermost; for update(k), its reduction variables (the
/// first innermost) inside its pure variables (dimension 0 innermost), as the reference
/// evaluator iterates them. `stage` must exist.
StageLoopNest default_loop_nest(const Func& f, int stage);

/// Why stage `stage` of `f` cannot take atomic(), or "" when it can: an update `f(site) =
/// f(site) + e` (the form `+=` gives) whose e does not read f, of a type CUDA's atomicAdd
/// adds (f32, f64, i32, u32).
std::string atomic_update_error(const Func& f, int stage);

/// Applies one stage directive (after directive_shape_error accepted it). `is_output`
/// is whether f is the pipeline's output. Throws CompileError through `source`.
void apply_stage_directive(StageLoopNest& nest, const Func& f, int stage, bool is_output,
                           const Directive& d, const SourceText& source);

/// The rules a stage's GPU loops obey once all its directives are applied (LOOPS.md, "GPU
/// loops"): block loops form one band with the thread loops (if any) directly inside it,
/// at most three of each, every thread loop the inner loop of a split whose factors give
/// at most kMaxGpuThreadsPerBlock threads, and no parallel loop in a stage with GPU loops.
/// Throws CompileError at `loc` (the stage's last GPU directive), or for a parallel loop at
/// `parallel_loc` (the parallel directive), through `source`.
void check_gpu_loops(const StageLoopNest& nest, const Func& f, int stage, SourceLoc loc,
                     SourceLoc parallel_loc, const SourceText& source);

/// The constant extent bound of GPU thread loop `index` of `nest`: its split factor.
int64_t gpu_thread_extent(const StageLoopNest& nest, int index);

/// default_loop_nest with the directives of stage `stage` of `f` in `s` applied.
StageLoopNest stage_loop_nest(const Schedule& s, const Pipeline& p, const Func& f, int stage,
                              const SourceText& source);

}  // namespace stipple
