// Adaptive sampling as .stp stages (adaptive_sampling.h).
#include "compiler_core/perforation/adaptive_sampling.h"

#include "compiler_core/ir/error.h"
#include "compiler_core/perforation/stage_templates.h"

namespace stipple::perforation {

namespace {

constexpr const char* kAdaptive = R"(
pipeline adaptive_sampling
input coarse : @T@[x, y@CDIM@]
input domain : u8[x, y]

func value(x, y@CV@) = f32(coarse(clamp(x, 0, coarse.width - 1), clamp(y, 0, coarse.height - 1)@CV@))
func priority(x, y) = sum(@CRANGE@dx in -1..1, dy in -1..1 :
                          abs(value(x, y@CV@) - value(x + dx, y + dy@CV@)))
func peak() = maximum(x in coarse, y in coarse : priority(x, y))
func bin(x, y) = select(peak() > 0.0, clamp(i32(priority(x, y) / peak() * @MF@), 0, @M1@), 0)
func hist(b) = 0
hist(clamp(bin(x, y), 0, @M1@)) += 1 for x in coarse, y in coarse
# Cells in bins b and above.
func from_top(b) = hist(b)
from_top(@M1@ - r) = from_top(@M1@ - r) + from_top(@M@ - r) for r in 1..@M1@

func cells() = coarse.width * coarse.height
func n() = f64(domain.width) * f64(domain.height)
func target() = @FRACTION@ * n()
# Round 1: R cells, each adding k̂² - 1 points.
func wanted1() = clamp(i32(ceil((target() - f64(cells())) / @NEW@)), 0, cells())
@ROUNDS@
func sigma(x, y) = select(fine(x, y) != 0, f32(0.01), @COARSE_SIGMA@)
output mask
)";

constexpr const char* kAdaptiveSchedule = R"(
priority.compute_root().parallel(y).vectorize(x, 8)
peak.compute_root()
bin.compute_root().vectorize(x, 16)
cells.compute_root()
target.compute_root()
wanted1.compute_root()
fine.compute_root().vectorize(x, 16).parallel(y)
mask.compute_root().vectorize(x, 16).parallel(y)
)";

// Rounds of refinement: round i refines the wanted_i cells of highest priority; its
// points per refined cell scale R for round i + 1 (they differ from k̂² - 1 where fine
// grids overlap, for even k). The last round gives `refined`, `fine` and `mask`.
// For odd k the fine grids are the cells themselves and never overlap; a second round
// corrects for the cells cut by the image's edges.
constexpr int kRoundsEvenK = 4;
constexpr int kRoundsOddK = 2;

std::string mask_funcs(const std::string& refined, const std::string& fine, const std::string& mask,
                       int64_t k, int64_t h);

std::string rounds_text(int64_t k, int64_t h, int rounds) {
  std::string t;
  for (int i = 1; i <= rounds; ++i) {
    const std::string n = std::to_string(i), next = std::to_string(i + 1);
    const bool last = i == rounds;
    const std::string refined = last ? "refined" : "refined" + n;
    const std::string fine = last ? "fine" : "fine" + n;
    const std::string mask = last ? "mask" : "mask" + n;
    // The lowest bin that keeps at least R cells at or above it (@M@: none).
    t += "func cut" + n + "() = select(wanted" + n +
         "() > 0, @M1@ - argmin(r in 0..@M1@ : " + "select(from_top(@M1@ - r) >= wanted" + n +
         "(), 0, 1)), @M@)\n";
    t += "func " + refined + "(x, y) = select(clamp(bin(x, y), 0, @M1@) >= cut" + n + "(), 1, 0)\n";
    t += mask_funcs(refined, fine, mask, k, h);
    if (last) break;
    t += "func count" + n + "() = sum(x in domain, y in domain : i32(" + mask + "(x, y)))\n";
    t += "func added" + n + "() = f64(count" + n + "() - cells())\n";
    t += "func wanted" + next + "() = select(wanted" + n + "() > 0 && added" + n +
         "() > 0.0, clamp(i32(round(f64(wanted" + n + "()) * (target() - f64(cells())) / added" +
         n + "())), 0, cells()), wanted" + n + "())\n";
  }
  return t;
}

