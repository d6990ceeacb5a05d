#include "omnilearn/controller/allocation.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "omnilearn/controller/policies.h"

namespace omnilearn::controller {
namespace {

BatchSize sum(const std::vector<BatchSize>& v) { return std::accumulate(v.begin(), v.end(), BatchSize{0}); }

TEST(Allocation, ProportionalSplitWithoutBindingBounds) {
  const std::vector<double> w{12, 12, 8, 16};
  const std::vector<BatchSize> lo(4, 16), hi(4, 96);
  auto b = allocate_proportional(w, lo, hi, 128);
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_EQ(*b, (std::vector<BatchSize>{32, 32, 21, 43}));  // 128 * w / 48 = 32, 32, 21.33, 42.67
}

TEST(Allocation, WaterFillingHandsClippedExcessToOthersInProportion) {
  // 6/6/4/32 cores: the unbounded split gives the 4-core worker 10.67 < 16, and the rest must absorb it.
  const std::vector<double> w{6, 6, 4, 32};
  const std::vector<BatchSize> lo(4, 16), hi(4, 96);
  auto b = allocate_proportional(w, lo, hi, 128);
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(sum(*b), 128);
  EXPECT_EQ((*b)[2], 16);
  // At the common time that gives the 32-core worker 80, the 6-core workers would get 15 < 16: clipped too.
  EXPECT_EQ((*b)[0], 16);
  EXPECT_EQ((*b)[1], 16);
  EXPECT_EQ((*b)[3], 80);
}

TEST(Allocation, UpperBoundClipsAndRedistributes) {
  const std::vector<double> w{1, 1, 10};
  const std::vector<BatchSize> lo(3, 1), hi{100, 100, 20};
  auto b = allocate_proportional(w, lo, hi, 60);
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(*b, (std::vector<BatchSize>{20, 20, 20}));
}

TEST(Allocation, InfeasibleTotalIsAnError) {
  const std::vector<double> w{1, 1};
  const std::vector<BatchSize> lo(2, 16), hi(2, 32);
  EXPECT_FALSE(allocate_proportional(w, lo, hi, 100).is_ok());
  EXPECT_FALSE(allocate_proportional(w, lo, hi, 10).is_ok());
  EXPECT_FALSE(allocate_proportional(std::vector<double>{1, -1}, lo, hi, 40).is_ok());
}

TEST(Allocation, EqualTimeSolvesAffineCosts) {
  const std::vector<AffineCost> c{{0.1, 0.01}, {0.3, 0.02}};
  const std::vector<BatchSize> lo(2, 1), hi(2, 1000);
  auto x = solve_equal_time(c, lo, hi, 100.0);
  ASSERT_TRUE(x.is_ok());
  EXPECT_NEAR((*x)[0] + (*x)[1], 100.0, 1e-9);
  EXPECT_NEAR(0.1 + 0.01 * (*x)[0], 0.3 + 0.02 * (*x)[1], 1e-9);
}

TEST(Allocation, LargestRemainderKeepsSumAndBounds) {
  const std::uint64_t seed = 20261130;
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<double> w(n);
    std::vector<BatchSize> lo(n), hi(n);
    BatchSize sum_lo = 0, sum_hi = 0;
    for (int k = 0; k < n; ++k) {
      w[k] = std::uniform_real_distribution<double>(0.01, 100.0)(rng);
      lo[k] = 1 + static_cast<BatchSize>(rng() % 20);
      hi[k] = lo[k] + static_cast<BatchSize>(rng() % 100);
      sum_lo += lo[k], sum_hi += hi[k];
    }
    const BatchSize total = sum_lo + static_cast<BatchSize>(rng() % static_cast<std::uint64_t>(sum_hi - sum_lo + 1));
    auto b = allocate_proportional(w, lo, hi, total);
    ASSERT_TRUE(b.is_ok()) << "seed " << seed << " trial " << trial << ": " << b.status().message();
    ASSERT_EQ(sum(*b), total) << "seed " << seed << " trial " << trial;
    for (int k = 0; k < n; ++k) {
      ASSERT_GE((*b)[k], lo[k]) << "seed " << seed << " trial " << trial;
      ASSERT_LE((*b)[k], hi[k]) << "seed " << seed << " trial " << trial;
    }
  }
}

// Exhaustive check of the greedy oracle against every integer plan of small clusters.
TEST(Oracle, MatchesBruteForceOnSmallClusters) {
  const std::uint64_t seed = 7;
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 3;
    std::vector<CostFunction> costs;
    for (int k = 0; k < n; ++k) {
      const double a = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      const double b = std::uniform_real_distribution<double>(0.01, 0.2)(rng);
      const double q = std::uniform_real_distribution<double>(0.0, 0.002)(rng);  // convex, non-decreasing
      costs.push_back([a, b, q](BatchSize x) { return a + b * x + q * x * x; });
    }
    const std::vector<BatchSize> lo(n, 2), hi(n, 20);
    const BatchSize total = 6 + static_cast<BatchSize>(rng() % 54);
    const auto plan = oracle_plan(costs, lo, hi, total);
    ASSERT_EQ(sum(plan), total);
    auto makespan = [&](const std::vector<BatchSize>& p) {
      double m = 0;
      for (int k = 0; k < n; ++k) m = std::max(m, costs[k](p[k]));
      return m;
    };
    double best = 1e300;
    for (BatchSize a = 2; a <= 20; ++a) {
      for (BatchSize b = 2; b <= 20; ++b) {
        const BatchSize c = total - a - b;
        if (c < 2 || c > 20) continue;
        best = std::min(best, makespan({a, b, c}));
      }
    }
    EXPECT_NEAR(makespan(plan), best, 1e-12) << "seed " << seed << " trial " << trial;
  }
}

}  // namespace
}  // namespace omnilearn::controller
