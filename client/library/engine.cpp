// The embedding library's engine (engine.h): loading, compiling and running pipelines on
// a program's buffers, through the same front end, schedule checker, lowering and JIT as
// `stipple run`, and the same messages.
#include "client/library/engine.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <optional>
#include <set>

#include "client/library/loaded_pipeline.h"
#include "client/library/translated_errors.h"
#include "client/open_database.h"
#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/interp/work_limits.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/lowered_function.h"
#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/runtime/buffer.h"
#include "compiler_core/runtime/thread_pool.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/files.h"
#include "search/tuning_session.h"

namespace stipple::embedding {

/// Generated code's layouts: the inner strides (LoweredFunction::inner_strides) of the
/// buffers of a call, by name, where they are not 1.
using Layout = std::map<std::string, int64_t>;

struct CompiledVariant {
  std::shared_ptr<const LoadedPipeline> pipeline;
  std::string schedule;
  LoweredFunction lowered;  // for dense rows; a layout's copy adds its inner strides
  mutable std::mutex mu;
  mutable std::map<Layout, std::shared_ptr<codegen::CompiledFunction>> code;
  /// The input extents and params whose run last passed the work limits: a program calls
  /// a Function on frames of one size, and the estimate is not free.
  mutable std::optional<std::pair<std::vector<std::vector<int64_t>>, Params>> checked;
};

namespace {

ElementType element_type(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return ElementType::UInt8;
    case ScalarType::UInt16: return ElementType::UInt16;
    case ScalarType::UInt32: return ElementType::UInt32;
    case ScalarType::Int8: return ElementType::Int8;
    case ScalarType::Int16: return ElementType::Int16;
    case ScalarType::Int32: return ElementType::Int32;
    case ScalarType::Float16: return ElementType::Float16;
    case ScalarType::Float32: return ElementType::Float32;
    case ScalarType::Float64: return ElementType::Float64;
    case ScalarType::Bool: break;  // no input, param or output is a bool
  }
  throw InternalError("no element type for bool");
}

ScalarType scalar_type(ElementType t) {
  switch (t) {
    case ElementType::UInt8: return ScalarType::UInt8;
    case ElementType::UInt16: return ScalarType::UInt16;
    case ElementType::UInt32: return ScalarType::UInt32;
    case ElementType::Int8: return ScalarType::Int8;
    case ElementType::Int16: return ScalarType::Int16;
    case ElementType::Int32: return ScalarType::Int32;
    case ElementType::Float16: return ScalarType::Float16;
    case ElementType::Float32: return ScalarType::Float32;
    case ElementType::Float64: return ScalarType::Float64;
  }
  throw Error(Error::Kind::BadInput, "not an element type: " + std::to_string(static_cast<int>(t)));
}

std::shared_ptr<const LoadedPipeline> loaded(Pipeline ir, std::string source, std::string file,
                                             bool on_disk) {
  auto p = std::make_shared<LoadedPipeline>();
  p->source = std::move(source);
  p->file = std::move(file);
  p->on_disk = on_disk;
  p->name = ir.name;
  for (const InputDecl& in : ir.inputs) {
    p->inputs.push_back({in.name, element_type(in.type.code), in.dim_names});
  }
  for (const ParamDecl& pd : ir.params) {
    p->params.push_back({pd.name, element_type(pd.type.code), pd.default_value});
  }
  const Func* out = ir.find_func(ir.output.func);
  STIPPLE_INTERNAL_CHECK(out, "the pipeline has no output func");
  p->output_type = element_type(out->type.code);
  p->ir = std::move(ir);
  return p;
}

std::shared_ptr<CompiledVariant> compiled(const std::shared_ptr<const LoadedPipeline>& p,
                                          const std::string& text, const Schedule& schedule) {
  auto v = std::make_shared<CompiledVariant>();
  v->pipeline = p;
  v->schedule = text;
  v->lowered = lower(p->ir, schedule);
  // Dense rows now, so that a schedule's problems and the compile time come with compile().
  v->code[{}] = codegen::compile_for_host(v->lowered);
  return v;
}

std::shared_ptr<CompiledVariant> cached_or_compiled(const std::shared_ptr<const LoadedPipeline>& p,
                                                    const std::string& text,
                                                    const std::string& file_name) {
  {
    std::lock_guard<std::mutex> lock(p->mu);
    auto it = p->variants.find(text);
    if (it != p->variants.end()) {
      if (std::shared_ptr<CompiledVariant> alive = it->second.lock()) return alive;
    }
  }
  // Compiled outside the lock (seconds, for a large pipeline); a second thread compiling
  // the same text meanwhile keeps the first one stored.
  const Schedule schedule = text.empty() ? Schedule{} : compile_schedule(text, file_name, p->ir);
  std::shared_ptr<CompiledVariant> v = compiled(p, text, schedule);
  std::lock_guard<std::mutex> lock(p->mu);
  std::weak_ptr<CompiledVariant>& slot = p->variants[text];
  if (std::shared_ptr<CompiledVariant> first = slot.lock()) return first;
  slot = v;
  return v;
}

std::string dims_text(const std::vector<int64_t>& extents) {
  std::string s;
  for (int64_t e : extents) s += (s.empty() ? "" : "x") + std::to_string(e);
  return s;
}

/// The lowest and one past the highest byte a view addresses.
std::pair<uintptr_t, uintptr_t> byte_span(const BufferView& v) {
  int64_t lo = 0, hi = 0;  // element offsets from data
  for (const BufferView::Dimension& d : v.dims) {
    const int64_t far = (d.extent - 1) * d.stride;
    (far < 0 ? lo : hi) += far;
  }
  const auto base = reinterpret_cast<uintptr_t>(v.data);
  const auto size = static_cast<int64_t>(element_size(v.type));
  return {base + static_cast<uintptr_t>(lo * size), base + static_cast<uintptr_t>((hi + 1) * size)};
}

/// Checks what the compiler cannot know of a caller's buffer: memory, extents and
/// strides. Types and dimension counts are checked against the program by the caller.
void check_view(const std::string& what, const BufferView& v, bool written) {
  if (!v.data) throw UserError(what + " has no data (a null pointer)");
  if (v.dims.empty() || v.dims.size() > static_cast<size_t>(codegen::kMaxBufferDims)) {
    throw UserError(what + " has " + std::to_string(v.dims.size()) + " dimensions");
  }
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d].extent <= 0) {
      throw UserError(what + " has an empty dimension " + std::to_string(d) + " (extent " +
                      std::to_string(v.dims[d].extent) + ")");
    }
  }
  if (v.dims[0].stride < 1) {
    throw UserError(what + " has stride " + std::to_string(v.dims[0].stride) +
                    " in dimension 0 (x); compiled code reads and writes rows left to right, "
                    "so it must be positive" +
                    (written ? std::string() : ": pass a copy (numpy: np.ascontiguousarray)"));
  }
  if (!written) return;
  // An output's elements must be distinct, or two of them would be written to one place:
  // with the dimensions in order of stride, each must step past all of the previous ones.
  std::vector<BufferView::Dimension> by_stride = v.dims;
  for (auto& d : by_stride) d.stride = d.stride < 0 ? -d.stride : d.stride;
  std::sort(by_stride.begin(), by_stride.end(),
            [](const auto& a, const auto& b) { return a.stride < b.stride; });
  int64_t span = 1;
  for (const BufferView::Dimension& d : by_stride) {
    if (d.extent > 1 && d.stride < span) {
      throw UserError(what + "'s strides make some of its elements share memory (stride " +
                      std::to_string(d.stride) + " over " + std::to_string(span) +
                      " elements before it): it cannot be written");
    }
    span = std::max(span, d.stride * d.extent);
  }
}

