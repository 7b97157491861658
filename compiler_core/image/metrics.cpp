// Error metrics between a variant's output and the reference output (see metrics.h).
#include "compiler_core/image/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler_core/image/color.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/scalar_ops.h"

namespace stipple {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// An f16 element: its IEEE binary16 bits, read as the f32 value they stand for.
struct Half {
  uint16_t bits;
  operator double() const { return f16_bits_to_f32(bits); }
};
static_assert(sizeof(Half) == 2);

// Calls f with a value of the C++ element type of t (Half for f16), so that loops run on typed
// pointers instead of converting element by element through a switch.
template <typename F>
auto with_element_type(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::UInt8: return f(uint8_t{});
    case ScalarType::UInt16: return f(uint16_t{});
    case ScalarType::Int32: return f(int32_t{});
    case ScalarType::Float32: return f(float{});
    case ScalarType::Float64: return f(double{});
    case ScalarType::Int8: return f(int8_t{});
    case ScalarType::Int16: return f(int16_t{});
    case ScalarType::UInt32: return f(uint32_t{});
    case ScalarType::Float16: return f(Half{});
    case ScalarType::Bool: break;
  }
  throw_internal_error(__FILE__, __LINE__, "an output buffer of bool");
}

std::string shape_of(const Buffer& b) {
  std::string s;
  for (int d = 0; d < b.dimensions(); ++d) {
    if (d > 0) s += "x";
    s += std::to_string(b.extent(d));
  }
  return fmt::format("{} {}", to_string(Type(b.type())), s.empty() ? "scalar" : s);
}

void check_comparable(const Buffer& variant, const Buffer& reference) {
  STIPPLE_INTERNAL_CHECK(variant.defined() && reference.defined(), "comparing an undefined buffer");
  bool same = variant.type() == reference.type() && variant.dimensions() == reference.dimensions();
  for (int d = 0; same && d < variant.dimensions(); ++d) {
    same = variant.extent(d) == reference.extent(d);
  }
  if (!same) {
    throw UserError(fmt::format("cannot compare a variant output of {} with a reference of {}",
                                shape_of(variant), shape_of(reference)));
  }
}

bool all_finite(const Buffer& b) {
  return with_element_type(b.type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* p = b.data_as<T>();
      return std::all_of(p, p + b.element_count(), [](T v) { return std::isfinite(v); });
    } else if constexpr (std::is_same_v<T, Half>) {
      const T* p = b.data_as<T>();
      return std::all_of(p, p + b.element_count(),
                         [](T v) { return std::isfinite(static_cast<double>(v)); });
    } else {
      return true;
    }
  });
}

bool both_finite(const Buffer& variant, const Buffer& reference) {
  return all_finite(variant) && all_finite(reference);
}

double peak_of(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return 255.0;
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32: return 65535.0;  // integer outputs but u8 become 16-bit photos
    case ScalarType::Float16:
    case ScalarType::Float32:
    case ScalarType::Float64: return 1.0;
    case ScalarType::Bool: break;
  }
  throw_internal_error(__FILE__, __LINE__, "an output buffer of bool");
}

// sRGB -> linear for every 8- and 16-bit code, computed once: the pow() dominates Delta E.
const std::vector<double>& linear_table(int bits) {
  static const std::vector<double> tables[2] = {
      [] {
        std::vector<double> t(256);
        for (int i = 0; i < 256; ++i) t[i] = srgb_to_linear(i / 255.0);
        return t;
      }(),
      [] {
        std::vector<double> t(65536);
        for (int i = 0; i < 65536; ++i) t[i] = srgb_to_linear(i / 65535.0);
        return t;
      }(),
  };
  return tables[bits == 8 ? 0 : 1];
}

// The linear-light value of one element read as a gamma-encoded sRGB component.
template <typename T>
double linear_component(T v) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return linear_table(8)[v];
  } else if constexpr (std::is_same_v<T, uint16_t>) {
    return linear_table(16)[v];
  } else if constexpr (std::is_integral_v<T>) {  // i8, i16, i32, u32: clamped 16-bit codes
    return linear_table(16)[std::clamp<int64_t>(v, 0, 65535)];
  } else {
    return srgb_to_linear(std::clamp<double>(v, 0.0, 1.0));
  }
}

template <typename T>
Lab pixel_lab(const T* p, int64_t i, int64_t plane) {
  return xyz_to_lab(linear_rgb_to_xyz({linear_component(p[i]), linear_component(p[i + plane]),
                                       linear_component(p[i + 2 * plane])}));
}

