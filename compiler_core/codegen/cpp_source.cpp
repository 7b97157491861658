// The C++ source back end (cpp_source.h): the lowered loop nest printed as C++17, rule for
// rule as the LLVM generator emits it (codegen_stmt.cpp, codegen_expr.cpp,
// codegen_reductions.cpp; the vector code of codegen_vector.cpp and
// codegen_input_rows.cpp computes each lane exactly as the scalar loop, so every loop is
// printed as the scalar loop).
//
// Shape of the output: a comment, the includes, the header's shared block (the descriptor
// struct and codes) and the function's declaration inside extern "C", the helpers it uses
// in an anonymous namespace (wrapping integer arithmetic, floor division and Euclidean modulo,
// saturating casts, min/max as selects, round half to even, Stipple's f32 exp, input
// boundary indices, the median's scratch and selection, a std::thread parallel-for), then
// the function: descriptor checks, params, one accessor lambda per buffer (`out(x, y, c)`
// is a reference to the element, inputs apply their boundary condition), and the loop nest.
//
// Every printed expression has exactly the C++ type of its IR type (u8 -> uint8_t, bool ->
// bool, ...), so the helpers' templates always deduce one type. Names come from the IR,
// sanitised to C identifiers and made unique among the names in scope (an IR name bound
// twice, or one that is a C++ keyword or a helper's name, gets a suffix). Expressions
// that need statements (reductions, Let, select arms or `&&`/`||` right sides that do) put
// them before the statement that uses them; select arms and right sides that need them
// become if statements, so only the chosen side runs, as in the LLVM code.
#include "compiler_core/codegen/cpp_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "compiler_core/codegen/constant_division.h"
#include "compiler_core/codegen/cuda_target.h"
#include "compiler_core/codegen/exit_guard.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/ir/scalar_ops.h"
#include "div_by_constant_text.h"  // generated: kDivByConstantText (CMakeLists.txt)
#include "exp_f32_body_text.h"     // generated: kExpF32BodyText
#include "median_key_text.h"       // generated: kMedianKeyText

namespace stipple::codegen {

namespace {

// Constant-size allocations up to this many bytes are arrays on the stack, as in the LLVM
// code (codegen_stmt.cpp).
constexpr int64_t kMaxStackAllocation = 64 * 1024;

bool is_float(ScalarType t) { return Type(t).is_float(); }

std::string c_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "uint8_t";
    case ScalarType::UInt16: return "uint16_t";
    case ScalarType::Int32: return "int32_t";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Int8: return "int8_t";
    case ScalarType::Int16: return "int16_t";
    case ScalarType::UInt32: return "uint32_t";
    case ScalarType::Float16: return "float";  // the value: its exact f32 widening
  }
  return "void";
}

// Bool elements take one byte in buffers; f16 elements are their IEEE binary16 bits,
// converted by the f16 helpers (not _Float16: clang 14 has it on x86 only with
// AVX512-FP16, and GCC 12 computes on it in excess precision by default).
std::string memory_type(ScalarType t) {
  if (t == ScalarType::Bool) return "uint8_t";
  if (t == ScalarType::Float16) return "uint16_t";
  return c_type(t);
}

// "[d]" (built by appending: GCC 12 warns, wrongly, of -Wrestrict for "[" + to_string(d)).
std::string subscript(int d) {
  std::string s = "[";
  s += std::to_string(d);
  s += ']';
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string type_constant(ScalarType t) { return "STIPPLE_TYPE_" + upper(to_string(Type(t))); }

std::string float_literal(ScalarType t, double v) {
  const std::string lim = "std::numeric_limits<" + c_type(t) + ">::";
  if (std::isnan(v)) return lim + "quiet_NaN()";
  if (std::isinf(v)) return (v < 0 ? "-" : "") + lim + "infinity()";
  const bool f32 = t == ScalarType::Float32 || t == ScalarType::Float16;
  return format_float_literal(v, f32) + (f32 ? "f" : "");
}

std::string int_literal(ScalarType t, int64_t v) {
  switch (t) {
    case ScalarType::Bool: return v ? "true" : "false";
    case ScalarType::UInt8: return "uint8_t{" + std::to_string(v) + "}";
    case ScalarType::UInt16: return "uint16_t{" + std::to_string(v) + "}";
    case ScalarType::UInt32: return "uint32_t{" + std::to_string(v) + "u}";
    case ScalarType::Int8: return "int8_t{" + std::to_string(v) + "}";
    case ScalarType::Int16: return "int16_t{" + std::to_string(v) + "}";
    case ScalarType::Int32:
      if (v == std::numeric_limits<int32_t>::min()) return "INT32_MIN";
      return std::to_string(v);
    case ScalarType::Float16:
    case ScalarType::Float32:
    case ScalarType::Float64: break;
  }
  return float_literal(t, static_cast<double>(v));
}

/// A constant of type t from a double, as CodeGen::constant_of makes it.
std::string literal(ScalarType t, double v) {
  if (is_float(t)) return float_literal(t, v);
  return int_literal(t, static_cast<int64_t>(v));
}

/// An f64 constant cast to `to` as emit_cast does it (fpto[su]i.sat for integers, `une 0`
/// for bool), for input boundary constants.
std::string cast_constant(double v, ScalarType to) {
  if (to == ScalarType::Float16) return float_literal(to, round_to_f16(f64_to_f32_round_odd(v)));
  if (is_float(to)) {
    return float_literal(
        to, to == ScalarType::Float32 ? static_cast<double>(static_cast<float>(v)) : v);
  }
  if (to == ScalarType::Bool) return v != 0.0 ? "true" : "false";  // NaN != 0
  if (std::isnan(v)) return int_literal(to, 0);
  const double lo = Type(to).min_value(), hi = Type(to).max_value();
  const double t = std::trunc(v);
  return int_literal(to, static_cast<int64_t>(t <= lo ? lo : t >= hi ? hi : t));
}

/// Whether `s` is wrapped in one pair of parentheses as a whole.
bool wrapped(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0 && i + 1 != s.size()) return false;
  }
  return true;
}

std::string unwrapped(const std::string& s) { return wrapped(s) ? s.substr(1, s.size() - 2) : s; }

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

// C++ keywords and alternative tokens, names the generated code itself uses (helpers,
// standard types, macros it relies on) and common macros of the C library: no IR name
// may become one of them.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = {
      // C++20 keywords and alternative tokens, and identifiers with special meaning.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return",
      "co_yield", "compl", "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
      "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "final", "float", "for", "friend", "goto", "if",
      "import", "inline", "int", "long", "module", "mutable", "namespace", "new", "noexcept", "not",
      "not_eq", "nullptr", "operator", "or", "or_eq", "override", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof",
      "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "main",
      // Names the file uses.
      "std", "buffers", "params", "status", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t",
      "uint32_t", "int64_t", "uint64_t", "size_t", "ptrdiff_t", "offsetof", "stipple_buffer",
      "stipple_buffer_dim", "stipple_set_num_threads", "stipple_cpp_num_threads", "wrap_add",
      "wrap_sub", "wrap_mul", "floor_div", "euclid_mod", "float_mod", "div_by_constant", "min_of",
      "max_of", "abs_int", "saturating_cast", "round_even", "f16_from_bits", "f16_bits",
      "f16_round", "f32_round_odd", "pow2i", "exp_f32", "exp_f32_body", "clamp_index",
      "mirror_index", "outside", "fits_kernel_index", "span_elements", "device_malloc",
      "domain_span", "median_key", "MedianValues", "parallel_for", "parallel_depth", "thread_count",
      "i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7",
      // Macros and names of the C library an identifier must not hide.
      "NULL", "EOF", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "errno", "assert", "unix", "linux",
      "i386", "math_errhandling", "FLT_EVAL_METHOD"};
  return names;
}

/// A C identifier from an IR name: other characters become '_', runs of '_' one, no
/// leading or trailing '_' (a leading '_' and "__" are reserved in C++), a leading digit
/// gets "v". Names that look like macros (upper case with '_') get a "_v" suffix.
std::string sanitize(const std::string& ir) {
  std::string s;
  for (char c : ir) {
    const char d = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (d == '_' && (s.empty() || s.back() == '_')) continue;
    s += d;
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.empty()) return "v";
  if (!is_identifier_start(s[0])) s = "v" + s;
  const bool macro_like =
      s.find('_') != std::string::npos && std::none_of(s.begin(), s.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c));
      });
  if (macro_like) s += "_v";
  return s;
}

/// The two dialects printed: portable C++17 (cpp_source) and CUDA C++ (cuda_source), whose
/// GPU block bands become kernels and whose other code runs on the host.
enum class Dialect { Cpp, Cuda };

class CppGen {
 public:
  CppGen(const LoweredFunction& f, const AotOptions& options, Dialect dialect = Dialect::Cpp)
      : f_(f), options_(options), dialect_(dialect) {}
  std::string generate();
  std::string generate_cuda();

 private:
  /// A printed expression; `simple` when it is a name or a literal (cheap to repeat).
  struct Value {
    std::string text;
    bool simple = false;
  };
  struct Binding {
    std::string ir, c;
    ScalarType type;
  };
  /// A buffer in scope: an external one (a descriptor) or an Allocate.
  struct BufferInfo {
    std::string ir;
    ScalarType type = ScalarType::Int32;
    int dims = 0;
    bool is_input = false;
    const InputDecl* decl = nullptr;
    std::string accessor;  // the lambda: a reference to an element (inputs: the value)
    std::string extent;    // the int64_t extent array
    /// CUDA: the stipple_buffer describing a device allocation made on the host (kernels
    /// get it by value), or the index of an external descriptor; empty / -1 otherwise.
    std::string descriptor;
    int external = -1;
  };
  /// The names a descriptor's buffer gets in the function's opening part.
  struct External {
    std::string host, min, extent, stride, accessor;
    std::vector<std::string> min_vars, extent_vars, stride_vars;  // the i32 IR variables
  };

  // ---- output
  void line(const std::string& text) {
    out_->append(static_cast<size_t>(2 * indent_), ' ');
    *out_ += text;
    *out_ += '\n';
  }
  /// Runs `body` with output going to a string of its own, `extra` levels deeper.
  std::string captured(int extra, const std::function<void()>& body) {
    std::string text;
    std::string* saved = out_;
    out_ = &text;
    indent_ += extra;
    body();
    indent_ -= extra;
    out_ = saved;
    return text;
  }

  // ---- names
  /// A fresh identifier for `base` (an IR name), declared in the innermost C block.
  std::string fresh(const std::string& base) {
    const std::string s = sanitize(base);
    std::string name = s;
    for (int k = 2; live_.count(name) || reserved_names().count(name) || name == options_.symbol;
         ++k) {
      name = s + "_" + std::to_string(k);
    }
    live_.insert(name);
    used_.erase(name);  // a new declaration: not used yet
    blocks_.back().push_back(name);
    return name;
  }
  void open_block() { blocks_.emplace_back(); }
  void close_block() {
    for (const std::string& n : blocks_.back()) live_.erase(n);
    blocks_.pop_back();
  }
  /// Gives back a name fresh() returned in the innermost block that ended up unused.
  void release(const std::string& name) {
    auto& names = blocks_.back();
    names.erase(std::find(names.begin(), names.end(), name));
    live_.erase(name);
  }
  std::string use(const std::string& c) {
    used_.insert(c);
    return c;
  }

