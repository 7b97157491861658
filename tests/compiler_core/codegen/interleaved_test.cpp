// Code specialised to a caller's buffer layout (LoweredFunction::inner_strides): inputs and
// outputs interleaved (x stride C, as OpenCV's and numpy's H x W x C images), padded rows,
// rows in reverse order, against the same lowered function on dense planar buffers: equal
// element for element (only where elements live changes, not what is computed), for the
// benchmark pipelines under their hand schedules and random legal schedules, and for an
// inline u8 program. Also: an interleaved row is read as one load and a shuffle
// (strided_row) rather than a gather, a descriptor of another layout is refused, and back
// ends that write files refuse the specialisation (their header promises dense rows).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/codegen_llvm.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace stipple {
namespace {

enum class Layout {
  Planar,       // dense, x stride 1 (what every other caller passes)
  Interleaved,  // x stride C, c stride 1, rows padded by a few pixels
  Reversed,     // x stride 1, rows bottom up (negative y stride), padded
};

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Planar: return "planar";
    case Layout::Interleaved: return "interleaved";
    case Layout::Reversed: return "reversed";
  }
  return "?";
}

/// Calls f(coordinate) for every coordinate of a box of `extents` (mins 0).
template <typename F>
void for_each_coordinate(const std::vector<int64_t>& extents, F&& f) {
  int64_t count = 1;
  for (int64_t e : extents) count *= e;
  std::vector<int64_t> at(extents.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t r = i;
    for (size_t k = 0; k < extents.size(); ++k) {
      at[k] = r % extents[k];
      r /= extents[k];
    }
    f(at);
  }
}

std::vector<int64_t> extents_of(const Buffer& b) {
  std::vector<int64_t> e;
  for (int d = 0; d < b.dimensions(); ++d) e.push_back(b.extent(d));
  return e;
}

/// A buffer in a layout of its own memory, with the values of a dense one.
struct Laid {
  std::vector<std::byte> memory;
  Buffer view;
};

Laid lay_out(const Buffer& dense, Layout layout) {
  const int dims = dense.dimensions();
  const int64_t w = dense.extent(0), h = dims > 1 ? dense.extent(1) : 1;
  const int64_t c = dims > 2 ? dense.extent(2) : 1;
  const int64_t pad = 3;
  std::vector<BufferDim> d(static_cast<size_t>(dims));
  int64_t origin = 0, elements = 0;
  if (layout == Layout::Interleaved && dims == 3) {
    const int64_t row = w * c + pad;
    d[0] = {0, w, c};
    d[1] = {0, h, row};
    d[2] = {0, c, 1};
    elements = row * h;
  } else {
    const int64_t row = w + (layout == Layout::Planar ? 0 : pad);
    d[0] = {0, w, 1};
    if (dims > 1) d[1] = {0, h, layout == Layout::Reversed ? -row : row};
    if (dims > 2) d[2] = {0, c, row * h};
    for (int k = 3; k < dims; ++k) d[static_cast<size_t>(k)] = {0, dense.extent(k), row * h * c};
    elements = row * h * c;
    for (int k = 3; k < dims; ++k) elements *= dense.extent(k);
    if (layout == Layout::Reversed && dims > 1) origin = (h - 1) * row;
  }
  Laid out;
  const size_t size = bytes_of(dense.type());
  out.memory.assign(static_cast<size_t>(elements) * size + 64, std::byte{0x5a});
  out.view = Buffer::view(dense.type(), d, out.memory.data() + origin * static_cast<int64_t>(size));
  for_each_coordinate(extents_of(dense),
                      [&](const std::vector<int64_t>& at) { out.view.set(at, dense.get(at)); });
  return out;
}

/// Every element of `laid` equals `dense`'s; the first difference otherwise.
std::string first_difference(const Buffer& dense, const Buffer& laid) {
  std::string first;
  for_each_coordinate(extents_of(dense), [&](const std::vector<int64_t>& at) {
    const double a = dense.get(at), b = laid.get(at);
    if (first.empty() && !(a == b) && !(a != a && b != b)) {
      std::string where;
      for (int64_t v : at) where += (where.empty() ? "" : ", ") + std::to_string(v);
      first = "at (" + where + "): dense " + std::to_string(a) + ", laid out " + std::to_string(b);
    }
  });
  return first;
}

