// Packing: a waiting one-worker job shares a device only where the pair gains (fractions summing to more than 1),
// only when no usable device is free, keeps the device it shares at no restart cost, and prefers the larger gain.
#include "omnilearn/scheduler/packing_policy.h"

#include <gtest/gtest.h>

#include <random>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::decide_ok;
using testing::job;

SchedulerOptions packing_options() {
  SchedulerOptions o;
  o.packing = true;
  o.checkpoint_s = 5.0;
  o.restore_s = 7.0;
  return o;
}

// One v100 host with `slots` devices; jobs a (arrives first) and b, keyed "a" and "b", one worker each.
RoundFacts two_jobs(double frac_a, double frac_b, int slots = 1) {
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"h0", "v100", slots}};
  f.jobs = {job("a", 0.0, 1, 1, {{"v100", 10.0}}), job("b", 1.0, 1, 1, {{"v100", 20.0}})};
  f.jobs[0].packing_key = "a";
  f.jobs[1].packing_key = "b";
  f.packed_pairs = {{"v100", "a", "b", frac_a, frac_b}};
  return f;
}

TEST(PackingPolicyTest, PacksOnlyAPairThatGains) {
  auto fifo = testing::make("fifo", packing_options());
  const Allocation gains = decide_ok(*fifo, two_jobs(0.6, 0.5));
  ASSERT_EQ(gains.jobs.size(), 2u);
  EXPECT_EQ(gains.jobs[0].slots, (std::vector<DeviceSlot>{{0, 0}}));
  EXPECT_EQ(gains.jobs[1].slots, (std::vector<DeviceSlot>{{0, 0}}));
  EXPECT_EQ(gains.jobs[1].change, JobChange::kStarted);
  // A sum of exactly 1 does not gain; an unmeasured pair is not packed; nor without the option.
  EXPECT_TRUE(decide_ok(*fifo, two_jobs(0.5, 0.5)).jobs[1].slots.empty());
  RoundFacts unmeasured = two_jobs(0.6, 0.5);
  unmeasured.packed_pairs.clear();
  EXPECT_TRUE(decide_ok(*fifo, unmeasured).jobs[1].slots.empty());
  RoundFacts other_kind = two_jobs(0.6, 0.5);
  other_kind.packed_pairs[0].kind = "k80";
  EXPECT_TRUE(decide_ok(*fifo, other_kind).jobs[1].slots.empty());
  auto plain = testing::make("fifo");
  EXPECT_TRUE(decide_ok(*plain, two_jobs(0.6, 0.5)).jobs[1].slots.empty());
  // A usable device free: b gets its own, nobody shares.
  const Allocation spare = decide_ok(*fifo, two_jobs(0.6, 0.5, 2));
  EXPECT_EQ(spare.jobs[1].slots, (std::vector<DeviceSlot>{{0, 1}}));
  // A job needing two devices is never packed.
  RoundFacts wide = two_jobs(0.6, 0.5);
  wide.jobs[1].min_workers = 2;
  wide.jobs[1].max_workers = 2;
  wide.cluster.hosts[0].slots = 2;
  wide.jobs.push_back(job("c", 2.0, 1, 1, {{"v100", 1.0}}));
  const Allocation w = decide_ok(*fifo, wide);
  EXPECT_EQ(w.jobs[0].slots.size(), 1u);
  EXPECT_TRUE(w.jobs[1].slots.empty());
}

TEST(PackingPolicyTest, AKeptPairHasNoRestartCostAndAThirdJobIsRefused) {
  auto fifo = testing::make("fifo", packing_options());
  RoundFacts f = two_jobs(0.6, 0.5);
  f.jobs[0].current = {{0, 0}};
  f.jobs[1].current = {{0, 0}};
  f.jobs[1].service_by_kind["v100"] = 60.0;
  const Allocation a = decide_ok(*fifo, f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].change, JobChange::kKept);
  EXPECT_EQ(a.jobs[1].restart_s, 0.0);
  // The pair no longer gains: the guest is preempted and pays its checkpoint.
  f.packed_pairs[0].fraction_b = 0.4;
  const Allocation apart = decide_ok(*fifo, f);
  EXPECT_EQ(apart.jobs[1].change, JobChange::kPreempted);
  EXPECT_EQ(apart.jobs[1].restart_s, 5.0);
  RoundFacts three = two_jobs(0.6, 0.5);
  three.jobs.push_back(job("c", 2.0, 1, 1, {{"v100", 1.0}}));
  for (JobFacts& j : three.jobs) j.current = {{0, 0}};
  EXPECT_FALSE(fifo->decide(three).is_ok());
}

