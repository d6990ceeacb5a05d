// Properties of every policy over random clusters and jobs driven for several rounds (fixed seed, printed on
// failure): capacity is never exceeded, each job gets 0 or [min, max] devices of kinds it runs on, the changes
// are classified right, FIFO never preempts, and a decision is a function of its facts.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

RoundFacts random_facts(std::mt19937_64& rng) {
  const std::vector<std::string> kinds = {"A100", "K80", "T4"};
  RoundFacts f;
  const int hosts = 1 + static_cast<int>(rng() % 6);
  for (int h = 0; h < hosts; ++h) {
    f.cluster.hosts.push_back({"h" + std::to_string(h), kinds[rng() % kinds.size()], 1 + static_cast<int>(rng() % 8)});
  }
  const std::vector<std::string> present = f.cluster.kinds();
  const std::vector<int> capacity = f.cluster.capacity_by_kind();
  const int jobs = 1 + static_cast<int>(rng() % 12);
  for (int j = 0; j < jobs; ++j) {
    JobFacts job;
    job.id = "j" + std::to_string(j);
    job.arrival_s = static_cast<double>(rng() % 600);
    int largest = 0;
    for (std::size_t k = 0; k < present.size(); ++k) {
      if (rng() % 4 == 0) continue;  // a kind this job cannot run on
      job.throughput_per_worker[present[k]] = std::uniform_real_distribution<double>(0.5, 10.0)(rng);
      largest = std::max(largest, capacity[k]);
    }
    if (largest == 0) {
      job.throughput_per_worker[present[0]] = 1.0;
      largest = capacity[0];
    }
    // Every minimum fits one kind (gavel's requirement), so every policy can serve every job.
    job.min_workers = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(largest));
    job.max_workers =
        rng() % 2 == 0
            ? job.min_workers
            : job.min_workers +
                  static_cast<int>(rng() % static_cast<std::uint64_t>(f.cluster.total_slots() - job.min_workers + 1));
    job.balances_batches = rng() % 2 == 0;
    job.remaining_samples = std::uniform_real_distribution<double>(0.0, 1e5)(rng);
    f.jobs.push_back(job);
  }
  f.now_s = 600.0;
  return f;
}

void check_allocation(const RoundFacts& f, const Allocation& a, const std::string& where) {
  ASSERT_EQ(a.jobs.size(), f.jobs.size()) << where;
  std::set<DeviceSlot> used;
  for (std::size_t j = 0; j < f.jobs.size(); ++j) {
    const JobFacts& job = f.jobs[j];
    const JobAllocation& ja = a.jobs[j];
    EXPECT_EQ(ja.job_id, job.id) << where;
    const int n = static_cast<int>(ja.slots.size());
    EXPECT_TRUE(n == 0 || (n >= job.min_workers && n <= job.max_workers)) << where << " job " << job.id << ": " << n;
    for (const DeviceSlot& s : ja.slots) {
      ASSERT_LT(s.host, f.cluster.hosts.size()) << where;
      EXPECT_LT(s.slot, f.cluster.hosts[s.host].slots) << where;
      EXPECT_TRUE(used.insert(s).second) << where << ": a slot given twice";
      EXPECT_GT(job.throughput_per_worker.count(f.cluster.hosts[s.host].kind), 0u) << where;
    }
    std::vector<DeviceSlot> held = job.current;
    std::sort(held.begin(), held.end());
    const JobChange expected = held.empty()       ? (n == 0 ? JobChange::kWaiting : JobChange::kStarted)
                               : n == 0           ? JobChange::kPreempted
                               : ja.slots == held ? JobChange::kKept
                               : n == static_cast<int>(held.size()) ? JobChange::kMoved
                                                                    : JobChange::kResized;
    EXPECT_EQ(ja.change, expected) << where << " job " << job.id;
  }
  EXPECT_LE(static_cast<int>(used.size()), f.cluster.total_slots()) << where;
}

TEST(SchedulerProperties, CapacityBoundsAndChangesHoldOverRandomRounds) {
  const std::uint64_t seed = 20260526;
  std::mt19937_64 rng(seed);
  SchedulerOptions options;
  options.las_thresholds = {300.0, 3000.0};
  options.las_starvation_s = 600.0;
  options.checkpoint_s = 5.0;
  options.restore_s = 5.0;
  for (int trial = 0; trial < 60; ++trial) {
    const RoundFacts start = random_facts(rng);
    options.placement = trial % 2 == 0 ? Placement::kPack : Placement::kSpread;
    for (const std::string& name : make_default_scheduler_registry().names()) {
      const std::string where = "seed " + std::to_string(seed) + " trial " + std::to_string(trial) + " " + name;
      auto policy = testing::make(name, options);
      auto twin = testing::make(name, options);
      RoundFacts f = start;
      for (int round = 0; round < 8; ++round) {
        auto a = policy->decide(f);
        ASSERT_TRUE(a.is_ok()) << where << ": " << a.status().message();
        check_allocation(f, *a, where + " round " + std::to_string(round));
        auto again = twin->decide(f);
        ASSERT_TRUE(again.is_ok());
        for (std::size_t j = 0; j < f.jobs.size(); ++j) EXPECT_EQ(again->jobs[j].slots, a->jobs[j].slots) << where;
        if (name == "fifo" || name == "fifo-blind") {
          for (std::size_t j = 0; j < f.jobs.size(); ++j) {
            if (!f.jobs[j].current.empty()) {
              EXPECT_EQ(a->jobs[j].change, JobChange::kKept) << where;
            }
          }
        }
        testing::advance(f, *a, 60.0);
        // A job leaves now and then, so that waiting ones get a turn.
        if (!f.jobs.empty() && rng() % 3 == 0) f.jobs.erase(f.jobs.begin() + static_cast<long>(rng() % f.jobs.size()));
      }
    }
  }
}

}  // namespace
}  // namespace omnilearn::scheduler
