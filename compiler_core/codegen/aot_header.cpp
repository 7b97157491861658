// The C header `stipple compile --emit header` writes: self-contained (stdint.h and
// stddef.h only), valid C99 and C++, declaring the descriptor struct byte for byte as
// codegen_llvm.h's BufferDescriptor (with static assertions of its layout), the type and
// return codes, one constant per buffer and param position, the param defaults, and the
// function. Its opening comment is the user's documentation of the calling convention.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <set>
#include <sstream>

#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/cuda_target.h"
#include "compiler_core/codegen/target_machine.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_printer.h"

namespace stipple::codegen {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string type_constant(ScalarType t) { return "STIPPLE_TYPE_" + upper(to_string(Type(t))); }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

/// The constant names of one header, checked for collisions: case folding can make two
/// pipeline names ("a" and "A", or "in" and "in_type" next to "in"'s _TYPE) one constant.
class ConstantNames {
 public:
  explicit ConstantNames(std::string prefix) : prefix_(std::move(prefix)) {
    for (const char* common : {"STIPPLE_OK", "STIPPLE_ERROR_BUFFER_MISMATCH",
                               "STIPPLE_ERROR_OUT_OF_MEMORY", "STIPPLE_MAX_DIMENSIONS"}) {
      used_.insert(common);
    }
  }
  std::string add(const std::string& suffix, const std::string& source_name) {
    std::string name = prefix_ + "_" + upper(suffix);
    if (!used_.insert(name).second) {
      throw UserError("the header constant " + name + " (for '" + source_name +
                      "') would be defined twice: rename one of the pipeline's inputs, "
                      "params or funcs, or choose another --function-name");
    }
    return name;
  }

 private:
  std::string prefix_;
  std::set<std::string> used_;
};

void write_common_block(std::ostream& os) {
  constexpr size_t dim_size = sizeof(BufferDim);
  os << "#ifndef STIPPLE_AOT_COMMON\n"
        "#define STIPPLE_AOT_COMMON\n"
        "/* Shared by every header `stipple compile` writes, so that several can be included. "
        "*/\n\n"
        "#define STIPPLE_MAX_DIMENSIONS "
     << kMaxBufferDims
     << "\n\n"
        "typedef struct stipple_buffer_dim {\n"
        "  int64_t min;\n"
        "  int64_t extent;\n"
        "  int64_t stride; /* in elements */\n"
        "} stipple_buffer_dim;\n\n"
        "/* A buffer as the generated function sees it (Stipple's BufferDescriptor). */\n"
        "typedef struct stipple_buffer {\n"
        "  void* host;          /* the element at (dim[0].min, dim[1].min, ...) */\n"
        "  int32_t type;        /* a STIPPLE_TYPE_* code, checked on entry */\n"
        "  int32_t dimensions;  /* checked on entry */\n"
        "  stipple_buffer_dim dim[STIPPLE_MAX_DIMENSIONS]; /* unused entries: zero */\n"
        "} stipple_buffer;\n\n";
  // The codes are ScalarType's numbers, which only ever grow (compiler_core/ir/type.h).
  os << "/* Element type codes (stipple_buffer.type). F16 elements are IEEE binary16 bits\n"
        "   (uint16_t). */\nenum {\n";
  for (ScalarType t : {ScalarType::Bool, ScalarType::UInt8, ScalarType::UInt16, ScalarType::Int32,
                       ScalarType::Float32, ScalarType::Float64, ScalarType::Int8,
                       ScalarType::Int16, ScalarType::UInt32, ScalarType::Float16}) {
    os << "  " << type_constant(t) << " = " << static_cast<int>(t) << ",\n";
  }
  os << "};\n\n"
        "/* What generated functions return. */\nenum {\n"
        "  STIPPLE_OK = "
     << kOk << ",\n  STIPPLE_ERROR_BUFFER_MISMATCH = " << kErrorBufferMismatch
     << ",\n  STIPPLE_ERROR_OUT_OF_MEMORY = " << kErrorOutOfMemory << ",\n};\n\n";
  // The layout checks, with the numbers taken from the C++ struct this header mirrors.
  os << "#if defined(__cplusplus) && __cplusplus >= 201103L\n"
        "#define STIPPLE_AOT_STATIC_ASSERT(c, m) static_assert(c, m)\n"
        "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n"
        "#define STIPPLE_AOT_STATIC_ASSERT(c, m) _Static_assert(c, m)\n"
        "#else /* C99: an array of negative size when the condition is false */\n"
        "#define STIPPLE_AOT_STATIC_ASSERT(c, m) extern int stipple_aot_layout_check[(c) ? 1 : "
        "-1]\n"
        "#endif\n";
  const char* msg = "\"stipple_buffer must match Stipple's BufferDescriptor\"";
  os << "STIPPLE_AOT_STATIC_ASSERT(sizeof(stipple_buffer_dim) == " << dim_size << ", " << msg
     << ");\n"
     << "STIPPLE_AOT_STATIC_ASSERT(offsetof(stipple_buffer, type) == "
     << offsetof(BufferDescriptor, type) << ", " << msg << ");\n"
     << "STIPPLE_AOT_STATIC_ASSERT(offsetof(stipple_buffer, dimensions) == "
     << offsetof(BufferDescriptor, dimensions) << ", " << msg << ");\n"
     << "STIPPLE_AOT_STATIC_ASSERT(offsetof(stipple_buffer, dim) == "
     << offsetof(BufferDescriptor, dim) << ", " << msg << ");\n"
     << "STIPPLE_AOT_STATIC_ASSERT(sizeof(stipple_buffer) == " << sizeof(BufferDescriptor) << ", "
     << msg << ");\n\n";
  os << "/* Threads that parallel loops use in all (the caller included; the default is the\n"
        "   number of hardware threads). 0 on success, 1 if threads < 1 or if called from\n"
        "   inside a parallel loop. In libstipple_runtime.a. */\n"
        "int32_t stipple_set_num_threads(int32_t threads);\n"
        "#endif /* STIPPLE_AOT_COMMON */\n\n";
}

}  // namespace

