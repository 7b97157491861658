// The one exception the embedding API throws: every engine entry point runs its work
// through translated(), so that the compiler's exceptions reach a program as
// stipple::Error with the command line's messages.
#pragma once

#include <exception>
#include <new>

#include "compiler_core/ir/error.h"
#include "stipple/buffer_view.h"

namespace stipple::embedding {

/// Runs `f`, translating the compiler's exceptions into the API's one, with the command
/// line's messages (client/main.cpp) but for its "stipple: " prefix.
template <typename F>
auto translated(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const UserError& e) {
    throw Error(Error::Kind::BadInput, e.what());
  } catch (const std::bad_alloc&) {
    throw Error(Error::Kind::Failure, "out of memory");
  } catch (const std::exception& e) {
    throw Error(Error::Kind::Failure, e.what());
  }
}

}  // namespace stipple::embedding