  // ---- scope of IR names
  void push_var(const std::string& ir, const std::string& c, ScalarType t) {
    vars_.push_back({ir, c, t});
  }
  void pop_var() { vars_.pop_back(); }
  const Binding* find_var(const std::string& ir) const {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
      if (it->ir == ir) return &*it;
    }
    return nullptr;
  }
  const BufferInfo& find_buffer(const std::string& name) const {
    for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) {
      if (it->ir == name) return *it;
    }
    throw_internal_error(__FILE__, __LINE__, "cpp_source: no buffer named '" + name + "' in scope");
  }
  /// `v` as a name: itself when simple, else a new const of type `t` named after `base`.
  Value named(const Value& v, ScalarType t, const std::string& base) {
    if (v.simple) return v;
    const std::string name = fresh(base);
    line("const " + c_type(t) + " " + name + " = " + unwrapped(v.text) + ";");
    return {name, true};
  }
  /// `const T name = v;` for a Let whose body has been generated; when the body does not
  /// use the name, just `v` as a discarded value (it may be a reduction's accumulator,
  /// which would otherwise be set but unused), or nothing for a literal.
  void declare(const std::string& name, ScalarType t, const Value& v) {
    if (used_.count(name)) {
      line("const " + c_type(t) + " " + name + " = " + unwrapped(v.text) + ";");
    } else if (!v.simple || is_identifier_start(v.text[0])) {
      line("static_cast<void>(" + unwrapped(v.text) + ");  // " + name + " is not used");
    }
  }

  // ---- the function
  void declare_externals();
  std::string opening_part();
  std::string file_comment() const;
  std::string provenance() const;
  std::string buffer_list() const;
  /// How a loop nest indexes a buffer: in 64 bits on a CPU; in 32 bits in a GPU kernel,
  /// whose host code refuses buffers that do not fit (fits_kernel_index).
  enum class IndexWidth { Bits64, Bits32 };
  /// The declarations a loop nest needs of one buffer, read from the descriptor `b`: the
  /// min, extent and stride arrays and i32 variables that `used` names, and the accessor
  /// when `with_accessor` and used.
  void buffer_declarations(std::ostream& os, const BufferInfo& buf, const External& ext,
                           const std::string& b, const std::set<std::string>& used,
                           bool with_accessor, const std::string& ind,
                           IndexWidth width = IndexWidth::Bits64) const;

  // ---- CUDA
  /// A band of GPU block loops (with the thread loops inside) as a kernel, and its launch.
  void emit_kernel(const For* op);
  void emit_device_allocate(const Allocate* op);
  /// Inside a kernel: a GPU block loop binds its variable to blockIdx, a thread loop to
  /// threadIdx with a guard for the iterations past its extent.
  void emit_gpu_loop(const For* op);
  /// A UserError for a buffer access outside every kernel (the host cannot touch device
  /// memory): which func needs a GPU schedule.
  void require_kernel(const std::string& what) const;
  std::string cuda_file_comment() const;
  std::string cuda_host_wrapper() const;

  // ---- statements
  void emit(const Stmt& s);
  void emit_for(const For* op);
  void emit_parallel_for(const For* op, const Value& min, const Value& extent);
  void emit_allocate(const Allocate* op);
  void emit_provide(const Provide* op);
  /// The body of a C block: `body()` in a name scope of its own, one level deeper.
  void block(const std::function<void()>& body) {
    ++indent_;
    open_block();
    body();
    close_block();
    --indent_;
  }

  // ---- expressions
  Value expr(const Expr& e);
  Value emit_cast(ScalarType from, ScalarType to, const Value& v);
  Value emit_binary(IRNodeType op, ScalarType t, const Value& a, const Value& b);
  Value emit_compare(IRNodeType op, const Value& a, const Value& b);
  Value emit_select(const Select* op);
  Value emit_logical(bool is_and, const Expr& a, const Expr& b);
  Value emit_call(const Call* op);
  Value emit_intrinsic(const Call* op);
  Value emit_reduce(const Reduce* op);
  /// Loops over a reduction's domain, first variable innermost, with `per_point()` inside;
  /// the bounds are evaluated first, in order (named when not simple). `bounds` receives
  /// them (lo, hi per variable) before the loops are printed, for the median's count.
  void reduction_loops(const Reduce* op,
                       const std::function<void(const std::vector<Value>&)>& before,
                       const std::function<void()>& per_point);

  const LoweredFunction& f_;
  const AotOptions& options_;
  const Dialect dialect_;
  // CUDA: the kernels printed so far, whether code is being printed inside one, which GPU
  // thread loop maps to which thread dimension, and the thread-dimension sizes.
  std::string kernels_;
  int kernel_count_ = 0;
  bool error_word_ = false;  // some kernel reports an error code (stipple_error)
  bool in_kernel_ = false;
  // The guard emit_for found to be its loop's exit, printed as a break (exit_guard.h).
  const IfThenElse* exit_guard_ = nullptr;
  std::map<std::string, int> thread_dims_;            // IR loop name -> 0 (x), 1 (y), 2 (z)
  std::map<std::string, External> device_externals_;  // device Allocates, by accessor
  std::string* out_ = nullptr;
  int indent_ = 0;
  std::set<std::string> live_;                    // names in scope
  std::vector<std::vector<std::string>> blocks_;  // names declared per C block
  std::set<std::string> used_;                    // names referenced
  bool status_used_ = false;                      // the current function sets `status`
  std::vector<Binding> vars_;                     // innermost last
  std::vector<BufferInfo> buffers_;               // innermost last
  std::vector<External> externals_;               // per descriptor
  std::map<std::string, std::pair<std::string, ScalarType>> params_;  // IR -> C, type
};

void CppGen::declare_externals() {
  // Params first, then every buffer's names, so that they keep their IR names.
  for (const ParamDecl& p : f_.params) params_[p.name] = {fresh(p.name), p.type.code};
  const size_t total = f_.inputs.size() + f_.buffers.size();
  for (size_t k = 0; k < total; ++k) {
    BufferInfo buf;
    if (k < f_.inputs.size()) {
      const InputDecl& in = f_.inputs[k];
      buf.ir = in.name;
      buf.type = in.type.code;
      buf.dims = static_cast<int>(in.dim_names.size());
      buf.is_input = true;
      buf.decl = &in;
    } else {
      const ExternalBuffer& eb = f_.buffers[k - f_.inputs.size()];
      buf.ir = eb.name;
      buf.type = eb.type.code;
      buf.dims = eb.dimensions;
    }
    STIPPLE_INTERNAL_CHECK(buf.dims >= 0 && buf.dims <= kMaxBufferDims,
                           "cpp_source: buffer '" + buf.ir + "' has too many dimensions");
    External ext;
    ext.accessor = fresh(buf.ir);
    ext.host = fresh(buf.ir + "_host");
    ext.min = fresh(buf.ir + "_min");
    ext.extent = fresh(buf.ir + "_extent");
    ext.stride = fresh(buf.ir + "_stride");
    for (int d = 0; d < buf.dims; ++d) {
      // NAME.min.D, NAME.extent.D, NAME.stride.D: what lowering reads of a buffer's shape.
      std::string suffix = ".";
      suffix += std::to_string(d);
      const std::pair<const char*, std::vector<std::string>*> fields[] = {
          {"min", &ext.min_vars}, {"extent", &ext.extent_vars}, {"stride", &ext.stride_vars}};
      for (const auto& [field, list] : fields) {
        const std::string ir = buf.ir + "." + field + suffix;
        list->push_back(fresh(ir));
        push_var(ir, list->back(), ScalarType::Int32);
      }
    }
    buf.accessor = ext.accessor;
    buf.extent = ext.extent;
    buf.external = static_cast<int>(k);
    buffers_.push_back(std::move(buf));
    externals_.push_back(std::move(ext));
  }
}

// Where the file came from: the comment lines after its first, in both dialects.
std::string CppGen::provenance() const {
  return "// from\n//   pipeline  " +
         (options_.pipeline_file.empty() ? std::string("(not given)") : options_.pipeline_file) +
         "\n//   schedule  " +
         (options_.schedule_file.empty() ? std::string("the default schedule")
                                         : options_.schedule_file) +
         "\n// Regenerate it rather than editing it.\n//\n";
}

std::string CppGen::file_comment() const {
  const std::string& name = options_.symbol;
  std::ostringstream os;
  os << "// " << name << ".cpp: a Stipple pipeline as one portable C++17 file defining the C "
     << "function\n// " << name << ". Generated by `stipple compile --emit cpp` (Stipple's C++ "
     << "source back end)\n"
     << provenance()
     << "// Compile it with any C++17 compiler and link it into your program; it needs only the\n"
     << "// C++ standard library (parallel loops run on std::threads it starts itself):\n"
     << "//     c++ -O2 -std=c++17 -pthread -c " << name << ".cpp\n"
     << "// and declare the function with the header `stipple compile --emit header` writes\n"
     << "// (" << name << ".h), which documents the buffers, the params and the return codes.\n"
     << "// The results are those of `--emit obj` bit for bit as long as the compiler neither\n"
     << "// fuses multiply-adds nor reassociates float math: no -ffast-math, and with GCC in a\n"
     << "// GNU dialect (-std=gnu++17) on a target with FMA add -ffp-contract=off (Clang: the\n"
     << "// pragma below turns contraction off). Assumes 32-bit int.\n//\n"
     << buffer_list();
  return os.str();
}

// The buffers and params the function takes, one comment line each.
std::string CppGen::buffer_list() const {
  std::ostringstream os;
  int index = 0;
  for (const InputDecl& in : f_.inputs) {
    std::string dims;
    for (size_t d = 0; d < in.dim_names.size(); ++d) dims += (d ? ", " : "") + in.dim_names[d];
    os << "//   buffers[" << index++ << "]  input " << in.name << ": " << to_string(in.type) << " ("
       << dims << "), boundary " << boundary_kind_name(in.boundary);
    if (in.boundary == BoundaryKind::Constant) {
      os << "(" << format_float_literal(in.boundary_value) << ")";
    }
    os << "\n";
  }
  for (const ExternalBuffer& b : f_.buffers) {
    os << "//   buffers[" << index++ << "]  "
       << (b.name == options_.output_name ? "output " : "func ") << b.name << ": "
       << to_string(b.type) << ", " << b.dimensions << " dimensions\n";
  }
  for (size_t k = 0; k < f_.params.size(); ++k) {
    os << "//   params[" << k << "]   " << f_.params[k].name << ": " << to_string(f_.params[k].type)
       << ", default "
       << (f_.params[k].type.is_int()
               ? std::to_string(static_cast<int64_t>(f_.params[k].default_value))
               : format_float_literal(f_.params[k].default_value))
       << "\n";
  }
  return os.str();
}

// The includes every file starts with, and no contraction of a * b + c into an FMA (GCC
// in ISO mode, the documented command, does not contract; in GNU mode only
// -ffp-contract=off stops it, which the file's comment says).
constexpr const char* kIncludes = R"(
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(_MSC_VER)
#pragma fp_contract(off)
#endif
)";

// The helpers, each printed only when the function (or a helper printed) uses one of its
// names, in this order, in an anonymous namespace after the header's block.
struct Helper {
  std::vector<std::string> names;  // what it defines
  std::string text;
  // The CUDA dialect's text where it differs: kernels index in 32 bits
  // (fits_kernel_index).
  std::string cuda_text = {};
};

// A helper's text from the runtime's own source (an .inc file of
// compiler_core/runtime/, embedded by the build): without the file's opening comment
// (the lines above its first blank line), its macros spelled as this file needs them:
// plain `inline`, and the rounding of round_even (right whatever the rounding mode).
std::string runtime_text(const std::string& embedded) {
  std::string body = embedded.substr(embedded.find("\n\n") + 2);
  for (const auto& [marker, spelling] :
       {std::pair<std::string, std::string>{"STIPPLE_RUNTIME_INLINE", "inline"},
        {"STIPPLE_RUNTIME_ROUND_EVEN", "round_even"}}) {
    for (size_t at = body.find(marker); at != std::string::npos; at = body.find(marker, at)) {
      body.replace(at, marker.size(), spelling);
    }
  }
  return body;
}

std::string exp_f32_text() {
  return "\n// Stipple's f32 exp (compiler_core/runtime/exp_f32_body.inc, the runtime's text).\n" +
         runtime_text(kExpF32BodyText) +
         "inline float exp_f32(float x) { return exp_f32_body(x); }\n";
}

const std::vector<Helper>& helpers() {
  static const std::vector<Helper> list = {
      {{"wrap_add", "wrap_sub", "wrap_mul"}, R"(
// Integer arithmetic wraps in the operands' width (u8, u16, u32 unsigned; i8, i16, i32 two's
// complement).
template <typename T>
inline T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
template <typename T>
inline T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
template <typename T>
inline T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
)"},
      {{"floor_div", "euclid_mod"}, R"(
// Integer division rounds towards negative infinity and the modulo is Euclidean (never
// negative); x / 0 == x % 0 == 0 and INT32_MIN / -1 == INT32_MIN, so nothing traps. u8 and
// u16 are unsigned.
template <typename T>
inline T floor_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed<T>::value) {
    if (b == -1) return wrap_sub(T(0), a);
    const T q = a / b, r = a % b;
    return r != 0 && (r ^ b) < 0 ? q - 1 : q;
  } else {
    return static_cast<T>(a / b);
  }
}
template <typename T>
inline T euclid_mod(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == 0 || b == -1) return 0;
    const T r = a % b;
    return r < 0 ? wrap_add(r, b < 0 ? wrap_sub(T(0), b) : b) : r;
  } else {
    return b == 0 ? 0 : static_cast<T>(a % b);
  }
}
)"},
      {{"float_mod"}, R"(
// Float modulo: a - b * floor(a / b), each step rounded in the operand type.
template <typename F>
inline F float_mod(F a, F b) {
  return a - b * std::floor(a / b);
}
)"},
      {{"div_by_constant"},
       "\n// Division by an odd integer constant (compiler_core/runtime/div_by_constant.inc, the\n"
       "// runtime's text).\n" +
           runtime_text(kDivByConstantText)},
      {{"min_of", "max_of"}, R"(
// min and max are selects, as in Halide: min(a, NaN) is NaN, min(NaN, b) is b.
template <typename T>
inline T min_of(T a, T b) {
  return a < b ? a : b;
}
template <typename T>
inline T max_of(T a, T b) {
  return a > b ? a : b;
}
)"},
      {{"abs_int"}, R"(
// abs of a signed integer: the most negative value (INT32_MIN, -128, ...) wraps to itself.
template <typename T>
inline T abs_int(T x) {
  return x < 0 ? wrap_sub(T(0), x) : x;
}
)"},
      {{"saturating_cast"}, R"(
// Float to integer: truncates towards zero and saturates to T's range; NaN gives 0.
template <typename T, typename F>
inline T saturating_cast(F x) {
  const double d = static_cast<double>(x);
  if (d != d) return 0;
  if (d <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}
)"},
      {{"f16_from_bits", "f16_bits", "f16_round"}, R"(
// f16 is a storage type: a value is held as its exact f32 widening, an element as its
// IEEE binary16 bits. To f16: round to nearest even (magnitudes from 65520 up become
// infinity; below 2^-14 subnormal, the FPU rounding at 2^-24 after adding 0.5f), every
// NaN the quiet NaN 0x7e00 with its sign; the steps of compiler_core/ir/scalar_ops.h.
inline float f16_from_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  uint32_t bits;
  if (em < 0x0400u) {
    const float t = static_cast<float>(em) * 0x1p-24f;
    memcpy(&bits, &t, sizeof bits);
  } else if (em >= 0x7c00u) {
    bits = (em << 13) | 0x7f800000u;
  } else {
    bits = (em << 13) + 0x38000000u;
  }
  bits |= sign;
  float r;
  memcpy(&r, &bits, sizeof r);
  return r;
}
inline uint16_t f16_bits(float x) {
  uint32_t f;
  memcpy(&f, &x, sizeof f);
  const uint32_t sign = f & 0x80000000u;
  f ^= sign;
  uint32_t o;
  if (f >= 0x47800000u) {
    o = f > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (f < 0x38800000u) {
    float t;
    memcpy(&t, &f, sizeof t);
    t += 0.5f;
    uint32_t tb;
    memcpy(&tb, &t, sizeof tb);
    o = tb - 0x3f000000u;
  } else {
    const uint32_t odd = (f >> 13) & 1u;
    o = (f + 0xc8000fffu + odd) >> 13;
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}
inline float f16_round(float x) { return f16_from_bits(f16_bits(x)); }
)"},
      {{"f32_round_odd"}, R"(
// An f64 to f32 rounded to odd, so that rounding that to f16 rounds the f64 once.
inline float f32_round_odd(double d) {
  float t = static_cast<float>(d);
  if (static_cast<double>(t) == d || d != d) return t;
  uint32_t b;
  memcpy(&b, &t, sizeof b);
  if (std::fabs(static_cast<double>(t)) > std::fabs(d)) b -= 1;
  b |= 1u;
  memcpy(&t, &b, sizeof t);
  return t;
}
)"},
      {{"round_even"}, R"(
// round: half to even, whatever the rounding mode.
template <typename F>
inline F round_even(F x) {
  F r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == F(0.5)) r = F(2) * std::round(x / F(2));
  return r;
}
)"},
      {{"exp_f32", "pow2i", "exp_f32_body"}, exp_f32_text()},
      {{"clamp_index"},
       R"(
// Input coordinates outside [0, extent) read the nearest edge pixel (clamp), ...
inline int64_t clamp_index(int32_t c, int64_t extent) {
  const int64_t i = c;
  return i < 0 ? 0 : i >= extent ? extent - 1 : i;
}
)",
       R"(
// Input coordinates outside [0, extent) read the nearest edge pixel (clamp), ...
inline int32_t clamp_index(int32_t c, int32_t extent) {
  return c < 0 ? 0 : c >= extent ? extent - 1 : c;
}
)"},
      {{"mirror_index"},
       R"(
// ... or the reflection about the edge pixel without repeating it (period 2 * (extent - 1)).
inline int64_t mirror_index(int32_t c, int64_t extent) {
  const int64_t i = c;
  if (static_cast<uint64_t>(i) < static_cast<uint64_t>(extent)) return i;
  if (extent <= 1) return 0;
  const int64_t period = (extent - 1) * 2;
  int64_t m = i % period;
  if (m < 0) m += period;
  return m >= extent ? period - m : m;
}
)",
       R"(
