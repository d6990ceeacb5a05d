// Gavel with space sharing: the packed LP on instances solved by hand, the rounds that follow it, and gavel-packed
// deciding as gavel when nothing may be packed.
#include <gtest/gtest.h>

#include "omnilearn/scheduler/max_min_fairness.h"
#include "omnilearn/scheduler/round_mechanism.h"
#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::decide_ok;
using testing::job;

// One V100; jobs a (10 samples/s alone) and b (20), one worker each. Packed, a keeps 0.6 of its speed and b 0.5
// (a gain: 1.1 > 1). E_a = 10, E_b = 20, so the ratios are x_a + 0.6 p and x_b + 0.5 p, with x_a + x_b + p <= 1 (one
// device), x_a + p <= 1, x_b + p <= 1. Alone the best is 1/2 each. Packed all the time, (0.6, 0.5); moving time d
// from the pair to b alone gives (0.6 (1 - d), 0.5 + 0.5 d), equal at d = 1/11: both 6/11 > 1/2, and no other
// allocation raises both (every unit of device time is used, and the pair is the combination that does most).
MaxMinProblem one_device(double fraction_a, double fraction_b) {
  return {{1}, {1, 1}, {{10.0}, {20.0}}, {{0, 1, 0, fraction_a, fraction_b}}};
}

TEST(GavelPackedLp, APairThatGainsIsPackedAtTheHandComputedOptimum) {
  auto lp = solve_max_min_fairness(one_device(0.6, 0.5));
  ASSERT_TRUE(lp.is_ok()) << lp.status().message();
  EXPECT_NEAR(lp->min_ratio, 6.0 / 11.0, 1e-7);
  ASSERT_EQ(lp->pair_x.size(), 1u);
  EXPECT_NEAR(lp->pair_x[0], 10.0 / 11.0, 1e-7);
  EXPECT_NEAR(lp->x[1][0], 1.0 / 11.0, 1e-7);
  EXPECT_NEAR(lp->x[0][0], 0.0, 1e-7);
  // Without the pair: Gavel's LP alone, 1/2 each.
  MaxMinProblem alone = one_device(0.6, 0.5);
  alone.pairs.clear();
  lp = solve_max_min_fairness(alone);
  ASSERT_TRUE(lp.is_ok());
  EXPECT_NEAR(lp->min_ratio, 0.5, 1e-7);
  EXPECT_TRUE(lp->pair_x.empty());
}

TEST(GavelPackedLp, CapacityCountsAPairOnceAndEachJobsTimeOnce) {
  // Three one-worker jobs of equal speed on one device, every pair keeping 0.6 each: at most one device-time in all
  // (the pairs' fractions sum to <= 1), each job in at most 1. By symmetry each pair runs 1/3 of the time: every job
  // is packed 2/3 of the time at 0.6, ratio 0.4 (E = 1), above the 1/3 of taking turns alone.
  MaxMinProblem p{{1}, {1, 1, 1}, {{1.0}, {1.0}, {1.0}}, {{0, 1, 0, 0.6, 0.6}, {0, 2, 0, 0.6, 0.6}, {1, 2, 0, 0.6, 0.6}}};
  auto lp = solve_max_min_fairness(p);
  ASSERT_TRUE(lp.is_ok()) << lp.status().message();
  EXPECT_NEAR(lp->min_ratio, 0.4, 1e-7);
  double device = 0.0;
  for (double v : lp->pair_x) device += v;
  for (const auto& row : lp->x) device += row[0];
  EXPECT_LE(device, 1.0 + 1e-9);
  for (std::size_t j = 0; j < 3; ++j) {
    double time = lp->x[j][0];
    for (std::size_t i = 0; i < p.pairs.size(); ++i) {
      if (p.pairs[i].a == j || p.pairs[i].b == j) time += lp->pair_x[i];
    }
    EXPECT_LE(time, 1.0 + 1e-9) << "job " << j;
  }
}

TEST(GavelPackedLp, BadPairsAreRefused) {
  MaxMinProblem p = one_device(0.6, 0.5);
  p.pairs[0].b = 0;
  EXPECT_FALSE(solve_max_min_fairness(p).is_ok());
  p = one_device(0.6, 0.5);
  p.pairs[0].kind = 1;
  EXPECT_FALSE(solve_max_min_fairness(p).is_ok());
  p = one_device(-0.1, 0.5);
  auto bad = solve_max_min_fairness(p);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("pair 0: fractions must be finite numbers >= 0, got -0.1"), std::string::npos)
      << bad.status().message();
  p = one_device(0.6, 0.5);
  p.capacity = {2};
  p.workers[1] = 2;
  EXPECT_FALSE(solve_max_min_fairness(p).is_ok());
}

SchedulerOptions packing_options() {
  SchedulerOptions o;
  o.packing = true;
  o.checkpoint_s = 5.0;
  o.restore_s = 7.0;
  return o;
}

// The LP's instance above as round facts.
RoundFacts one_device_facts(double fraction_a, double fraction_b) {
  RoundFacts f;
  f.cluster.hosts = {{"h0", "v100", 1}};
  f.jobs = {job("a", 0.0, 1, 1, {{"v100", 10.0}}), job("b", 0.0, 1, 1, {{"v100", 20.0}})};
  f.jobs[0].packing_key = "ka";
  f.jobs[1].packing_key = "kb";
  f.packed_pairs = {{"v100", "ka", "kb", fraction_a, fraction_b}};
  return f;
}

