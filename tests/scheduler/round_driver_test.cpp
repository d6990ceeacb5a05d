// RoundDriver (scheduler/round_driver.h): the jobs present round after round, their facts carried between rounds, the
// devices by kind and the next round's time.
#include "omnilearn/scheduler/round_driver.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "omnilearn/scheduler/scheduler_registry.h"

namespace omnilearn::scheduler {
namespace {

ClusterFacts two_kinds() {
  ClusterFacts c;
  c.hosts = {{"a-0", "a", 2}, {"b-1", "b", 2}, {"a-2", "a", 1}};
  return c;
}

JobFacts job(const std::string& id, Seconds arrival_s) {
  JobFacts f;
  f.id = id;
  f.arrival_s = arrival_s;
  f.throughput_per_worker = {{"a", 1.0}, {"b", 2.0}};
  f.remaining_samples = 100.0;
  return f;
}

RoundDriver fifo_driver(const std::vector<JobFacts>& jobs) {
  auto policy = make_default_scheduler_registry().make("fifo", {});
  EXPECT_TRUE(policy.is_ok());
  std::vector<Seconds> arrivals;
  for (const JobFacts& f : jobs) arrivals.push_back(f.arrival_s);
  return RoundDriver(std::move(policy).value(), two_kinds(), arrivals, [jobs](std::size_t j) { return jobs[j]; });
}

TEST(RoundDriver, JobsJoinByArrivalLeaveWhenFinishedAndKeepTheirFacts) {
  // Job order is not arrival order: "late" comes first in the file.
  RoundDriver d = fifo_driver({job("late", 50.0), job("first", 0.0), job("second", 10.0)});
  std::set<std::size_t> done;
  std::vector<std::size_t> arrivals;
  const auto finished = [&](std::size_t j) { return done.contains(j); };
  const auto arrived = [&](std::size_t j) { arrivals.push_back(j); };
  EXPECT_EQ(d.advance(0.0, finished, arrived), (std::vector<std::size_t>{1}));
  d.facts(0).remaining_samples = 42.0;  // what a back end refreshes stays until it refreshes it again
  EXPECT_EQ(d.advance(60.0, finished, arrived), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(arrivals, (std::vector<std::size_t>{1, 2, 0}));  // in arrival order
  EXPECT_EQ(d.facts(1).id, "first");
  EXPECT_EQ(d.facts(1).remaining_samples, 42.0);
  EXPECT_EQ(d.facts(0).remaining_samples, 100.0);
  done.insert(1);
  EXPECT_EQ(d.advance(120.0, finished, arrived), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(d.facts(0).id, "late");
  EXPECT_EQ(d.facts(1).id, "second");
  EXPECT_FALSE(d.all_done());
  done.insert(0);
  done.insert(2);
  EXPECT_TRUE(d.advance(180.0, finished, arrived).empty());
  EXPECT_TRUE(d.all_done());
}

TEST(RoundDriver, DecidesForThePresentJobsAndCountsDevicesByKind) {
  RoundDriver d = fifo_driver({job("x", 0.0), job("y", 30.0)});
  d.advance(
      0.0, [](std::size_t) { return false; }, [](std::size_t) {});
  auto a = d.decide();
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_EQ(a->jobs.size(), 1u);
  EXPECT_EQ(a->jobs[0].job_id, "x");
  ASSERT_EQ(a->jobs[0].slots.size(), 1u);
  // FIFO puts the job on its fastest kind, b.
  EXPECT_EQ(d.by_kind(a->jobs[0].slots), (std::vector<std::pair<std::string, int>>{{"b", 1}}));
  EXPECT_EQ(d.by_kind({{0, 0}, {2, 0}, {1, 1}, {0, 1}}),
            (std::vector<std::pair<std::string, int>>{{"a", 3}, {"b", 1}}));
}

TEST(RoundDriver, AnIdleClusterSkipsToTheRoundOfTheNextArrival) {
  RoundDriver d = fifo_driver({job("x", 0.0), job("y", 1000.0)});
  d.advance(
      0.0, [](std::size_t) { return false; }, [](std::size_t) {});
  EXPECT_EQ(d.next_round(0.0, 60.0, /*idle=*/false, 0.0), 60.0);
  EXPECT_EQ(d.next_round(60.0, 60.0, /*idle=*/true, 0.0), 1020.0);   // y arrives at 1000: the round of 1020
  EXPECT_EQ(d.next_round(60.0, 60.0, /*idle=*/true, 500.0), 500.0);  // never past max_time_s
  EXPECT_EQ(d.next_round(60.0, 60.0, /*idle=*/false, 100.0), 100.0);
}

}  // namespace
}  // namespace omnilearn::scheduler
