// Did a variant's time change between two nights? A decision on two sets of timing samples
// that stays quiet on a noisy machine: slower, faster, same, or unknown (take more samples).
//
// After the tools that track benchmarks over time: LLVM's LNT compares nights with the
// Mann-Whitney U test when both sides have at least 4 samples and ignores changes under a
// minimum size; Chromium's Pinpoint answers DIFFERENT, SAME or UNKNOWN and asks for more
// repeats when unsure. Here:
//  - the test is the two-sided Mann-Whitney U (Wilcoxon rank-sum) test, which assumes
//    nothing of the noise's distribution: exact (the U distribution by counting) for small
//    samples without ties, else the normal approximation with the tie correction;
//  - the size of the change is the Hodges-Lehmann estimate of the ratio after / before (the
//    exponential of the median pairwise log ratio) with its distribution-free confidence
//    interval (from the same U distribution), so a report can say "1.15x slower (1.12x to
//    1.18x)";
//  - slower or faster when the test rejects at `alpha` and the estimate is beyond
//    `min_change`; same when the whole interval lies within `min_change` of 1; unknown
//    otherwise: an interval too wide to say, which more samples may narrow (with 4 a side
//    no interval reaches 99%: it is unbounded, and the answer unknown).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace stipple::search::nightly {

enum class ChangeVerdict { Same, Slower, Faster, Unknown };

/// "same", "slower", "faster", "unknown".
std::string to_string(ChangeVerdict v);

struct ChangeTestOptions {
  double alpha = 0.01;       // the test's level, and 1 - the interval's confidence
  double min_change = 0.03;  // relative: a ratio within [1/(1+m), 1+m] is no change
  size_t min_samples = 4;    // each side; fewer: unknown
};

struct ChangeTest {
  ChangeVerdict verdict = ChangeVerdict::Unknown;
  size_t before_n = 0, after_n = 0;
  double before_median = 0, after_median = 0;
  /// The Hodges-Lehmann estimate of after / before and its 1 - alpha confidence interval
  /// (0 to infinity when the samples are too few for one).
  double ratio = 1, ratio_low = 0, ratio_high = 0;
  double p_value = 1;  // two-sided Mann-Whitney U
  /// Vargha and Delaney's A: the chance that a sample after exceeds one before (ties
  /// count half); 0.5 is no effect.
  double effect_size = 0.5;
  bool exact = false;  // p from the exact U distribution (else the normal approximation)
};

/// The median (0 for none).
double median(std::vector<double> v);
/// "x1.150 (1.140 to 1.163)": a ratio and its interval, a bound there is none of (0 or
/// infinite: too few samples) as "?".
std::string ratio_text(double ratio, double low, double high);

/// Compares timing samples (positive numbers, e.g. ms) of two nights.
ChangeTest compare_samples(const std::vector<double>& before, const std::vector<double>& after,
                           const ChangeTestOptions& options = {});

/// The two-sided p-value of the Mann-Whitney U test of `a` against `b`, with the U of `a`
/// (pairs (x in a, y in b) with x > y, ties counting half). Exact when both sides have at
/// most 30 samples and no value is tied; else the normal approximation with continuity and
/// tie corrections. Apart for its tests.
struct MannWhitney {
  double u = 0, p_value = 1;
  bool exact = false;
};
MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace stipple::search::nightly
