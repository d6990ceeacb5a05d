// Goodput: devices where they raise the jobs' speedups' power mean (p = -1) most; batches from the facts' table.
#include <gtest/gtest.h>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

JobFacts elastic(std::string id, Seconds arrival_s, std::vector<double> goodput, std::vector<std::int64_t> batch) {
  JobFacts j = job(std::move(id), arrival_s, 1, static_cast<int>(goodput.size()), {{"t4", 1.0}});
  j.goodput_by_workers = std::move(goodput);
  j.batch_by_workers = std::move(batch);
  return j;
}

TEST(GoodputPolicy, DevicesGoWhereGoodputScalesAndEachJobGetsItsBatch) {
  RoundFacts f;
  f.now_s = 100.0;
  f.cluster.hosts = {{"a", "t4", 4}};
  // `scales` doubles its goodput with each doubling of devices (at a larger batch); `flat` gains nothing past one.
  f.jobs = {elastic("scales", 0.0, {1.0, 2.0, 3.0, 4.0}, {32, 64, 96, 128}),
            elastic("flat", 0.0, {1.0, 1.0, 1.0, 1.0}, {16, 16, 16, 16})};
  const Allocation a = testing::decide_ok(*testing::make("goodput"), f);
  EXPECT_EQ(a.jobs[0].slots.size(), 3u);
  EXPECT_EQ(a.jobs[0].global_batch, 96);
  EXPECT_EQ(a.jobs[1].slots.size(), 1u);
  EXPECT_EQ(a.jobs[1].global_batch, 16);
}

TEST(GoodputPolicy, WithoutATableJobsShareEvenlyAndKeepTheirBatch) {
  RoundFacts f;
  f.now_s = 100.0;
  f.cluster.hosts = {{"a", "t4", 4}, {"b", "t4", 4}};
  f.jobs = {job("x", 0.0, 1, 8, {{"t4", 1.0}}), job("y", 10.0, 1, 8, {{"t4", 2.0}})};
  const Allocation a = testing::decide_ok(*testing::make("goodput"), f);
  // Each job's speedup is against its own fair share: the harmonic mean is highest at 4 and 4.
  EXPECT_EQ(a.jobs[0].slots.size(), 4u);
  EXPECT_EQ(a.jobs[1].slots.size(), 4u);
  EXPECT_EQ(a.jobs[0].global_batch, 0);
}

TEST(GoodputPolicy, TheRestartPenaltyKeepsAYoungJobOnWhatItHolds) {
  RoundFacts f;
  f.now_s = 60.0;
  f.cluster.hosts = {{"a", "t4", 4}};
  // `old` holds 1 device and would gain a little from 2, but a change costs a restart: at age 60 s with 30 s of
  // restore Pollux's penalty is 60 / 90, far more than the gain.
  f.jobs = {elastic("old", 0.0, {1.0, 1.1, 1.15, 1.2}, {32, 64, 96, 128}),
            elastic("new", 0.0, {1.0, 1.9, 2.7, 3.4}, {32, 64, 96, 128})};
  f.jobs[0].current = {{0, 0}};
  SchedulerOptions options;
  options.restore_s = 30.0;
  const Allocation a = testing::decide_ok(*testing::make("goodput", options), f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].slots.size(), 3u);
}

TEST(GoodputPolicy, ABadTableIsNamed) {
  RoundFacts f;
  f.cluster.hosts = {{"a", "t4", 4}};
  f.jobs = {elastic("j", 0.0, {1.0, 2.0}, {32})};
  auto a = testing::make("goodput")->decide(f);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().message(),
            "job 'j': goodput_by_workers and batch_by_workers must both hold max_workers (2) values, got 2 and 1");
}

}  // namespace
}  // namespace omnilearn::scheduler