/// A view as the code sees it: a dimension 0 of one element has no stride that matters
/// (numpy gives a broadcast column stride 0), so it is dense.
BufferView normalized(BufferView v) {
  if (!v.dims.empty() && v.dims[0].extent == 1) v.dims[0].stride = 1;
  return v;
}

Inputs normalized(const Inputs& inputs) {
  Inputs out;
  for (const auto& [name, view] : inputs) out.emplace(name, normalized(view));
  return out;
}

Buffer as_buffer(const BufferView& v) {
  std::vector<BufferDim> dims;
  for (const BufferView::Dimension& d : v.dims) dims.push_back({0, d.extent, d.stride});
  return Buffer::view(scalar_type(v.type), std::move(dims), v.data);
}

/// The caller's inputs as Buffers: names the program declares, memory and strides (their
/// types and dimensions are checked with the command line's messages by output_extents).
InputImages input_buffers(const LoadedPipeline& p, const Inputs& inputs) {
  for (const auto& [name, view] : inputs) {
    if (!p.ir.find_input(name)) {
      std::string names;
      for (const PipelineInput& in : p.inputs)
        names += (names.empty() ? "'" : ", '") + in.name + "'";
      throw UserError("pipeline '" + p.name + "' has no input named '" + name +
                      "' (its inputs: " + names + ")");
    }
  }
  // A missing one is reported where the evaluator's checks find it (output_extents).
  InputImages buffers;
  for (const auto& [name, view] : inputs) {
    check_view("input image '" + name + "'", view, false);
    buffers.emplace(name, as_buffer(view));
  }
  return buffers;
}

