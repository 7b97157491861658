// Importance sampling as .stp stages (importance_sampling.h).
#include "compiler_core/perforation/importance_sampling.h"

#include <map>

#include "compiler_core/ir/error.h"
#include "compiler_core/perforation/stage_templates.h"
#include "compiler_core/schedule/approximation.h"

namespace stipple::perforation {

namespace {

constexpr const char* kLuminance = R"(
pipeline luminance
input image : @TYPE@[x, y@CDIM@]
func lum(x, y) = @LUM@
output lum
)";

constexpr const char* kImportance = R"(
pipeline importance_sampling
input lum : f32[x, y]
input domain : u8[x, y]

# Texturedness (Bae et al. 2006) with a Gaussian for the bilateral filter: the local mean
# of the detail layer's magnitude.
func g(i) = exp(-f32(i * i) / @TWO_SIGMA2@)
func gnorm() = sum(i in -@R@..@R@ : g(i))
func base_x(x, y) = sum(i in -@R@..@R@ : g(i) * lum(x - i, y)) / gnorm()
func base(x, y) = sum(i in -@R@..@R@ : g(i) * base_x(x, y - i)) / gnorm()
func detail(x, y) = abs(lum(x, y) - base(x, y))
func texture_x(x, y) = sum(i in -@R@..@R@ : g(i) * detail(x - i, y)) / gnorm()
func importance(x, y) = sum(i in -@R@..@R@ : g(i) * texture_x(x, y - i)) / gnorm() + @FLOOR@
@REST@)";

// importance(f, map = m): the user's map (negative values count as 0), with the floor.
constexpr const char* kUserMap = R"(
pipeline importance_sampling
input map : @MAP_TYPE@[x, y]
input domain : u8[x, y]
func importance(x, y) = max(f32(map(x, y)), f32(0.0)) + @FLOOR@
@REST@)";

// From the map to the mask, over `domain`'s extents.
constexpr const char* kRemapAndDither = R"(

# Appendix A: the scale s with sum(min(s * importance, 1)) = f n, from a histogram of
# @M@ bins: centres x_k, counts h_k, H_k = h_0 + ... + h_k, X_k = h_0 x_0 + ... + h_k x_k,
# and s_k = (H_k - n (1 - f)) / X_k for the split point k below which nothing clamps.
func peak() = maximum(x in domain, y in domain : importance(x, y))
func bin(x, y) = clamp(i32(importance(x, y) / peak() * @MF@), 0, @M1@)
func hist(k) = 0
hist(clamp(bin(x, y), 0, @M1@)) += 1 for x in domain, y in domain
func cumulative(k) = hist(k)
cumulative(k) = cumulative(k) + cumulative(k - 1) for k in 1..@M1@
func centre(k) = (f64(k) + 0.5) * f64(peak()) / @MF@
func weighted(k) = f64(hist(k)) * centre(k)
weighted(k) = weighted(k) + weighted(k - 1) for k in 1..@M1@
func n() = f64(domain.width) * f64(domain.height)
func scale_at(k) = (f64(cumulative(k)) - n() * (1.0 - @FRACTION@)) / weighted(k)
func fits(k) = select(scale_at(k) * centre(k) < 1.0 + 1e-9 &&
                      (k == @M1@ || scale_at(k) * centre(min(k + 1, @M1@)) >= 1.0 - 1e-9), 0, 1)
func split() = argmin(k in 0..@M1@ : fits(k))
# No split fits when f n is reached only with everything clamped: then s is huge.
func scale() = select(fits(clamp(split(), 0, @M1@)) == 0,
                      f32(scale_at(clamp(split(), 0, @M1@))), f32(1e30))
func remapped(x, y) = min(scale() * importance(x, y), f32(1.0))

# Floyd-Steinberg error diffusion in raster order: a point takes 7/16 of the error of its
# left neighbour and 3/16, 5/16, 1/16 of the errors above right, above and above left;
# at the right and bottom edges a point shares its error among the neighbours it has
# (share: the sum of their weights), so that no error leaves the image but the last
# point's and the count stays at f n.
func share(x, y) = f32(select(x + 1 < domain.width, 0.4375, 0.0) +
                       select(x > 0 && y + 1 < domain.height, 0.1875, 0.0) +
                       select(y + 1 < domain.height, 0.3125, 0.0) +
                       select(x + 1 < domain.width && y + 1 < domain.height, 0.0625, 0.0))
