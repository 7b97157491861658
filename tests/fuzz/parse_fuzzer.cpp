// libFuzzer target for the language front end. Any byte string must either compile or
// fail with a UserError; an InternalError, a crash, a sanitizer report or a hang is a bug.
// A program that compiles must also survive both round trips the rest of Stipple relies
// on: printed back as .stp it recompiles to an equal pipeline, and its protobuf form
// decodes to an equal pipeline. Build: see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "proto/pipeline_codec.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "round trip failed (%s) for:\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  stipple::Pipeline p;
  try {
    p = stipple::compile_pipeline(text, "fuzz.stp");
  } catch (const stipple::UserError&) {
    return 0;  // expected for almost every input
  }
  std::string printed = stipple::to_string(p);
  try {
    if (!stipple::equal(stipple::compile_pipeline(printed, "printed.stp"), p))
      fail("text differs", printed);
  } catch (const stipple::UserError& e) {
    fail(e.what(), printed);
  }
  try {
    if (!stipple::equal(stipple::parse_pipeline_bytes(stipple::serialize_pipeline(p)), p)) {
      fail("protobuf differs", printed);
    }
  } catch (const stipple::UserError& e) {
    fail(e.what(), printed);
  }
  return 0;
}
