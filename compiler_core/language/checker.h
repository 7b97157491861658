// The checker: resolves names, infers and checks types, orders funcs by their calls
// (rejecting cycles), desugars `+=` and `clamp`, and produces the typed IR Pipeline.
// Every error is a CompileError at the offending token; warnings are CompileWarnings.
#pragma once

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/ast.h"

namespace stipple {

/// Warnings (funcs the output never uses) are appended to `warnings` when given.
Pipeline check_program(const SourceText& source, const AstProgram& program,
                       std::vector<CompileWarning>* warnings = nullptr);

}  // namespace stipple