bool has_colour_channels(const Buffer& b) { return b.dimensions() == 3 && b.extent(2) >= 3; }

struct Differences {
  double sum_squares = 0;
  double max_abs = 0;
};

Differences differences(const Buffer& variant, const Buffer& reference) {
  return with_element_type(variant.type(), [&](auto tag) {
    using T = decltype(tag);
    const T* v = variant.data_as<T>();
    const T* r = reference.data_as<T>();
    Differences d;
    for (int64_t i = 0; i < variant.element_count(); ++i) {
      double diff = std::abs(static_cast<double>(v[i]) - static_cast<double>(r[i]));
      d.sum_squares += diff * diff;
      d.max_abs = std::max(d.max_abs, diff);
    }
    return d;
  });
}

double rmse_of(const Differences& d, int64_t count) {
  return count == 0 ? 0.0 : std::sqrt(d.sum_squares / static_cast<double>(count));
}

double psnr_of(double rmse, ScalarType t) {
  if (rmse == 0) return kInfinity;
  return 20.0 * std::log10(peak_of(t) / rmse);
}

// Assumes both buffers are comparable, finite and have colour channels.
double delta_e_of(const Buffer& variant, const Buffer& reference) {
  int64_t pixels = variant.extent(0) * variant.extent(1);
  if (pixels == 0) return 0.0;
  int64_t plane = variant.dim(2).stride;
  double sum = with_element_type(variant.type(), [&](auto tag) {
    using T = decltype(tag);
    const T* v = variant.data_as<T>();
    const T* r = reference.data_as<T>();
    double s = 0;
    for (int64_t i = 0; i < pixels; ++i) {
      s += delta_e76(pixel_lab(v, i, plane), pixel_lab(r, i, plane));
    }
    return s;
  });
  return sum / static_cast<double>(pixels);
}

}  // namespace

double mean_delta_e(const Buffer& variant, const Buffer& reference) {
  check_comparable(variant, reference);
  if (!has_colour_channels(variant)) {
    throw UserError(fmt::format(
        "the lab error metric needs an (x, y, c) output with 3 or more channels, not {}",
        shape_of(variant)));
  }
  if (!both_finite(variant, reference)) return kInfinity;
  return delta_e_of(variant, reference);
}

double rmse(const Buffer& variant, const Buffer& reference) {
  check_comparable(variant, reference);
  if (!both_finite(variant, reference)) return kInfinity;
  return rmse_of(differences(variant, reference), variant.element_count());
}

double psnr(const Buffer& variant, const Buffer& reference) {
  check_comparable(variant, reference);
  if (!both_finite(variant, reference)) return -kInfinity;
  return psnr_of(rmse_of(differences(variant, reference), variant.element_count()), variant.type());
}

double max_abs_error(const Buffer& variant, const Buffer& reference) {
  check_comparable(variant, reference);
  if (!both_finite(variant, reference)) return kInfinity;
  return differences(variant, reference).max_abs;
}

ErrorReport compare_outputs(const Buffer& variant, const Buffer& reference) {
  check_comparable(variant, reference);
  ErrorReport report;
  bool colour = has_colour_channels(variant);
  if (!both_finite(variant, reference)) {
    report.has_nan = true;
    report.delta_e = colour ? kInfinity : std::numeric_limits<double>::quiet_NaN();
    report.rmse = kInfinity;
    report.psnr = -kInfinity;
    report.max_abs = kInfinity;
    return report;
  }
  Differences d = differences(variant, reference);
  report.rmse = rmse_of(d, variant.element_count());
  report.psnr = psnr_of(report.rmse, variant.type());
  report.max_abs = d.max_abs;
  report.delta_e =
      colour ? delta_e_of(variant, reference) : std::numeric_limits<double>::quiet_NaN();
  return report;
}

double metric_value(const ErrorReport& report, ErrorMetric metric) {
  switch (metric) {
    case ErrorMetric::Lab:
      // NaN here means "not applicable", never "bad variant" (that is +infinity), and a
      // NaN would pass any `error > budget` test, so refuse it.
      if (std::isnan(report.delta_e)) {
        throw UserError("the lab error metric needs an (x, y, c) output with 3 or more channels");
      }
      return report.delta_e;
    case ErrorMetric::Rmse: return report.rmse;
  }
  throw_internal_error(__FILE__, __LINE__, "unknown error metric");
}

}  // namespace stipple