std::string rounds_schedule(int rounds) {
  std::string t;
  for (int i = 1; i <= rounds; ++i) {
    const std::string n = std::to_string(i);
    t += "cut" + n + ".compute_root()\n";
    if (i < rounds) {
      t += "refined" + n + ".compute_root().vectorize(x, 16)\n";
      t += "mask" + n + ".compute_root().vectorize(x, 16).parallel(y)\n";
      t += "count" + n + ".compute_root()\n";
      t += "wanted" + std::to_string(i + 1) + ".compute_root()\n";
    } else {
      t += "refined.compute_root().vectorize(x, 16)\n";
    }
  }
  return t;
}

// The mask of a round: coarse points, and the points of the fine grids (half-width h)
// of refined cells among the (up to) four cells around each point. `fine` marks the
// latter alone.
std::string mask_funcs(const std::string& refined, const std::string& fine, const std::string& mask,
                       int64_t k, int64_t h) {
  const std::string K = std::to_string(k), H = std::to_string(h);
  std::string claims;
  for (int dx = 0; dx <= 1; ++dx) {
    for (int dy = 0; dy <= 1; ++dy) {
      const std::string cx = "x / " + K + (dx ? " + 1" : ""), cy = "y / " + K + (dy ? " + 1" : "");
      std::string c = "(" + refined + "(clamp(" + cx + ", 0, coarse.width - 1), clamp(" + cy +
                      ", 0, coarse.height - 1)) != 0 && " + cx + " < coarse.width && " + cy +
                      " < coarse.height && abs(x - (" + cx + ") * " + K + ") <= " + H +
                      " && abs(y - (" + cy + ") * " + K + ") <= " + H + ")";
      claims += (claims.empty() ? "" : " || ") + c;
    }
  }
  // Points outside the domain are always computed (readers' stencils reach them; the
  // exact values there keep f = 1 exact), and every point when f·n is all of them.
  return "func " + fine + "(x, y) = select(" + claims + ", u8(1), u8(0))\n" + "func " + mask +
         "(x, y) = select((x % " + K + " == 0 && y % " + K + " == 0) || " + fine +
         "(x, y) != 0 || x < 0 || y < 0 || x >= domain.width || y >= domain.height || "
         "target() >= n(), u8(1), u8(0))\n";
}

}  // namespace

SampleMask add_adaptive_sampling(Pipeline& host, Schedule& host_schedule, const std::string& prefix,
                                 const std::string& coarse, Type type, size_t dims, int64_t k,
                                 double fraction, double sigma0, const std::vector<Expr>& extents) {
  STIPPLE_INTERNAL_CHECK((dims == 2 || dims == 3) && extents.size() >= dims && k >= 2,
                         "adaptive sampling of " + coarse);
  const int64_t khat = k % 2 == 0 ? k + 1 : k;
  const int64_t h = khat / 2;
  const int rounds = k % 2 == 0 ? kRoundsEvenK : kRoundsOddK;
  std::string text =
      fill_template(fill_template(kAdaptive, {{"ROUNDS", rounds_text(k, h, rounds)}}, false),
                    {{"T", to_string(type)},
                     {"CDIM", dims == 3 ? ", c" : ""},
                     {"CV", dims == 3 ? ", c" : ""},
                     {"CRANGE", dims == 3 ? "c in 0..coarse.channels - 1, " : ""},
                     {"M", "65536"},
                     {"MF", stp_float(65536.0)},
                     {"M1", "65535"},
                     {"FRACTION", stp_float(fraction)},
                     {"NEW", stp_float(static_cast<double>(khat * khat - 1))},
                     {"COARSE_SIGMA", "f32(" + stp_float(sigma0 * static_cast<double>(k)) + ")"}});
  auto cells = [&](const Expr& e) {
    return Div::make(Add::make(e, IntImm::make(Int32(), k - 1)), IntImm::make(Int32(), k));
  };
  std::vector<Expr> coarse_extents{cells(extents[0]), cells(extents[1])};
  if (dims == 3) coarse_extents.push_back(extents[2]);
  std::string mask = add_template_stages(
      host, host_schedule, text, std::string(kAdaptiveSchedule) + rounds_schedule(rounds), prefix,
      {{"coarse", {coarse, coarse_extents}}, {"domain", {"", {extents[0], extents[1]}}}});
  return {mask, prefix + "$sigma"};
}

}  // namespace stipple::perforation
