// Tiresias's 2D-LAS: attained service (workers x time) orders the queues; crossing a threshold demotes a job;
// a starved job is promoted; a job that does not fit lets the next one run.
#include <gtest/gtest.h>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

RoundFacts two_jobs_one_host(double a_service) {
  RoundFacts f;
  f.now_s = 100.0;
  f.cluster.hosts = {{"a", "K80", 2}};
  f.jobs = {job("A", 0.0, 2, 2, {{"K80", 1.0}}), job("B", 10.0, 2, 2, {{"K80", 1.0}})};
  f.jobs[0].current = testing::slots_of(0, 2);
  f.jobs[0].service_by_kind = {{"K80", a_service}};
  f.jobs[1].waiting_s = 90.0;
  return f;
}

SchedulerOptions one_threshold() {
  SchedulerOptions o;
  o.las_thresholds = {100.0};
  o.las_starvation_s = 1000.0;
  o.checkpoint_s = 7.0;
  o.restore_s = 3.0;
  return o;
}

TEST(LasPolicy, AJobCrossingTheThresholdIsDemoted) {
  auto las = testing::make("las", one_threshold());
  // Below the threshold A and B share queue 0; A arrived first and keeps running.
  Allocation a = testing::decide_ok(*las, two_jobs_one_host(/*a_service=*/90.0));
  EXPECT_EQ(a.jobs[0].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].change, JobChange::kWaiting);
  // At 150 worker-seconds A is in queue 1, behind B: preempted (its checkpoint reported), B starts.
  a = testing::decide_ok(*las, two_jobs_one_host(/*a_service=*/150.0));
  EXPECT_EQ(a.jobs[0].change, JobChange::kPreempted);
  EXPECT_DOUBLE_EQ(a.jobs[0].restart_s, 7.0);
  EXPECT_EQ(a.jobs[1].change, JobChange::kStarted);
  EXPECT_DOUBLE_EQ(a.jobs[1].restart_s, 0.0);  // a first start restores nothing
  EXPECT_EQ(a.jobs[1].slots, testing::slots_of(0, 2));
}

TEST(LasPolicy, AStarvedJobIsPromotedToTheFirstQueue) {
  RoundFacts f = two_jobs_one_host(/*a_service=*/0.0);
  // B has run 500 worker-seconds (queue 1) and waited; A (queue 0) runs.
  f.jobs[1].service_by_kind = {{"K80", 500.0}};
  f.jobs[1].waiting_s = 999.0;
  auto las = testing::make("las", one_threshold());
  EXPECT_EQ(testing::decide_ok(*las, f).jobs[1].change, JobChange::kWaiting);
  // At the starvation limit B joins queue 0, where it competes by arrival: A arrived first and keeps running.
  f.jobs[1].waiting_s = 1000.0;
  EXPECT_EQ(testing::decide_ok(*las, f).jobs[1].change, JobChange::kWaiting);
  // Once A is in queue 1 itself, the promoted B goes first; it restores the state it had (restore_s).
  f.jobs[0].service_by_kind = {{"K80", 200.0}};
  const Allocation a = testing::decide_ok(*las, f);
  EXPECT_EQ(a.jobs[1].change, JobChange::kStarted);
  EXPECT_DOUBLE_EQ(a.jobs[1].restart_s, 3.0);
  EXPECT_EQ(a.jobs[0].change, JobChange::kPreempted);
}

TEST(LasPolicy, AJobThatDoesNotFitLetsTheNextOneRun) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"a", "K80", 3}};
  f.jobs = {job("big", 0.0, 2, 2, {{"K80", 1.0}}), job("huge", 1.0, 3, 3, {{"K80", 1.0}}),
            job("small", 2.0, 1, 1, {{"K80", 1.0}})};
  const Allocation a = testing::decide_ok(*testing::make("las", one_threshold()), f);
  EXPECT_EQ(a.jobs[0].slots.size(), 2u);
  EXPECT_EQ(a.jobs[1].change, JobChange::kWaiting);
  EXPECT_EQ(a.jobs[2].slots.size(), 1u);
}

TEST(LasPolicy, ElasticJobsGetTheirMinimumFirstThenGrowInPriorityOrder) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"a", "K80", 8}};
  f.jobs = {job("e1", 0.0, 2, 5, {{"K80", 1.0}}), job("e2", 1.0, 2, 5, {{"K80", 1.0}}),
            job("r", 2.0, 2, 2, {{"K80", 1.0}})};
  Allocation a = testing::decide_ok(*testing::make("las", one_threshold()), f);
  // Minima: 2 + 2 + 2 of 8; the 2 left go to e1, first in priority, up to its maximum of 5.
  EXPECT_EQ(a.jobs[0].slots.size(), 4u);
  EXPECT_EQ(a.jobs[1].slots.size(), 2u);
  EXPECT_EQ(a.jobs[2].slots.size(), 2u);
  // Alone, an elastic job stops at its maximum.
  f.jobs.resize(1);
  a = testing::decide_ok(*testing::make("las", one_threshold()), f);
  EXPECT_EQ(a.jobs[0].slots.size(), 5u);
}

}  // namespace
}  // namespace omnilearn::scheduler
