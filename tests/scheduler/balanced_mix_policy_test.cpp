// Ours (balanced-mix): a job that balances its batches gets a mixed set valued at the sum of its workers'
// throughputs; an equal-batch job gets one kind; leftovers go where they add most; restarts must pay for themselves.
#include <gtest/gtest.h>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;
using Kinds = std::map<std::string, int>;

RoundFacts three_and_three() {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"v", "V100", 3}, {"k", "K80", 3}};
  return f;
}

TEST(BalancedMixPolicy, BalancedJobGetsAMixedSetUniformJobASingleKind) {
  RoundFacts f = three_and_three();
  f.jobs = {job("uniform", 0.0, 2, 2, {{"V100", 4.0}, {"K80", 1.0}}),
            job("balanced", 1.0, 3, 3, {{"V100", 4.0}, {"K80", 2.0}}, /*balances=*/true)};
  const Allocation a = testing::decide_ok(*testing::make("balanced-mix"), f);
  // The uniform job first (LAS order: same queue, earlier arrival): its fastest kind with room.
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"V100", 2}}));
  // The balanced job: the fastest 3 left, 1 V100 and 2 K80, at 4 + 2 x 2 = 8 samples/s.
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[1]), (Kinds{{"K80", 2}, {"V100", 1}}));
  EXPECT_DOUBLE_EQ(effective_throughput(f.jobs[1], f.cluster, a.jobs[1].slots), 8.0);
}

TEST(BalancedMixPolicy, AUniformJobWithNoKindFreeEnoughGetsTheFastestMixedSet) {
  RoundFacts f = three_and_three();
  f.jobs = {job("wide", 0.0, 4, 4, {{"V100", 4.0}, {"K80", 1.0}})};
  const Allocation a = testing::decide_ok(*testing::make("balanced-mix"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"K80", 1}, {"V100", 3}}));
}

TEST(BalancedMixPolicy, LeftoversFillBalancedJobsButNeverSlowAUniformOne) {
  RoundFacts f = three_and_three();
  f.jobs = {job("b", 0.0, 1, 6, {{"V100", 4.0}, {"K80", 1.0}}, /*balances=*/true)};
  Allocation a = testing::decide_ok(*testing::make("balanced-mix"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"K80", 3}, {"V100", 3}}));
  // Equal batches: a K80 beside V100s would slow every worker to the K80's pace (4 x 1 < 3 x 4).
  f.jobs[0].balances_batches = false;
  a = testing::decide_ok(*testing::make("balanced-mix"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"V100", 3}}));
  // Elastic bounds hold: max 4.
  f.jobs[0].balances_batches = true;
  f.jobs[0].max_workers = 4;
  a = testing::decide_ok(*testing::make("balanced-mix"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"K80", 1}, {"V100", 3}}));
}

TEST(BalancedMixPolicy, LeftoversGoWhereTheyAddMostForTheirJob) {
  RoundFacts f = three_and_three();
  // Both elastic and balanced; x is 4 times faster on V100, y only 1.25 times: after each job's minimum (x's
  // fastest first: a V100; y's: a V100), the V100 left adds 1 of x's best worker to x and 1 of y's to y (tie:
  // x, earlier in order); each K80 adds 1/4 of x's best but 4/5 of y's: y takes them.
  f.jobs = {job("x", 0.0, 1, 6, {{"V100", 4.0}, {"K80", 1.0}}, /*balances=*/true),
            job("y", 1.0, 1, 6, {{"V100", 5.0}, {"K80", 4.0}}, /*balances=*/true)};
  const Allocation a = testing::decide_ok(*testing::make("balanced-mix"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"V100", 2}}));
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[1]), (Kinds{{"K80", 3}, {"V100", 1}}));
}

TEST(BalancedMixPolicy, ARunningJobGrowsOnlyWhenTheRestartPaysForItself) {
  SchedulerOptions o;
  o.checkpoint_s = 20.0;
  o.restore_s = 10.0;
  RoundFacts f = three_and_three();
  f.jobs = {job("b", 0.0, 2, 6, {{"V100", 4.0}, {"K80", 2.0}}, /*balances=*/true)};
  f.jobs[0].current = testing::slots_of(0, 2);  // 2 V100: 8 samples/s
  f.jobs[0].service_by_kind = {{"V100", 20.0}};
  // 100 samples left: 12.5 s as it is; growing to all 6 (18 samples/s) costs 30 s first.
  f.jobs[0].remaining_samples = 100.0;
  Allocation a = testing::decide_ok(*testing::make("balanced-mix", o), f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[0].slots, testing::slots_of(0, 2));
  // 10,000 left: 1,250 s as it is, 30 + 556 s grown.
  f.jobs[0].remaining_samples = 10000.0;
  a = testing::decide_ok(*testing::make("balanced-mix", o), f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kResized);
  EXPECT_DOUBLE_EQ(a.jobs[0].restart_s, 30.0);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (Kinds{{"K80", 3}, {"V100", 3}}));
}

}  // namespace
}  // namespace omnilearn::scheduler
