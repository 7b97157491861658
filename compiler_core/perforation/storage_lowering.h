// Precision lowering as a rewrite of the pipeline (VizGen: Accelerating Visual Computing
// Prototypes in Dynamic Languages, "Array storage alteration" and §9.2): a func scheduled
// `store_as(f16)` becomes an f16 func of the language (LANGUAGE.md, "Types"). Its
// definition rounds the f32 value it computes to IEEE binary16, nearest even, where the
// value is computed; its buffer, wherever the schedule puts it, holds halves (half the
// bytes of f32: what a memory-bound stage gains); and every read of it widens the half to
// f32 exactly, as a read of an f16 func the program declared does:
//
//   func A(x, y) = sum(i in -8..8 : k(i) * in(x - i, y))           with A.store_as(f16)
//   -> func A(x, y) = f16(sum(i in -8..8 : k(i) * in(x - i, y)))   (an f16 func)
//      and each A(x, y - i) in a reader -> f32(A(x, y - i))
//
// Everything after it (the evaluator, lowering, every back end) sees an ordinary f16
// func, so the variant computes the same bits everywhere, and the evaluator run on the
// rewritten pipeline is its reference. The schedule checker accepts store_as(f16) only on
// an f32 func without update definitions that is not the output, and not together with a
// perforation or channels of the same func (approximation.h).
//
// Integer narrowing is the same rewrite: `raw.store_as(u16)` makes an i32 func a u16 one
// (a cast where it is computed, a widening cast where it is read). The checker accepts it
// only where bounds::interval_of proves every value the definition can compute, for any
// input, param and coordinate, to be a value of the narrower type, so the casts never
// change a value and the variant is exact: half the bytes of the func's buffer for free.
// Not together with perforated reductions of the same func, which the proof does not cover.
#pragma once

#include <map>
#include <string>

#include "compiler_core/ir/pipeline.h"

namespace stipple::perforation {

/// p with each func named in `storage` (none the output) stored as the type given: an f32
/// func as Float16, an integer func as a narrower integer type.
Pipeline lower_storage(const Pipeline& p, const std::map<std::string, Type>& storage);

}  // namespace stipple::perforation
