// Pareto fronts of run time versus error, and the numbers the search uses to compare them:
// NSGA-II's non-dominated sorting and crowding distance (Deb et al. 2002), and the
// hypervolume of a 2-D front (the area it dominates up to a reference point), which
// compares the fronts of strategies at equal budget.
//
// Both objectives are minimised. A point with a non-finite objective dominates nothing and
// is on no front.
#pragma once

#include <cstddef>
#include <vector>

namespace stipple::search {

struct Objectives {
  double time = 0;   // ms
  double error = 0;  // mean error (Lab Delta E or RMSE)
};

/// a is no worse than b in both objectives and better in one.
bool dominates(const Objectives& a, const Objectives& b);

/// The indices of the non-dominated points with finite objectives, by increasing time
/// (so by decreasing error). Of points with equal objectives only the first is kept.
std::vector<size_t> pareto_front(const std::vector<Objectives>& points);

/// NSGA-II's fronts: rank 0 is the Pareto front, rank 1 the front of what remains, and so
/// on; points with a non-finite objective share the last rank. Returns each point's rank.
std::vector<int> nondominated_ranks(const std::vector<Objectives>& points);

/// NSGA-II's crowding distance of each point among the points of its rank: the sum over
/// the objectives of the normalised gap between its neighbours; infinite at the extremes.
std::vector<double> crowding_distances(const std::vector<Objectives>& points,
                                       const std::vector<int>& ranks);

/// The area dominated by the Pareto front of `points` and bounded by `reference` (points
/// not strictly below the reference in both objectives add nothing).
double hypervolume(const std::vector<Objectives>& points, const Objectives& reference);

}  // namespace stipple::search