/// The params checked against the program: names it declares (values it can hold are
/// checked where they are converted, as for --param).
void check_params(const LoadedPipeline& p, const Params& params) {
  for (const auto& [name, value] : params) {
    if (!p.ir.find_param(name)) {
      throw UserError("pipeline '" + p.name + "' has no param named '" + name + "'");
    }
  }
}

}  // namespace

void set_threads(int threads) {
  translated([&] { ThreadPool::set_global_threads(threads); });
}

int threads() { return ThreadPool::global_threads(); }

std::shared_ptr<const LoadedPipeline> load_file(const std::string& path) {
  return translated([&] {
    std::string source = read_text_file(path, "pipeline");
    Pipeline ir = compile_pipeline(source, path);
    return loaded(std::move(ir), std::move(source), path, true);
  });
}

std::shared_ptr<const LoadedPipeline> load_source(const std::string& source,
                                                  const std::string& file_name) {
  return translated(
      [&] { return loaded(compile_pipeline(source, file_name), source, file_name, false); });
}

const std::string& pipeline_name(const LoadedPipeline& p) { return p.name; }
const std::vector<PipelineInput>& pipeline_inputs(const LoadedPipeline& p) { return p.inputs; }
const std::vector<PipelineParam>& pipeline_params(const LoadedPipeline& p) { return p.params; }
ElementType pipeline_output_type(const LoadedPipeline& p) { return p.output_type; }

std::shared_ptr<CompiledVariant> compile_schedule(const std::shared_ptr<const LoadedPipeline>& p,
                                                  const std::string& schedule,
                                                  const std::string& file_name) {
  return translated([&] { return cached_or_compiled(p, schedule, file_name); });
}

std::shared_ptr<CompiledVariant> compile_schedule_file(
    const std::shared_ptr<const LoadedPipeline>& p, const std::string& path) {
  return translated([&] { return cached_or_compiled(p, read_text_file(path, "schedule"), path); });
}

std::shared_ptr<CompiledVariant> compile_front_variant(
    const std::shared_ptr<const LoadedPipeline>& p, const std::string& database, int64_t run,
    int variant) {
  return translated([&] {
    auto db = cli::open_database(database, cli::DatabaseUse::Read);
    const storage::EvaluationRecord chosen = search::front_variant(*db, run, variant);
    // A schedule names a program's funcs and variables: one tuned for another program may
    // well check against this one and mean something else.
    search::check_run_pipeline(*db, run, p->ir, p->file);
    const std::string name =
        database + " run " + std::to_string(run) + " variant " + std::to_string(variant);
    return cached_or_compiled(p, chosen.key.schedule, name);
  });
}

