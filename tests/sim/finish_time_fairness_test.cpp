// Finish-time fairness (sim/src/finish_time_fairness.h): T_id on fractional shares of one or two kinds, the
// all-reduce it counts, the contention N, and the kinds merged from a cluster's groups. Hand-computed numbers.
#include "finish_time_fairness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace omnilearn::sim {
namespace {

FairShareKind kind(const std::string& name, double devices, std::int64_t largest_node, double bandwidth_Bps = 1e9,
                   Seconds latency_s = 0.0) {
  return {name, devices, largest_node, bandwidth_Bps, latency_s};
}

FairShareJob job(std::int64_t workers, std::int64_t global_batch, double samples, bool balances,
                 std::map<std::string, double> throughput, double gradient_bytes = 0.0) {
  return {workers, global_batch, samples, gradient_bytes, balances, std::move(throughput)};
}

TEST(FairShare, FractionalSharesOverTwoKindsFastestFirst) {
  // N = 3: a third of 4 devices of each kind. 2 workers take 4/3 fast and 2/3 slow; 10 steps of 20 samples, no
  // gradient to exchange.
  const std::vector<FairShareKind> kinds = {kind("fast", 4, 4), kind("slow", 4, 4)};
  const std::map<std::string, double> v = {{"fast", 300.0}, {"slow", 100.0}};
  // Balanced batches: 4/3 x 300 + 2/3 x 100 samples/s.
  EXPECT_NEAR(fair_share_time(job(2, 20, 200, true, v), kinds, 3.0), 10 * 20 / (400.0 + 200.0 / 3.0), 1e-12);
  // Equal batches: every worker at the slower kind's speed, 2 x 100 samples/s.
  EXPECT_NEAR(fair_share_time(job(2, 20, 200, false, v), kinds, 3.0), 1.0, 1e-12);
  // The kind listed first is not taken first when it is slower: 4/3 of fast, still.
  const std::vector<FairShareKind> reversed = {kind("slow", 4, 4), kind("fast", 4, 4)};
  EXPECT_NEAR(fair_share_time(job(2, 20, 200, true, v), reversed, 3.0), 10 * 20 / (400.0 + 200.0 / 3.0), 1e-12);
}

TEST(FairShare, AllReduceIsSlowedWhenTheShareHoldsFewerDevicesThanWorkers) {
  // One step of 10 samples on half a device (N = 4, 2 devices on nodes of one): compute 10 / (0.5 x 100) = 0.2 s;
  // all-reduce 2 x 1 ms + 1 x 1e8 bytes / 1 GB/s = 0.102 s, 2 / 0.5 = 4 times as long.
  const std::vector<FairShareKind> kinds = {kind("k", 2, 1, 1e9, 1e-3)};
  EXPECT_NEAR(fair_share_time(job(2, 10, 10, false, {{"k", 100.0}}, 1e8), kinds, 4.0), 0.2 + 4 * 0.102, 1e-12);
  // With its whole share (N = 1): 10 / (2 x 100) s + 0.102 s.
  EXPECT_NEAR(fair_share_time(job(2, 10, 10, false, {{"k", 100.0}}, 1e8), kinds, 1.0), 0.05 + 0.102, 1e-12);
}

TEST(FairShare, AllReduceIsFreeOnOneNodeOnly) {
  // 4 workers, 1e8 bytes over 1 GB/s: 2(n-1)/n = 1.5 gradients, 0.15 s per step; compute 40 / 400 = 0.1 s.
  const FairShareJob j = job(4, 40, 40, false, {{"k", 100.0}, {"other", 100.0}}, 1e8);
  EXPECT_NEAR(fair_share_time(j, {kind("k", 8, 4)}, 1.0), 0.1, 1e-12);
  EXPECT_NEAR(fair_share_time(j, {kind("k", 8, 2)}, 1.0), 0.1 + 0.15, 1e-12);
  // Two kinds used: across links, at the slower link and longer latency of the two.
  EXPECT_NEAR(fair_share_time(j, {kind("k", 2, 8, 1e9, 0.0), kind("other", 8, 8, 5e8, 1e-3)}, 1.0), 0.1 + 2e-3 + 0.3,
              1e-12);
}

TEST(FairShare, RoundsUpToWholeSteps) {
  // 105 samples in steps of 10: 11 steps of 0.1 s.
  EXPECT_NEAR(fair_share_time(job(1, 10, 105, true, {{"k", 100.0}}), {kind("k", 1, 1)}, 1.0), 1.1, 1e-12);
}

TEST(FairShare, KindsMergeTheGroupsOfOneKind) {
  scenarios::DeviceCluster c;
  c.groups.push_back({"fast", 2, 4, 1e9, 1e-5, ""});
  c.groups.push_back({"slow", 1, 2, std::nullopt, std::nullopt, ""});
  c.groups.push_back({"fast", 1, 8, std::nullopt, std::nullopt, ""});
  const std::vector<FairShareKind> kinds =
      fair_share_kinds(c, /*default_bandwidth_Bps=*/5e8, /*default_latency_s=*/0.0);
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].kind, "fast");
  EXPECT_EQ(kinds[0].devices, 16.0);
  EXPECT_EQ(kinds[0].largest_node, 8);
  EXPECT_EQ(kinds[0].bandwidth_Bps, 5e8);  // the slowest link
  EXPECT_EQ(kinds[0].latency_s, 1e-5);     // the longest latency
  EXPECT_EQ(kinds[1].kind, "slow");
  EXPECT_EQ(kinds[1].devices, 2.0);
  EXPECT_EQ(kinds[1].largest_node, 2);
  EXPECT_EQ(kinds[1].bandwidth_Bps, 5e8);
}

