// The message of the UserError a call throws, for tests that assert a message exactly.
#pragma once

#include <functional>
#include <string>

#include "compiler_core/ir/error.h"

namespace stipple::testing_common {

/// The UserError's what(), or "(no UserError)" when `f` returns normally.
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no UserError)";
}

}  // namespace stipple::testing_common
