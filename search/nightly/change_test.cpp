// The change test of two nights' timing samples (change_test.h).
#include "search/nightly/change_test.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace stipple::search::nightly {
namespace {

constexpr size_t kMaxExact = 30;  // each side; the counts of U then fit in 64 bits

// The null distribution of U for samples of m and n values without ties, as counts of the
// C(m + n, m) orderings: f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u) (the largest value
// is from the first sample, beating all n of the other, or from the second).
std::vector<uint64_t> u_counts(size_t m, size_t n) {
  // table[j][u] = f(i, j, u) for the current i, built up over i = 0..m.
  std::vector<std::vector<uint64_t>> table(n + 1);
  for (size_t j = 0; j <= n; ++j) table[j] = {1};  // i = 0: U is 0 whatever j
  for (size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<uint64_t>> next(n + 1);
    next[0] = {1};  // j = 0: U is 0
    for (size_t j = 1; j <= n; ++j) {
      std::vector<uint64_t> f(i * j + 1, 0);
      for (size_t u = 0; u < table[j].size(); ++u) f[u + j] += table[j][u];    // (i-1, j) + j
      for (size_t u = 0; u < next[j - 1].size(); ++u) f[u] += next[j - 1][u];  // (i, j-1)
      next[j] = std::move(f);
    }
    table = std::move(next);
  }
  return table[n];
}

// The smallest k with P(U <= k) > q under the null: the largest C with P(U < C) <= q.
size_t exact_quantile(const std::vector<uint64_t>& counts, double q) {
  long double total = 0;
  for (uint64_t c : counts) total += c;
  long double below = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    below += counts[k];
    if (below / total > q) return k;
  }
  return counts.size() - 1;
}

// z with P(Z > z) = p for a standard normal Z, by bisection on erfc (no closed form in <cmath>).
double upper_normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(mid / std::sqrt(2.0)) > p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ratio_text(double ratio, double low, double high) {
  auto bound = [](double v) {
    return std::isfinite(v) && v > 0 ? fmt::format("{:.3f}", v) : std::string("?");
  };
  return fmt::format("x{:.3f} ({} to {})", ratio, bound(low), bound(high));
}

std::string to_string(ChangeVerdict v) {
  switch (v) {
    case ChangeVerdict::Same: return "same";
    case ChangeVerdict::Slower: return "slower";
    case ChangeVerdict::Faster: return "faster";
    case ChangeVerdict::Unknown: return "unknown";
  }
  return "unknown";
}

MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney r;
  const size_t m = a.size(), n = b.size();
  if (m == 0 || n == 0) return r;
  for (double x : a) {
    for (double y : b) r.u += x > y ? 1.0 : x == y ? 0.5 : 0.0;
  }
  // Ties, between the samples or within one, change the distribution of U.
  bool ties = false;
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double tie_term = 0;  // sum of t^3 - t over groups of t equal values
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    ties = ties || t > 1;
    i = j;
  }
  const double mn = static_cast<double>(m * n), mean = mn / 2;
  if (!ties && m <= kMaxExact && n <= kMaxExact) {
    const std::vector<uint64_t> counts = u_counts(m, n);
    long double total = 0, at_most = 0, at_least = 0;
    const size_t u = static_cast<size_t>(r.u);
    for (size_t k = 0; k < counts.size(); ++k) {
      total += counts[k];
      if (k <= u) at_most += counts[k];
      if (k >= u) at_least += counts[k];
    }
    r.p_value = std::min(1.0, static_cast<double>(2 * std::min(at_most, at_least) / total));
    r.exact = true;
    return r;
  }
  const double total_n = static_cast<double>(m + n);
  const double variance = mn / 12 * ((total_n + 1) - tie_term / (total_n * (total_n - 1)));
  if (variance <= 0) return r;  // every value equal: no evidence of anything
  const double z = std::max(0.0, std::fabs(r.u - mean) - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

ChangeTest compare_samples(const std::vector<double>& before, const std::vector<double>& after,
                           const ChangeTestOptions& options) {
  for (const std::vector<double>* side : {&before, &after}) {
    for (double v : *side) {
      if (!(v > 0) || !std::isfinite(v)) {
        throw std::invalid_argument("compare_samples: timing samples must be positive and finite");
      }
    }
  }
  ChangeTest t;
  t.before_n = before.size();
  t.after_n = after.size();
  if (before.empty() || after.empty()) return t;
  t.before_median = median(before);
  t.after_median = median(after);
  const MannWhitney mw = mann_whitney(after, before);
  t.p_value = mw.p_value;
  t.exact = mw.exact;
  const size_t m = after.size(), n = before.size(), pairs = m * n;
  t.effect_size = mw.u / static_cast<double>(pairs);
  // Hodges-Lehmann on logarithms: the median of the pairwise log ratios, and the interval
  // from the C-th smallest to the C-th largest, C the largest count with P(U < C) <= alpha/2
  // (Hollander and Wolfe, the confidence interval for the shift; Bauer 1972). With C = 0 no
  // interval of pairwise ratios reaches 1 - alpha: it is unbounded.
  std::vector<double> logs;
  logs.reserve(pairs);
  for (double y : after) {
    for (double x : before) logs.push_back(std::log(y) - std::log(x));
  }
  std::sort(logs.begin(), logs.end());
  t.ratio = std::exp(median(logs));
  size_t c = 0;  // 1-based: logs[c - 1] and logs[pairs - c]
  if (m <= kMaxExact && n <= kMaxExact) {
    c = exact_quantile(u_counts(m, n), options.alpha / 2);
  } else {
    // The normal approximation of the same count, with the continuity correction.
    const double sd = std::sqrt(static_cast<double>(pairs) * static_cast<double>(m + n + 1) / 12);
    const double count =
        std::round(static_cast<double>(pairs) / 2 - upper_normal_quantile(options.alpha / 2) * sd);
    c = count < 1 ? 0 : static_cast<size_t>(count);
  }
  c = std::min(c, (pairs + 1) / 2);
  t.ratio_low = c == 0 ? 0 : std::exp(logs[c - 1]);
  t.ratio_high = c == 0 ? std::numeric_limits<double>::infinity() : std::exp(logs[pairs - c]);

  if (t.before_n < options.min_samples || t.after_n < options.min_samples) return t;  // unknown
  const double high = 1 + options.min_change, low = 1 / high;
  const bool significant = t.p_value < options.alpha;
  if (significant && t.ratio >= high) {
    t.verdict = ChangeVerdict::Slower;
  } else if (significant && t.ratio <= low) {
    t.verdict = ChangeVerdict::Faster;
  } else if (t.ratio_low >= low && t.ratio_high <= high) {
    t.verdict = ChangeVerdict::Same;  // confidently within min_change
  }
  return t;
}

}  // namespace stipple::search::nightly