TEST(AverageContention, TheProfileGivesEveryJobsOverlapSum) {
  // Random jobs, some unfinished, some arriving together or after the stop: each job's average from the profile is
  // the sum of every job's time present within its own span over that span.
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> u(0.0, 100.0);
  std::vector<JobOutcome> jobs(300);
  for (JobOutcome& o : jobs) {
    o.arrival_s = std::floor(u(rng));  // ties on purpose
    o.end_s = rng() % 5 == 0 ? -1.0 : o.arrival_s + 1.0 + u(rng);
  }
  const Seconds stop_s = 150.0;
  const ContentionProfile profile(jobs, stop_s);
  const auto until = [&](const JobOutcome& o) { return o.finished() ? o.end_s : stop_s; };
  for (const JobOutcome& job : jobs) {
    const Seconds from = job.arrival_s, to = until(job);
    if (!(to > from)) continue;
    double together_s = 0.0;
    for (const JobOutcome& o : jobs) together_s += std::max(0.0, std::min(to, until(o)) - std::max(from, o.arrival_s));
    EXPECT_NEAR(profile.average(job), together_s / (to - from), 1e-9 * together_s / (to - from));
  }
}

TEST(AverageContention, CountsAnUnfinishedJobUntilTheRunStops) {
  std::vector<JobOutcome> jobs(3);
  jobs[0].arrival_s = 0.0;
  jobs[0].end_s = 10.0;
  jobs[1].arrival_s = 5.0;   // not finished when the run stops at 20 s
  jobs[2].arrival_s = 30.0;  // arrives after the stop
  const ContentionProfile profile(jobs, 20.0);
  EXPECT_NEAR(profile.average(jobs[0]), (10.0 + 5.0) / 10.0, 1e-12);
  EXPECT_NEAR(profile.average(jobs[1]), (15.0 + 5.0) / 15.0, 1e-12);
  // Only the finished job gets a rho: 10 s over T_id on 1/1.5 of the device (1 step of 100 samples at 100/s).
  ClusterSummary summary;
  summary.jobs = jobs;
  const FairShareJob j = job(1, 100, 100, true, {{"k", 100.0}});
  add_finish_time_fairness(summary, {j, j, j}, {kind("k", 1, 1)}, 20.0);
  EXPECT_NEAR(summary.jobs[0].fair_s, 1.5, 1e-12);
  EXPECT_NEAR(summary.jobs[0].rho(), 10.0 / 1.5, 1e-12);
  EXPECT_EQ(summary.jobs[1].fair_s, 0.0);
  EXPECT_NEAR(summary.mean_rho, 10.0 / 1.5, 1e-12);
  EXPECT_NEAR(summary.max_rho, 10.0 / 1.5, 1e-12);
}

}  // namespace
}  // namespace omnilearn::sim
