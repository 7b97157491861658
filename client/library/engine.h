// The embedding library's engine: what <stipple/stipple.h>'s classes do, behind types
// the public header only names. The public classes and the compiler's IR both call
// something `stipple::Pipeline`, so no file sees both: api.cpp includes the public header
// and this one, engine.cpp this one and the compiler's. Every function here throws
// stipple::Error only (the compiler's UserError, CompileError and the rest translated).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stipple/buffer_view.h"
#include "stipple/tuning.h"

namespace stipple::embedding {

struct LoadedPipeline;   // a checked program and the variants compiled from it
struct CompiledVariant;  // a schedule's lowered code and its compilations per layout

using Inputs = std::map<std::string, BufferView>;
using Params = std::map<std::string, double>;

void set_threads(int threads);
int threads();

std::shared_ptr<const LoadedPipeline> load_file(const std::string& path);
std::shared_ptr<const LoadedPipeline> load_source(const std::string& source,
                                                  const std::string& file_name);

const std::string& pipeline_name(const LoadedPipeline& p);
const std::vector<PipelineInput>& pipeline_inputs(const LoadedPipeline& p);
const std::vector<PipelineParam>& pipeline_params(const LoadedPipeline& p);
ElementType pipeline_output_type(const LoadedPipeline& p);

/// Compiles `p` under a schedule's text ("" is the default schedule). The same text
/// compiled again returns the variant compiled the first time.
std::shared_ptr<CompiledVariant> compile_schedule(const std::shared_ptr<const LoadedPipeline>& p,
                                                  const std::string& schedule,
                                                  const std::string& file_name);
std::shared_ptr<CompiledVariant> compile_schedule_file(
    const std::shared_ptr<const LoadedPipeline>& p, const std::string& path);
/// Variant `variant` of run `run`'s front in the database at `database`.
std::shared_ptr<CompiledVariant> compile_front_variant(
    const std::shared_ptr<const LoadedPipeline>& p, const std::string& database, int64_t run,
    int variant);

const LoadedPipeline& variant_pipeline(const CompiledVariant& v);
const std::string& variant_schedule(const CompiledVariant& v);
ElementType variant_output_type(const CompiledVariant& v);
std::vector<int64_t> output_extents(const CompiledVariant& v, const Inputs& inputs,
                                    const Params& params);
void realize(const CompiledVariant& v, const Inputs& inputs, const BufferView& output,
             const Params& params);

/// Pipeline::tune's callback: false stops the run after the batch being measured.
using TuneCallback = std::function<bool(const TuneProgress&)>;
/// A tuning run of `p` on this machine (tune.cpp). An exception of `progress` stops the
/// run and is rethrown as it was.
TuneResult tune(const std::shared_ptr<const LoadedPipeline>& p, const TuneOptions& options,
                const TuneCallback& progress);

}  // namespace stipple::embedding
