// How big a run is before it starts: the bytes of every buffer the reference evaluator
// would realise and the points it would compute, from bounds inference alone, checked
// against stated limits so that `--param W=2000000000` or `sum(i in 0..2000000000 : ..)`
// fails at once with the numbers rather than after minutes and gigabytes.
//
// The estimate is the evaluator's own plan (every func over the box its consumers need,
// computed once), so it is exact for `--interp` and the default schedule; a compiled
// schedule that recomputes producers does more work and one that folds storage keeps
// fewer bytes, within the same order of magnitude for the schedules the checker accepts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler_core/interp/evaluator.h"

namespace stipple {

struct WorkEstimate {
  double buffer_bytes = 0;   // every realised func's box, times its element size
  double points = 0;         // pure points + update points + reduction body evaluations
  std::string largest_func;  // the func with the largest box, for messages
  double largest_func_bytes = 0;
};

/// Estimates the run of `pipeline` over an output of `extents` (output_extents gives
/// them). Throws what evaluation would for bad inputs, params or unbounded indices.
WorkEstimate estimate_work(const Pipeline& pipeline, const InputImages& inputs,
                           const ParamValues& params, const std::vector<int64_t>& extents);

struct WorkLimits {
  /// Buffers: well under the 24 GiB of the smallest machine we run on, far over what a
  /// 6400x4800 run of any benchmark pipeline needs.
  double max_buffer_bytes = double(int64_t{8} << 30);
  /// Points: about a minute of compiled code on two cores, hours in the evaluator.
  double max_points = 1e12;
  /// How a user raises each limit, for the message ("--max-memory"); empty: not named.
  std::string memory_option = "--max-memory";
  std::string work_option = "--max-work";
};

/// Checks a run of compiled code before it starts: its estimate against `limits`
/// (check_work_limits), when the evaluator's plan exists. A pipeline whose evaluator plan
/// is unbounded (a func read far outside the output, which compiled code inlines) is not
/// refused here: it may well run, and fails on its own terms if it does not.
void check_compiled_run(const Pipeline& pipeline, const InputImages& inputs,
                        const ParamValues& params, const std::vector<int64_t>& extents,
                        const WorkLimits& limits);

/// Throws UserError when the estimate exceeds a limit: "this run would realise 12.6 GiB of
/// buffers (the largest, blur_y, 4.2 GiB), over the limit of 8.0 GiB (raise it with
/// --max-memory)".
void check_work_limits(const WorkEstimate& estimate, const WorkLimits& limits);

/// "12.6 GiB", "850.0 MiB": a size for messages, one decimal.
std::string approximate_size_text(double bytes);

}  // namespace stipple
