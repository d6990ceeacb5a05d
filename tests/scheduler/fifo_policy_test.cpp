// FIFO: arrival order, no preemption, elastic starts; fifo: the fastest kind and EASY backfilling with a reservation
// for the head; fifo-blind: the head blocks the queue and kinds are chosen speed-blind.
#include <gtest/gtest.h>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

TEST(FifoBlindPolicy, StartsInArrivalOrderAndTheHeadBlocksTheQueue) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"a", "K80", 4}};
  // Listed out of arrival order: arrival decides.
  f.jobs = {job("j3", 2.0, 1, 1, {{"K80", 1.0}}), job("j2", 1.0, 3, 3, {{"K80", 1.0}}),
            job("j1", 0.0, 2, 2, {{"K80", 1.0}})};
  f.jobs[2].current = testing::slots_of(0, 2);
  auto fifo = testing::make("fifo-blind");
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

TEST(FifoBlindPolicy, PicksKindsWithoutLookingAtSpeeds) {
  RoundFacts f;
  f.cluster.hosts = {{"v", "V100", 2}, {"k", "K80", 4}};
  // Four times faster on V100, but fifo-blind takes the kind with the most free devices.
  f.jobs = {job("a", 0.0, 2, 2, {{"V100", 4.0}, {"K80", 1.0}})};
  Allocation a = testing::decide_ok(*testing::make("fifo-blind"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"K80", 2}}));
  // A job no single kind can hold gets the most-free kind's devices first, then the next kind's.
  f.jobs = {job("b", 0.0, 5, 5, {{"V100", 4.0}, {"K80", 1.0}})};
  a = testing::decide_ok(*testing::make("fifo-blind"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"K80", 4}, {"V100", 1}}));
  // A kind the job cannot run on is never given.
  f.jobs = {job("c", 0.0, 2, 2, {{"V100", 4.0}})};
  a = testing::decide_ok(*testing::make("fifo-blind"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"V100", 2}}));
}

TEST(FifoPolicy, StartsEachJobOnTheFastestKindThatHoldsIt) {
  RoundFacts f;
  f.cluster.hosts = {{"a", "A100", 4}, {"r", "RTX", 4}, {"r2", "RTX", 4}};
  // Sia's case: 8 RTX free, 4 A100 free; the job is 3x faster per worker on A100 and needs 4.
  f.jobs = {job("a", 0.0, 4, 4, {{"A100", 3.0}, {"RTX", 1.0}})};
  Allocation a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"A100", 4}}));
  // The blind baseline takes the kind with the most free devices.
  a = testing::decide_ok(*testing::make("fifo-blind"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"RTX", 4}}));
  // A job the fastest kind cannot hold goes to the fastest kind that can.
  f.jobs = {job("b", 0.0, 6, 6, {{"A100", 3.0}, {"RTX", 1.0}})};
  a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"RTX", 6}}));
  // No single kind holds it: the fastest devices first.
  f.jobs = {job("c", 0.0, 10, 10, {{"A100", 3.0}, {"RTX", 1.0}})};
  a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"A100", 4}, {"RTX", 6}}));
  // LAS starts on the fastest kind too; las-blind on the most free.
  f.jobs = {job("d", 0.0, 4, 4, {{"A100", 3.0}, {"RTX", 1.0}})};
  a = testing::decide_ok(*testing::make("las"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"A100", 4}}));
  a = testing::decide_ok(*testing::make("las-blind"), f);
  EXPECT_EQ(testing::kinds_of(f.cluster, a.jobs[0]), (std::map<std::string, int>{{"RTX", 4}}));
}

TEST(FifoPolicy, BackfillsASmallJobBehindABlockedBigOne) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"a", "K80", 8}};
  // `run` holds 4 and ends in 100 s; `big` needs 8 (shadow time 100 s, no extra device); `short` (2, 50 s) ends
  // before the shadow time; `long` (2, 1000 s) would delay big: it waits.
  f.jobs = {job("run", 0.0, 4, 4, {{"K80", 1.0}}), job("big", 1.0, 8, 8, {{"K80", 1.0}}),
            job("short", 2.0, 2, 2, {{"K80", 1.0}}), job("long", 3.0, 2, 2, {{"K80", 1.0}})};
  f.jobs[0].current = testing::slots_of(0, 4);
  f.jobs[0].remaining_samples = 400.0;
  f.jobs[2].remaining_samples = 100.0;
  f.jobs[3].remaining_samples = 2000.0;
  Allocation a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(a.jobs[1].change, JobChange::kWaiting);
  EXPECT_EQ(a.jobs[2].change, JobChange::kStarted);
  EXPECT_EQ(a.jobs[3].change, JobChange::kWaiting);
  // fifo-blind starts neither behind the head.
  a = testing::decide_ok(*testing::make("fifo-blind"), f);
  EXPECT_EQ(a.jobs[2].change, JobChange::kWaiting);
  // With a bigger cluster the head's extra devices let `long` start too, however long it runs.
  f.cluster.hosts = {{"a", "K80", 10}};
  a = testing::decide_ok(*testing::make("fifo"), f);
  EXPECT_EQ(a.jobs[2].change, JobChange::kStarted);  // ends before the shadow time
  EXPECT_EQ(a.jobs[3].change, JobChange::kStarted);  // takes the 2 extra (10 - 8 at the shadow time)
}

TEST(FifoPolicy, TheReservationKeepsAStreamOfSmallJobsFromStarvingTheHead) {
  RoundFacts f;
  f.cluster.hosts = {{"a", "K80", 4}};
  // `big` needs all 4; `run` holds 2 and ends after 150 s. Every round a small job arrives that fits the 2 free
  // devices but would hold them 600 s: first-fit would start each and starve big; the reservation starts none, and
  // big starts in the first round after run ends.
  f.jobs = {job("run", 0.0, 2, 2, {{"K80", 1.0}}), job("big", 0.0, 4, 4, {{"K80", 1.0}})};
  f.jobs[0].current = testing::slots_of(0, 2);
  f.jobs[0].remaining_samples = 300.0;  // 2 samples/s on its 2 workers
  auto fifo = testing::make("fifo");
  int big_started_round = -1;
  for (int round = 0; round < 8 && big_started_round < 0; ++round) {
    JobFacts small = job("small" + std::to_string(round), f.now_s, 2, 2, {{"K80", 1.0}});
    small.remaining_samples = 1200.0;
    f.jobs.push_back(small);
    const Allocation a = testing::decide_ok(*fifo, f);
    for (std::size_t j = 0; j < f.jobs.size(); ++j) {
      if (f.jobs[j].id.starts_with("small")) {
        EXPECT_TRUE(a.jobs[j].slots.empty()) << f.jobs[j].id;
      }
      if (f.jobs[j].id == "big" && !a.jobs[j].slots.empty()) big_started_round = round;
    }
    testing::advance(f, a, 60.0);
    if (f.jobs[0].id == "run") {
      f.jobs[0].remaining_samples -= 120.0;
      if (f.jobs[0].remaining_samples <= 0.0) f.jobs.erase(f.jobs.begin());  // run ends
    }
  }
  EXPECT_EQ(big_started_round, 3);  // rounds at 0, 60, 120 s: run ends at 150 s; big starts at 180 s
}

}  // namespace
}  // namespace omnilearn::scheduler