// ... or the reflection about the edge pixel without repeating it (period 2 * (extent - 1)).
inline int32_t mirror_index(int32_t c, int32_t extent) {
  if (static_cast<uint32_t>(c) < static_cast<uint32_t>(extent)) return c;
  if (extent <= 1) return 0;
  const int64_t period = (static_cast<int64_t>(extent) - 1) * 2;
  int64_t m = c % period;
  if (m < 0) m += period;
  return static_cast<int32_t>(m >= extent ? period - m : m);
}
)"},
      {{"outside"},
       R"(
// Whether a coordinate is outside the image (an input with a constant boundary).
inline bool outside(int32_t c, int64_t extent) {
  return static_cast<uint64_t>(static_cast<int64_t>(c)) >= static_cast<uint64_t>(extent);
}
)",
       R"(
// Whether a coordinate is outside the image (an input with a constant boundary).
inline bool outside(int32_t c, int32_t extent) {
  return static_cast<uint32_t>(c) >= static_cast<uint32_t>(extent);
}
)"},
      {{"domain_span", "MedianValues", "median_key"}, R"(
// median: the values as doubles (exact for every type), 64 on the stack and more on the
// heap; the lower median (element (n - 1) / 2) in IEEE 754 totalOrder, -NaN < -inf < ...
// < -0 < +0 < ... < +inf < +NaN, which makes the choice unique.
inline int64_t domain_span(int32_t lo, int32_t hi) {
  const int64_t n = static_cast<int64_t>(hi) - lo + 1;
  return n > 0 ? n : 0;
}
)" + runtime_text(kMedianKeyText) + R"(class MedianValues {
 public:
  MedianValues() = default;
  MedianValues(const MedianValues&) = delete;
  MedianValues& operator=(const MedianValues&) = delete;
  ~MedianValues() {
    if (values_ != stack_) std::free(values_);
  }
  // Room for `points` values; false when the heap has none (the values past the first
  // 64 are then dropped, and the function returns STIPPLE_ERROR_OUT_OF_MEMORY).
  bool reserve(int64_t points) {
    if (points <= capacity_) return true;
    void* p = std::malloc(static_cast<size_t>(points) * sizeof(double));
    if (p == nullptr) return false;
    values_ = static_cast<double*>(p);
    capacity_ = points;
    return true;
  }
  void add(double v) {
    if (count_ < capacity_) values_[count_] = v;
    ++count_;
  }
  bool empty() const { return count_ == 0; }
  double median() {
    const int64_t n = count_ < capacity_ ? count_ : capacity_;
    double* nth = values_ + (n - 1) / 2;
    std::nth_element(values_, nth, values_ + n,
                     [](double a, double b) { return median_key(a) < median_key(b); });
    return *nth;
  }

 private:
  double stack_[64];
  double* values_ = stack_;
  int64_t capacity_ = 64, count_ = 0;
};
)"},
      {{"parallel_for", "parallel_depth", "thread_count"}, R"(
// Parallel loops: body(i) for i in [min, min + extent), iterations handed out one at a
// time to std::threads started for the loop (one per hardware thread, or as many as
// stipple_set_num_threads set, the caller included). A parallel loop inside another runs
// serially on its thread. A body returning a nonzero int32_t error code stops the
// iterations not yet started; the first such code is returned.
[[maybe_unused]] thread_local int parallel_depth = 0;
[[maybe_unused]] inline int32_t thread_count();  // below

template <typename Body>
int32_t parallel_for(int32_t min, int32_t extent, const Body& body) {
  auto run = [&](int64_t k) -> int32_t {
    const int32_t i = static_cast<int32_t>(static_cast<int64_t>(min) + k);
    if constexpr (std::is_void<decltype(body(i))>::value) {
      body(i);
      return 0;
    } else {
      return body(i);
    }
  };
  if (extent <= 0) return 0;
  const int64_t n = extent;
  const int64_t threads = std::min<int64_t>(thread_count(), n);
  if (parallel_depth > 0 || threads <= 1) {
    for (int64_t k = 0; k < n; ++k) {
      if (const int32_t rc = run(k)) return rc;
    }
    return 0;
  }
  std::atomic<int64_t> next{0};
  std::atomic<int32_t> error{0};
  auto worker = [&] {
    ++parallel_depth;
    for (int64_t k = next++; k < n && error.load() == 0; k = next++) {
      if (const int32_t rc = run(k)) {
        int32_t none = 0;
        error.compare_exchange_strong(none, rc);
      }
    }
    --parallel_depth;
  };
  std::vector<std::thread> pool;
  try {
    for (int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  } catch (...) {
    // No more threads: the ones started and the caller do the work.
  }
  worker();
  for (std::thread& t : pool) t.join();
  return error.load();
}
)"},
  };
  return list;
}

// What the file assumes of the compiler, first in the anonymous namespace.
constexpr const char* kChecks = R"(
static_assert(std::is_same<int32_t, int>::value, "Stipple's i32 literals are ints");
static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "IEEE 754 floats");
)";

// After the helpers (outside the anonymous namespace): stipple_set_num_threads.
constexpr const char* kThreadSetting = R"(
// stipple_set_num_threads (declared by the header): the threads parallel loops use in all,
// the caller included; 0 on success, 1 if threads < 1 or inside a parallel loop. Defined
// weak, so that several generated files (or libstipple_runtime.a, whose definition wins)
// link together and share the setting. Without weak symbols (compilers other than GCC and
// Clang) it is not defined, and parallel loops use one thread per hardware thread.
#if defined(__GNUC__)
extern "C" {
__attribute__((weak)) int32_t stipple_cpp_num_threads = 0;
__attribute__((weak)) int32_t stipple_set_num_threads(int32_t threads) {
  if (threads < 1 || parallel_depth > 0) return 1;
  stipple_cpp_num_threads = threads;
  return 0;
}
}  // extern "C"
#endif

namespace {
inline int32_t thread_count() {
#if defined(__GNUC__)
  if (stipple_cpp_num_threads > 0) return stipple_cpp_num_threads;
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int32_t>(n) : 1;
}
}  // namespace
)";

/// Whether `text` calls or instantiates `name` (followed by '(' or '<', not part of a
/// longer identifier), or declares a variable of the class `name` (capitalised).
bool mentions_name(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    const bool start_ok =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    const bool is_class = std::isupper(static_cast<unsigned char>(name[0]));
    if (start_ok && end < text.size() &&
        (text[end] == '(' || text[end] == '<' || (is_class && text[end] == ' '))) {
      return true;
    }
  }
  return false;
}

/// A helper's text for CUDA: every function callable on the host and the device, and the
/// median's scratch with the device heap and an insertion sort (no std::nth_element there).
std::string cuda_helper_text(const std::string& text) {
  if (text.find("class MedianValues") != std::string::npos) {
    std::string t = cuda_helper_text(text.substr(0, text.find("class MedianValues")));
    t += R"(class MedianValues {
 public:
  __host__ __device__ MedianValues() {}
  MedianValues(const MedianValues&) = delete;
  MedianValues& operator=(const MedianValues&) = delete;
  __host__ __device__ ~MedianValues() {
    if (values_ != stack_) free(values_);
  }
  __host__ __device__ bool reserve(int64_t points) {
    if (points <= capacity_) return true;
    void* p = malloc(static_cast<size_t>(points) * sizeof(double));
    if (p == nullptr) return false;
    values_ = static_cast<double*>(p);
    capacity_ = points;
    return true;
  }
  __host__ __device__ void add(double v) {
    if (count_ < capacity_) values_[count_] = v;
    ++count_;
  }
  __host__ __device__ bool empty() const { return count_ == 0; }
  // Sorted by key (windows are small), then element (n - 1) / 2: the value nth_element
  // selects, since values with equal keys are the same bits.
  __host__ __device__ double median() {
    const int64_t n = count_ < capacity_ ? count_ : capacity_;
    for (int64_t i = 1; i < n; ++i) {
      const double v = values_[i];
      const int64_t key = median_key(v);
      int64_t j = i;
      for (; j > 0 && median_key(values_[j - 1]) > key; --j) values_[j] = values_[j - 1];
      values_[j] = v;
    }
    return values_[(n - 1) / 2];
  }

 private:
  double stack_[64];
  double* values_ = stack_;
  int64_t capacity_ = 64, count_ = 0;
};
)";
    return t;
  }
  std::string out;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("inline ", 0) == 0) l = "__host__ __device__ " + l;
    out += l + "\n";
  }
  return out;
}

/// The helpers `code` needs (and those they need), in the list's order.
std::string needed_helpers(const std::string& code, Dialect dialect = Dialect::Cpp) {
  const std::vector<Helper>& list = helpers();
  std::vector<bool> take(list.size(), false);
  // parallel_for: stipple_set_num_threads is always defined in C++; CUDA has no such loops.
  take.back() = dialect == Dialect::Cpp;
  std::string scanned = code;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < list.size(); ++i) {
      if (take[i]) continue;
      for (const std::string& n : list[i].names) {
        if (mentions_name(scanned, n)) {
          take[i] = changed = true;
          scanned += list[i].text;
          break;
        }
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!take[i]) continue;
    const Helper& h = list[i];
    out += dialect == Dialect::Cpp ? h.text
                                   : cuda_helper_text(h.cuda_text.empty() ? h.text : h.cuda_text);
  }
  return out;
}

std::string CppGen::generate() {
  open_block();  // the function's own names
  declare_externals();
  std::string body;
  out_ = &body;
  indent_ = 1;
  emit(f_.body);
  std::string function = opening_part();
  function += body;
  function += status_used_ ? "  return status;\n}\n" : "  return STIPPLE_OK;\n}\n";
  std::string text = file_comment();
  text += kIncludes;
  text += "\nextern \"C\" {\n\n";
  text += c_header_common_block();
  text += "int32_t " + options_.symbol +
          "(const stipple_buffer* buffers, const double* params);\n\n}  // extern \"C\"\n\n";
  text += "namespace {\n";
  text += kChecks;
  text += needed_helpers(function);
  text += "\n}  // namespace\n";
  text += kThreadSetting;
  text += "\n";
  text += function;
  close_block();
  return text;
}

// The includes of a CUDA file (no <thread>: its parallelism is the kernels').
constexpr const char* kCudaIncludes = R"(
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

// Every launch: kernel<<<grid, block>>>. Stipple's tests run the kernels on a CPU with a
// stand-in for the CUDA runtime (tests/gpu/cuda_emulation) that defines its own.
#ifndef STIPPLE_CUDA_LAUNCH
#define STIPPLE_CUDA_LAUNCH(kernel, grid, block) kernel<<<grid, block>>>
#endif

// A loop the schedule unrolls: nvcc unrolls it; a C++ compiler (the tests' stand-in) need not.
#ifdef __CUDACC__
#define STIPPLE_UNROLL _Pragma("unroll")
#else
#define STIPPLE_UNROLL
#endif
)";

