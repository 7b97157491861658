// Error metrics against hand-computed tiny cases and against a plain element-by-element
// reference implementation written here, over random buffers of every output type.
#include "compiler_core/image/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "compiler_core/image/color.h"
#include "compiler_core/ir/error.h"

namespace stipple {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Buffer make(ScalarType t, std::vector<int64_t> extents, std::vector<double> values) {
  Buffer b(t, std::move(extents));
  EXPECT_EQ(static_cast<size_t>(b.element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) b.set_flat(static_cast<int64_t>(i), values[i]);
  return b;
}

Buffer solid(ScalarType t, int64_t w, int64_t h, std::vector<double> colour) {
  Buffer b(t, {w, h, static_cast<int64_t>(colour.size())});
  for (int64_t c = 0; c < b.extent(2); ++c) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) b.set(std::vector<int64_t>{x, y, c}, colour[c]);
    }
  }
  return b;
}

TEST(Metrics, TinyFloatCase) {
  // Two 2x1 gray images: differences 0.25 and 0.
  //   RMSE = sqrt((0.25^2 + 0^2) / 2) = sqrt(0.03125) = 0.1767767
  //   PSNR = 20 log10(1 / 0.1767767) = 15.0515 dB; max = 0.25
  Buffer v = make(ScalarType::Float32, {2, 1}, {0.5, 0.25});
  Buffer r = make(ScalarType::Float32, {2, 1}, {0.25, 0.25});
  EXPECT_NEAR(rmse(v, r), 0.1767767, 1e-7);
  EXPECT_NEAR(psnr(v, r), 15.0515, 1e-4);
  EXPECT_DOUBLE_EQ(max_abs_error(v, r), 0.25);
  ErrorReport report = compare_outputs(v, r);
  EXPECT_NEAR(report.rmse, 0.1767767, 1e-7);
  EXPECT_NEAR(report.psnr, 15.0515, 1e-4);
  EXPECT_DOUBLE_EQ(report.max_abs, 0.25);
  EXPECT_TRUE(std::isnan(report.delta_e));  // gray: no Delta E
  EXPECT_FALSE(report.has_nan);
}

TEST(Metrics, TinyU8Case) {
  // Differences 3 and -4: RMSE = sqrt((9 + 16) / 2) = sqrt(12.5) = 3.5355339,
  //   PSNR = 20 log10(255 / 3.5355339) = 37.1617 dB, max = 4.
  Buffer v = make(ScalarType::UInt8, {2, 1}, {10, 20});
  Buffer r = make(ScalarType::UInt8, {2, 1}, {13, 16});
  EXPECT_NEAR(rmse(v, r), 3.5355339, 1e-7);
  EXPECT_NEAR(psnr(v, r), 37.1617, 1e-4);
  EXPECT_DOUBLE_EQ(max_abs_error(v, r), 4.0);
}

