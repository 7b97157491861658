// The approximation directives of a func, as typed values: image perforation
// (Image Perforation §3-4) and the loop perforation baseline it is compared with
// (Sidiroglou-Douskos et al. 2011). In the text they sit in the func's chain like any
// directive; `func_approximation` reads and validates them, with the location of the
// argument at fault.
//
//   A.perforate(grid(4, 1))                         // linear, on demand (the defaults)
//   A.perforate(grid(4, 4), nearest, precomputed)
//   out.perforate(adaptive(k = 3, f = 0.25), varying_gaussian(sigma0 = 0.9))
//   out.perforate(importance(f = 0.75), gaussian(sigma = 1.5))
//   out.perforate_reduction(i, grid(2))             // every second tap, sum rescaled
//   out.perforate_reduction(i, fraction(0.5))
//   out.channels(1)                                 // compute channel 0, copy the rest
//   out.loop_perforate(x, stride(2))                // baseline: no reconstruction
//   out.loop_perforate(y, truncate(0.25, last))
//   A.store_as(f16)                                 // precision lowering: stored as half
//
// Arguments of sampling and reconstruction calls may be positional or `name = value`.
// What each one means, and how it is implemented, is in compiler_core/perforation/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/language/source.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple {

enum class SamplingKind : uint8_t {
  Grid,        // grid(s1, ..., sk): every s_d-th point along dimension d
  Adaptive,    // adaptive(k, f): coarse grid every k, refined where it varies, f·n samples
  Importance,  // importance(f): f·n samples placed by a texturedness map, dithered
};

enum class ReconstructionKind : uint8_t {
  Nearest,          // the nearest sample (Manhattan distance)
  Linear,           // multilinear over the dimensions with spacing above 1
  Gaussian,         // (G * I) / (G * S), G a Young-van Vliet IIR Gaussian of sigma
  VaryingGaussian,  // spatially varying Gaussian by repeated integration, sigma0
};

const char* sampling_kind_name(SamplingKind k);              // "grid", ...
const char* reconstruction_kind_name(ReconstructionKind k);  // "nearest", ...

struct Perforation {
  SamplingKind sampling = SamplingKind::Grid;
  /// Grid: the spacing of every dimension of the func (unwritten trailing ones are 1).
  std::vector<int64_t> spacing;
  int64_t k = 0;        // Adaptive: the coarse spacing
  double fraction = 1;  // Adaptive, Importance: the share of points computed
  /// Importance: a func (x, y) of the pipeline whose values are the importance map,
  /// instead of the input image's texturedness; empty: texturedness.
  std::string importance_map;
  ReconstructionKind reconstruction = ReconstructionKind::Linear;
  double sigma = 1;  // Gaussian: sigma; VaryingGaussian: sigma0
  /// Grid only: reads in later stages interpolate the stored samples where they read
  /// (§3.3) instead of reading a reconstructed dense copy.
  bool on_demand = true;
  /// Adaptive and importance sampling of the output: its points are computed compacted,
  /// each row's points side by side (apply_perforation.h), instead of a branch per point.
  bool compacted = false;
  SourceLoc loc;
};

/// perforate_reduction(r, grid(s)) keeps every s-th iteration of the reduction variable
/// r (from its minimum); fraction(p) keeps about p of them, evenly spread. Sums are
/// rescaled by (iterations / kept) so that they estimate the full sum.
struct ReductionPerforation {
  std::string var;
  int64_t stride = 1;              // grid(s)
  std::optional<double> fraction;  // fraction(p), in (0, 1]
  SourceLoc loc;
};

enum class LoopPerforationKind : uint8_t {
  Stride,         // stride(s): run every s-th iteration
  TruncateFirst,  // truncate(p, first): skip the first p of the iterations
  TruncateLast,   // truncate(p, last): skip the last p of them
  Random,         // random(p): skip about p of them at random (reduction variables only)
};

/// loop_perforate(v, ...): skips iterations of the loop over v (a pure variable of the
/// func: its points are 0; a reduction variable: its terms are left out, no rescaling).
struct LoopPerforation {
  std::string var;
  bool reduction = false;  // v is a reduction variable of the func's definition
  LoopPerforationKind kind = LoopPerforationKind::Stride;
  int64_t stride = 1;
  double fraction = 0;  // Truncate*, Random: the share skipped, in [0, 1)
  SourceLoc loc;
};

struct FuncApproximation {
  std::optional<Perforation> perforation;
  std::vector<ReductionPerforation> reductions;
  std::optional<int64_t> channels;  // channels(c)
  /// channels(c, from = g): the func whose channels c.. f takes (same dimensions); empty:
  /// the input channel_source gives.
  std::string channels_from;
  SourceLoc channels_loc;
  std::vector<LoopPerforation> loops;
  /// store_as(f16): precision lowering (VizGen, "Array storage alteration" and §9.2, one
  /// step below the f32 our pipelines compute in): the func's values are rounded to IEEE
  /// binary16 where they are computed and stored so; readers widen them exactly.
  std::optional<ScalarType> storage;
  SourceLoc storage_loc;
  /// update(k).perforate_reduction(r, ...): the perforated variables of update k's domain
  /// (the only approximation an update definition takes).
  std::map<size_t, std::vector<ReductionPerforation>> update_reductions;

  bool empty() const {
    return !perforation && reductions.empty() && !channels && loops.empty() && !storage &&
           update_reductions.empty();
  }
  /// Whether the func's values may differ from its definition's: anything but an integer
  /// narrowing, which the checker accepts only where no value changes.
  bool changes_values() const {
    return perforation || !reductions.empty() || channels || !loops.empty() ||
           !update_reductions.empty() || (storage && *storage == ScalarType::Float16);
  }
  /// Whether the func's computed points are stored apart from what its readers see (a
  /// perforated func, or one whose pure loops are perforated): then it is realised, at
  /// root unless the schedule says otherwise.
  bool stores_samples() const;
};

/// Reads and checks the approximation directives of f under s: known sampling and
/// reconstruction methods, arguments in range, variables that exist, at most one
/// perforate, one channels and one store_as, nothing on the pure definition of a func with updates,
/// store_as on an f32 func other than the output, neither perforated nor with channels;
/// on an update definition, perforate_reduction of its domain's variables only. Throws the
/// CompileError at the argument at fault (source gives the line in the message).
FuncApproximation func_approximation(const Schedule& s, const Pipeline& p, const Func& f,
                                     const SourceText& source);

/// The input that channels(c) copies f's other channels from: the first input of f's
/// element type and dimension count, or nullptr.
const InputDecl* channel_source(const Pipeline& p, const Func& f);

/// The input importance sampling computes its map from: the first input of 2 or 3
/// dimensions, or nullptr.
const InputDecl* importance_source(const Pipeline& p);

/// Whether any func of s has an approximation directive (without checking them): the
/// schedule needs the perforation rewrite (integer narrowing included).
bool has_approximation(const Schedule& s);

/// Whether s may compute other values than the exact pipeline: an approximation directive
/// other than store_as of an integer type, whose values the checker proves unchanged
/// (without checking them). Exact variants are compared bit for bit.
bool approximates(const Schedule& s);

/// Whether stage 0 of f under s has a perforate directive, or a loop_perforate of one of
/// f's pure variables (without checking them): such a func is realised by default.
bool stores_samples(const Schedule& s, const Func& f);

}  // namespace stipple