Buffer random_image(ScalarType t, std::vector<int64_t> extents, std::mt19937_64& rng) {
  Buffer b(t, extents);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int64_t i = 0; i < b.element_count(); ++i) {
    const double u = unit(rng);
    b.set_flat(i, t == ScalarType::UInt8 ? std::floor(u * 256) : u);
  }
  return b;
}

/// Runs `lowered` on dense inputs and output, then with every buffer in `layout` (code
/// specialised to it), and compares.
void expect_same_in_layout(const Pipeline& p, const LoweredFunction& lowered,
                           const std::map<std::string, Buffer>& inputs, Layout in_layout,
                           Layout out_layout, const std::string& what) {
  SCOPED_TRACE(what + ", inputs " + layout_name(in_layout) + ", output " + layout_name(out_layout));
  const std::vector<int64_t> extents = output_extents(p, inputs, {});
  auto dense_code = codegen::compile_for_host(lowered);
  const Buffer expected = run_lowered(*dense_code, lowered, p, inputs, {}, extents);

  LoweredFunction f = lowered;
  std::vector<Laid> keep;
  std::map<std::string, Buffer> laid_inputs;
  for (const auto& [name, buffer] : inputs) {
    keep.push_back(lay_out(buffer, in_layout));
    laid_inputs.emplace(name, keep.back().view);
    if (keep.back().view.dim(0).stride != 1) f.inner_strides[name] = keep.back().view.dim(0).stride;
  }
  Laid out = lay_out(Buffer(expected.type(), extents), out_layout);
  if (out.view.dim(0).stride != 1) f.inner_strides[p.output.func] = out.view.dim(0).stride;
  auto code = codegen::compile_for_host(f);
  run_lowered_into(*code, f, p, laid_inputs, {}, out.view);
  EXPECT_EQ(first_difference(expected, out.view), "");
  // Nothing outside the output's elements was written: every other byte keeps lay_out's
  // filler.
  std::vector<bool> element_byte(out.memory.size(), false);
  const size_t size = bytes_of(expected.type());
  const auto* base = static_cast<const std::byte*>(out.view.data());
  for_each_coordinate(extents, [&](const std::vector<int64_t>& at) {
    const size_t byte = static_cast<size_t>(base - out.memory.data()) +
                        static_cast<size_t>(out.view.offset_of(at)) * size;
    for (size_t b = 0; b < size; ++b) element_byte[byte + b] = true;
  });
  size_t stray = 0;
  for (size_t i = 0; i < out.memory.size(); ++i) {
    stray += !element_byte[i] && out.memory[i] != std::byte{0x5a} ? 1 : 0;
  }
  EXPECT_EQ(stray, 0u) << "bytes written outside the output's elements";
}

const char* kPipelines[] = {"two_pass_blur", "unsharp", "median", "blur3x3", "bilateral_grid"};

TEST(Interleaved, BenchmarkPipelinesUnderHandAndRandomSchedules) {
  std::mt19937_64 rng(30);
  for (const char* name : kPipelines) {
    const std::string base = std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/" + name;
    const Pipeline p = load_pipeline_file(base + ".stp");
    std::map<std::string, Buffer> inputs;
    for (const InputDecl& in : p.inputs) {
      std::vector<int64_t> extents{37, 23};
      if (in.dim_names.size() == 3) extents.push_back(3);
      inputs.emplace(in.name, random_image(in.type.code, extents, rng));
    }
    std::vector<std::pair<std::string, Schedule>> schedules = {
        {"hand", load_schedule_file(base + ".sched", p)}};
    for (int k = 0; k < 3; ++k) schedules.push_back({"random", random_schedule(p, rng)});
    for (const auto& [kind, s] : schedules) {
      const LoweredFunction lowered = lower(p, s);
      const std::string what =
          std::string(name) + " under a " + kind + " schedule:\n" + print_schedule(s);
      expect_same_in_layout(p, lowered, inputs, Layout::Interleaved, Layout::Interleaved, what);
      expect_same_in_layout(p, lowered, inputs, Layout::Interleaved, Layout::Planar, what);
      expect_same_in_layout(p, lowered, inputs, Layout::Reversed, Layout::Reversed, what);
    }
  }
}