func err(x, y) = f32(0.0)
err(x, y) = @ACC@ - select(@ACC@ >= 0.5, f32(1.0), f32(0.0)) for x in domain, y in domain
# Points outside the image are always computed: readers' stencils reach them, and their
# exact values keep f = 1 exact.
func mask(x, y) = select(@ACC@ >= 0.5 || x < 0 || y < 0 || x >= domain.width || y >= domain.height,
                         u8(1), u8(0))
output mask
)";

constexpr const char* kTexturednessSchedule = R"(
g.compute_root()
gnorm.compute_root()
base_x.compute_root().parallel(y).vectorize(x, 8)
base.compute_root().parallel(y).vectorize(x, 8)
texture_x.compute_root().parallel(y).vectorize(x, 8)
)";

constexpr const char* kImportanceSchedule = R"(
importance.compute_root().parallel(y).vectorize(x, 8)
peak.compute_root()
centre.compute_root()
split.compute_root()
scale.compute_root()
remapped.compute_root().parallel(y).vectorize(x, 8)
mask.compute_root()
)";

}  // namespace

SampleMask add_importance_sampling(Pipeline& host, Schedule& host_schedule,
                                   const std::string& prefix, double fraction,
                                   const std::vector<Expr>& extents, const std::string& map) {
  STIPPLE_INTERNAL_CHECK(extents.size() >= 2, "importance sampling in fewer than 2 dimensions");
  const std::string acc =
      "(remapped(x, y) + 0.4375 / share(x - 1, y) * err(x - 1, y) + "
      "0.1875 / share(x + 1, y - 1) * err(x + 1, y - 1) + "
      "0.3125 / share(x, y - 1) * err(x, y - 1) + 0.0625 / share(x - 1, y - 1) * err(x - 1, y - "
      "1))";
  const std::map<std::string, std::string> rest_values = {
      {"FLOOR", stp_float(1e-3)},        {"M", "1000"}, {"MF", stp_float(1000.0)}, {"M1", "999"},
      {"FRACTION", stp_float(fraction)}, {"ACC", acc}};
  const std::string rest = fill_template(kRemapAndDither, rest_values, false);
  const TemplateInput domain{"", {extents[0], extents[1]}};
  if (!map.empty()) {
    const Func* m = host.find_func(map);
    STIPPLE_INTERNAL_CHECK(m && m->args.size() == 2, "importance map " + map);
    std::string text =
        fill_template(fill_template(kUserMap, {{"REST", rest}}, false),
                      {{"MAP_TYPE", to_string(m->type)}, {"FLOOR", stp_float(1e-3)}});
    std::string mask =
        add_template_stages(host, host_schedule, text, kImportanceSchedule, prefix,
                            {{"map", {map, {extents[0], extents[1]}}}, {"domain", domain}});
    return {mask, prefix + "$remapped"};
  }

  const InputDecl* image = importance_source(host);
  STIPPLE_INTERNAL_CHECK(image, "importance sampling without an image");
  const bool colour = image->dim_names.size() == 3;
  std::string scale = image->type == UInt8()    ? " / f32(255.0)"
                      : image->type == UInt16() ? " / f32(65535.0)"
                                                : "";
  auto channel = [&](int c) {
    return "f32(image(x, y" + (colour ? ", " + std::to_string(c) : std::string()) + "))" + scale;
  };
  std::string lum = colour ? "select(image.channels >= 3, (" + channel(0) + " + " + channel(1) +
                                 " + " + channel(2) + ") / f32(3.0), " + channel(0) + ")"
                           : channel(0);
  std::vector<Expr> image_extents;
  for (size_t d = 0; d < image->dim_names.size(); ++d) {
    image_extents.push_back(InputExtent::make(image->name, static_cast<int>(d)));
  }
  std::string luminance = add_template_stages(
      host, host_schedule,
      fill_template(
          kLuminance,
          {{"TYPE", to_string(image->type)}, {"CDIM", colour ? ", c" : ""}, {"LUM", lum}}),
      "lum.compute_root().parallel(y).vectorize(x, 8)\n", prefix + "$luminance",
      {{"image", {image->name, image_extents}}});

  const double sigma = 2.0;
  std::string text = fill_template(
      fill_template(kImportance, {{"REST", rest}}, false),
      {{"TWO_SIGMA2", stp_float(2 * sigma * sigma)}, {"R", "6"}, {"FLOOR", stp_float(1e-3)}});
  std::string mask = add_template_stages(
      host, host_schedule, text, std::string(kTexturednessSchedule) + kImportanceSchedule, prefix,
      {{"lum", {luminance, {extents[0], extents[1]}}}, {"domain", domain}});
  return {mask, prefix + "$remapped"};
}

}  // namespace stipple::perforation