// The host side's allocations on the GPU.
constexpr const char* kDeviceMalloc = R"(
// GPU memory: STIPPLE_ERROR_OUT_OF_MEMORY when the GPU has no room for it,
// STIPPLE_ERROR_DEVICE when there is no usable GPU (or another CUDA error).
[[maybe_unused]] int32_t device_malloc(void** p, int64_t bytes) {
  const cudaError_t e = cudaMalloc(p, static_cast<size_t>(bytes));
  if (e == cudaSuccess) return STIPPLE_OK;
  *p = nullptr;
  if (e == cudaErrorMemoryAllocation) return STIPPLE_ERROR_OUT_OF_MEMORY;
  return STIPPLE_ERROR_DEVICE;
}

// The elements a buffer spans, from its least to its greatest indexed one (what a copy of
// it moves): 0 when it has none, INT64_MAX when the count overflows.
[[maybe_unused]] int64_t span_elements(const stipple_buffer& b) {
  int64_t span = 1;
  for (int d = 0; d < b.dimensions; ++d) {
    const int64_t extent = b.dim[d].extent, stride = b.dim[d].stride;
    if (extent <= 0) return 0;
    const int64_t step = stride < 0 ? -stride : stride;
    if (step != 0 && extent - 1 > (INT64_MAX - span) / step) return INT64_MAX;
    span += (extent - 1) * step;
  }
  return span;
}

// Kernels index in 32 bits, as Halide's do unless a target has large_buffers: 64-bit index
// arithmetic costs a GPU several instructions a load, and made blur3x3 instruction-bound.
// So each buffer a kernel reads or writes must span at most 2^31 elements (its indices
// from 0 to 2^31 - 1); STIPPLE_ERROR_BUFFER_TOO_LARGE otherwise.
[[maybe_unused]] bool fits_kernel_index(const stipple_buffer& b) {
  return span_elements(b) - 1 <= INT32_MAX;
}
)";

std::string CppGen::cuda_file_comment() const {
  const std::string& name = options_.symbol;
  const std::string arch = is_cuda_target(options_.target) ? cuda_arch(options_.target) : "sm_90";
  std::ostringstream os;
  os << "// " << name << ".cu: a Stipple pipeline as one CUDA C++ file: its GPU kernels and the "
     << "host code that\n// launches them. Generated by `stipple compile --target cuda-" << arch
     << " --emit cu` (Stipple's CUDA back end)\n"
     << provenance()
     << "// Compile it with nvcc (CUDA 11.8 or later) and link it into your program:\n"
     << "//     nvcc -std=c++17 -O2 -arch=" << arch << " -fmad=false --expt-relaxed-constexpr -c "
     << name << ".cu\n"
     << "// (Debian 12's nvcc, CUDA 11.8, takes no GCC newer than 11: add -ccbin clang++-14.)\n"
     << "// -fmad=false keeps a * b + c two roundings, as the evaluator computes it (no\n"
     << "// --use_fast_math either); --expt-relaxed-constexpr lets device code use\n"
     << "// std::numeric_limits and std::max. It defines\n"
     << "//   int32_t " << name << "(const stipple_buffer* buffers, const double* params);\n"
     << "//     buffers in host memory: copies the inputs to the GPU, runs, copies the\n"
     << "//     outputs back;\n"
     << "//   int32_t " << name << "_device(const stipple_buffer* buffers, const double* params);\n"
     << "//     buffers already in device memory (`host` is a device pointer): runs and waits.\n"
     << "// Both return the codes below: STIPPLE_ERROR_DEVICE (3) when a CUDA call failed (no\n"
     << "// GPU, a launch, a copy, a fault in a kernel), STIPPLE_ERROR_OUT_OF_MEMORY when an\n"
     << "// allocation on the GPU failed, STIPPLE_ERROR_BUFFER_TOO_LARGE (4) when a buffer\n"
     << "// spans 2^31 elements or more (kernels index in 32 bits).\n//\n"
     << buffer_list();
  return os.str();
}

// NAME: the host-memory entry point around NAME_device. Each buffer's bytes are its span,
// 1 + sum (extent - 1) * stride elements, copied in for inputs and out for the others.
std::string CppGen::cuda_host_wrapper() const {
  const std::string& name = options_.symbol;
  const size_t total = f_.inputs.size() + f_.buffers.size();
  std::ostringstream os;
  os << "\nint32_t " << name << "(const stipple_buffer* buffers, const double* params) {\n";
  os << "  constexpr int kBuffers = " << total << ";\n";
  if (total == 0) {
    os << "  return " << name << "_device(buffers, params);\n}\n";
    return os.str();
  }
  std::string types, dims, bytes, inputs;
  for (size_t k = 0; k < total; ++k) {
    const BufferInfo& b = buffers_[k];
    types += (k ? ", " : "") + type_constant(b.type);
    dims += (k ? ", " : "") + std::to_string(b.dims);
    bytes += (k ? ", " : "") + std::to_string(bytes_of(b.type));
    inputs += (k ? ", " : "") + std::string(b.is_input ? "true" : "false");
  }
  os << "  const int32_t types[kBuffers] = {" << types << "};\n"
     << "  const int32_t dimensions[kBuffers] = {" << dims << "};\n"
     << "  const int64_t element_bytes[kBuffers] = {" << bytes << "};\n"
     << "  const bool is_input[kBuffers] = {" << inputs << "};\n"
     << R"(  for (int k = 0; k < kBuffers; ++k) {
    if (buffers[k].type != types[k] || buffers[k].dimensions != dimensions[k] ||
        (dimensions[k] > 0 && buffers[k].dim[0].stride != 1)) {
      return STIPPLE_ERROR_BUFFER_MISMATCH;
    }
    if (!fits_kernel_index(buffers[k])) return STIPPLE_ERROR_BUFFER_TOO_LARGE;  // copy nothing
  }
  stipple_buffer device[kBuffers];
  void* memory[kBuffers] = {};
  size_t size[kBuffers] = {};
  int32_t status = STIPPLE_OK;
  for (int k = 0; k < kBuffers && status == STIPPLE_OK; ++k) {
    size[k] = static_cast<size_t>(span_elements(buffers[k]) * element_bytes[k]);
    device[k] = buffers[k];
    status = device_malloc(&memory[k], size[k] > 0 ? static_cast<int64_t>(size[k]) : 1);
    if (status == STIPPLE_OK && is_input[k] && size[k] > 0 &&
        cudaMemcpy(memory[k], buffers[k].host, size[k], cudaMemcpyHostToDevice) != cudaSuccess) {
      status = STIPPLE_ERROR_DEVICE;
    }
    device[k].host = memory[k];
  }
)"
     << "  if (status == STIPPLE_OK) status = " << name << R"(_device(device, params);
  for (int k = 0; k < kBuffers; ++k) {
    if (status == STIPPLE_OK && !is_input[k] && size[k] > 0 &&
        cudaMemcpy(buffers[k].host, memory[k], size[k], cudaMemcpyDeviceToHost) != cudaSuccess) {
      status = STIPPLE_ERROR_DEVICE;
    }
  }
  for (int k = 0; k < kBuffers; ++k) {
    if (memory[k] != nullptr) cudaFree(memory[k]);
  }
  return status;
}
)";
  return os.str();
}

std::string CppGen::generate_cuda() {
  open_block();  // the function's own names
  declare_externals();
  std::string body;
  out_ = &body;
  indent_ = 1;
  emit(f_.body);
  const bool error_word = error_word_;
  status_used_ = true;
  std::string function = opening_part();
  if (error_word) {
    function +=
        R"(  // The kernels' own error code (a device heap allocation that failed), 0 when none.
  int32_t* stipple_error = nullptr;
  status = device_malloc(reinterpret_cast<void**>(&stipple_error), sizeof(int32_t));
  if (status != STIPPLE_OK) return status;
  if (cudaMemset(stipple_error, 0, sizeof(int32_t)) != cudaSuccess) status = STIPPLE_ERROR_DEVICE;
)";
  }
  function += body;
  function += "  // Wait for the kernels: a fault in one is reported here.\n";
  function += "  if (cudaDeviceSynchronize() != cudaSuccess) status = STIPPLE_ERROR_DEVICE;\n";
  if (error_word) {
    function += R"(  int32_t kernel_status = STIPPLE_OK;
  if (cudaMemcpy(&kernel_status, stipple_error, sizeof(int32_t), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    status = STIPPLE_ERROR_DEVICE;
  } else if (status == STIPPLE_OK) {
    status = kernel_status;
  }
  cudaFree(stipple_error);
)";
  }
  function += "  return status;\n}\n";
  std::string text = cuda_file_comment();
  text += kCudaIncludes;
  text += "\nextern \"C\" {\n\n";
  text += c_header_common_block();
  // The GPU codes, guarded as in the header of a cuda- target, which may be included too.
  text +=
      "#ifndef STIPPLE_AOT_CUDA_CODES\n#define STIPPLE_AOT_CUDA_CODES\n"
      "enum {\n  STIPPLE_ERROR_DEVICE = 3,  // a CUDA call failed\n"
      "  STIPPLE_ERROR_BUFFER_TOO_LARGE = 4,  // 2^31 elements or more: kernels index in 32 "
      "bits\n};\n#endif\n\n";
  text += "int32_t " + options_.symbol + "(const stipple_buffer* buffers, const double* params);\n";
  text += "int32_t " + options_.symbol +
          "_device(const stipple_buffer* buffers, const double* params);\n\n}  // extern \"C\"\n\n";
  text += "namespace {\n";
  text += kChecks;
  text += kDeviceMalloc;
  text += needed_helpers(kernels_ + function, Dialect::Cuda);
  text += kernels_;
  text += "\n}  // namespace\n\n";
  text += function;
  text += cuda_host_wrapper();
  close_block();
  return text;
}

std::string CppGen::opening_part() {
  const std::string& name = options_.symbol;
  std::ostringstream os;
  os << "int32_t " << name << (dialect_ == Dialect::Cuda ? "_device" : "")
     << "(const stipple_buffer* buffers, const double* params) {\n";
  os << "  // Each descriptor must have its declared type and dimension count, and dense rows.\n";
  const size_t total = f_.inputs.size() + f_.buffers.size();
  for (size_t k = 0; k < total; ++k) {
    const BufferInfo& buf = buffers_[k];
    const std::string b = "buffers[" + std::to_string(k) + "]";
    os << "  if (" << b << ".type != " << type_constant(buf.type) << " || " << b
       << ".dimensions != " << buf.dims;
    if (buf.dims > 0) os << " || " << b << ".dim[0].stride != 1";
    if (k >= f_.inputs.size()) {
      // The dimensions the loop nest was built for (the schedule's bound): exactly.
      for (const ExternalBuffer::FixedDim& fd : f_.buffers[k - f_.inputs.size()].fixed) {
        const std::string dim = b + ".dim[" + std::to_string(fd.dim) + "]";
        os << " || " << dim << ".min != " << fd.min << " || " << dim << ".extent != " << fd.extent;
      }
    }
    os << ") {\n    return STIPPLE_ERROR_BUFFER_MISMATCH;\n  }\n";
  }
  if (dialect_ == Dialect::Cuda && total > 0) {
    os << "  for (int k = 0; k < " << total << "; ++k) {\n"
       << "    if (!fits_kernel_index(buffers[k])) return STIPPLE_ERROR_BUFFER_TOO_LARGE;\n"
       << "  }\n";
  }
  // Params: each double converted as an f64 cast (saturating for i32).
  bool any_param = false;
  for (size_t k = 0; k < f_.params.size(); ++k) {
    const auto& [c, type] = params_.at(f_.params[k].name);
    if (!used_.count(c)) continue;
    const Value v =
        emit_cast(ScalarType::Float64, type, {"params[" + std::to_string(k) + "]", false});
    os << "  const " << c_type(type) << " " << c << " = " << unwrapped(v.text) << ";\n";
    any_param = true;
  }
  if (!any_param) os << "  static_cast<void>(params);\n";
  if (status_used_) os << "  int32_t status = STIPPLE_OK;\n";

  // Buffers: what the loop nest uses of each.
  for (size_t k = 0; k < total; ++k) {
    const BufferInfo& buf = buffers_[k];
    const External& ext = externals_[k];
    const std::string b = "buffers[" + std::to_string(k) + "]";
    const bool accessor = dialect_ == Dialect::Cpp && used_.count(ext.accessor) > 0;
    bool any = accessor || used_.count(ext.extent);
    for (int d = 0; d < buf.dims; ++d) {
      any = any || used_.count(ext.min_vars[d]) || used_.count(ext.extent_vars[d]) ||
            used_.count(ext.stride_vars[d]);
    }
    if (!any) continue;
    const std::string what = buf.is_input                     ? "input "
                             : buf.ir == options_.output_name ? "output "
                                                              : "func ";
    os << "\n  // " << what << buf.ir << ": " << to_string(Type(buf.type)) << ", " << buf.dims
       << " dimensions (" << b << ")";
    if (buf.is_input) {
      os << ", boundary " << boundary_kind_name(buf.decl->boundary)
         << "; read at [0, extent) whatever the mins";
    }
    os << "\n";
    buffer_declarations(os, buf, ext, b, used_, dialect_ == Dialect::Cpp, "  ");
  }
  os << "\n";
  return os.str();
}