TEST(GavelPackedPolicy, RoundsFollowThePackedLp) {
  RoundFacts f = one_device_facts(0.6, 0.5);
  auto policy = testing::make("gavel-packed", packing_options());
  const int rounds = 220;
  int packed = 0, b_alone = 0, restarts = 0;
  for (int r = 0; r < rounds; ++r) {
    const Allocation a = decide_ok(*policy, f);
    ASSERT_EQ(a.jobs.size(), 2u);
    if (!a.jobs[0].slots.empty() && a.jobs[0].slots == a.jobs[1].slots) ++packed;
    if (a.jobs[0].slots.empty() && !a.jobs[1].slots.empty()) ++b_alone;
    ASSERT_FALSE(a.jobs[0].slots.empty() && a.jobs[1].slots.empty()) << "round " << r << ": the device idles";
    for (const JobAllocation& j : a.jobs) restarts += j.restart_s > 0.0 ? 1 : 0;
    testing::advance(f, a, 60.0);
  }
  // The LP: packed 10/11 of the time, b alone 1/11, a never alone.
  EXPECT_NEAR(packed / static_cast<double>(rounds), 10.0 / 11.0, 0.01);
  EXPECT_EQ(packed + b_alone, rounds);
  EXPECT_GT(restarts, 0);  // a leaves the device for b's turns alone and comes back
}

TEST(GavelPackedPolicy, APairThatDoesNotGainIsNeverPacked) {
  for (const auto& [fa, fb] : {std::pair{0.5, 0.5}, std::pair{0.4, 0.3}}) {
    RoundFacts f = one_device_facts(fa, fb);
    auto policy = testing::make("gavel-packed", packing_options());
    for (int r = 0; r < 50; ++r) {
      const Allocation a = decide_ok(*policy, f);
      ASSERT_TRUE(a.jobs[0].slots.empty() || a.jobs[1].slots.empty()) << "round " << r << ": packed " << fa << ", " << fb;
      testing::advance(f, a, 60.0);
    }
    // They take turns: the LP gives each half the device.
    EXPECT_NEAR(f.jobs[0].service_by_kind["v100"] / (50 * 60.0), 0.5, 0.03);
  }
}

TEST(GavelPackedPolicy, AKeptPairCostsNothingAndAGuestMovedPaysBoth) {
  RoundFacts f = one_device_facts(0.6, 0.5);
  f.now_s = 60.0;
  f.jobs[0].current = {{0, 0}};
  f.jobs[1].current = {{0, 0}};
  f.jobs[0].service_by_kind["v100"] = 30.0;  // a has had less than its share (10/11): the pair runs again
  f.jobs[1].service_by_kind["v100"] = 60.0;
  const Allocation a = decide_ok(*testing::make("gavel-packed", packing_options()), f);
  EXPECT_EQ(a.jobs[0].slots, (std::vector<DeviceSlot>{{0, 0}}));
  EXPECT_EQ(a.jobs[1].slots, (std::vector<DeviceSlot>{{0, 0}}));
  EXPECT_EQ(a.jobs[0].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].restart_s, 0.0);
  // Three jobs on one device are refused, as by the packing pass.
  RoundFacts three = one_device_facts(0.6, 0.5);
  three.jobs.push_back(job("c", 0.0, 1, 1, {{"v100", 1.0}}));
  for (JobFacts& j : three.jobs) j.current = {{0, 0}};
  EXPECT_FALSE(testing::make("gavel-packed", packing_options())->decide(three).is_ok());
}

TEST(GavelPackedPolicy, DecidesAsGavelWhenNothingMayBePacked) {
  // Two kinds, three jobs (one of two workers), 60 rounds: the same allocations as gavel, without the packing
  // option, and with it when the pairs do not gain.
  RoundFacts f;
  f.cluster.hosts = {{"k", "K80", 3}, {"v", "V100", 2}};
  f.jobs = {job("A", 0.0, 1, 1, {{"K80", 1.0}, {"V100", 4.0}}), job("B", 0.0, 1, 1, {{"K80", 1.0}, {"V100", 2.0}}),
            job("C", 30.0, 2, 2, {{"K80", 2.0}, {"V100", 3.0}})};
  f.now_s = 30.0;
  f.jobs[0].packing_key = f.jobs[1].packing_key = "k";
  f.packed_pairs = {{"K80", "k", "k", 0.5, 0.5}, {"V100", "k", "k", 0.45, 0.5}};
  SchedulerOptions packing = packing_options();
  auto gavel = testing::make("gavel", SchedulerOptions{});
  auto without = testing::make("gavel-packed", SchedulerOptions{});
  auto no_gain = testing::make("gavel-packed", packing);
  for (int r = 0; r < 60; ++r) {
    const Allocation a = decide_ok(*gavel, f);
    const Allocation b = decide_ok(*without, f);
    const Allocation c = decide_ok(*no_gain, f);
    for (std::size_t j = 0; j < f.jobs.size(); ++j) {
      EXPECT_EQ(a.jobs[j].slots, b.jobs[j].slots) << "round " << r << " job " << j;
      EXPECT_EQ(a.jobs[j].slots, c.jobs[j].slots) << "round " << r << " job " << j;
      EXPECT_EQ(a.jobs[j].change, c.jobs[j].change) << "round " << r << " job " << j;
    }
    testing::advance(f, a, 60.0);
  }
}

}  // namespace
}  // namespace omnilearn::scheduler