TEST(PackingPolicyTest, TheLargerGainWinsTiesToTheLowerSlot) {
  auto fifo = testing::make("fifo", packing_options());
  RoundFacts f;
  f.now_s = 10.0;
  f.cluster.hosts = {{"h0", "v100", 2}};
  f.jobs = {job("a", 0.0, 1, 1, {{"v100", 1.0}}), job("b", 1.0, 1, 1, {{"v100", 1.0}}),
            job("c", 2.0, 1, 1, {{"v100", 1.0}})};
  f.jobs[0].packing_key = "a";
  f.jobs[1].packing_key = "b";
  f.jobs[2].packing_key = "c";
  f.packed_pairs = {{"v100", "a", "c", 0.6, 0.5}, {"v100", "b", "c", 0.7, 0.5}};
  const Allocation larger = decide_ok(*fifo, f);
  EXPECT_EQ(larger.jobs[2].slots, larger.jobs[1].slots);
  f.packed_pairs[1].fraction_a = 0.6;
  const Allocation tie = decide_ok(*fifo, f);
  EXPECT_EQ(tie.jobs[2].slots, tie.jobs[0].slots);
  EXPECT_EQ(tie.jobs[0].slots, (std::vector<DeviceSlot>{{0, 0}}));
}

// Random rounds under every policy: a slot holds at most two jobs, each sharing job holds one slot, counts stay
// within [min, max], and the same facts give the same allocation.
TEST(PackingPolicyTest, RandomRoundsKeepTheInvariantsAndAreDeterministic) {
  for (const std::string name : {"fifo", "las", "gavel", "gavel-packed", "balanced-mix"}) {
    auto p = testing::make(name, packing_options());
    auto q = testing::make(name, packing_options());
    std::mt19937 rng(7);
    RoundFacts f;
    f.now_s = 10.0;
    f.cluster.hosts = {{"h0", "v100", 2}, {"h1", "k80", 2}};
    for (int i = 0; i < 8; ++i) {
      const int w = i % 3 == 0 ? 2 : 1;
      JobFacts j = job("j" + std::to_string(i), i, w, w, {{"v100", 10.0 + i}, {"k80", 3.0 + i}});
      j.packing_key = "k" + std::to_string(i % 3);
      f.jobs.push_back(j);
    }
    for (const std::string kind : {"v100", "k80"}) {
      f.packed_pairs.push_back({kind, "k1", "k2", 0.7, 0.6});
      f.packed_pairs.push_back({kind, "k1", "k1", 0.55, 0.55});
      f.packed_pairs.push_back({kind, "k2", "k2", 0.4, 0.4});
    }
    int shared = 0;
    for (int round = 0; round < 30; ++round) {
      for (JobFacts& j : f.jobs) j.remaining_samples = 1e6 * static_cast<double>(rng() % 10 + 1);
      const Allocation a = decide_ok(*p, f);
      const Allocation b = decide_ok(*q, f);
      ASSERT_EQ(a.jobs.size(), f.jobs.size());
      std::map<DeviceSlot, int> use;
      for (std::size_t j = 0; j < a.jobs.size(); ++j) {
        EXPECT_EQ(a.jobs[j].slots, b.jobs[j].slots) << name;
        const int n = static_cast<int>(a.jobs[j].slots.size());
        EXPECT_TRUE(n == 0 || (n >= f.jobs[j].min_workers && n <= f.jobs[j].max_workers)) << name;
        for (const DeviceSlot& s : a.jobs[j].slots) ++use[s];
      }
      for (std::size_t j = 0; j < a.jobs.size(); ++j) {
        for (const DeviceSlot& s : a.jobs[j].slots) {
          EXPECT_LE(use[s], 2) << name;
          if (use[s] == 2) {
            EXPECT_EQ(a.jobs[j].slots.size(), 1u) << name;
            ++shared;
          }
        }
      }
      testing::advance(f, a, 60.0);
    }
    EXPECT_GT(shared, 0) << name << ": the rounds should pack some pairs";
  }
}

}  // namespace
}  // namespace omnilearn::scheduler
