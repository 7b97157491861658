// Printing the IR for people and for round trips.
//
// Expressions print in .stp syntax with the fewest parentheses that keep the meaning, and
// a Pipeline prints as a .stp program that compiles back to an equal Pipeline (see
// tests/proto/benchmark_roundtrip_test.cpp); a Let prints as `let x = v in body`. A few
// nodes have no .stp spelling and print in a readable but unparseable form: InputExtent of
// dimension 3 (`in.dim3`), Bool constants (`true`, `false`), casts to bool (`bool(e)`), non-finite
// floats (`inf`, `nan`) and vector types (`f32x8(e)`). None of them comes from the checker.
//
// Statements print as an indented loop nest for debugging schedules:
//   allocate A[in.width, in.height] : f32:
//     parallel y in 0..in.height - 1:
//       for x in 0..in.width - 1:
//         A(x, y) = in(x, y) * 2.0
#pragma once

#include <ostream>
#include <string>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::string to_string(const Pipeline& p);

/// The shortest decimal that reads back as exactly `value`, always with a `.` or an
/// exponent so that it lexes as a float literal ("4.0", "0.1", "1e-07"). `as_f32` picks
/// the shortest form of the float value when that still reads back exactly through a
/// double. Non-finite values print as "inf", "-inf" and "nan".
std::string format_float_literal(double value, bool as_f32 = false);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace stipple