void CppGen::buffer_declarations(std::ostream& os, const BufferInfo& buf, const External& ext,
                                 const std::string& b, const std::set<std::string>& used,
                                 bool with_accessor, const std::string& ind,
                                 IndexWidth width) const {
  const bool accessor = with_accessor && used.count(ext.accessor) > 0;
  // A 0-d buffer's accessor reads element 0 alone.
  bool min = accessor && !buf.is_input && buf.dims > 0,
       extent = used.count(ext.extent) || (accessor && buf.is_input),
       stride = accessor && buf.dims > 1;
  for (int d = 0; d < static_cast<int>(ext.min_vars.size()); ++d) {
    min = min || used.count(ext.min_vars[d]);
    extent = extent || used.count(ext.extent_vars[d]);
    stride = stride || used.count(ext.stride_vars[d]);
  }
  const bool narrow = width == IndexWidth::Bits32;
  auto array = [&](const std::string& array_name, const std::string& field) {
    os << ind << (narrow ? "const int32_t " : "const int64_t ") << array_name << "["
       << std::max(buf.dims, 1) << "] = {";
    for (int d = 0; d < buf.dims; ++d) {
      const std::string value = b + ".dim[" + std::to_string(d) + "]." + field;
      os << (d ? ", " : "")
         << (field == "stride" && d == 0 ? std::string("1")
             : narrow                    ? "static_cast<int32_t>(" + value + ")"
                                         : value);
    }
    if (buf.dims == 0) os << "0";
    os << "};\n";
  };
  if (min) array(ext.min, "min");
  if (extent) array(ext.extent, "extent");
  if (stride) array(ext.stride, "stride");
  for (int d = 0; d < static_cast<int>(ext.min_vars.size()); ++d) {
    const std::string dd = subscript(d);
    if (used.count(ext.min_vars[d])) {
      os << ind << "const int32_t " << ext.min_vars[d] << " = static_cast<int32_t>(" << ext.min
         << dd << ");\n";
    }
    if (used.count(ext.extent_vars[d])) {
      os << ind << "const int32_t " << ext.extent_vars[d] << " = static_cast<int32_t>("
         << ext.extent << dd << ");\n";
    }
    if (used.count(ext.stride_vars[d])) {
      os << ind << "const int32_t " << ext.stride_vars[d] << " = static_cast<int32_t>("
         << ext.stride << dd << ");\n";
    }
  }
  if (!accessor) return;
  const std::string mt = memory_type(buf.type);
  // In a kernel every buffer is __restrict__: distinct buffers never overlap (AOT.md: the
  // inputs may not overlap the outputs), so nvcc may keep loaded values across stores and
  // read inputs through the read-only cache.
  os << ind << (buf.is_input ? "const " : "") << mt
     << (narrow ? "* __restrict__ const " : "* const ") << ext.host << " = static_cast<"
     << (buf.is_input ? "const " : "") << mt << "*>(" << b << ".host);\n";
  std::string params_list, index;
  for (int d = 0; d < buf.dims; ++d) {
    const std::string i = std::string("i") + std::to_string(d), dd = subscript(d);
    params_list += (d ? ", " : "") + std::string("int32_t ") + i;
    std::string term;
    if (!buf.is_input) {
      term = "(" + i + " - " + ext.min + dd + ")";
    } else if (buf.decl->boundary == BoundaryKind::Mirror) {
      term = "mirror_index(" + i + ", " + ext.extent + dd + ")";
    } else {
      term = "clamp_index(" + i + ", " + ext.extent + dd + ")";
    }
    if (d > 0) term += " * " + ext.stride + dd;
    index += (d ? " + " : "") + term;
  }
  if (index.empty()) index = "0";
  if (!buf.is_input) {
    os << ind << "auto " << ext.accessor << " = [&](" << params_list << ") -> " << mt << "& {\n"
       << ind << "  return " << ext.host << "[" << index << "];\n"
       << ind << "};\n";
    return;
  }
  os << ind << "auto " << ext.accessor << " = [&](" << params_list << ") -> " << c_type(buf.type)
     << " {\n";
  if (buf.decl->boundary == BoundaryKind::Constant && buf.dims > 0) {
    std::string cond;
    for (int d = 0; d < buf.dims; ++d) {
      cond += (d ? " || " : "") + std::string("outside(i") + std::to_string(d) + ", " + ext.extent +
              "[" + std::to_string(d) + "])";
    }
    os << ind << "  if (" << cond << ") return "
       << cast_constant(buf.decl->boundary_value, buf.type) << ";\n";
  }
  const std::string element = ext.host + "[" + index + "]";
  os << ind << "  return "
     << (buf.type == ScalarType::Float16 ? "f16_from_bits(" + element + ")" : element)
     << (buf.type == ScalarType::Bool ? " != 0" : "") << ";\n"
     << ind << "};\n";
}

// ---------------------------------------------------------------------------------------
// Statements

void CppGen::emit(const Stmt& s) {
  switch (s.node_type()) {
    case IRNodeType::LetStmt: {
      const LetStmt* op = s.as<LetStmt>();
      const Value v = expr(op->value);
      const ScalarType t = op->value.type().code;
      const std::string name = fresh(op->name);
      push_var(op->name, name, t);
      const std::string body = captured(0, [&] { emit(op->body); });
      pop_var();
      declare(name, t, v);
      *out_ += body;
      return;
    }
    case IRNodeType::For: emit_for(s.as<For>()); return;
    case IRNodeType::Provide: emit_provide(s.as<Provide>()); return;
    case IRNodeType::Allocate: emit_allocate(s.as<Allocate>()); return;
    case IRNodeType::Block: {
      Stmt cur = s;
      while (const Block* blk = cur.as<Block>()) {
        emit(blk->first);
        cur = blk->rest;
      }
      emit(cur);
      return;
    }
    case IRNodeType::IfThenElse: {
      const IfThenElse* op = s.as<IfThenElse>();
      const Value c = expr(op->condition);
      if (op == exit_guard_) {
        exit_guard_ = nullptr;
        line("if (!(" + unwrapped(c.text) + ")) break;  // false from here to the loop's end");
        emit(op->then_case);
        return;
      }
      line("if (" + unwrapped(c.text) + ") {");
      block([&] { emit(op->then_case); });
      if (op->else_case.defined()) {
        line("} else {");
        block([&] { emit(op->else_case); });
      }
      line("}");
      return;
    }
    case IRNodeType::Evaluate: {
      const Value v = expr(s.as<Evaluate>()->value);
      if (!v.simple) line("static_cast<void>(" + unwrapped(v.text) + ");");
      return;
    }
    case IRNodeType::IntImm:
    case IRNodeType::FloatImm:
    case IRNodeType::Cast:
    case IRNodeType::Variable:
    case IRNodeType::Param:
    case IRNodeType::InputExtent:
    case IRNodeType::Add:
    case IRNodeType::Sub:
    case IRNodeType::Mul:
    case IRNodeType::Div:
    case IRNodeType::Mod:
    case IRNodeType::Min:
    case IRNodeType::Max:
    case IRNodeType::EQ:
    case IRNodeType::NE:
    case IRNodeType::LT:
    case IRNodeType::LE:
    case IRNodeType::GT:
    case IRNodeType::GE:
    case IRNodeType::And:
    case IRNodeType::Or:
    case IRNodeType::Not:
    case IRNodeType::Select:
    case IRNodeType::Call:
    case IRNodeType::Reduce:
    case IRNodeType::Let: break;
  }
  throw_internal_error(__FILE__, __LINE__, "cpp_source: expression node in statement position");
}

void CppGen::emit_for(const For* op) {
  if (dialect_ == Dialect::Cuda && is_gpu_loop(op->for_type)) {
    if (in_kernel_) {
      emit_gpu_loop(op);
    } else {
      STIPPLE_INTERNAL_CHECK(op->for_type == ForType::GpuBlock,
                             "cuda_source: GPU thread loop '" + op->name + "' outside a kernel");
      emit_kernel(op);
    }
    return;
  }
  // min and extent are evaluated once, before the loop (named unless simple).
  Value min = expr(op->min);
  Value extent = expr(op->extent);
  STIPPLE_INTERNAL_CHECK(op->min.type() == Int32() && op->extent.type() == Int32(),
                         "cpp_source: non-i32 loop bounds of '" + op->name + "'");
  if (op->for_type == ForType::Parallel) {
    emit_parallel_for(op, min, extent);
    return;
  }
  min = named(min, ScalarType::Int32, op->name + ".min");
  extent = named(extent, ScalarType::Int32, op->name + ".extent");
  open_block();
  const std::string v = fresh(op->name);
  push_var(op->name, v, ScalarType::Int32);
  // Vectorized loops compute each lane as the scalar iteration does (codegen README), and
  // unrolled ones are plain loops there too: all are plain loops here.
  const std::string end = min.text == "0" ? extent.text : min.text + " + " + extent.text;
  std::string note;
  if (op->for_type == ForType::Vectorized) note = "  // vectorized";
  if (op->for_type == ForType::Unrolled) note = "  // unrolled";
  // In a kernel: an unrolled loop is nvcc's to unroll, and a tail guard that ends the loop
  // is its exit (exit_guard.h), so that each iteration's values serve the next.
  const bool kernel_loop = dialect_ == Dialect::Cuda && in_kernel_;
  if (kernel_loop && op->for_type == ForType::Unrolled) line("STIPPLE_UNROLL");
  line("for (int32_t " + v + " = " + min.text + "; " + v + " < " + end + "; ++" + v + ") {" + note);
  const IfThenElse* saved_exit = exit_guard_;
  exit_guard_ = kernel_loop ? exit_guard_of(op) : nullptr;
  block([&] { emit(op->body); });
  exit_guard_ = saved_exit;
  line("}");
  pop_var();
  close_block();
}

void CppGen::emit_parallel_for(const For* op, const Value& min, const Value& extent) {
  open_block();
  const std::string v = fresh(op->name);
  push_var(op->name, v, ScalarType::Int32);
  // The body is a lambda with an error code of its own (`status`) when it can fail.
  const bool saved_status = status_used_;
  status_used_ = false;
  const std::string body = captured(1, [&] {
    open_block();
    emit(op->body);
    close_block();
  });
  const bool body_fails = status_used_;
  status_used_ = saved_status;
  pop_var();
  close_block();
  const std::string param = used_.count(v) ? v : "/*" + v + "*/";
  const std::string head = "parallel_for(" + unwrapped(min.text) + ", " + unwrapped(extent.text) +
                           ", [&](int32_t " + param + ")";
  if (!body_fails) {
    line(head + " {");
    *out_ += body;
    line("});");
    return;
  }
  const std::string error = fresh(op->name + "_error");
  line("const int32_t " + error + " = " + head + " -> int32_t {");
  ++indent_;
  line("int32_t status = STIPPLE_OK;");
  *out_ += body;
  line("return status;");
  --indent_;
  line("});");
  line("if (" + error + " != STIPPLE_OK) status = " + error + ";");
  status_used_ = true;
}

void CppGen::emit_provide(const Provide* op) {
  if (dialect_ == Dialect::Cuda && !in_kernel_) require_kernel("func '" + op->name + "'");
  const BufferInfo& buf = find_buffer(op->name);
  STIPPLE_INTERNAL_CHECK(!buf.is_input, "cpp_source: Provide to input '" + op->name + "'");
  STIPPLE_INTERNAL_CHECK(op->value.type() == Type(buf.type),
                         "cpp_source: Provide of " + to_string(op->value.type()) + " to '" +
                             op->name + "' of type " + to_string(Type(buf.type)));
  STIPPLE_INTERNAL_CHECK(static_cast<int>(op->args.size()) == buf.dims,
                         "cpp_source: Provide to '" + op->name + "' with the wrong arity");
  std::string args;
  for (const Expr& a : op->args) {
    STIPPLE_INTERNAL_CHECK(a.type() == Int32(), "cpp_source: non-i32 Provide index");
    args += (args.empty() ? "" : ", ") + unwrapped(expr(a).text);
  }
  const std::string accessor = use(buf.accessor);
  if (op->atomic && dialect_ == Dialect::Cuda) {
    // GPU threads may add to the same site: atomicAdd of the value less its read of the
    // site (the checker's atomic() admits only `f(site) + e`).
    const Expr added = addend_to_own_site(op->value, op->name, op->args);
    STIPPLE_INTERNAL_CHECK(added.defined(),
                           "cuda_source: the atomic update of '" + op->name +
                               "' is not an add to its own site: " + to_string(op->value));
    line("atomicAdd(&" + accessor + "(" + args + "), " + unwrapped(expr(added).text) + ");");
    return;
  }
  const Value v = expr(op->value);
  const std::string value = unwrapped(v.text);
  line(accessor + "(" + args +
       ") = " + (buf.type == ScalarType::Float16 ? "f16_bits(" + value + ")" : value) + ";");
}

