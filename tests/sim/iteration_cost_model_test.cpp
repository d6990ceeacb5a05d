#include "omnilearn/sim/iteration_cost_model.h"

#include <gtest/gtest.h>

namespace omnilearn::sim {
namespace {

std::vector<scenarios::NodeSpec> nodes(std::vector<double> speeds) {
  std::vector<scenarios::NodeSpec> out;
  for (double s : speeds) {
    scenarios::NodeSpec n;
    n.speed_flops = s;
    out.push_back(n);
  }
  return out;
}

TEST(IterationCostModel, FlopsAreAffineInTheBatch) {
  scenarios::ModelProfile m;
  m.parameters = 1000;
  m.flops_per_sample = 2e6;
  m.flops_per_iteration = 5e5;
  auto cost = IterationCostModel::create(m, nodes({1e9, 2e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_DOUBLE_EQ(cost->flops(0, 10), 5e5 + 10 * 2e6);
  EXPECT_DOUBLE_EQ(cost->seconds(1, 10), (5e5 + 10 * 2e6) / 2e9);
  EXPECT_DOUBLE_EQ(cost->seconds(1, 10, 0.5), (5e5 + 10 * 2e6) / 1e9);
  EXPECT_DOUBLE_EQ(cost->gradient_bytes(), 4000.0);  // 4 bytes per parameter by default
}

TEST(IterationCostModel, MeasuredLawIsConvertedAtEachNodesSpeed) {
  scenarios::ModelProfile m;
  m.gradient_bytes = 123;
  m.measured_fixed_s = 0.01;
  m.measured_per_sample_s = 0.002;
  auto cost = IterationCostModel::create(m, nodes({1e9, 4e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_DOUBLE_EQ(cost->flops(0, 32), (0.01 + 32 * 0.002) * 1e9);
  EXPECT_DOUBLE_EQ(cost->flops(1, 32), (0.01 + 32 * 0.002) * 4e9);
  EXPECT_DOUBLE_EQ(cost->seconds(1, 32), 0.01 + 32 * 0.002);
  EXPECT_DOUBLE_EQ(cost->gradient_bytes(), 123.0);
}

scenarios::ModelProfile testbed_profile() {
  scenarios::ModelProfile m;
  m.parameters = 1000;
  m.measured_fixed_s = 0.001;
  m.measured_per_sample_s = 0.0002;
  m.host_core_flops = 2e9;  // a node of 2 Gflop/s is one full host core
  m.slowdown_shares = {0.25, 0.5, 1.0};
  m.slowdown_factors = {4.9, 2.4, 1.0};
  return m;
}

TEST(IterationCostModel, MeasuredSlowdownUnderACpuQuotaIsApplied) {
  // Shares 0.5, 1.0, 0.25, 0.375 (between table points), 0.125 (below the table), 2.0 (above it).
  auto cost = IterationCostModel::create(testbed_profile(), nodes({1e9, 2e9, 0.5e9, 0.75e9, 0.25e9, 4e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  const double full = 0.001 + 32 * 0.0002;
  EXPECT_DOUBLE_EQ(*cost->cpu_share(0), 0.5);
  EXPECT_NEAR(cost->seconds(0, 32), 2.4 * full, 1e-12);  // share 0.5: 2.4x longer, not 2x
  EXPECT_NEAR(cost->seconds(1, 32), full, 1e-12);
  EXPECT_NEAR(cost->seconds(2, 32), 4.9 * full, 1e-12);
  // Share 0.375, halfway: the throughputs 1/4.9 and 1/2.4 are interpolated (a quota that holds its share exactly,
  // slowdown 1/s, is then exact between points too).
  EXPECT_NEAR(cost->seconds(3, 32), full / (0.5 / 4.9 + 0.5 / 2.4), 1e-12);
  EXPECT_NEAR(cost->seconds(4, 32), 2.0 * 4.9 * full, 1e-12);  // 1/share beyond the table's ends
  EXPECT_NEAR(cost->seconds(5, 32), 0.5 * full, 1e-12);
  // Availability still scales the slowed-down time linearly.
  EXPECT_NEAR(cost->seconds(0, 32, 0.5), 2.0 * 2.4 * full, 1e-12);
}

TEST(IterationCostModel, OtherLoadOnTheHostCapsTheLargestShares) {
  // Shares 0.125, 0.25, 1.0 (1.375 cores) on 0.875 available cores: the level is 0.5, so the last gets 0.5.
  auto m = testbed_profile();
  m.host_cpu_available = 0.875;
  auto cost = IterationCostModel::create(m, nodes({0.25e9, 0.5e9, 2e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  const double full = 0.001 + 32 * 0.0002;
  EXPECT_NEAR(cost->seconds(2, 32), 2.4 * full, 1e-12);        // computes at share 0.5
  EXPECT_NEAR(cost->seconds(1, 32), 4.9 * full, 1e-12);        // still its own quota
  EXPECT_DOUBLE_EQ(*cost->cpu_share(2), 1.0);                  // the quota share is unchanged
  EXPECT_EQ(water_fill({0.2, 0.3}, 1.0), (std::vector<double>{0.2, 0.3}));
  const auto even = water_fill({0.5, 0.5, 0.5}, 0.9);
  for (double s : even) EXPECT_NEAR(s, 0.3, 1e-12);
}

TEST(IterationCostModel, ComputeNoiseIsReadAtEachWorkersShare) {
  auto m = testbed_profile();
  m.noise_shares = {0.25, 0.5};
  m.noise_std_s = {0.010, 0.004};
  // Shares 0.125 (below the table), 0.375 (between), 0.5, 2.0 (above).
  auto cost = IterationCostModel::create(m, nodes({0.25e9, 0.75e9, 1e9, 4e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_TRUE(cost->has_noise());
  EXPECT_DOUBLE_EQ(cost->noise_std_s(0), 0.010);
  EXPECT_NEAR(cost->noise_std_s(1), 0.007, 1e-12);
  EXPECT_DOUBLE_EQ(cost->noise_std_s(2), 0.004);
  EXPECT_DOUBLE_EQ(cost->noise_std_s(3), 0.004);
  m.host_core_flops.reset();
  m.slowdown_shares.clear();
  m.slowdown_factors.clear();
  auto no_share = IterationCostModel::create(m, nodes({1e9}));
  ASSERT_FALSE(no_share.is_ok());
  EXPECT_NE(no_share.status().message().find("compute_noise needs host_core_flops"), std::string::npos);
}

TEST(IterationCostModel, ABurstUnderAQuotaStartsWithItsWholeQuota) {
  // 9 ms of CPU at share 0.5, period 10 ms: with r ms left in the period at the start, it ends at r + 4 (r >= 5),
  // at 9 (4 <= r < 5) or at 14 (r < 4): 0.5 * 11.5 + 0.1 * 9 + 0.4 * 14 = 12.25 ms, not 18.
  EXPECT_NEAR(quota_burst_seconds(0.009, 0.5, 0.010), 0.01225, 2e-6);
  EXPECT_NEAR(quota_burst_seconds(0.002, 0.5, 0.010), 0.002, 1e-12);  // within one quota: never throttled
  EXPECT_NEAR(quota_burst_seconds(1.0, 0.25, 0.010), 4.0, 0.011);  // long bursts: cpu / share, less < 1 period
  EXPECT_DOUBLE_EQ(quota_burst_seconds(0.009, 1.0, 0.010), 0.009);

  auto m = testbed_profile();
  m.slowdown_shares = {0.5, 1.0};
  m.slowdown_factors = {2.0, 1.0};  // linear: CPU per step = the full-core law
  m.quota_period_s = 0.010;
  m.measured_fixed_s = 0.0;
  m.measured_per_sample_s = 0.009 / 32;
  auto cost = IterationCostModel::create(m, nodes({1e9, 2e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_NEAR(cost->seconds(0, 32), 0.01225, 2e-6);
  EXPECT_NEAR(cost->seconds(1, 32), 0.009, 1e-12);  // a full core: no quota
  // Cut by other load below its quota, a worker computes at the CPU it gets, by the table (no burst).
  m.host_cpu_available = 1.25;  // shares 0.5 + 1.0 -> 0.5 + 0.75
  auto loaded = IterationCostModel::create(m, nodes({1e9, 2e9}));
  ASSERT_TRUE(loaded);
  EXPECT_NEAR(loaded->seconds(0, 32), 0.01225, 2e-6);
  EXPECT_FALSE(loaded->bursts(1));
  EXPECT_NEAR(loaded->seconds(1, 32), 0.009 / 0.75, 1e-12);  // the linear table is exact between its points
}

TEST(IterationCostModel, AnExactQuotaTableIsExactBetweenItsPoints) {
  // A calibration of the emulated cost (emulator.sample_cost_s) measures slowdown 1/s at every share; the worker
  // at 0.125 of a core (HL8) lies between the points 0.1 and 0.2 and must come out at 8x, not at 8.75x.
  auto m = testbed_profile();
  m.slowdown_shares = {0.1, 0.2, 0.5, 1.0};
  m.slowdown_factors = {10.0, 5.0, 2.0, 1.0};
  auto cost = IterationCostModel::create(m, nodes({0.25e9, 0.3e9, 1.5e9}));  // shares 0.125, 0.15, 0.75
  ASSERT_TRUE(cost) << cost.status().message();
  const double full = 0.001 + 16 * 0.0002;
  EXPECT_NEAR(cost->seconds(0, 16), 8.0 * full, 1e-12);
  EXPECT_NEAR(cost->seconds(1, 16), full / 0.15, 1e-12);
  EXPECT_NEAR(cost->seconds(2, 16), full / 0.75, 1e-12);
}

TEST(IterationCostModel, WithoutATableTheQuotaIsLinear) {
  auto m = testbed_profile();
  m.slowdown_shares.clear();
  m.slowdown_factors.clear();
  auto cost = IterationCostModel::create(m, nodes({1e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_NEAR(cost->seconds(0, 10), 2.0 * (0.001 + 10 * 0.0002), 1e-12);
  m.host_core_flops.reset();
  auto plain = IterationCostModel::create(m, nodes({1e9}));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->cpu_share(0).has_value());
  EXPECT_NEAR(plain->seconds(0, 10), 0.001 + 10 * 0.0002, 1e-12);
}

TEST(IterationCostModel, MissingCostIsAnErrorNamingTheField) {
  scenarios::ModelProfile m;
  m.name = "empty";
  auto cost = IterationCostModel::create(m, nodes({1e9}));
  ASSERT_FALSE(cost);
  EXPECT_NE(cost.status().message().find("flops_per_sample"), std::string::npos) << cost.status().message();
}

}  // namespace
}  // namespace omnilearn::sim
