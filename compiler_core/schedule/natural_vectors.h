// `vectorize(x, vectors(k))`: a vector width in native registers of the target rather than
// in lanes (Halide's natural_vector_size, times k), so that one hand schedule vectorises
// by the same number of registers on NEON and SSE (16 bytes), AVX2 (32) and AVX-512 (64).
// It is resolved to lanes when a schedule is compiled for a target (compile_schedule), so
// everything after the checker sees a width in lanes; the text keeps `vectors(k)`, and a
// worker that compiles the text compiles it for its own registers.
#pragma once

#include <optional>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/ir/type.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

/// Lanes of one native register of `vector_bytes` for values of `type`, counted as the
/// code generator computes them: in at least 32 bits (narrower types are widened for
/// arithmetic), so 4 for f32 or u8 on NEON, 8 on AVX2, 16 on AVX-512; f64 half as many.
int natural_vector_lanes(int vector_bytes, Type type);

/// k when `width` is `vectors(k)` for an integer k (any k: the checker says which it takes).
std::optional<int64_t> vector_register_count(const ScheduleArg& width);

/// The register counts vectors(k) takes: 1, 2 or 4, a power of two of lanes within the
/// checker's 64 on every target (four AVX-512 registers of f32 are 64 lanes), so that a
/// schedule legal on one target is legal on every other.
bool valid_vector_register_count(int64_t k);

/// Replaces the width of every `vectorize(loop, vectors(k))` in `s` with a valid k by
/// k * natural_vector_lanes(vector_bytes, the func's type). Anything else is left for
/// check_schedule to report, in text order with the other errors.
void resolve_vector_widths(Schedule& s, const Pipeline& p, int vector_bytes);

}  // namespace stipple