std::string c_header_common_block() {
  std::ostringstream os;
  write_common_block(os);
  return os.str();
}

std::string c_header(const LoweredFunction& f, const AotOptions& options) {
  check_c_function_name(options.symbol);
  // A GPU target's header declares the two entry points of the CUDA file (AOT.md, "CUDA").
  const bool gpu = is_cuda_target(options.target);
  const std::string target_text =
      gpu ? options.target + " (NVIDIA GPU, " + cuda_arch(options.target) + ", `--emit cu`)" : [&] {
        const TargetSpec t = named_target(options.target);
        return t.name + " (" + t.triple + ", cpu " + t.cpu + ")";
      }();
  const std::string& name = options.symbol;
  ConstantNames constants(upper(name));

  // Each buffer's and param's line of the opening comment and its constants.
  struct Row {
    std::string constant, text;
  };
  std::vector<Row> buffer_rows, param_rows;
  std::ostringstream enums;
  const std::string buffer_count = constants.add("buffer_count", "the buffer count");
  const std::string param_count = constants.add("param_count", "the param count");
  const std::string defaults = constants.add("param_defaults", "the param defaults");
  enums << "enum {\n  " << buffer_count << " = " << f.inputs.size() + f.buffers.size() << ",\n";
  int index = 0;
  auto add_buffer = [&](const std::string& buffer, ScalarType type, int dims, std::string text) {
    const std::string c = constants.add("buffer_" + buffer, buffer);
    enums << "  " << c << " = " << index++ << ",\n"
          << "  " << constants.add("buffer_" + buffer + "_type", buffer) << " = "
          << type_constant(type) << ",\n"
          << "  " << constants.add("buffer_" + buffer + "_dimensions", buffer) << " = " << dims
          << ",\n";
    buffer_rows.push_back({c, std::move(text)});
  };
  for (const InputDecl& in : f.inputs) {
    std::string text = "input " + in.name + ": " + to_string(in.type) + ", " +
                       std::to_string(in.dim_names.size()) + " dimensions (" +
                       join(in.dim_names, ", ") + "), boundary " + boundary_kind_name(in.boundary);
    if (in.boundary == BoundaryKind::Constant)
      text += "(" + format_float_literal(in.boundary_value) + ")";
    add_buffer(in.name, in.type.code, static_cast<int>(in.dim_names.size()), text);
  }
  for (const ExternalBuffer& b : f.buffers) {
    const bool is_output = b.name == options.output_name;
    std::string text = (is_output ? "output " : "func ") + b.name + ": " + to_string(b.type) +
                       ", " + std::to_string(b.dimensions) + " dimensions";
    if (!is_output) text += " (storage the caller allocates for this func)";
    add_buffer(b.name, b.type.code, b.dimensions, text);
  }
  enums << "  " << param_count << " = " << f.params.size() << ",\n";
  std::ostringstream default_macros;
  std::vector<std::string> default_values;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ParamDecl& p = f.params[i];
    STIPPLE_INTERNAL_CHECK(std::isfinite(p.default_value), "a param default is not finite");
    const std::string value = format_float_literal(p.default_value);
    const std::string c = constants.add("param_" + p.name, p.name);
    enums << "  " << c << " = " << i << ",\n";
    default_macros << "#define " << constants.add("param_" + p.name + "_default", p.name) << " "
                   << value << "\n";
    default_values.push_back(value);
    // i32 defaults read better as integers; the macro stays a double like the argument.
    const std::string shown =
        p.type.is_int() ? std::to_string(static_cast<int64_t>(p.default_value)) : value;
    param_rows.push_back({c, p.name + ": " + to_string(p.type) + ", default " + shown});
  }
  enums << "};\n";
  // C has no empty initialiser lists before C23: a placeholder element when there are none.
  if (default_values.empty()) default_values.push_back("0.0 /* no params */");

  auto aligned = [](const std::vector<Row>& rows) {
    size_t width = 0;
    for (const Row& r : rows) width = std::max(width, r.constant.size());
    std::string s;
    for (size_t i = 0; i < rows.size(); ++i) {
      s += " *     [" + std::to_string(i) + "] " + rows[i].constant +
           std::string(width - rows[i].constant.size() + 2, ' ') + rows[i].text + "\n";
    }
    return s;
  };

  std::ostringstream os;
  os << "/* " << name << ".h: a Stipple pipeline compiled ahead of time as the C function " << name
     << ".\n *\n"
     << " * Written by `stipple compile` for target " << target_text << " from\n"
     << " *   pipeline  "
     << (options.pipeline_file.empty() ? std::string("(not given)") : options.pipeline_file)
     << "\n *   schedule  "
     << (options.schedule_file.empty() ? std::string("the default schedule")
                                       : options.schedule_file)
     << "\n * Regenerate it with the object file rather than editing it.\n";
  if (options.target == "host") {
    os << " * The code uses every instruction set extension of the CPU it was compiled on; for\n"
          " * other machines compile with --target x86-64 (or x86-64-v3, aarch64, ...).\n";
  }
  if (gpu) {
    os << " *\n"
          " * Build the CUDA file with nvcc and link it with the CUDA runtime:\n"
          " *     nvcc -std=c++17 -O2 -arch="
       << cuda_arch(options.target) << " -fmad=false --expt-relaxed-constexpr -c " << name
       << ".cu\n"
          " *     cc -c app.c && nvcc app.o "
       << name
       << ".o -o app\n"
          " *\n"
          " * int32_t "
       << name
       << "(const stipple_buffer* buffers, const double* params): buffers in host memory;\n"
          " *   copies the inputs to the GPU, runs, copies the outputs back.\n"
          " * int32_t "
       << name
       << "_device(const stipple_buffer* buffers, const double* params): the same\n"
          " *   buffers with `host` pointing at device memory; runs and waits.\n"
          " * Both take\n";
  } else {
    os << " *\n"
          " * Link the object file, then libstipple_runtime.a from a Stipple build\n"
          " * (BUILD/compiler_core/runtime/: the thread pool behind parallel loops and the\n"
          " * allocation and median helpers generated code calls), the C++ standard library,\n"
          " * libm and pthreads:\n"
          " *     cc -c app.c && cc app.o "
       << name
       << ".o libstipple_runtime.a -lstdc++ -lm -lpthread\n"
          " *\n"
          " * int32_t "
       << name << "(const stipple_buffer* buffers, const double* params):\n";
  }
  os << " *   buffers: " << buffer_count << " descriptors, in this order:\n"
     << aligned(buffer_rows) << " *   params: " << param_count << " doubles, in this order ("
     << defaults << "\n"
     << " *   initialises an array with the defaults):\n"
     << aligned(param_rows)
     << " *   returns STIPPLE_OK (0), STIPPLE_ERROR_BUFFER_MISMATCH (1: a descriptor's type or\n"
        " *   dimension count is not the one above, or its dim[0].stride is not 1; nothing was\n"
        " *   computed) or STIPPLE_ERROR_OUT_OF_MEMORY (2: a heap allocation failed)";
  if (gpu) {
    os << ",\n"
          " *   STIPPLE_ERROR_DEVICE (3: a CUDA call failed: no GPU, a launch, a copy, a fault\n"
          " *   in a kernel) or STIPPLE_ERROR_BUFFER_TOO_LARGE (4: a buffer spans 2^31 elements\n"
          " *   or more; kernels index in 32 bits).\n";
  } else {
    os << ".\n";
  }
  os << " *\n"
        " * Descriptors: host points at the element at (dim[0].min, dim[1].min, ...); strides\n"
        " * count elements and dim[0].stride must be 1. Inputs are read at coordinates\n"
        " * [0, extent) whatever their mins; reads outside follow the input's boundary\n"
        " * condition. The output is computed over exactly its descriptor's box\n"
        " * [min, min + extent) in each dimension";
  if (!options.output_extents.empty()) {
    os << "; the pipeline's whole output has extents\n * (" << join(options.output_extents, ", ")
       << ") from 0";
  }
  os << ".\n"
        " * Params are converted to their types as Stipple's casts do (to i32: truncated toward\n";
  if (gpu) {
    os << " * zero and saturated). The functions keep no state between calls; each waits for\n"
          " * its kernels, and the outputs may not overlap the inputs or each other.\n"
          " */\n";
  } else {
    os << " * zero and saturated). The function keeps no state between calls; its parallel loops\n"
          " * run on a process-wide pool of threads (see stipple_set_num_threads).\n"
          " */\n";
  }

  const std::string guard = "STIPPLE_AOT_" + upper(name) + "_H";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stddef.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  write_common_block(os);
  os << enums.str() << "\n"
     << default_macros.str() << "#define " << defaults << " { " << join(default_values, ", ")
     << " }\n\n";
  if (gpu) {
    os << "#ifndef STIPPLE_AOT_CUDA_CODES\n#define STIPPLE_AOT_CUDA_CODES\n"
          "enum {\n  STIPPLE_ERROR_DEVICE = 3,\n  STIPPLE_ERROR_BUFFER_TOO_LARGE = 4,\n};\n"
          "#endif /* STIPPLE_AOT_CUDA_CODES */\n\n";
  }
  os << "int32_t " << name << "(const stipple_buffer* buffers, const double* params);\n";
  if (gpu) {
    os << "int32_t " << name << "_device(const stipple_buffer* buffers, const double* params);\n";
  }
  os << "\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n"
     << "#endif /* " << guard << " */\n";
  return os.str();
}

}  // namespace stipple::codegen
