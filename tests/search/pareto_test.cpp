// Pareto fronts, NSGA-II ranks and crowding, and hypervolume on hand-made point sets whose
// answers are worked out by hand in the comments, and against a brute-force reference on
// random sets.
#include "search/pareto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace stipple::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Pareto, FrontOfAHandMadeSet) {
  //   time error
  // 0  1    5      on the front (fastest)
  // 1  2    3      on
  // 2  3    3      dominated by 1
  // 3  4    1      on
  // 4  5    0      on (most accurate)
  // 5  6    2      dominated by 3 and 4
  // 6  inf  0      not finite: never on the front
  // 7  2    3      equal to 1: only the first is kept
  std::vector<Objectives> p = {{1, 5}, {2, 3}, {3, 3}, {4, 1}, {5, 0}, {6, 2}, {kInf, 0}, {2, 3}};
  EXPECT_EQ(pareto_front(p), (std::vector<size_t>{0, 1, 3, 4}));
}

TEST(Pareto, DominanceIsStrictInOneObjective) {
  EXPECT_TRUE(dominates({1, 1}, {2, 1}));
  EXPECT_TRUE(dominates({1, 1}, {1, 2}));
  EXPECT_FALSE(dominates({1, 1}, {1, 1}));
  EXPECT_FALSE(dominates({1, 2}, {2, 1}));
  EXPECT_TRUE(dominates({9, 9}, {kInf, 0}));
  EXPECT_FALSE(dominates({kInf, 0}, {9, 9}));
}

TEST(Pareto, RanksPeelFrontsAndNonFinitePointsAreLast) {
  // Front 0: (1,3) (3,1). Front 1: (2,4) (4,2). Front 2: (5,5). Then the failure.
  std::vector<Objectives> p = {{1, 3}, {2, 4}, {3, 1}, {4, 2}, {5, 5}, {kInf, kInf}};
  EXPECT_EQ(nondominated_ranks(p), (std::vector<int>{0, 1, 0, 1, 2, 3}));
}

TEST(Pareto, CrowdingDistanceOfAHandMadeFront) {
  // One front of four points; time spans 0..6, error 0..6.
  // Interior point (2, 4): neighbours (0, 6) and (4, 1): (4 - 0)/6 + (6 - 1)/6 = 1.5.
  // Interior point (4, 1): neighbours (2, 4) and (6, 0): (6 - 2)/6 + (4 - 0)/6 = 4/3.
  std::vector<Objectives> p = {{0, 6}, {2, 4}, {4, 1}, {6, 0}};
  std::vector<int> ranks = nondominated_ranks(p);
  std::vector<double> d = crowding_distances(p, ranks);
  EXPECT_TRUE(std::isinf(d[0]));
  EXPECT_NEAR(d[1], 1.5, 1e-12);
  EXPECT_NEAR(d[2], 4.0 / 3.0, 1e-12);
  EXPECT_TRUE(std::isinf(d[3]));
}

TEST(Pareto, HypervolumeOfAHandMadeFront) {
  // Reference (10, 10). Front (2, 6), (4, 3), (7, 1), plus the dominated (5, 5):
  // staircase areas: (4-2)*(10-6) = 8, (7-4)*(10-3) = 21, (10-7)*(10-1) = 27: 56.
  std::vector<Objectives> p = {{2, 6}, {4, 3}, {7, 1}, {5, 5}};
  EXPECT_DOUBLE_EQ(hypervolume(p, {10, 10}), 56);
  // A point outside the reference adds nothing; one on its edge neither.
  p.push_back({11, 0});
  p.push_back({10, 0.5});
  EXPECT_DOUBLE_EQ(hypervolume(p, {10, 10}), 56);
  EXPECT_DOUBLE_EQ(hypervolume({}, {10, 10}), 0);
  EXPECT_DOUBLE_EQ(hypervolume({{0, 0}}, {3, 2}), 6);
}

// Brute force: the dominated area on a fine grid of cell centres.
double grid_hypervolume(const std::vector<Objectives>& p, Objectives ref, int n) {
  double area = 0;
  const double dx = ref.time / n, dy = ref.error / n;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double x = (i + 0.5) * dx, y = (j + 0.5) * dy;
      for (const Objectives& o : p) {
        if (o.time <= x && o.error <= y) {
          area += dx * dy;
          break;
        }
      }
    }
  }
  return area;
}

TEST(Pareto, RandomSetsAgreeWithBruteForce) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<> u(0, 10);
  for (int trial = 0; trial < 20; ++trial) {
    // Points on a lattice of halves, so that the grid of eighths measures the area exactly.
    std::vector<Objectives> p(12);
    for (Objectives& o : p) o = {std::round(u(rng) * 2) / 2, std::round(u(rng) * 2) / 2};
    // The front: exactly the points nobody dominates.
    std::vector<size_t> front = pareto_front(p);
    for (size_t i = 0; i < p.size(); ++i) {
      // Not dominated, and not equal to an earlier point (only the first of equals is kept).
      bool dominated = false;
      for (size_t j = 0; j < p.size(); ++j) {
        const bool earlier_equal = j < i && p[j].time == p[i].time && p[j].error == p[i].error;
        dominated = dominated || dominates(p[j], p[i]) || earlier_equal;
      }
      EXPECT_EQ(std::count(front.begin(), front.end(), i) == 1, !dominated) << trial << " " << i;
    }
    EXPECT_NEAR(hypervolume(p, {10, 10}), grid_hypervolume(p, {10, 10}, 80), 1e-9) << trial;
  }
}

}  // namespace
}  // namespace stipple::search
