// `vectorize(x, vectors(k))`: a vector width in native registers of the target rather than
// in lanes (Halide's natural_vector_size, times k), so that one hand schedule vectorises
// by the same number of registers on NEON and SSE (16 bytes), AVX2 (32) and AVX-512 (64).
// It is resolved to lanes when a schedule is compiled for a target (compile_schedule), so
// everything after the parser sees a width in lanes; the text keeps `vectors(k)`, and a
// worker that compiles the text compiles it for its own registers.
#pragma once

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/ir/type.h"
#include "compiler_core/language/source.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// Lanes of one native register of `vector_bytes` for values of `type`, counted as the
/// code generator computes them: in at least 32 bits (narrower types are widened for
/// arithmetic), so 4 for f32 or u8 on NEON, 8 on AVX2, 16 on AVX-512; f64 half as many.
int natural_vector_lanes(int vector_bytes, Type type);

/// Replaces the width of every `vectorize(loop, vectors(k))` in `s` by
/// k * natural_vector_lanes(vector_bytes, the func's type). A CompileError at the argument
/// for anything but k = 1, 2 or 4 (the checker then checks the width in lanes).
void resolve_vector_widths(Schedule& s, const Pipeline& p, int vector_bytes,
                           const SourceText& source);

}  // namespace stipple