void CppGen::emit_allocate(const Allocate* op) {
  if (dialect_ == Dialect::Cuda && !in_kernel_) {
    emit_device_allocate(op);
    return;
  }
  const int dims = static_cast<int>(op->extents.size());
  STIPPLE_INTERNAL_CHECK(op->type.lanes == 1 && dims <= kMaxBufferDims,
                         "cpp_source: unsupported Allocate of '" + op->name + "'");
  // Extents (negative ones count as 0) and mins, as codegen_stmt.cpp computes them: the min
  // of dimension D is the variable NAME.min.D where one is in scope, else 0.
  std::vector<std::string> extents, mins;
  std::vector<int64_t> constant_extents;
  bool constant_size = true, zero_mins = true;
  for (int d = 0; d < dims; ++d) {
    const Expr& e = op->extents[d];
    STIPPLE_INTERNAL_CHECK(e.type() == Int32(), "cpp_source: non-i32 Allocate extent");
    const Value v = expr(e);
    if (const IntImm* imm = e.as<IntImm>()) {
      constant_extents.push_back(std::max<int64_t>(imm->value, 0));
      extents.push_back(std::to_string(constant_extents.back()));
    } else {
      constant_size = false;
      extents.push_back("std::max<int64_t>(" + unwrapped(v.text) + ", 0)");
    }
    const Binding* m = find_var(op->name + ".min." + std::to_string(d));
    mins.push_back(m ? m->c : "0");
    zero_mins = zero_mins && !m;
  }
  int64_t constant_count = 1;
  for (int64_t e : constant_extents) constant_count *= e;
  const int64_t elem_bytes = bytes_of(op->type.code);
  // Constant sizes up to 64 KiB are stack arrays (an entry-block alloca in the LLVM code),
  // anything else heap memory freed when the body ends.
  const bool on_stack = constant_size && constant_count * elem_bytes <= kMaxStackAllocation;
  const std::string mt = memory_type(op->type.code);

  line("{");
  ++indent_;
  open_block();
  BufferInfo buf;
  buf.ir = op->name;
  buf.type = op->type.code;
  buf.dims = dims;
  buf.accessor = fresh(op->name);
  const std::string accessor = buf.accessor;
  const std::string host = fresh(op->name + "_host");
  const std::string extent = fresh(op->name + "_extent");
  const std::string min = fresh(op->name + "_min");
  const std::string stride = fresh(op->name + "_stride");
  buffers_.push_back(buf);
  // The body first, to know whether it uses the buffer; printed after the declarations.
  const std::string body = captured(on_stack ? 0 : 1, [&] {
    open_block();
    emit(op->body);
    close_block();
  });
  buffers_.pop_back();
  const bool used = used_.count(accessor) > 0;
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return v.empty() ? std::string("0") : s;
  };
  const std::string n = "[" + std::to_string(std::max(dims, 1)) + "]";
  line("// " + op->name + ": " + to_string(op->type) + ", " + std::to_string(dims) +
       " dimensions, dimension 0 innermost" + (on_stack ? ", on the stack" : ""));
  if (!on_stack) line("const int64_t " + extent + n + " = {" + join(extents) + "};");
  // Dense strides: 1, e0, e0 * e1, ... (numbers when the extents are constants).
  std::vector<std::string> strides;
  for (int d = 0; d < dims; ++d) {
    if (constant_size) {
      int64_t s = 1;
      for (int k = 0; k < d; ++k) s *= constant_extents[k];
      strides.push_back(std::to_string(s));
    } else {
      std::string s = "1";
      for (int k = 0; k < d; ++k) {
        s = (k ? s + " * " : std::string()) + extent + subscript(k);
      }
      strides.push_back(s);
    }
  }
  std::string params_list, index;
  for (int d = 0; d < dims; ++d) {
    const std::string i = std::string("i") + std::to_string(d), dd = subscript(d);
    params_list += (d ? ", " : "") + std::string("int32_t ") + i;
    std::string term = mins[d] == "0" ? i : "(" + i + " - " + min + dd + ")";
    if (d > 0) term += " * " + (constant_size ? strides[d] : stride + dd);
    index += (d ? " + " : "") + term;
  }
  if (index.empty()) index = "0";
  auto declare_accessor = [&] {
    for (const std::string& m : mins) {
      if (m != "0") use(m);
    }
    // A stack array in a GPU kernel is indexed in 32 bits (it has at most 64 KiB), as the
    // kernel's buffers are: 64-bit index arithmetic costs the GPU several instructions.
    const bool narrow = on_stack && dialect_ == Dialect::Cuda;
    if (!zero_mins) {
      line(std::string(narrow ? "const int32_t " : "const int64_t ") + min + n + " = {" +
           join(mins) + "};");
    }
    if (!constant_size && dims > 1)
      line("const int64_t " + stride + n + " = {" + join(strides) + "};");
    if (on_stack) {
      line(mt + " " + host + "[" + std::to_string(std::max<int64_t>(constant_count, 1)) + "];");
    }
    line("auto " + accessor + " = [&](" + params_list + ") -> " + mt + "& {");
    line("  return " + host + "[" + index + "];");
    line("};");
  };
  if (on_stack) {
    if (used) declare_accessor();
    *out_ += body;
  } else {
    std::string bytes = std::to_string(elem_bytes);
    for (int d = 0; d < dims; ++d) {
      bytes = (constant_size ? std::to_string(constant_extents[d]) : extent + subscript(d)) +
              " * " + bytes;
    }
    if (constant_size) bytes = std::to_string(constant_count * elem_bytes);
    // In a CUDA kernel, malloc is the device heap's (std::malloc is host-only there).
    const std::string malloc_name = dialect_ == Dialect::Cuda ? "malloc" : "std::malloc";
    line(mt + "* const " + host + " = static_cast<" + mt + "*>(" + malloc_name +
         "(static_cast<size_t>(std::max<int64_t>(" + bytes + ", 1))));");
    line("if (" + host + " == nullptr) {");
    line("  status = STIPPLE_ERROR_OUT_OF_MEMORY;  // the body is skipped");
    status_used_ = true;
    line("} else {");
    ++indent_;
    if (used) declare_accessor();
    --indent_;
    *out_ += body;
    line(std::string(dialect_ == Dialect::Cuda ? "  free(" : "  std::free(") + host + ");");
    line("}");
  }
  close_block();
  --indent_;
  line("}");
}

// ---------------------------------------------------------------------------------------
// Expressions

CppGen::Value CppGen::expr(const Expr& e) {
  const Type t = e.type();
  STIPPLE_INTERNAL_CHECK(t.lanes == 1, "cpp_source: vector type " + to_string(t));
  switch (e.node_type()) {
    case IRNodeType::IntImm:
      return {literal(t.code, static_cast<double>(e.as<IntImm>()->value)), true};
    case IRNodeType::FloatImm: return {literal(t.code, e.as<FloatImm>()->value), true};
    case IRNodeType::Cast: {
      const Cast* op = e.as<Cast>();
      return emit_cast(op->value.type().code, t.code, expr(op->value));
    }
    case IRNodeType::Variable: {
      const Variable* op = e.as<Variable>();
      const Binding* b = find_var(op->name);
      STIPPLE_INTERNAL_CHECK(b != nullptr, "cpp_source: unbound variable '" + op->name + "'");
      STIPPLE_INTERNAL_CHECK(b->type == t.code, "cpp_source: variable '" + op->name +
                                                    "' is bound to a value of another type");
      return {use(b->c), true};
    }
    case IRNodeType::Param: {
      const Param* op = e.as<Param>();
      auto it = params_.find(op->name);
      STIPPLE_INTERNAL_CHECK(it != params_.end(),
                             "cpp_source: undeclared param '" + op->name + "'");
      STIPPLE_INTERNAL_CHECK(it->second.second == t.code,
                             "cpp_source: param '" + op->name + "' read with another type");
      return {use(it->second.first), true};
    }
    case IRNodeType::InputExtent: {
      const InputExtent* op = e.as<InputExtent>();
      const BufferInfo& buf = find_buffer(op->input);
      STIPPLE_INTERNAL_CHECK(buf.is_input, "cpp_source: extent of non-input '" + op->input + "'");
      if (op->dim >= buf.dims) return {"1", true};  // as the evaluator: 1 beyond the dimensions
      return {"static_cast<int32_t>(" + use(buf.extent) + "[" + std::to_string(op->dim) + "])",
              false};
    }
#define STIPPLE_BINARY(N)                                      \
  case IRNodeType::N: {                                        \
    auto* op = e.as<N>();                                      \
    const Value a = expr(op->a);                               \
    return emit_binary(IRNodeType::N, t.code, a, expr(op->b)); \
  }
      STIPPLE_BINARY(Add)
      STIPPLE_BINARY(Sub)
      STIPPLE_BINARY(Mul)
    case IRNodeType::Div: {
      const Div* op = e.as<Div>();
      const Value a = expr(op->a);
      // A GPU divides by an odd integer faster as a product and two FMAs
      // (constant_division.h).
      const FloatImm* divisor = op->b.as<FloatImm>();
      if (dialect_ == Dialect::Cuda && t.code == ScalarType::Float32 && divisor != nullptr) {
        const float d = static_cast<float>(divisor->value);
        if (const std::optional<float> y = markstein_reciprocal(d)) {
          return {"div_by_constant(" + unwrapped(a.text) + ", " + literal(t.code, d) + ", " +
                      literal(t.code, *y) + ")",
                  false};
        }
      }
      return emit_binary(IRNodeType::Div, t.code, a, expr(op->b));
    }
      STIPPLE_BINARY(Mod)
      STIPPLE_BINARY(Min)
      STIPPLE_BINARY(Max)
#undef STIPPLE_BINARY
#define STIPPLE_COMPARE(N)                              \
  case IRNodeType::N: {                                 \
    auto* op = e.as<N>();                               \
    const Value a = expr(op->a);                        \
    return emit_compare(IRNodeType::N, a, expr(op->b)); \
  }
      STIPPLE_COMPARE(EQ)
      STIPPLE_COMPARE(NE)
      STIPPLE_COMPARE(LT)
      STIPPLE_COMPARE(LE)
      STIPPLE_COMPARE(GT)
      STIPPLE_COMPARE(GE)
#undef STIPPLE_COMPARE
    case IRNodeType::And: return emit_logical(true, e.as<And>()->a, e.as<And>()->b);
    case IRNodeType::Or: return emit_logical(false, e.as<Or>()->a, e.as<Or>()->b);
    case IRNodeType::Not: {
      const Value a = expr(e.as<Not>()->a);
      return {"!" + a.text, false};
    }
    case IRNodeType::Select: return emit_select(e.as<Select>());
    case IRNodeType::Call: return emit_call(e.as<Call>());
    case IRNodeType::Reduce: return emit_reduce(e.as<Reduce>());
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      const Value v = expr(op->value);
      const ScalarType vt = op->value.type().code;
      const std::string name = fresh(op->name);
      push_var(op->name, name, vt);
      Value body;
      const std::string prep = captured(0, [&] { body = expr(op->body); });
      pop_var();
      declare(name, vt, v);
      *out_ += prep;
      return body;
    }
    case IRNodeType::LetStmt:
    case IRNodeType::For:
    case IRNodeType::Provide:
    case IRNodeType::Allocate:
    case IRNodeType::Block:
    case IRNodeType::IfThenElse:
    case IRNodeType::Evaluate: break;
  }
  throw_internal_error(__FILE__, __LINE__, "cpp_source: statement node in expression position");
}

CppGen::Value CppGen::emit_cast(ScalarType from, ScalarType to, const Value& v) {
  if (from == to) return v;
  const std::string inner = unwrapped(v.text);
  if (to == ScalarType::Float16) {
    if (from == ScalarType::Float64) return {"f16_round(f32_round_odd(" + inner + "))", false};
    if (from == ScalarType::Float32) return {"f16_round(" + inner + ")", false};
    // Integers: exact in f32 below 2^24, larger ones become infinity either way.
    return {"f16_round(static_cast<float>(" + inner + "))", false};
  }
  if (from == ScalarType::Float16) from = ScalarType::Float32;  // held as its f32 widening
  if (from == to) return v;
  // Float to float rounds to nearest; integers (u8, u16 and bool unsigned) to floats round
  // to nearest; integer to integer wraps (narrower sources are unsigned: zero-extended).
  if (is_float(to) || !is_float(from)) {
    if (to == ScalarType::Bool) return {"(" + v.text + " != 0)", false};
    return {"static_cast<" + c_type(to) + ">(" + inner + ")", false};
  }
  // From a float: to bool a comparison with zero (NaN is true), to an integer truncation
  // towards zero, saturating, NaN to 0 (LLVM's fpto[su]i.sat).
  if (to == ScalarType::Bool) return {"(" + v.text + " != " + literal(from, 0) + ")", false};
  return {"saturating_cast<" + c_type(to) + ">(" + inner + ")", false};
}

CppGen::Value CppGen::emit_binary(IRNodeType op, ScalarType t, const Value& a, const Value& b) {
  const std::string x = unwrapped(a.text), y = unwrapped(b.text);
  if (op == IRNodeType::Min) return {"min_of(" + x + ", " + y + ")", false};
  if (op == IRNodeType::Max) return {"max_of(" + x + ", " + y + ")", false};
  if (is_float(t)) {
    switch (op) {
      case IRNodeType::Add: return {"(" + a.text + " + " + b.text + ")", false};
      case IRNodeType::Sub: return {"(" + a.text + " - " + b.text + ")", false};
      case IRNodeType::Mul: return {"(" + a.text + " * " + b.text + ")", false};
      case IRNodeType::Div: return {"(" + a.text + " / " + b.text + ")", false};
      case IRNodeType::Mod: return {"float_mod(" + x + ", " + y + ")", false};
      default: break;
    }
  } else {
    STIPPLE_INTERNAL_CHECK(t != ScalarType::Bool, "cpp_source: arithmetic on bool");
    switch (op) {
      case IRNodeType::Add: return {"wrap_add(" + x + ", " + y + ")", false};
      case IRNodeType::Sub: return {"wrap_sub(" + x + ", " + y + ")", false};
      case IRNodeType::Mul: return {"wrap_mul(" + x + ", " + y + ")", false};
      case IRNodeType::Div: return {"floor_div(" + x + ", " + y + ")", false};
      case IRNodeType::Mod: return {"euclid_mod(" + x + ", " + y + ")", false};
      default: break;
    }
  }
  throw_internal_error(__FILE__, __LINE__, "cpp_source: not a binary arithmetic node");
}

