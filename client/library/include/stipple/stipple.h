// Stipple's embedding API, part 3 of 3: a pipeline, compiled under a schedule or a tuned
// variant, run on a program's own buffers. Link Stipple::stipple (find_package(Stipple)).
//
//   stipple::Pipeline p = stipple::Pipeline::load("blur.stp");
//   stipple::Function f = p.compile(stipple::FrontVariant{"stipple.db", 3, 0});
//   std::vector<float> rgb = ...;   // the program's f32 RGB image, interleaved
//   auto in = stipple::BufferView::interleaved(rgb.data(), width, height, 3);
//   std::vector<float> out(width * height * 3);
//   f.realize(in, stipple::BufferView::interleaved(out.data(), width, height, 3),
//             {{"sigma", 2.0}});
//
//   stipple::TuneResult r = p.tune();   // or tune it here first, as `stipple tune` does
//
// compile() generates native code for this machine with the JIT, as `stipple run` does;
// a Function keeps it, one compilation per layout of buffers it is called with (planar
// and interleaved differ), so a program compiles once and calls many times. Functions are
// safe to call from several threads at once. Every error is a stipple::Error.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stipple/buffer_view.h"
#include "stipple/tuning.h"

namespace stipple {

namespace embedding {
struct LoadedPipeline;
struct CompiledVariant;
}  // namespace embedding

/// How many threads the parallel loops of every Function use: the caller and threads - 1
/// workers of a process-wide pool (default: one per hardware thread). Error(BadInput)
/// for threads < 1.
STIPPLE_API void set_threads(int threads);
STIPPLE_API int threads();

/// A variant of a tuning run's front, as `stipple front RUN` numbers them.
struct FrontVariant {
  std::string database;  // the SQLite file `stipple tune` wrote (stipple.db)
  int64_t run = 0;
  int variant = 0;
};

/// A pipeline compiled under one schedule for this machine.
class STIPPLE_API Function {
 public:
  /// Runs the pipeline: reads `inputs` (by the names the program declares), writes every
  /// element of `output`, whose extents must be output_extents(inputs, params); params
  /// not given keep their defaults. Checks everything first (types, dimensions, extents,
  /// strides, that the output shares no memory with an input, the work limits) and
  /// throws Error(BadInput) without touching the output when something is wrong.
  void realize(const std::map<std::string, BufferView>& inputs, const BufferView& output,
               const std::map<std::string, double>& params = {}) const;
  /// The same for a pipeline with one input.
  void realize(const BufferView& input, const BufferView& output,
               const std::map<std::string, double>& params = {}) const;

  /// The output's extents (x first) for inputs of these extents (their data is not read).
  std::vector<int64_t> output_extents(const std::map<std::string, BufferView>& inputs,
                                      const std::map<std::string, double>& params = {}) const;
  std::vector<int64_t> output_extents(const BufferView& input,
                                      const std::map<std::string, double>& params = {}) const;
  ElementType output_type() const;
  /// The schedule's text ("" for the default schedule).
  const std::string& schedule() const;

 private:
  friend class Pipeline;
  explicit Function(std::shared_ptr<embedding::CompiledVariant> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<embedding::CompiledVariant> impl_;
};

/// A program in the .stp language, parsed and checked.
class STIPPLE_API Pipeline {
 public:
  /// Reads and checks a .stp file; errors name file:line:col.
  static Pipeline load(const std::string& path);
  /// The same for a program's text; `file_name` is what messages call it.
  static Pipeline from_source(const std::string& source,
                              const std::string& file_name = "pipeline.stp");

  const std::string& name() const;
  const std::vector<PipelineInput>& inputs() const;
  const std::vector<PipelineParam>& params() const;
  ElementType output_type() const;

  /// Under the default schedule (every stage inlined into the output, as `stipple run`
  /// without --schedule).
  Function compile() const;
  /// Under a schedule's text (the schedule language: `stipple export --format schedule`
  /// writes one); `file_name` is what messages call it.
  Function compile(const std::string& schedule, const std::string& file_name = "schedule") const;
  /// Under a schedule file.
  Function compile_file(const std::string& schedule_path) const;
  /// Under a variant of a tuning run's front. The run must have tuned this pipeline (the
  /// same program, up to comments and layout).
  Function compile(const FrontVariant& variant) const;

  /// Searches schedules and approximations of the pipeline on this machine, as `stipple
  /// tune` does (<stipple/tuning.h>), and returns the run's front. `progress`, called on
  /// this thread after each batch of candidates, returns false to stop the run early; an
  /// exception it throws stops the run too and leaves tune() as it was thrown. A pipeline
  /// from source text is stored with its text; `stipple tune --resume` needs one from a file.
  TuneResult tune(const TuneOptions& options = {},
                  const std::function<bool(const TuneProgress&)>& progress = {}) const;

 private:
  explicit Pipeline(std::shared_ptr<const embedding::LoadedPipeline> impl)
      : impl_(std::move(impl)) {}
  std::shared_ptr<const embedding::LoadedPipeline> impl_;
};

}  // namespace stipple
