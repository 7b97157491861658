// <stipple/stipple.h> and <stipple/buffer_view.h>: the public classes, each call handed to
// the engine (engine.h), which never sees them.
#include "client/library/engine.h"
#include "stipple/stipple.h"

namespace stipple {

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::UInt8: return "u8";
    case ElementType::UInt16: return "u16";
    case ElementType::UInt32: return "u32";
    case ElementType::Int8: return "i8";
    case ElementType::Int16: return "i16";
    case ElementType::Int32: return "i32";
    case ElementType::Float16: return "f16";
    case ElementType::Float32: return "f32";
    case ElementType::Float64: return "f64";
  }
  return "?";
}

size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::UInt8:
    case ElementType::Int8: return 1;
    case ElementType::UInt16:
    case ElementType::Int16:
    case ElementType::Float16: return 2;
    case ElementType::UInt32:
    case ElementType::Int32:
    case ElementType::Float32: return 4;
    case ElementType::Float64: return 8;
  }
  return 0;
}

BufferView BufferView::interleaved(void* data, ElementType type, int64_t width, int64_t height,
                                   int64_t channels, int64_t row_stride) {
  if (row_stride == 0) row_stride = width * channels;
  BufferView v{data, type, {}};
  if (channels == 1) {
    v.dims = {{width, 1}, {height, row_stride}};
  } else {
    v.dims = {{width, channels}, {height, row_stride}, {channels, 1}};
  }
  return v;
}

BufferView BufferView::planar(void* data, ElementType type, int64_t width, int64_t height,
                              int64_t channels) {
  BufferView v{data, type, {{width, 1}, {height, width}}};
  if (channels != 1) v.dims.push_back({channels, width * height});
  return v;
}

namespace {

/// The one input of a pipeline that has one, by its name.
std::map<std::string, BufferView> only_input(const embedding::LoadedPipeline& p,
                                             const BufferView& input) {
  const std::vector<PipelineInput>& inputs = embedding::pipeline_inputs(p);
  if (inputs.size() != 1) {
    throw Error(Error::Kind::BadInput, "pipeline '" + embedding::pipeline_name(p) + "' has " +
                                           std::to_string(inputs.size()) +
                                           " inputs: pass them by name");
  }
  return {{inputs[0].name, input}};
}

}  // namespace

void Function::realize(const std::map<std::string, BufferView>& inputs, const BufferView& output,
                       const std::map<std::string, double>& params) const {
  embedding::realize(*impl_, inputs, output, params);
}

void Function::realize(const BufferView& input, const BufferView& output,
                       const std::map<std::string, double>& params) const {
  embedding::realize(*impl_, only_input(embedding::variant_pipeline(*impl_), input), output,
                     params);
}

std::vector<int64_t> Function::output_extents(const std::map<std::string, BufferView>& inputs,
                                              const std::map<std::string, double>& params) const {
  return embedding::output_extents(*impl_, inputs, params);
}

std::vector<int64_t> Function::output_extents(const BufferView& input,
                                              const std::map<std::string, double>& params) const {
  return embedding::output_extents(*impl_, only_input(embedding::variant_pipeline(*impl_), input),
                                   params);
}

ElementType Function::output_type() const { return embedding::variant_output_type(*impl_); }
const std::string& Function::schedule() const { return embedding::variant_schedule(*impl_); }

void set_threads(int threads) { embedding::set_threads(threads); }
int threads() { return embedding::threads(); }

Pipeline Pipeline::load(const std::string& path) { return Pipeline(embedding::load_file(path)); }

Pipeline Pipeline::from_source(const std::string& source, const std::string& file_name) {
  return Pipeline(embedding::load_source(source, file_name));
}

const std::string& Pipeline::name() const { return embedding::pipeline_name(*impl_); }
const std::vector<PipelineInput>& Pipeline::inputs() const {
  return embedding::pipeline_inputs(*impl_);
}
const std::vector<PipelineParam>& Pipeline::params() const {
  return embedding::pipeline_params(*impl_);
}
ElementType Pipeline::output_type() const { return embedding::pipeline_output_type(*impl_); }

Function Pipeline::compile() const { return Function(embedding::compile_schedule(impl_, "", "")); }

Function Pipeline::compile(const std::string& schedule, const std::string& file_name) const {
  return Function(embedding::compile_schedule(impl_, schedule, file_name));
}

Function Pipeline::compile_file(const std::string& schedule_path) const {
  return Function(embedding::compile_schedule_file(impl_, schedule_path));
}

Function Pipeline::compile(const FrontVariant& variant) const {
  return Function(
      embedding::compile_front_variant(impl_, variant.database, variant.run, variant.variant));
}

TuneResult Pipeline::tune(const TuneOptions& options,
                          const std::function<bool(const TuneProgress&)>& progress) const {
  return embedding::tune(impl_, options, progress);
}

}  // namespace stipple
