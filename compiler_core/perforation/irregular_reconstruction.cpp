// Reconstruction of irregular samples as .stp stages (irregular_reconstruction.h).
#include "compiler_core/perforation/irregular_reconstruction.h"

#include <algorithm>
#include <cmath>

#include "compiler_core/ir/error.h"
#include "compiler_core/perforation/stage_templates.h"

namespace stipple::perforation {

namespace {

// The largest box half-width of varying_gaussian (sigma up to about 26 points), and the
// margin its prefix sums cover outside the image.
constexpr int kMaxHalfWidth = 32;
// Up to this half-width the boxes are direct sums (2h + 1 taps per pass, in f32) instead
// of differences of prefix sums: adaptive sampling's radii are 0 and round(sigma0 k),
// 1 to 4 for the paper's settings, and four passes of at most 17 taps over vectors cost
// less than eight passes of scans and gathers in f64 (median at 820x614: 60 -> 12 ms).
constexpr int kMaxDirectHalfWidth = 8;

// The half-width of a box with the variance of a Gaussian of `sigma`, as the template's
// h(x, y) computes it.
int64_t box_half_width(double sigma) {
  const float s = static_cast<float>(sigma);
  const float h = std::round((std::sqrt(6.0f * s * s + 1.0f) - 1.0f) / 2.0f);
  return std::clamp<int64_t>(static_cast<int64_t>(h), 0, kMaxHalfWidth);
}

constexpr const char* kHeader = R"(
pipeline reconstruction
input values : @T@[x, y@CDIM@]
input mask : u8[x, y]
@SIGMA_INPUT@
func v(x, y@CV@) = select(@INSIDE@ && mask(x, y) != 0, f32(values(x, y@CV@)), f32(0.0))
func s(x, y) = select(@INSIDE@ && mask(x, y) != 0, f32(1.0), f32(0.0))
)";

constexpr const char* kInside = "x >= 0 && x < mask.width && y >= 0 && y < mask.height";

// Young-van Vliet: causal then anticausal along x, then along y; `in` -> `out`.
std::string recursive_gaussian(const std::string& in, const std::string& out, const std::string& cv,
                               const RecursiveGaussian& g) {
  auto f = [](double v) { return stp_float(v); };
  const std::string B = f(g.B), b0 = f(g.b0), b1 = f(g.b1), b2 = f(g.b2), b3 = f(g.b3);
  auto recurrence = [&](const std::string& fn, const std::string& at, const std::string& prev1,
                        const std::string& prev2, const std::string& prev3,
                        const std::string& domain) {
    return fn + "(" + at + ") = " + fn + "(" + at + ") + (" + b1 + " * " + fn + "(" + prev1 +
           ") + " + b2 + " * " + fn + "(" + prev2 + ") + " + b3 + " * " + fn + "(" + prev3 +
           ")) / " + b0 + " for " + domain + "\n";
  };
  // The four passes: causal x, anticausal x (over r = width - 1 - x), causal y,
  // anticausal y; each reads the previous pass's output (the first reads `in`).
  struct Pass {
    std::string name, at, prev1, prev2, prev3, domain;
  };
  auto xy = [&](const std::string& x, const std::string& y) { return x + ", " + y + cv; };
  const std::vector<Pass> passes = {
      {out + "_x", xy("x", "y"), xy("x - 1", "y"), xy("x - 2", "y"), xy("x - 3", "y"),
       "x in 0..mask.width - 1"},
      {out + "_xx", xy("mask.width - 1 - r", "y"), xy("mask.width - r", "y"),
       xy("mask.width + 1 - r", "y"), xy("mask.width + 2 - r", "y"), "r in 0..mask.width - 1"},
      {out + "_y", xy("x", "y"), xy("x", "y - 1"), xy("x", "y - 2"), xy("x", "y - 3"),
       "y in 0..mask.height - 1"},
      {out, xy("x", "mask.height - 1 - r"), xy("x", "mask.height - r"),
       xy("x", "mask.height + 1 - r"), xy("x", "mask.height + 2 - r"), "r in 0..mask.height - 1"},
  };
  std::string t, source = in;
  for (const Pass& p : passes) {
    t += "func " + p.name + "(" + xy("x", "y") + ") = " + B + " * " + source + "(" + xy("x", "y") +
         ")\n";
    t += recurrence(p.name, p.at, p.prev1, p.prev2, p.prev3, p.domain);
    source = p.name;
  }
  return t;
}

// Two box filters of half-width h(x, y) (at most `bound`) as direct sums in f32, along x
// then y: a tent.
std::string direct_varying_tent(const std::string& in, const std::string& out,
                                const std::string& cv, int64_t bound) {
  const std::string b = std::to_string(bound);
  std::string t;
  auto box = [&](const std::string& src, const std::string& dst, bool along_x) {
    const std::string at = along_x ? "x + i, y" + cv : "x, y + i" + cv;
    t += "func " + dst + "(x, y" + cv + ") = sum(i in -" + b + ".." + b +
         " : select(abs(i) <= h(x, y), " + src + "(" + at + "), f32(0.0)))\n";
  };
  box(in, out + "_bx1", true);
  box(out + "_bx1", out + "_bx2", true);
  box(out + "_bx2", out + "_by1", false);
  box(out + "_by1", out, false);
  return t;
}

// Two box filters of half-width h(x, y) by prefix sums (f64), along x then y: a tent.
std::string varying_tent(const std::string& in, const std::string& out, const std::string& cv) {
  const std::string m = std::to_string(kMaxHalfWidth), m1 = std::to_string(kMaxHalfWidth + 1);
  std::string t;
  // One box pass of `src` along `axis` into `dst`.
  auto box = [&](const std::string& src, const std::string& dst, bool along_x, bool convert) {
    const std::string sum = dst + "_sum";
    const std::string extent = along_x ? "mask.width" : "mask.height";
    const std::string v = along_x ? "x" : "y";
    auto at = [&](const std::string& pos) { return along_x ? pos + ", y" + cv : "x, " + pos + cv; };
    t += "func " + sum + "(x, y" + cv + ") = " + (convert ? "f64(" : "(") + src + "(x, y" + cv +
         "))\n";
    t += sum + "(" + at(v) + ") = " + sum + "(" + at(v) + ") + " + sum + "(" + at(v + " - 1") +
         ") for " + v + " in -" + m + ".." + extent + " - 1 + " + m + "\n";
    auto clamped = [&](const std::string& pos) {
      return "clamp(" + pos + ", -" + m1 + ", " + extent + " - 1 + " + m + ")";
    };
    t += "func " + dst + "(x, y" + cv + ") = " + sum + "(" + at(clamped(v + " + h(x, y)")) +
         ") - " + sum + "(" + at(clamped(v + " - h(x, y) - 1")) + ")\n";
  };
  box(in, out + "_bx1", true, true);
  box(out + "_bx1", out + "_bx2", true, false);
  box(out + "_bx2", out + "_by1", false, false);
  box(out + "_by1", out, false, false);
  return t;
}

std::string dims_list(const std::string& cv) { return "x, y" + cv; }

}  // namespace

