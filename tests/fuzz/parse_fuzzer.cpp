// libFuzzer target for the language front end: any byte string must either compile or
// fail with a CompileError/UserError. An InternalError, a crash, a sanitizer report or a
// hang is a bug. Build: cmake -DSTIPPLE_FUZZ=ON with clang (see tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler_core/language/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    stipple::compile_pipeline(text, "fuzz.stp");
  } catch (const stipple::UserError&) {
    // Expected for almost every input.
  }
  return 0;
}
