// The measuring protocol of the design, in the process that runs candidates (the
// evaluation server, evaluation_server.cpp): reference outputs under the default exact
// schedule computed once, then for each schedule: compile (timed apart), and on each
// photo one warm-up run and `runs` timed runs, the median kept, the error of the output
// against the reference in the pipeline's metric.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/lowered_function.h"
#include "compiler_core/ir/pipeline.h"
#include "workers/evaluator.h"

namespace stipple::codegen {
class CompiledFunction;
}  // namespace stipple::codegen

namespace stipple::workers {

/// The inputs of p for one photo (see EvaluationSetup::images).
InputImages inputs_for_photo(const Pipeline& p, const std::string& path);

/// What the measuring process does around the phases of a measurement: the evaluation
/// server holds the host's BenchmarkLock shared while compiling and exclusively while
/// timing (benchmark_lock.h). Empty functions do nothing. Computing the reference outputs
/// passes through none of them.
struct MeasurementGate {
  std::function<void()> before_compile;  // a candidate's compile follows
  std::function<void()> before_timing;   // compiled: the warm-ups and timed runs follow
  std::function<void()> after_timing;    // the timed runs are over
};

class Measurement {
 public:
  /// Compiles the pipeline, loads every photo and computes its reference output. Throws
  /// UserError for a bad pipeline, param or photo. With a `reference_cache` folder the
  /// reference outputs are read from it when there, and written to it when computed
  /// (reference_cache.h; keyed by pipeline, params, photo bytes, target and the
  /// evaluator's build).
  explicit Measurement(const EvaluationSetup& setup, MeasurementGate gate = {},
                       std::string reference_cache = {});
  ~Measurement();

  /// Measures one schedule on the photos of `split`. Bad schedules and bad outputs are
  /// failed results; other exceptions propagate. The code of the kCompiledKept schedules
  /// (or stored codes) measured last is kept: measuring one of them again (its test photos
  /// after its training ones, a nightly run's rounds of up to 64 variants, each beside its
  /// baseline's code) compiles nothing, and reports the compile time it had.
  /// A warm-up run slower than `give_up_ms` (0: no limit) is the photo's only run.
  EvaluationResult measure(const std::string& schedule, const std::string& split,
                           double give_up_ms = 0) {
    return measure(CodeRequest{schedule, {}, {}, false}, split, give_up_ms);
  }
  /// The same for stored code (timed as it is; its schedule says how it is called), or
  /// with the code compiled kept in the result. Stored code that cannot be loaded is a
  /// CompileError.
  EvaluationResult measure(const CodeRequest& request, const std::string& split,
                           double give_up_ms = 0);

  const Pipeline& pipeline() const { return pipeline_; }
  /// This host's target key (host_probe.h), from the CPU and features the JIT compiles for.
  std::string target() const;
  /// Reference outputs read from the cache rather than computed (for tests and logs).
  int references_read() const { return references_read_; }

 private:
  struct Photo {
    InputImages inputs;
    std::vector<int64_t> extents;
    Buffer reference;
  };
  struct Compiled {
    std::string key;  // the schedule, and for stored code the code's digest
    LoweredFunction lowered;
    std::shared_ptr<codegen::CompiledFunction> function;
    double compile_ms = 0;
  };
  static constexpr size_t kCompiledKept = 128;
  std::deque<Compiled> compiled_;  // least recently used first
  EvaluationSetup setup_;
  Pipeline pipeline_;
  std::map<std::string, std::vector<Photo>> photos_;  // by split, loaded when first asked
  MeasurementGate gate_;
  std::string reference_cache_;
  int references_read_ = 0;

  static void call(const std::function<void()>& f) {
    if (f) f();
  }

  std::vector<Photo>& photos(const std::string& split);
};

}  // namespace stipple::workers
