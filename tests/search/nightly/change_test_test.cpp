// The change test of two nights' timing samples (search/nightly/change_test.h): the
// Mann-Whitney U and its exact p-value against a brute-force count of every assignment of
// the pooled values to the two nights, the normal approximation against the exact one, the
// Hodges-Lehmann ratio against all pairwise ratios written here, the interval's coverage,
// and the verdicts on simulated nights (log-normal noise of 5%): no false alarm beyond the
// test's level, a 15% slowdown found.
#include "search/nightly/change_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stipple::search::nightly {
namespace {

// U of `a` by its definition: pairs (x in a, y in b) with x > y, ties half.
double brute_u(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a) {
    for (double y : b) u += x > y ? 1 : x == y ? 0.5 : 0;
  }
  return u;
}

// The two-sided exact p-value by enumerating every way to split the pooled values into
// groups of |a| and |b| (each split equally likely under the null hypothesis).
double brute_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double observed = brute_u(a, b), mean = a.size() * b.size() / 2.0;
  std::vector<bool> pick(pooled.size(), false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(a.size()), true);
  double at_least_as_far = 0, total = 0;
  std::sort(pick.begin(), pick.end());
  do {
    std::vector<double> x, y;
    for (size_t i = 0; i < pooled.size(); ++i) (pick[i] ? x : y).push_back(pooled[i]);
    total += 1;
    at_least_as_far += std::fabs(brute_u(x, y) - mean) >= std::fabs(observed - mean) - 1e-9;
  } while (std::next_permutation(pick.begin(), pick.end()));
  return at_least_as_far / total;
}

// Uniform in (0, 1) from mt19937's raw output, and normal by Box-Muller: mt19937 is the same
// sequence everywhere, std::*_distribution is not, so the simulated nights are too.
double uniform(std::mt19937& rng) { return (static_cast<double>(rng()) + 0.5) / 4294967296.0; }
double normal(std::mt19937& rng) {
  return std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
}

// n timing samples around `scale` with log-normal noise.
std::vector<double> draw(std::mt19937& rng, size_t n, double scale, double noise = 0.05) {
  std::vector<double> v(n);
  for (double& x : v) x = scale * std::exp(noise * normal(rng));
  return v;
}

void shuffle(std::vector<double>& v, std::mt19937& rng) {  // Fisher-Yates
  for (size_t i = v.size() - 1; i > 0; --i) {
    std::swap(v[i], v[static_cast<size_t>(uniform(rng) * static_cast<double>(i + 1))]);
  }
}

TEST(MannWhitney, ExactPValuesMatchACountOfEverySplit) {
  std::mt19937 rng(29);
  for (const auto& [m, n] :
       std::vector<std::pair<size_t, size_t>>{{4, 4}, {4, 6}, {5, 7}, {3, 9}}) {
    for (int trial = 0; trial < 6; ++trial) {
      const std::vector<double> a = draw(rng, m, 2.0 + 0.05 * trial), b = draw(rng, n, 2.0);
      const MannWhitney mw = mann_whitney(a, b);
      EXPECT_TRUE(mw.exact);
      EXPECT_EQ(mw.u, brute_u(a, b));
      // The symmetric distribution of U: the exact two-sided p is the tail beyond |U - mean|.
      EXPECT_NEAR(mw.p_value, brute_p(a, b), 1e-12) << m << "x" << n << " trial " << trial;
    }
  }
}

// Past 30 samples a side the p-value is the normal approximation's: against a permutation
// test of 20000 random splits of the pooled values (standard error below 0.004).
TEST(MannWhitney, TheNormalApproximationAgreesWithAPermutationTest) {
  std::mt19937 rng(30);
  for (int trial = 0; trial < 6; ++trial) {
    const std::vector<double> a = draw(rng, 35, 2.0 + 0.01 * trial), b = draw(rng, 40, 2.0);
    const MannWhitney approx = mann_whitney(a, b);
    EXPECT_FALSE(approx.exact);
    std::vector<double> pooled(a);
    pooled.insert(pooled.end(), b.begin(), b.end());
    const double mean = a.size() * b.size() / 2.0, observed = std::fabs(approx.u - mean);
    int as_far = 0;
    const int splits = 20000;
    for (int s = 0; s < splits; ++s) {
      shuffle(pooled, rng);
      const std::vector<double> x(pooled.begin(), pooled.begin() + 35),
          y(pooled.begin() + 35, pooled.end());
      as_far += std::fabs(brute_u(x, y) - mean) >= observed - 1e-9;
    }
    EXPECT_NEAR(approx.p_value, static_cast<double>(as_far) / splits, 0.02) << trial;
  }
}

TEST(MannWhitney, TiesUseTheCorrectedNormalApproximation) {
  const MannWhitney same = mann_whitney({2, 2, 2, 2}, {2, 2, 2, 2, 2});
  EXPECT_FALSE(same.exact);
  EXPECT_EQ(same.u, 10);
  EXPECT_EQ(same.p_value, 1);
  const MannWhitney apart = mann_whitney({3, 3, 3, 3, 3, 3}, {2, 2, 2, 2, 2, 2});
  EXPECT_EQ(apart.u, 36);
  EXPECT_LT(apart.p_value, 0.01);
}