RecursiveGaussian young_van_vliet(double sigma) {
  sigma = std::max(sigma, 0.5);
  const double q =
      sigma >= 2.5 ? 0.98711 * sigma - 0.96330 : 3.97156 - 4.14554 * std::sqrt(1 - 0.26891 * sigma);
  RecursiveGaussian g;
  g.b0 = 1.57825 + 2.44413 * q + 1.4281 * q * q + 0.422205 * q * q * q;
  g.b1 = 2.44413 * q + 2.85619 * q * q + 1.26661 * q * q * q;
  g.b2 = -(1.4281 * q * q + 1.26661 * q * q * q);
  g.b3 = 0.422205 * q * q * q;
  g.B = 1 - (g.b1 + g.b2 + g.b3) / g.b0;
  return g;
}

std::string add_irregular_reconstruction(Pipeline& host, Schedule& host_schedule,
                                         const std::string& prefix, const IrregularSamples& s,
                                         const Perforation& how) {
  STIPPLE_INTERNAL_CHECK(s.dims == 2 || s.dims == 3, "irregular samples of " + s.values);
  const std::string cv = s.dims == 3 ? ", c" : "";
  std::string to_type;
  if (s.type == Float32()) {
    to_type = "";
  } else if (s.type.is_float()) {
    to_type = to_string(s.type);
  } else {
    to_type = to_string(s.type) + "(round";
  }
  auto typed = [&](const std::string& e) {
    if (s.type == Float32() || s.type.is_f16()) return "(" + e + ")";  // f16: see recon
    if (s.type.is_float()) return to_type + "(" + e + ")";
    return to_type + "(" + e + "))";
  };
  const bool varying = how.reconstruction == ReconstructionKind::VaryingGaussian;
  std::string text =
      fill_template(kHeader, {{"T", to_string(s.type)},
                              {"CDIM", s.dims == 3 ? ", c" : ""},
                              {"CV", cv},
                              {"INSIDE", kInside},
                              {"SIGMA_INPUT", varying ? "input sigma : f32[x, y]" : ""}});
  std::string schedule;
  const std::string all = dims_list(cv);
  // The kept samples as they are, the others `filled`. An f16 recon is the f16 of the whole
  // select (its values are read as f32), which keeps the kept samples exact.
  auto recon = [&](const std::string& filled) {
    const std::string v = "select(mask(x, y) != 0, values(" + all + "), " + filled + ")";
    return "func recon(" + all + ") = " + (s.type.is_f16() ? "f16(" + v + ")" : v) + "\n";
  };
  switch (how.reconstruction) {
    case ReconstructionKind::Gaussian: {
      RecursiveGaussian g = young_van_vliet(how.sigma);
      text += recursive_gaussian("v", "num", cv, g);
      text += recursive_gaussian("s", "den", "", g);
      text += recon(typed("select(den(x, y) > 0.0, num(" + all + ") / den(x, y), f32(0.0))"));
      // The recurrences are serial along their axis: along y, vectors across x (the scans
      // of 16 columns side by side); along x, rows in parallel.
      for (const char* f : {"num", "den"}) {
        const std::string n = f;
        for (const char* pass : {"_x", "_xx", "_y", ""}) {
          schedule += n + pass + ".compute_root().vectorize(x, 16).parallel(y)\n";
        }
        schedule +=
            n +
            "_x.update(0).split(y, yo, yi, 8).reorder(yi, x, yo).vectorize(yi, 8).parallel(yo)\n";
        schedule +=
            n +
            "_xx.update(0).split(y, yo, yi, 8).reorder(yi, r, yo).vectorize(yi, 8).parallel(yo)\n";
        schedule += n + "_y.update(0).reorder(x, y).vectorize(x, 16)\n";
        schedule += n + ".update(0).reorder(x, r).vectorize(x, 16)\n";
      }
      break;
    }
    case ReconstructionKind::VaryingGaussian: {
      text +=
          "func h(x, y) = clamp(i32(round((sqrt(f32(6.0) * sigma(x, y) * sigma(x, y) + "
          "f32(1.0)) - f32(1.0)) / f32(2.0))), 0, " +
          std::to_string(kMaxHalfWidth) + ")\n";
      const int64_t bound = s.max_sigma > 0 ? box_half_width(s.max_sigma) : kMaxHalfWidth;
      if (bound <= kMaxDirectHalfWidth) {
        text += direct_varying_tent("v", "num", cv, bound);
        text += direct_varying_tent("s", "den", "", bound);
        text += recon(typed("select(den(x, y) > 0.0, num(" + all + ") / den(x, y), f32(0.0))"));
        schedule += "h.compute_root().vectorize(x, 16).parallel(y)\n";
        for (const char* f : {"num", "den"}) {
          for (const char* box : {"_bx1", "_bx2", "_by1", ""}) {
            schedule += std::string(f) + box + ".compute_root().vectorize(x, 16).parallel(y)\n";
          }
        }
        break;
      }
      text += varying_tent("v", "num", cv);
      text += varying_tent("s", "den", "");
      text += recon(typed("f32(select(den(x, y) > 0.0, num(" + all + ") / den(x, y), f64(0.0)))"));
      schedule += "h.compute_root().vectorize(x, 8).parallel(y)\n";
      for (const char* f : {"num", "den"}) {
        const std::string n = f;
        // The boxes: vectorised along x (their reads of the sums gather).
        for (const char* box : {"_bx1", "_bx2", "_by1"}) {
          schedule += n + box + ".compute_root().vectorize(x, 8).parallel(y)\n";
        }
        // The prefix sums: along x a scan per row (rows in parallel); along y a scan per
        // column, vectorised across columns.
        for (const char* sum : {"_bx1_sum", "_bx2_sum", "_by1_sum", "_sum"}) {
          schedule += n + sum + ".vectorize(x, 8)\n";
        }
        schedule += n + "_bx1_sum.update(0).parallel(y)\n";
        schedule += n + "_bx2_sum.update(0).parallel(y)\n";
        schedule += n + "_by1_sum.update(0).reorder(x, y).vectorize(x, 8)\n";
        schedule += n + "_sum.update(0).reorder(x, y).vectorize(x, 8)\n";
      }
      break;
    }
    case ReconstructionKind::Nearest: {
      // The nearest computed point as y * width + x (-1: none yet), and its distance.
      auto dist = [](const std::string& i, const std::string& X, const std::string& Y) {
        return "select(" + i + " < 0, 1073741824, abs(" + X + " - " + i + " % mask.width) + abs(" +
               Y + " - " + i + " / mask.width))";
      };
      auto best = [&](const std::string& a, const std::string& b, const std::string& c,
                      const std::string& X, const std::string& Y) {
        std::string da = dist(a, X, Y), db = dist(b, X, Y), dc = dist(c, X, Y);
        return "select(" + da + " <= " + db + ", select(" + da + " <= " + dc + ", " + a + ", " + c +
               "), select(" + db + " <= " + dc + ", " + b + ", " + c + "))";
      };
      text += std::string("func near(x, y) = select(") + kInside +
              " && mask(x, y) != 0, y * mask.width + x, -1)\n";
      text += "near(x, y) = " + best("near(x, y)", "near(x - 1, y)", "near(x, y - 1)", "x", "y") +
              " for x in 0..mask.width - 1, y in 0..mask.height - 1\n";
      const std::string X = "(mask.width - 1 - rx)", Y = "(mask.height - 1 - ry)";
      text += "near(" + X + ", " + Y + ") = " +
              best("near(" + X + ", " + Y + ")", "near(" + X + " + 1, " + Y + ")",
                   "near(" + X + ", " + Y + " + 1)", X, Y) +
              " for rx in 0..mask.width - 1, ry in 0..mask.height - 1\n";
      text += recon(
          "values(clamp(near(x, y) % mask.width, 0, mask.width - 1), "
          "clamp(near(x, y) / mask.width, 0, mask.height - 1)" +
          cv + ")");
      break;
    }
    case ReconstructionKind::Linear:
      STIPPLE_INTERNAL_CHECK(false, "linear reconstruction of irregular samples");
  }
  text += "output recon\n";
  std::map<std::string, TemplateInput> inputs{{"values", {s.values, s.extents}},
                                              {"mask", {s.mask, s.extents}}};
  if (varying) inputs["sigma"] = {s.sigma, s.extents};
  return add_template_stages(host, host_schedule, text, schedule, prefix, inputs);
}

}  // namespace stipple::perforation