constexpr const char* kU8Program = R"(
pipeline u8_box
input in : u8[x, y, c]
func h(x, y, c) = u16(in(x - 1, y, c)) + u16(in(x, y, c)) + u16(in(x + 1, y, c))
func out(x, y, c) = u8((h(x, y - 1, c) + h(x, y, c) + h(x, y + 1, c)) / 9)
output out
)";

TEST(Interleaved, U8ProgramVectorisedAndParallel) {
  const Pipeline p = compile_pipeline(kU8Program, "u8_box.stp");
  std::mt19937_64 rng(8);
  const std::map<std::string, Buffer> inputs = {
      {"in", random_image(ScalarType::UInt8, {101, 31, 3}, rng)}};
  for (const char* text : {"",
                           "out.split(y, yo, yi, 8).vectorize(x, "
                           "16).parallel(yo)\nh.compute_at(out, yo).vectorize(x, 16)\n",
                           "out.vectorize(x, 32)\nh.compute_root().vectorize(x, 8)\n"}) {
    const Schedule s = compile_schedule(text, "u8.sched", p);
    expect_same_in_layout(p, lower(p, s), inputs, Layout::Interleaved, Layout::Interleaved,
                          std::string("u8_box under:\n") + text);
  }
}

TEST(Interleaved, RowsAreLoadedAndShuffledNotGathered) {
  // The optimisation: an interleaved channel's row is every C-th element of one wide load
  // (strided_row). Without it, each lane would be gathered.
  const Pipeline p = compile_pipeline(kU8Program, "u8_box.stp");
  const Schedule s = compile_schedule("out.vectorize(x, 16)\n", "s", p);
  LoweredFunction f = lower(p, s);
  f.inner_strides = {{"in", 3}, {"out", 3}};
  auto jit = codegen::JitCompiler::create();
  const std::string ir = jit->llvm_ir(f, /*optimized=*/false);
  EXPECT_NE(ir.find("strided.row"), std::string::npos);
  size_t gathers = 0;
  for (size_t at = ir.find("@llvm.masked.gather"); at != std::string::npos;
       at = ir.find("@llvm.masked.gather", at + 1)) {
    ++gathers;
  }
  // The declaration, and the edge pixels' per-lane boundary path; not one per tap in the
  // interior's row path.
  const std::string dense_ir = jit->llvm_ir(lower(p, s), false);
  size_t dense_gathers = 0;
  for (size_t at = dense_ir.find("@llvm.masked.gather"); at != std::string::npos;
       at = dense_ir.find("@llvm.masked.gather", at + 1)) {
    ++dense_gathers;
  }
  EXPECT_EQ(gathers, dense_gathers) << "interleaved rows read by gathers beyond the dense code's";
}

TEST(Interleaved, ADescriptorOfAnotherLayoutIsRefusedOnEntry) {
  const Pipeline p = compile_pipeline(kU8Program, "u8_box.stp");
  LoweredFunction f = lower(p, Schedule{});
  f.inner_strides = {{"in", 3}};
  auto code = codegen::compile_for_host(f);
  Buffer in(ScalarType::UInt8, {8, 4, 3}), out(ScalarType::UInt8, {8, 4, 3});  // planar
  std::vector<codegen::BufferDescriptor> d = {codegen::describe(in), codegen::describe(out)};
  EXPECT_EQ((*code)(d.data(), nullptr), codegen::kErrorBufferMismatch);
}

TEST(Interleaved, FileWritingBackEndsRefuseIt) {
  const Pipeline p = compile_pipeline(kU8Program, "u8_box.stp");
  LoweredFunction f = lower(p, Schedule{});
  f.inner_strides = {{"in", 3}};
  for (codegen::EmitKind k : {codegen::EmitKind::Object, codegen::EmitKind::CppSource}) {
    const codegen::Backend& b = codegen::backend_for(k, "host");
    codegen::BackendRequest req;
    req.kinds = {k};
    req.options.symbol = "u8_box";
    const codegen::BackendResult r = b.compile(f, req);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.unsupported.find("dense rows"), std::string::npos) << r.unsupported;
  }
}

}  // namespace
}  // namespace stipple