TEST(ChangeTest, TheRatioIsTheMedianPairwiseRatioAndItsIntervalHoldsIt) {
  std::mt19937 rng(31);
  const std::vector<double> before = draw(rng, 7, 2.0), after = draw(rng, 9, 2.4);
  const ChangeTest t = compare_samples(before, after);
  std::vector<double> ratios;
  for (double y : after) {
    for (double x : before) ratios.push_back(y / x);
  }
  std::sort(ratios.begin(), ratios.end());
  ASSERT_EQ(ratios.size(), 63u);
  EXPECT_NEAR(t.ratio, ratios[31], 1e-9);  // the median of 63
  EXPECT_LE(t.ratio_low, t.ratio);
  EXPECT_GE(t.ratio_high, t.ratio);
  EXPECT_GE(t.ratio_low, ratios.front());
  EXPECT_LE(t.ratio_high, ratios.back());
  EXPECT_EQ(t.before_n, 7u);
  EXPECT_EQ(t.after_n, 9u);
  std::vector<double> sorted_after = after;
  std::sort(sorted_after.begin(), sorted_after.end());
  EXPECT_EQ(t.after_median, sorted_after[4]);
  EXPECT_NEAR(t.effect_size, brute_u(after, before) / 63, 1e-12);
}

// The interval's order statistics are the tabled critical values: for 8 and 8 samples at
// alpha 0.05 the two-sided critical U is 13, so the interval runs from the 14th smallest of
// the 64 pairwise ratios to the 14th largest.
TEST(ChangeTest, TheIntervalEndsAtTheTabledOrderStatistics) {
  std::mt19937 rng(35);
  const std::vector<double> before = draw(rng, 8, 2.0), after = draw(rng, 8, 2.1);
  std::vector<double> ratios;
  for (double y : after) {
    for (double x : before) ratios.push_back(y / x);
  }
  std::sort(ratios.begin(), ratios.end());
  const ChangeTest t = compare_samples(before, after, ChangeTestOptions{0.05, 0.03, 4});
  EXPECT_NEAR(t.ratio_low, ratios[13], 1e-12);
  EXPECT_NEAR(t.ratio_high, ratios[50], 1e-12);
  // 4 and 4 samples: no interval of pairwise ratios reaches 99%.
  const ChangeTest few = compare_samples(draw(rng, 4, 2.0), draw(rng, 4, 2.0));
  EXPECT_EQ(few.ratio_low, 0);
  EXPECT_EQ(few.ratio_high, INFINITY);
  EXPECT_EQ(few.verdict, ChangeVerdict::Unknown);
}

// The interval is a 1 - alpha confidence interval: over many simulated pairs of nights with
// a known 10% change it misses the truth about alpha of the time (here at most 1.3 alpha).
TEST(ChangeTest, TheIntervalCoversTheTrueRatio) {
  std::mt19937 rng(32);
  for (const size_t n : {8u, 40u}) {
    int missed = 0;
    const int trials = 1000;
    for (int trial = 0; trial < trials; ++trial) {
      const ChangeTest t =
          compare_samples(draw(rng, n, 2.0), draw(rng, n, 2.2), ChangeTestOptions{0.05, 0.03, 4});
      missed += !(t.ratio_low <= 1.1 && 1.1 <= t.ratio_high);
    }
    EXPECT_LE(missed, trials * 0.05 * 1.3) << n << " samples a night";
  }
}

TEST(ChangeTest, VerdictsOnSimulatedNights) {
  std::mt19937 rng(33);
  int false_alarms = 0, found = 0, faster = 0, same = 0;
  const int trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    const std::vector<double> before = draw(rng, 10, 2.0);
    const ChangeTest unchanged = compare_samples(before, draw(rng, 10, 2.0));
    false_alarms +=
        unchanged.verdict == ChangeVerdict::Slower || unchanged.verdict == ChangeVerdict::Faster;
    found += compare_samples(before, draw(rng, 10, 2.3)).verdict == ChangeVerdict::Slower;
    faster += compare_samples(before, draw(rng, 10, 1.7)).verdict == ChangeVerdict::Faster;
    // 40 samples of a 1% noise: a 1% change is real but confidently below min_change.
    same += compare_samples(draw(rng, 40, 2.0, 0.01), draw(rng, 40, 2.02, 0.01)).verdict ==
            ChangeVerdict::Same;
  }
  EXPECT_LE(false_alarms, trials / 30) << "at alpha 0.01";
  EXPECT_GE(found, trials * 98 / 100);
  EXPECT_GE(faster, trials * 98 / 100);
  EXPECT_GE(same, trials * 9 / 10);
}

TEST(ChangeTest, TooFewSamplesOrAWideIntervalIsUnknown) {
  EXPECT_EQ(compare_samples({2, 2.1, 1.9}, {3, 3.1, 2.9}).verdict, ChangeVerdict::Unknown);
  // Noise of 30%: a 5% change cannot be told from none in 6 samples.
  std::mt19937 rng(34);
  const ChangeTest wide = compare_samples(draw(rng, 6, 2.0, 0.3), draw(rng, 6, 2.1, 0.3));
  EXPECT_EQ(wide.verdict, ChangeVerdict::Unknown);
  EXPECT_GT(wide.ratio_high / wide.ratio_low, 1.2);
  EXPECT_EQ(to_string(wide.verdict), "unknown");
  EXPECT_THROW(compare_samples({1, 2, 3, 0}, {1, 2, 3, 4}), std::invalid_argument);
  EXPECT_THROW(compare_samples({1, 2, 3, NAN}, {1, 2, 3, 4}), std::invalid_argument);
}

}  // namespace
}  // namespace stipple::search::nightly
