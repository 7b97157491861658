// Recursive-descent parser for .stp programs (grammar: LANGUAGE.md beside this file).
// Stops at the first error. Expressions deeper than kMaxExpressionDepth are an error,
// which bounds the recursion of every later pass over the tree.
#pragma once

#include "compiler_core/language/ast.h"

namespace stipple {

inline constexpr int kMaxExpressionDepth = 256;

/// Parses a whole program. Throws CompileError.
AstProgram parse_program(const SourceText& source);

}  // namespace stipple
