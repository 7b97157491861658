// Substitution of expressions for variables.
#pragma once

#include <map>
#include <string>

#include "compiler_core/ir/ir.h"

namespace stipple {

/// e with each free Variable named in `replacements` replaced by its expression. A Let or
/// a Reduce that binds one of the names hides it in its body (and, for a Reduce, in the
/// bounds of its later variables). The replacements must not mention names that binders
/// inside e bind (nothing is renamed to avoid capture).
Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements);

}  // namespace stipple
