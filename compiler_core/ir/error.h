// The two kinds of failure: a user's mistake (bad program, schedule, image or option;
// the message is for the user) and a compiler bug (an internal invariant broke).
#pragma once

#include <stdexcept>
#include <string>

namespace stipple {

/// A mistake in what the user gave us. The message is complete and user-facing.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A broken invariant inside Stipple: always a bug in Stipple, never in the user's input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void throw_internal_error(const char* file, int line, const std::string& message);

}  // namespace stipple

#define STIPPLE_INTERNAL_CHECK(cond, msg)                                    \
  do {                                                                       \
    if (!(cond)) ::stipple::throw_internal_error(__FILE__, __LINE__, (msg)); \
  } while (0)
