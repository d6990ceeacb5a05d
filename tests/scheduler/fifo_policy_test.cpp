// FIFO: arrival order, blocking at the head, no preemption, speed-agnostic kinds, elastic starts.
#include <gtest/gtest.h>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

TEST(FifoPolicy, StartsInArrivalOrderAndTheHeadBlocksTheQueue) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"a", "K80", 4}};
  // Listed out of arrival order: arrival decides.
  f.jobs = {job("j3", 2.0, 1, 1, {{"K80", 1.0}}), job("j2", 1.0, 3, 3, {{"K80", 1.0}}),
            job("j1", 0.0, 2, 2, {{"K80", 1.0}})};
  f.jobs[2].current = testing::slots_of(0, 2);
  auto fifo = testing::make("fifo");
  Allocation a = testing::decide_ok(*fifo, f);
  ASSERT_EQ(a.jobs.size(), 3u);
  EXPECT_EQ(a.jobs[2].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].change, JobChange::kWaiting);  // needs 3, 2 are free
  EXPECT_EQ(a.jobs[0].change, JobChange::kWaiting);  // fits, but j2 is ahead of it: no backfilling
  EXPECT_EQ(a.jobs[0].job_id, "j3");

  // j1 has finished: j2, then j3.
  f.jobs.pop_back();
  a = testing::decide_ok(*fifo, f);
  EXPECT_EQ(a.jobs[1].change, JobChange::kStarted);
  EXPECT_EQ(a.jobs[1].slots.size(), 3u);
  EXPECT_EQ(a.jobs[0].change, JobChange::kStarted);
  EXPECT_EQ(a.jobs[0].slots.size(), 1u);
  EXPECT_EQ(a.jobs[1].slots, testing::slots_of(0, 3));  // the earlier arrival places first
  EXPECT_EQ(a.jobs[0].slots, testing::slots_of(0, 1, /*first=*/3));
}

TEST(FifoPolicy, NeverPreemptsARunningJob) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"a", "K80", 2}};
  f.jobs = {job("early", 0.0, 2, 2, {{"K80", 1.0}}), job("late", 5.0, 2, 2, {{"K80", 1.0}})};
  f.jobs[1].current = testing::slots_of(0, 2);
  const Allocation a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kWaiting);
  EXPECT_EQ(a.jobs[1].change, JobChange::kKept);
}

TEST(FifoPolicy, PicksKindsWithoutLookingAtSpeeds) {
  RoundFacts f;
  f.cluster.hosts = {{"v", "V100", 2}, {"k", "K80", 4}};
  // Four times faster on V100, but FIFO takes the kind with the most free devices.
  f.jobs = {job("a", 0.0, 2, 2, {{"V100", 4.0}, {"K80", 1.0}})};
  Allocation a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"K80", 2}}));
  // A job no single kind can hold gets the most-free kind's devices first, then the next kind's.
  f.jobs = {job("b", 0.0, 5, 5, {{"V100", 4.0}, {"K80", 1.0}})};
  a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"K80", 4}, {"V100", 1}}));
  // A kind the job cannot run on is never given.
  f.jobs = {job("c", 0.0, 2, 2, {{"V100", 4.0}})};
  a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"V100", 2}}));
}

TEST(FifoPolicy, ElasticJobStartsWithWhatIsFreeWithinItsRange) {
  RoundFacts f;
  f.now_s = 1.0;
  f.cluster.hosts = {{"a", "K80", 4}};
  f.jobs = {job("run", 0.0, 1, 1, {{"K80", 1.0}}), job("el", 1.0, 2, 4, {{"K80", 1.0}})};
  f.jobs[0].current = {{0, 0}};
  Allocation a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(a.jobs[1].slots.size(), 3u);  // 3 free, max 4
  f.jobs[0].min_workers = f.jobs[0].max_workers = 3;
  f.jobs[0].current = testing::slots_of(0, 3);
  a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(a.jobs[1].change, JobChange::kWaiting);  // 1 free, min 2
}

}  // namespace
}  // namespace omnilearn::scheduler
