#include "search/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace stipple::search {

namespace {

bool finite(const Objectives& o) { return std::isfinite(o.time) && std::isfinite(o.error); }

}  // namespace

bool dominates(const Objectives& a, const Objectives& b) {
  if (!finite(a)) return false;
  if (!finite(b)) return true;
  return a.time <= b.time && a.error <= b.error && (a.time < b.time || a.error < b.error);
}

std::vector<size_t> pareto_front(const std::vector<Objectives>& points) {
  // Sweep by time then error: a point is on the front when its error is below every
  // error seen so far (O(n log n), not the pairwise O(n^2)).
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i) {
    if (finite(points[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].time != points[b].time) return points[a].time < points[b].time;
    return points[a].error < points[b].error;
  });
  std::vector<size_t> front;
  double best_error = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    if (points[i].error < best_error) {
      front.push_back(i);
      best_error = points[i].error;
    }
  }
  return front;
}

std::vector<int> nondominated_ranks(const std::vector<Objectives>& points) {
  // Peel fronts one at a time. The populations are small (hundreds), so the simple
  // repeated sweep is fast enough and obviously right.
  std::vector<int> rank(points.size(), -1);
  std::vector<size_t> remaining;
  for (size_t i = 0; i < points.size(); ++i) {
    if (finite(points[i])) remaining.push_back(i);
  }
  int r = 0;
  while (!remaining.empty()) {
    std::vector<size_t> next;
    for (size_t i : remaining) {
      bool dominated = false;
      for (size_t j : remaining) {
        if (j != i && dominates(points[j], points[i])) {
          dominated = true;
          break;
        }
      }
      if (dominated) {
        next.push_back(i);
      } else {
        rank[i] = r;
      }
    }
    remaining = std::move(next);
    ++r;
  }
  for (int& x : rank) {
    if (x < 0) x = r;
  }
  return rank;
}

std::vector<double> crowding_distances(const std::vector<Objectives>& points,
                                       const std::vector<int>& ranks) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> d(points.size(), 0);
  int max_rank = ranks.empty() ? -1 : *std::max_element(ranks.begin(), ranks.end());
  for (int r = 0; r <= max_rank; ++r) {
    std::vector<size_t> members;
    for (size_t i = 0; i < points.size(); ++i) {
      if (ranks[i] == r) members.push_back(i);
    }
    if (members.empty()) continue;
    for (int objective = 0; objective < 2; ++objective) {
      auto value = [&](size_t i) { return objective == 0 ? points[i].time : points[i].error; };
      std::stable_sort(members.begin(), members.end(),
                       [&](size_t a, size_t b) { return value(a) < value(b); });
      const double lo = value(members.front()), hi = value(members.back());
      d[members.front()] = inf;
      d[members.back()] = inf;
      if (!(hi > lo) || !std::isfinite(hi - lo)) continue;
      for (size_t k = 1; k + 1 < members.size(); ++k) {
        d[members[k]] += (value(members[k + 1]) - value(members[k - 1])) / (hi - lo);
      }
    }
  }
  return d;
}

double hypervolume(const std::vector<Objectives>& points, const Objectives& reference) {
  // The front by increasing time has decreasing error: the dominated region is a
  // staircase, summed as rectangles from each point's time to the next point's.
  double area = 0;
  std::vector<size_t> front = pareto_front(points);
  std::vector<const Objectives*> inside;
  for (size_t i : front) {
    if (points[i].time < reference.time && points[i].error < reference.error) {
      inside.push_back(&points[i]);
    }
  }
  for (size_t k = 0; k < inside.size(); ++k) {
    const double next_time = k + 1 < inside.size() ? inside[k + 1]->time : reference.time;
    area += (next_time - inside[k]->time) * (reference.error - inside[k]->error);
  }
  return area;
}

}  // namespace stipple::search
