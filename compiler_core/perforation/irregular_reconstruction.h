// Reconstruction of a func computed at irregular points (adaptive or importance sampling,
// Image Perforation §3.2): a mask (u8, 1 where computed) and the sparse values (0
// elsewhere) become a dense func, computed once (precomputed reconstruction; §3.3 keeps
// on-demand reconstruction for grids). Computed points keep their values; the others:
//
// - nearest: the value of the nearest computed point in Manhattan distance, found by two
//   raster passes that propagate the nearest point (Rosenfeld and Pfaltz 1968);
// - gaussian(sigma): (G * (S I)) / (G * S), eq. (1), with G Young and van Vliet's
//   recursive Gaussian (1995): causal and anticausal third-order passes along x, then y;
// - varying_gaussian(sigma0): the same ratio with a spatially varying filter: two box
//   filters by repeated integration (Heckbert 1986), i.e. a tent, whose radius at each
//   point comes from sigma(x) (sampling's `sigma` map; variance ((2h + 1)^2 - 1) / 6),
//   along x then y, with prefix sums in f64 (the paper notes the precision it needs), or
//   as direct sums in f32 when the largest sigma is known and small (adaptive sampling).
//
// Eq. (1) applied at computed points would blur them too; keeping their values makes
// f = 1 exact and costs nothing. Where no computed point is near enough (G * S = 0), the
// value is 0.
#pragma once

#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::perforation {

struct IrregularSamples {
  std::string values;  // the sparse func (2 or 3 dimensions, x and y first)
  Type type;
  size_t dims = 2;
  std::string mask;           // u8 (x, y)
  std::string sigma;          // f32 (x, y): varying_gaussian's sigma per point, else empty
  double max_sigma = 0;       // the largest value `sigma` takes; 0: not known
  std::vector<Expr> extents;  // of x and y: the domain of the passes
};

/// Adds the reconstruction funcs to `host` (`<prefix>$...`), scheduled in `host_schedule`,
/// and returns the name of the dense func (of the values' type and dimensions).
std::string add_irregular_reconstruction(Pipeline& host, Schedule& host_schedule,
                                         const std::string& prefix, const IrregularSamples& s,
                                         const Perforation& how);

/// Young and van Vliet's coefficients for sigma (clamped to at least 0.5): b0..b3 and B.
struct RecursiveGaussian {
  double b0, b1, b2, b3, B;
};
RecursiveGaussian young_van_vliet(double sigma);

}  // namespace stipple::perforation