CppGen::Value CppGen::emit_compare(IRNodeType op, const Value& a, const Value& b) {
  // C++'s comparisons are LLVM's: ordered for floats except != (unordered), unsigned for
  // u8/u16 (promoted to int, values unchanged), signed for i32.
  const char* sym = nullptr;
  switch (op) {
    case IRNodeType::EQ: sym = " == "; break;
    case IRNodeType::NE: sym = " != "; break;
    case IRNodeType::LT: sym = " < "; break;
    case IRNodeType::LE: sym = " <= "; break;
    case IRNodeType::GT: sym = " > "; break;
    case IRNodeType::GE: sym = " >= "; break;
    default: throw_internal_error(__FILE__, __LINE__, "cpp_source: not a comparison node");
  }
  return {"(" + a.text + sym + b.text + ")", false};
}

CppGen::Value CppGen::emit_select(const Select* op) {
  const Value c = expr(op->condition);
  const ScalarType t = op->type.code;
  // The result's name is taken first, so that the arms cannot take it.
  const std::string result = fresh("select");
  Value tv, fv;
  const std::string then_text = captured(1, [&] {
    open_block();
    tv = expr(op->true_value);
    close_block();
  });
  const std::string else_text = captured(1, [&] {
    open_block();
    fv = expr(op->false_value);
    close_block();
  });
  if (then_text.empty() && else_text.empty()) {
    // C++'s ?: evaluates only the chosen side too.
    release(result);
    return {"(" + c.text + " ? " + tv.text + " : " + fv.text + ")", false};
  }
  line(c_type(t) + " " + result + ";");
  line("if (" + unwrapped(c.text) + ") {");
  *out_ += then_text;
  ++indent_;
  line(result + " = " + unwrapped(tv.text) + ";");
  --indent_;
  line("} else {");
  *out_ += else_text;
  ++indent_;
  line(result + " = " + unwrapped(fv.text) + ";");
  --indent_;
  line("}");
  return {result, true};
}

CppGen::Value CppGen::emit_logical(bool is_and, const Expr& a, const Expr& b) {
  const Value x = expr(a);
  const std::string result = fresh(is_and ? "both" : "either");
  Value y;
  const std::string rhs = captured(1, [&] {
    open_block();
    y = expr(b);
    close_block();
  });
  if (rhs.empty()) {
    release(result);
    return {"(" + x.text + (is_and ? " && " : " || ") + y.text + ")", false};
  }
  // The right side only runs when the left one does not decide.
  line("bool " + result + " = " + unwrapped(x.text) + ";");
  line(std::string("if (") + (is_and ? "" : "!") + result + ") {");
  *out_ += rhs;
  ++indent_;
  line(result + " = " + unwrapped(y.text) + ";");
  --indent_;
  line("}");
  return {result, true};
}

CppGen::Value CppGen::emit_call(const Call* op) {
  switch (op->call_type) {
    case CallType::Intrinsic: return emit_intrinsic(op);
    case CallType::Input: {
      if (dialect_ == Dialect::Cuda && !in_kernel_)
        require_kernel("a read of input '" + op->name + "'");
      const BufferInfo& buf = find_buffer(op->name);
      STIPPLE_INTERNAL_CHECK(buf.is_input && buf.decl,
                             "cpp_source: '" + op->name + "' is no input");
      STIPPLE_INTERNAL_CHECK(op->type == buf.decl->type,
                             "cpp_source: read of input '" + op->name + "' with the wrong type");
      STIPPLE_INTERNAL_CHECK(static_cast<int>(op->args.size()) == buf.dims,
                             "cpp_source: read of input '" + op->name + "' with the wrong arity");
      std::string args;
      for (const Expr& a : op->args) args += (args.empty() ? "" : ", ") + unwrapped(expr(a).text);
      return {use(buf.accessor) + "(" + args + ")", false};
    }
    case CallType::Func: break;
  }
  if (dialect_ == Dialect::Cuda && !in_kernel_) require_kernel("a read of func '" + op->name + "'");
  const BufferInfo& buf = find_buffer(op->name);
  STIPPLE_INTERNAL_CHECK(!buf.is_input, "cpp_source: func call of input '" + op->name + "'");
  STIPPLE_INTERNAL_CHECK(op->type == Type(buf.type),
                         "cpp_source: call of '" + op->name + "' with the wrong type");
  STIPPLE_INTERNAL_CHECK(static_cast<int>(op->args.size()) == buf.dims,
                         "cpp_source: call of '" + op->name + "' with the wrong arity");
  std::string args;
  for (const Expr& a : op->args) args += (args.empty() ? "" : ", ") + unwrapped(expr(a).text);
  const std::string load = use(buf.accessor) + "(" + args + ")";
  if (op->type.is_bool()) return {"(" + load + " != 0)", false};
  if (op->type.is_f16()) return {"f16_from_bits(" + load + ")", false};
  return {load, false};
}

CppGen::Value CppGen::emit_intrinsic(const Call* op) {
  const Type t = op->type;
  const std::string x = unwrapped(expr(op->args[0]).text);
  switch (op->intrinsic) {
    case Intrinsic::Abs:
      if (t.is_float()) return {"std::fabs(" + x + ")", false};
      if (t.is_unsigned()) return {x, false};
      return {"abs_int(" + x + ")", false};
    case Intrinsic::Floor: return {"std::floor(" + x + ")", false};
    case Intrinsic::Ceil: return {"std::ceil(" + x + ")", false};
    case Intrinsic::Round: return {"round_even(" + x + ")", false};
    case Intrinsic::Sqrt: return {"std::sqrt(" + x + ")", false};
    // f32 exp is Stipple's own; the rest are the C library's (float overloads: expf, logf,
    // ...), as the LLVM intrinsics become.
    case Intrinsic::Exp:
      if (t == Float32()) return {"exp_f32(" + x + ")", false};
      return {"std::exp(" + x + ")", false};
    case Intrinsic::Log: return {"std::log(" + x + ")", false};
    case Intrinsic::Sin: return {"std::sin(" + x + ")", false};
    case Intrinsic::Cos: return {"std::cos(" + x + ")", false};
    case Intrinsic::Pow: {
      const std::string y = unwrapped(expr(op->args[1]).text);
      return {"std::pow(" + x + ", " + y + ")", false};
    }
    case Intrinsic::Tan: return {"std::tan(" + x + ")", false};
    case Intrinsic::Tanh: return {"std::tanh(" + x + ")", false};
    case Intrinsic::Atan2: {
      const std::string y = unwrapped(expr(op->args[1]).text);
      return {"std::atan2(" + x + ", " + y + ")", false};
    }
    case Intrinsic::Hypot: {
      const std::string y = unwrapped(expr(op->args[1]).text);
      return {"std::hypot(" + x + ", " + y + ")", false};
    }
    // Fused, one rounding, whatever the compiler's -ffp-contract.
    case Intrinsic::Fma: {
      const std::string y = unwrapped(expr(op->args[1]).text);
      const std::string z = unwrapped(expr(op->args[2]).text);
      return {"std::fma(" + x + ", " + y + ", " + z + ")", false};
    }
    case Intrinsic::None: break;
  }
  throw_internal_error(__FILE__, __LINE__, "cpp_source: intrinsic call without an intrinsic");
}

void CppGen::reduction_loops(const Reduce* op,
                             const std::function<void(const std::vector<Value>&)>& before,
                             const std::function<void()>& per_point) {
  const std::vector<ReductionVariable>& domain = op->domain;
  const size_t n = domain.size();
  std::vector<Value> bounds;
  for (size_t v = 0; v < n; ++v) {
    bounds.push_back(named(expr(domain[v].min), ScalarType::Int32, domain[v].name + "_lo"));
    bounds.push_back(named(expr(domain[v].max), ScalarType::Int32, domain[v].name + "_hi"));
  }
  before(bounds);
  // The last variable is the outermost loop, the first the innermost; an empty range of
  // any variable runs no point.
  std::function<void(size_t)> nest = [&](size_t level) {
    if (level == 0) {
      per_point();
      return;
    }
    const ReductionVariable& rv = domain[level - 1];
    open_block();
    const std::string v = fresh(rv.name);
    const std::string lo = bounds[2 * (level - 1)].text, hi = bounds[2 * (level - 1) + 1].text;
    line("for (int32_t " + v + " = " + lo + "; " + v + " <= " + hi + "; ++" + v + ") {");
    push_var(rv.name, v, ScalarType::Int32);
    block([&] { nest(level - 1); });
    pop_var();
    line("}");
    close_block();
  };
  nest(n);
}

CppGen::Value CppGen::emit_reduce(const Reduce* op) {
  const ScalarType t = op->body.type().code;
  const Type bt = op->body.type();
  switch (op->op) {
    case ReduceOp::Sum:
    case ReduceOp::FusedSum:
    case ReduceOp::Prod:
    case ReduceOp::Minimum:
    case ReduceOp::Maximum: {
      const double init = op->op == ReduceOp::Sum || op->op == ReduceOp::FusedSum ? 0
                          : op->op == ReduceOp::Prod                              ? 1
                          : op->op == ReduceOp::Minimum                           ? bt.max_value()
                                                                                  : bt.min_value();
      const std::string acc = fresh(reduce_op_name(op->op));
      line(c_type(t) + " " + acc + " = " + literal(t, init) + ";");
      reduction_loops(
          op, [](const std::vector<Value>&) {},
          [&] {
            if (const Mul* product = fused_product(op)) {
              const std::string a = unwrapped(expr(product->a).text);
              const std::string b = unwrapped(expr(product->b).text);
              line(acc + " = std::fma(" + a + ", " + b + ", " + acc + ");");
              return;
            }
            const Value v = expr(op->body);
            const std::string x = unwrapped(v.text);
            // acc first: min is select(acc < v, acc, v), as the evaluator folds it.
            switch (op->op) {
              case ReduceOp::Sum:
                line(is_float(t) ? acc + " += " + x + ";"
                                 : acc + " = wrap_add(" + acc + ", " + x + ");");
                break;
              case ReduceOp::Prod:
                line(is_float(t) ? acc + " *= " + x + ";"
                                 : acc + " = wrap_mul(" + acc + ", " + x + ");");
                break;
              case ReduceOp::Minimum: line(acc + " = min_of(" + acc + ", " + x + ");"); break;
              default: line(acc + " = max_of(" + acc + ", " + x + ");"); break;
            }
          });
      return {acc, true};
    }
    case ReduceOp::ArgMin: {
      // The 0-based position (first variable fastest) of the first minimum; -1 when empty.
      const std::string result = fresh("argmin");
      const std::string best = fresh(result + "_value");
      const std::string best_index = fresh(result + "_index");
      const std::string index = fresh(result + "_count");
      line(c_type(t) + " " + best + " = " + literal(t, 0) + ";");
      line("int64_t " + best_index + " = -1, " + index + " = 0;");
      reduction_loops(
          op, [](const std::vector<Value>&) {},
          [&] {
            const Value v = named(expr(op->body), t, "value");
            line("if (" + best_index + " < 0 || " + v.text + " < " + best + ") {");
            ++indent_;
            line(best + " = " + v.text + ";");
            line(best_index + " = " + index + ";");
            --indent_;
            line("}");
            line("++" + index + ";");
          });
      line("const int32_t " + result + " = static_cast<int32_t>(" + best_index + ");");
      return {result, true};
    }
    case ReduceOp::Median: break;
  }
  // Median: the values as doubles; the lower median in totalOrder; 0 when empty.
  const std::string result = fresh("median");
  const std::string values = fresh(result + "_values");
  line(c_type(t) + " " + result + " = " + literal(t, 0) + ";");
  line("{");
  ++indent_;
  open_block();
  line("MedianValues " + values + ";");
  reduction_loops(
      op,
      [&](const std::vector<Value>& bounds) {
        std::string points;
        for (size_t v = 0; v < bounds.size(); v += 2) {
          points += (v ? " * " : "") + std::string("domain_span(") + bounds[v].text + ", " +
                    bounds[v + 1].text + ")";
        }
        if (points.empty()) points = "1";
        line("if (!" + values + ".reserve(" + points + ")) status = STIPPLE_ERROR_OUT_OF_MEMORY;");
        status_used_ = true;
      },
      [&] {
        const Value v = expr(op->body);
        line(values + ".add(" + unwrapped(emit_cast(t, ScalarType::Float64, v).text) + ");");
      });
  line("if (!" + values + ".empty()) {");
  ++indent_;
  line(result + " = " +
       unwrapped(emit_cast(ScalarType::Float64, t, {values + ".median()", false}).text) + ";");
  --indent_;
  line("}");
  close_block();
  --indent_;
  line("}");
  return {result, true};
}

// ---------------------------------------------------------------------------------------
// CUDA (cuda_source.h)

// The GPU thread loops inside a kernel's block band: each chain of directly nested ones.
class ThreadLoopChains : public IRVisitor {
 public:
  std::vector<std::vector<const For*>> chains;  // outermost first
  using IRVisitor::visit;
  void visit(const For* op) override {
    if (op->for_type != ForType::GpuThread) return IRVisitor::visit(op);
    std::vector<const For*> chain{op};
    while (const For* next = chain.back()->body.as<For>()) {
      if (next->for_type != ForType::GpuThread) break;
      chain.push_back(next);
    }
    chains.push_back(chain);
    chain.back()->body.accept(this);
  }
};

// A constant bound on a thread loop's extent (a split's `min(factor, rest)`), or 0.
int64_t constant_upper_bound(const Expr& e) {
  if (const IntImm* imm = e.as<IntImm>()) return imm->value;
  if (const Min* op = e.as<Min>()) {
    const int64_t a = constant_upper_bound(op->a), b = constant_upper_bound(op->b);
    if (a > 0 && b > 0) return std::min(a, b);
    return a > 0 ? a : b;
  }
  return 0;
}