TEST(Metrics, TinyU16CaseUsesPeak65535) {
  // One difference of 65535 over 2 elements: RMSE = 65535 / sqrt(2),
  //   PSNR = 20 log10(sqrt(2)) = 3.0103 dB.
  Buffer v = make(ScalarType::UInt16, {2, 1}, {65535, 7});
  Buffer r = make(ScalarType::UInt16, {2, 1}, {0, 7});
  EXPECT_NEAR(rmse(v, r), 65535 / std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(psnr(v, r), 3.0103, 1e-4);
  EXPECT_DOUBLE_EQ(max_abs_error(v, r), 65535);
}

TEST(Metrics, IdenticalOutputsHaveInfinitePsnr) {
  Buffer v = solid(ScalarType::UInt8, 3, 2, {10, 200, 30});
  ErrorReport report = compare_outputs(v, v);
  EXPECT_EQ(report.rmse, 0.0);
  EXPECT_EQ(report.max_abs, 0.0);
  EXPECT_EQ(report.delta_e, 0.0);
  EXPECT_EQ(report.psnr, kInf);
  EXPECT_FALSE(report.has_nan);
}

// The plain reference: visit every coordinate, nothing shared with the implementation.
struct Expected {
  double rmse, max_abs;
};

Expected reference_metrics(const Buffer& v, const Buffer& r) {
  double sum = 0, max_abs = 0;
  int64_t count = 0;
  for (int64_t c = 0; c < v.extent_or_one(2); ++c) {
    for (int64_t y = 0; y < v.extent(1); ++y) {
      for (int64_t x = 0; x < v.extent(0); ++x) {
        std::vector<int64_t> at = {x, y};
        if (v.dimensions() == 3) at.push_back(c);
        double d = v.get(at) - r.get(at);
        sum += d * d;
        max_abs = std::max(max_abs, std::fabs(d));
        ++count;
      }
    }
  }
  return {std::sqrt(sum / count), max_abs};
}

TEST(Metrics, RandomBuffersMatchPlainComputation) {
  std::mt19937 rng(42);
  struct Case {
    ScalarType type;
    double lo, hi, peak;
    bool integral;
  };
  for (Case k :
       {Case{ScalarType::UInt8, 0, 255, 255, true}, Case{ScalarType::UInt16, 0, 65535, 65535, true},
        Case{ScalarType::Int32, -1000, 70000, 65535, true},
        Case{ScalarType::Float32, -0.2, 1.2, 1, false},
        Case{ScalarType::Float64, 0, 1, 1, false}}) {
    for (std::vector<int64_t> extents : {std::vector<int64_t>{17, 9}, {8, 5, 3}, {4, 6, 4}}) {
      Buffer v(k.type, extents), r(k.type, extents);
      std::uniform_real_distribution<double> dist(k.lo, k.hi);
      for (int64_t i = 0; i < v.element_count(); ++i) {
        double a = dist(rng), b = dist(rng);
        if (k.integral) a = std::floor(a), b = std::floor(b);
        v.set_flat(i, a);
        r.set_flat(i, b);
      }
      Expected e = reference_metrics(v, r);
      ErrorReport report = compare_outputs(v, r);
      SCOPED_TRACE(to_string(Type(k.type)) + " " + std::to_string(extents.size()) + "-D");
      EXPECT_NEAR(report.rmse, e.rmse, 1e-9 * std::max(1.0, e.rmse));
      EXPECT_DOUBLE_EQ(report.max_abs, e.max_abs);
      EXPECT_NEAR(report.psnr, 20 * std::log10(k.peak / e.rmse), 1e-9);
      EXPECT_NEAR(rmse(v, r), e.rmse, 1e-9 * std::max(1.0, e.rmse));
      EXPECT_DOUBLE_EQ(max_abs_error(v, r), e.max_abs);
      EXPECT_NEAR(psnr(v, r), report.psnr, 1e-12);
      EXPECT_EQ(std::isnan(report.delta_e), extents.size() != 3);
    }
  }
}

TEST(Metrics, DeltaEOfSolidImagesIsTheHandComputedDistance) {
  // Red against blue: sqrt((53.2408 - 32.2970)^2 + (80.0925 - 79.1875)^2 +
  //   (67.2032 + 107.8602)^2) = 176.3140 at every pixel, so the mean is the same.
  Buffer red = solid(ScalarType::UInt8, 4, 3, {255, 0, 0});
  Buffer blue = solid(ScalarType::UInt8, 4, 3, {0, 0, 255});
  EXPECT_NEAR(mean_delta_e(red, blue), 176.3140, 1e-3);
  // The same colours as 16-bit and as floats, and the alpha channel is ignored.
  EXPECT_NEAR(mean_delta_e(solid(ScalarType::UInt16, 2, 2, {65535, 0, 0, 65535}),
                           solid(ScalarType::UInt16, 2, 2, {0, 0, 65535, 0})),
              176.3140, 1e-3);
  EXPECT_NEAR(mean_delta_e(solid(ScalarType::Float32, 2, 2, {1, 0, 0}),
                           solid(ScalarType::Float32, 2, 2, {0, 0, 1})),
              176.3140, 1e-3);
  // White against mid gray: only L differs, 100 - 53.3890 = 46.6110.
  EXPECT_NEAR(mean_delta_e(solid(ScalarType::Float64, 3, 1, {1, 1, 1}),
                           solid(ScalarType::Float64, 3, 1, {0.5, 0.5, 0.5})),
              46.6110, 1e-3);
}

TEST(Metrics, DeltaEAveragesOverPixels) {
  // Pixel 0: red vs blue (176.3140); pixel 1: equal. Mean = 88.1570.
  Buffer v = make(ScalarType::UInt8, {2, 1, 3}, {255, 9, 0, 9, 0, 9});
  Buffer r = make(ScalarType::UInt8, {2, 1, 3}, {0, 9, 0, 9, 255, 9});
  EXPECT_NEAR(mean_delta_e(v, r), 176.3140 / 2, 1e-3);
  // And against the colour functions pixel by pixel over random images.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  Buffer a(ScalarType::UInt8, {6, 5, 3}), b(ScalarType::UInt8, {6, 5, 3});
  for (int64_t i = 0; i < a.element_count(); ++i)
    a.set_flat(i, byte(rng)), b.set_flat(i, byte(rng));
  double sum = 0;
  for (int64_t y = 0; y < 5; ++y) {
    for (int64_t x = 0; x < 6; ++x) {
      auto lab = [&](const Buffer& img) {
        auto at = [&](int64_t c) { return img.get(std::vector<int64_t>{x, y, c}) / 255.0; };
        return srgb_to_lab({at(0), at(1), at(2)});
      };
      sum += delta_e76(lab(a), lab(b));
    }
  }
  EXPECT_NEAR(mean_delta_e(a, b), sum / 30, 1e-9);
}

TEST(Metrics, FloatsAreClampedBeforeDeltaE) {
  Buffer v = solid(ScalarType::Float32, 2, 2, {1.5, -0.25, 0.5});
  Buffer r = solid(ScalarType::Float32, 2, 2, {1.0, 0.0, 0.5});
  EXPECT_NEAR(mean_delta_e(v, r), 0.0, 1e-12);
  EXPECT_NEAR(rmse(v, r), std::sqrt((0.25 + 0.0625) / 3), 1e-7);  // RMSE does not clamp
}

TEST(Metrics, NanOrInfinityIsReportedAndWorst) {
  Buffer r = solid(ScalarType::Float32, 3, 3, {0.5, 0.5, 0.5});
  Buffer v = solid(ScalarType::Float32, 3, 3, {0.5, 0.5, 0.5});
  v.set(std::vector<int64_t>{1, 2, 1}, std::numeric_limits<double>::quiet_NaN());
  ErrorReport report = compare_outputs(v, r);
  EXPECT_TRUE(report.has_nan);
  EXPECT_EQ(report.delta_e, kInf);
  EXPECT_EQ(report.rmse, kInf);
  EXPECT_EQ(report.max_abs, kInf);
  EXPECT_EQ(report.psnr, -kInf);
  EXPECT_EQ(rmse(v, r), kInf);
  EXPECT_EQ(psnr(v, r), -kInf);
  EXPECT_EQ(max_abs_error(v, r), kInf);
  EXPECT_EQ(mean_delta_e(v, r), kInf);
  EXPECT_EQ(metric_value(report, ErrorMetric::Lab), kInf);
  EXPECT_EQ(metric_value(report, ErrorMetric::Rmse), kInf);

  Buffer g = make(ScalarType::Float64, {2, 1}, {kInf, 0});
  Buffer h = make(ScalarType::Float64, {2, 1}, {0, 0});
  ErrorReport gray = compare_outputs(g, h);
  EXPECT_TRUE(gray.has_nan);
  EXPECT_EQ(gray.rmse, kInf);
  EXPECT_TRUE(std::isnan(gray.delta_e));       // not applicable, as for any gray output
  EXPECT_TRUE(compare_outputs(h, g).has_nan);  // in the reference too
}

TEST(Metrics, MetricValuePicksTheDeclaredMetric) {
  Buffer v = make(ScalarType::Float32, {1, 1, 3}, {1, 0, 0});
  Buffer r = make(ScalarType::Float32, {1, 1, 3}, {0, 0, 1});
  ErrorReport report = compare_outputs(v, r);
  EXPECT_NEAR(metric_value(report, ErrorMetric::Lab), 176.3140, 1e-3);
  EXPECT_NEAR(metric_value(report, ErrorMetric::Rmse), std::sqrt(2.0 / 3.0), 1e-7);
  ErrorReport gray =
      compare_outputs(make(ScalarType::UInt8, {1, 1}, {1}), make(ScalarType::UInt8, {1, 1}, {2}));
  EXPECT_THROW(metric_value(gray, ErrorMetric::Lab), UserError);
  EXPECT_EQ(metric_value(gray, ErrorMetric::Rmse), 1.0);
}

TEST(Metrics, MismatchedShapesOrTypesAreUserErrors) {
  Buffer a(ScalarType::UInt8, {4, 3, 3});
  try {
    compare_outputs(a, Buffer(ScalarType::UInt8, {4, 3}));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "cannot compare a variant output of u8 4x3x3 with a reference of u8 4x3");
  }
  EXPECT_THROW(compare_outputs(a, Buffer(ScalarType::UInt8, {3, 4, 3})), UserError);
  EXPECT_THROW(compare_outputs(a, Buffer(ScalarType::UInt16, {4, 3, 3})), UserError);
  EXPECT_THROW(rmse(a, Buffer(ScalarType::UInt8, {4, 3, 4})), UserError);
  EXPECT_THROW(psnr(a, Buffer(ScalarType::UInt8, {4, 4, 3})), UserError);
  EXPECT_THROW(max_abs_error(a, Buffer(ScalarType::Float32, {4, 3, 3})), UserError);
  EXPECT_THROW(mean_delta_e(a, Buffer(ScalarType::UInt8, {4, 3, 2})), UserError);
  // Delta E needs three channels.
  Buffer two(ScalarType::UInt8, {4, 3, 2});
  EXPECT_THROW(mean_delta_e(two, two), UserError);
  EXPECT_TRUE(std::isnan(compare_outputs(two, two).delta_e));
}

}  // namespace
}  // namespace stipple