const LoadedPipeline& variant_pipeline(const CompiledVariant& v) { return *v.pipeline; }
const std::string& variant_schedule(const CompiledVariant& v) { return v.schedule; }
ElementType variant_output_type(const CompiledVariant& v) { return v.pipeline->output_type; }

std::vector<int64_t> output_extents(const CompiledVariant& v, const Inputs& inputs,
                                    const Params& params) {
  return translated([&] {
    check_params(*v.pipeline, params);
    return stipple::output_extents(v.pipeline->ir, input_buffers(*v.pipeline, normalized(inputs)),
                                   params);
  });
}

void realize(const CompiledVariant& v, const Inputs& given_inputs, const BufferView& given_output,
             const Params& params) {
  translated([&] {
    const Inputs inputs = normalized(given_inputs);
    const BufferView output = normalized(given_output);
    const LoadedPipeline& p = *v.pipeline;
    check_params(p, params);
    const InputImages in = input_buffers(p, inputs);
    const std::vector<int64_t> extents = stipple::output_extents(p.ir, in, params);

    check_view("the output buffer", output, true);
    if (output.type != p.output_type) {
      throw UserError(std::string("the output buffer has element type ") +
                      element_type_name(output.type) + " but pipeline '" + p.name + "' computes " +
                      element_type_name(p.output_type));
    }
    std::vector<int64_t> given;
    for (const BufferView::Dimension& d : output.dims) given.push_back(d.extent);
    if (given != extents) {
      throw UserError("the output buffer is " + dims_text(given) + " but pipeline '" + p.name +
                      "' computes " + dims_text(extents) + " for these inputs (x first)");
    }
    const auto [out_lo, out_hi] = byte_span(output);
    for (const auto& [name, view] : inputs) {
      const auto [lo, hi] = byte_span(view);
      if (lo < out_hi && out_lo < hi) {
        throw UserError("the output buffer shares memory with input '" + name +
                        "': a pipeline cannot compute in place");
      }
    }

    std::vector<std::vector<int64_t>> input_extents;
    for (const auto& [name, buffer] : in) {
      std::vector<int64_t> e;
      for (int d = 0; d < buffer.dimensions(); ++d) e.push_back(buffer.extent(d));
      input_extents.push_back(std::move(e));
    }
    const std::pair<std::vector<std::vector<int64_t>>, Params> key{input_extents, params};
    std::shared_ptr<codegen::CompiledFunction> code;
    Layout layout;
    for (const auto& [name, view] : inputs) {
      if (view.dims[0].stride != 1) layout[name] = view.dims[0].stride;
    }
    if (output.dims[0].stride != 1) layout[p.ir.output.func] = output.dims[0].stride;
    // The estimate and a new layout's compilation run outside the lock, so that other
    // calls go on meanwhile; two threads meeting the same new layout at once may both
    // compile it, and the first stored is kept.
    bool checked = false;
    {
      std::lock_guard<std::mutex> lock(v.mu);
      checked = v.checked == key;
      auto it = v.code.find(layout);
      if (it != v.code.end()) code = it->second;
    }
    if (!checked) {
      WorkLimits limits;
      limits.memory_option.clear();
      limits.work_option.clear();
      check_compiled_run(p.ir, in, params, extents, limits);
      std::lock_guard<std::mutex> lock(v.mu);
      v.checked = key;
    }
    if (!code) {
      LoweredFunction f = v.lowered;
      f.inner_strides = layout;
      std::shared_ptr<codegen::CompiledFunction> compiled = codegen::compile_for_host(f);
      std::lock_guard<std::mutex> lock(v.mu);
      std::shared_ptr<codegen::CompiledFunction>& slot = v.code[layout];
      if (!slot) slot = std::move(compiled);
      code = slot;
    }
    Buffer out = as_buffer(output);
    run_lowered_into(*code, v.lowered, p.ir, in, params, out);
  });
}

}  // namespace stipple::embedding