const char* const kDims[] = {"x", "y", "z"};

// check_schedule with ScheduleTarget::Gpu rejects such a schedule at its line; this is for
// lowered code that did not come through it.
void CppGen::require_kernel(const std::string& what) const {
  throw UserError("the CUDA back end computes funcs only inside GPU kernels, but " + what +
                  " is outside every kernel (check the schedule for a GPU target: stipple "
                  "check --target cuda-sm_90)");
}

void CppGen::emit_kernel(const For* op) {
  // The band of block loops, outermost first; the innermost is blockIdx.x.
  std::vector<const For*> band{op};
  while (const For* next = band.back()->body.as<For>()) {
    if (next->for_type != ForType::GpuBlock) break;
    band.push_back(next);
  }
  if (band.size() > 3) {
    throw UserError("GPU kernel of loop '" + op->name + "' has more than three GPU block loops");
  }
  std::set<std::string> band_vars;
  std::vector<Value> mins, extents;
  for (const For* b : band) {
    std::set<std::string> names = variable_names(b->min);
    names.merge(variable_names(b->extent));
    for (const std::string& n : names) {
      if (band_vars.count(n)) {
        throw UserError("the bounds of GPU block loop '" + b->name + "' depend on block loop '" +
                        n + "' outside it; a kernel's grid must be known at its launch");
      }
    }
    band_vars.insert(b->name);
    mins.push_back(named(expr(b->min), ScalarType::Int32, b->name + ".min"));
    extents.push_back(named(expr(b->extent), ScalarType::Int32, b->name + ".extent"));
  }
  const Stmt& inner = band.back()->body;

  // Threads: one chain of thread loops, the innermost threadIdx.x; each dimension's size is
  // its loop's constant bound (the split factor).
  ThreadLoopChains chains;
  inner.accept(&chains);
  if (chains.chains.size() > 1) {
    throw UserError("GPU kernel of loop '" + op->name +
                    "' has two separate nests of GPU thread loops; give each its own kernel");
  }
  int64_t block_dims[3] = {1, 1, 1};
  std::map<std::string, int> thread_dims;
  if (!chains.chains.empty()) {
    const std::vector<const For*>& chain = chains.chains[0];
    STIPPLE_INTERNAL_CHECK(chain.size() <= 3, "cuda_source: more than three thread loops");
    for (size_t k = 0; k < chain.size(); ++k) {
      const int dim = static_cast<int>(chain.size() - 1 - k);
      const int64_t bound = constant_upper_bound(chain[k]->extent);
      if (bound <= 0) {
        throw UserError("GPU thread loop '" + chain[k]->name +
                        "' has no constant bound on its extent; make it the inner loop of a split");
      }
      block_dims[dim] = bound;
      thread_dims[chain[k]->name] = dim;
    }
  }

  // The kernel's body, printed first to learn which outer names it reads.
  const std::set<std::string> outer_live = live_;
  const std::set<std::string> saved_used = used_;
  const bool saved_status = status_used_;
  used_.clear();
  status_used_ = false;
  in_kernel_ = true;
  thread_dims_ = thread_dims;
  const int saved_indent = indent_;
  indent_ = 0;
  const std::string body = captured(1, [&] {
    open_block();
    std::vector<std::string> index_names;
    for (size_t k = 0; k < band.size(); ++k) {
      index_names.push_back(fresh(band[k]->name));
      push_var(band[k]->name, index_names.back(), ScalarType::Int32);
    }
    // The body first, then the block indices it reads (gpu_single_thread's reads none).
    const std::string inner_text = captured(0, [&] { emit(inner); });
    for (size_t k = 0; k < band.size(); ++k) {
      if (!used_.count(index_names[k])) continue;
      const char* dim = kDims[band.size() - 1 - k];
      if (is_identifier_start(mins[k].text[0])) use(mins[k].text);
      line("const int32_t " + index_names[k] + " = " +
           (mins[k].text == "0" ? std::string() : mins[k].text + " + ") +
           "static_cast<int32_t>(blockIdx." + dim + ");");
    }
    *out_ += inner_text;
    for (size_t k = 0; k < band.size(); ++k) pop_var();
    close_block();
  });
  indent_ = saved_indent;
  in_kernel_ = false;
  thread_dims_.clear();
  const bool kernel_status = status_used_;
  status_used_ = saved_status;
  const std::set<std::string> kernel_used = used_;
  used_ = saved_used;

  // Parameters: the error word, the outer scalars it reads, and a descriptor (by value) of
  // each buffer it touches.
  std::vector<std::string> params, args;
  if (kernel_status) {
    params.push_back("int32_t* const stipple_error");
    args.push_back("stipple_error");
    error_word_ = true;
  }
  std::set<std::string> passed;
  auto scalar = [&](const std::string& c, ScalarType t) {
    if (!kernel_used.count(c) || !outer_live.count(c) || passed.count(c)) return;
    passed.insert(c);
    params.push_back("const " + c_type(t) + " " + c);
    args.push_back(use(c));
  };
  for (const Binding& b : vars_) scalar(b.c, b.type);
  for (const auto& [ir, ct] : params_) scalar(ct.first, ct.second);
  std::ostringstream decls;
  std::set<std::string> described;
  for (const BufferInfo& buf : buffers_) {
    if (described.count(buf.accessor)) continue;  // an inner buffer of the same name won
    const External* ext = nullptr;
    std::string descriptor;
    if (buf.external >= 0) {
      ext = &externals_[buf.external];
      descriptor = "buffers[" + std::to_string(buf.external) + "]";
    } else {
      auto it = device_externals_.find(buf.accessor);
      if (it == device_externals_.end()) continue;
      ext = &it->second;
      descriptor = buf.descriptor;
    }
    std::set<std::string> decl_used;
    for (const std::string& n : {ext->accessor, ext->host, ext->min, ext->extent, ext->stride}) {
      if (kernel_used.count(n)) decl_used.insert(n);
    }
    if (decl_used.empty()) continue;
    described.insert(buf.accessor);
    const std::string param = "stipple_b" + std::to_string(params.size());
    params.push_back("const stipple_buffer " + param);
    args.push_back(descriptor);
    buffer_declarations(decls, buf, *ext, param, decl_used, true, "  ", IndexWidth::Bits32);
  }

  const std::string kernel = options_.symbol + "_kernel" + std::to_string(kernel_count_++);
  std::string head = "__global__ void " + kernel + "(";
  for (size_t k = 0; k < params.size(); ++k) head += (k ? ", " : "") + params[k];
  kernels_ += "\n// GPU block loops";
  for (const For* b : band) kernels_ += " " + b->name;
  kernels_ += "; " + std::to_string(block_dims[0] * block_dims[1] * block_dims[2]) +
              " threads per block.\n";
  kernels_ += head + ") {\n" + decls.str();
  if (kernel_status) kernels_ += "  int32_t status = STIPPLE_OK;\n";
  kernels_ += body;
  if (kernel_status) kernels_ += "  if (status != STIPPLE_OK) atomicExch(stipple_error, status);\n";
  kernels_ += "}\n";

  // The launch: one block per point of the band, none when the band is empty.
  std::string nonempty, grid = "dim3(";
  for (size_t k = 0; k < band.size(); ++k) {
    nonempty += (k ? " && " : "") + extents[k].text + " > 0";
  }
  for (size_t d = 0; d < 3; ++d) {
    const size_t k = band.size() - 1 - d;
    grid += (d ? ", " : "") +
            (d < band.size() ? "static_cast<unsigned>(" + extents[k].text + ")" : std::string("1"));
  }
  grid += ")";
  const std::string block = "dim3(" + std::to_string(block_dims[0]) + ", " +
                            std::to_string(block_dims[1]) + ", " + std::to_string(block_dims[2]) +
                            ")";
  std::string call;
  for (size_t k = 0; k < args.size(); ++k) call += (k ? ", " : "") + args[k];
  line("if (status == STIPPLE_OK && " + nonempty + ") {");
  line("  STIPPLE_CUDA_LAUNCH(" + kernel + ", " + grid + ", " + block + ")(" + call + ");");
  line("  if (cudaGetLastError() != cudaSuccess) status = STIPPLE_ERROR_DEVICE;");
  line("}");
  status_used_ = true;
}

void CppGen::emit_gpu_loop(const For* op) {
  if (op->for_type == ForType::GpuBlock) {
    throw UserError("GPU block loop '" + op->name +
                    "' is inside another kernel's loops; a kernel cannot launch kernels");
  }
  auto it = thread_dims_.find(op->name);
  STIPPLE_INTERNAL_CHECK(it != thread_dims_.end(),
                         "cuda_source: thread loop '" + op->name + "' outside the kernel's chain");
  const Value min = named(expr(op->min), ScalarType::Int32, op->name + ".min");
  const Value extent = named(expr(op->extent), ScalarType::Int32, op->name + ".extent");
  open_block();
  const std::string v = fresh(op->name);
  push_var(op->name, v, ScalarType::Int32);
  const std::string thread =
      std::string("static_cast<int32_t>(threadIdx.") + kDims[it->second] + ")";
  // The block has the loop's bound of threads; those past this iteration's extent idle.
  line("if (" + thread + " < " + extent.text + ") {");
  ++indent_;
  line("const int32_t " + v + " = " + (min.text == "0" ? "" : min.text + " + ") + thread + ";");
  --indent_;
  block([&] { emit(op->body); });
  line("}");
  pop_var();
  close_block();
}

void CppGen::emit_device_allocate(const Allocate* op) {
  const int dims = static_cast<int>(op->extents.size());
  STIPPLE_INTERNAL_CHECK(op->type.lanes == 1 && dims <= kMaxBufferDims,
                         "cuda_source: unsupported Allocate of '" + op->name + "'");
  std::vector<std::string> extents, mins;
  for (int d = 0; d < dims; ++d) {
    const Expr& e = op->extents[d];
    STIPPLE_INTERNAL_CHECK(e.type() == Int32(), "cuda_source: non-i32 Allocate extent");
    extents.push_back("std::max<int64_t>(" + unwrapped(expr(e).text) + ", 0)");
    const Binding* m = find_var(op->name + ".min." + std::to_string(d));
    mins.push_back(m ? use(m->c) : "0");
  }
  line("{");
  ++indent_;
  open_block();
  BufferInfo buf;
  buf.ir = op->name;
  buf.type = op->type.code;
  buf.dims = dims;
  buf.accessor = fresh(op->name);
  External ext;
  ext.accessor = buf.accessor;
  ext.host = fresh(op->name + "_host");
  ext.min = fresh(op->name + "_min");
  ext.extent = fresh(op->name + "_extent");
  ext.stride = fresh(op->name + "_stride");
  buf.extent = ext.extent;
  buf.descriptor = fresh(op->name + "_buffer");
  const std::string device = fresh(op->name + "_device");
  const std::string n = "[" + std::to_string(std::max(dims, 1)) + "]";
  device_externals_[buf.accessor] = ext;
  buffers_.push_back(buf);
  const std::string body = captured(1, [&] {
    open_block();
    emit(op->body);
    close_block();
  });
  buffers_.pop_back();
  line("// " + op->name + ": " + to_string(op->type) + ", " + std::to_string(dims) +
       " dimensions, dimension 0 innermost, in device memory");
  std::string list;
  for (int d = 0; d < dims; ++d) list += (d ? ", " : "") + extents[d];
  if (dims > 0) line("const int64_t " + ext.extent + n + " = {" + list + "};");
  line("stipple_buffer " + buf.descriptor + " = {};");
  line(buf.descriptor + ".type = " + type_constant(buf.type) + ";");
  line(buf.descriptor + ".dimensions = " + std::to_string(dims) + ";");
  std::string bytes = std::to_string(bytes_of(op->type.code));
  std::string stride = "1";
  for (int d = 0; d < dims; ++d) {
    const std::string dd = buf.descriptor + ".dim[" + std::to_string(d) + "]";
    line(dd + ".min = " + mins[d] + ";");
    line(dd + ".extent = " + ext.extent + subscript(d) + ";");
    line(dd + ".stride = " + stride + ";");
    stride = (d ? stride + " * " : std::string()) + ext.extent + subscript(d);
    bytes = ext.extent + subscript(d) + " * " + bytes;
  }
  line("void* " + device + " = nullptr;");
  line("if (status == STIPPLE_OK && !fits_kernel_index(" + buf.descriptor + ")) {");
  line("  status = STIPPLE_ERROR_BUFFER_TOO_LARGE;");
  line("}");
  line("if (status == STIPPLE_OK) {");
  line("  status = device_malloc(&" + device + ", std::max<int64_t>(" + bytes + ", 1));");
  line("}");
  line("if (status == STIPPLE_OK) {  // else the body is skipped");
  line("  " + buf.descriptor + ".host = " + device + ";");
  status_used_ = true;
  *out_ += body;
  line("}");
  line("cudaFree(" + device + ");  // nothing for a null pointer");
  close_block();
  --indent_;
  line("}");
}

}  // namespace

std::string cpp_source(const LoweredFunction& f, const AotOptions& options) {
  check_c_function_name(options.symbol);
  CppGen gen(f, options);
  return gen.generate();
}

std::string cuda_source(const LoweredFunction& f, const AotOptions& options) {
  check_c_function_name(options.symbol);
  CppGen gen(f, options, Dialect::Cuda);
  return gen.generate_cuda();
}

}  // namespace stipple::codegen
