// Placement: pack (fewest hosts, best fit) against spread (most hosts), and kept slots.
#include "omnilearn/scheduler/placement.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

ClusterFacts two_hosts() {
  ClusterFacts c;
  c.hosts = {{"h0", "K80", 4}, {"h1", "K80", 4}};
  return c;
}

std::vector<DeviceSlot> place_one(const ClusterFacts& c, int n, Placement p, std::vector<DeviceSlot> held = {}) {
  return place_jobs(c, {std::move(held)}, {{n}}, {0}, p)[0];
}

TEST(Placement, PackFillsOneHostSpreadUsesBoth) {
  const ClusterFacts c = two_hosts();
  EXPECT_EQ(place_one(c, 4, Placement::kPack), testing::slots_of(0, 4));
  EXPECT_EQ(place_one(c, 4, Placement::kSpread), (std::vector<DeviceSlot>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(place_one(c, 3, Placement::kSpread), (std::vector<DeviceSlot>{{0, 0}, {0, 1}, {1, 0}}));
  // Too big for one host: pack fills one, then the next.
  ClusterFacts three = c;
  three.hosts.push_back({"h2", "K80", 4});
  const std::vector<DeviceSlot> six = place_one(three, 6, Placement::kPack);
  EXPECT_EQ(six.size(), 6u);
  EXPECT_EQ(std::count_if(six.begin(), six.end(), [](const DeviceSlot& s) { return s.host == 2; }), 0);
}

TEST(Placement, PackTakesTheTightestHostThatFits) {
  const ClusterFacts c = two_hosts();
  // Job 0 keeps 2 slots of host 1; job 1 (2 devices) fits on either host and takes host 1's 2 free ones,
  // leaving host 0 whole for a larger job. Spread puts one on each.
  const std::vector<std::vector<DeviceSlot>> held = {{{1, 0}, {1, 1}}, {}};
  const std::vector<std::vector<int>> counts = {{2}, {2}};
  auto packed = place_jobs(c, held, counts, {0, 1}, Placement::kPack);
  EXPECT_EQ(packed[0], held[0]);
  EXPECT_EQ(packed[1], (std::vector<DeviceSlot>{{1, 2}, {1, 3}}));
  auto spread = place_jobs(c, held, counts, {0, 1}, Placement::kSpread);
  EXPECT_EQ(spread[1], (std::vector<DeviceSlot>{{0, 0}, {1, 2}}));
}

TEST(Placement, AJobKeepsItsSlotsAndGrowsNextToThem) {
  const ClusterFacts c = two_hosts();
  const std::vector<DeviceSlot> held = {{1, 2}};
  EXPECT_EQ(place_one(c, 1, Placement::kPack, held), held);
  EXPECT_EQ(place_one(c, 1, Placement::kSpread, held), held);
  EXPECT_EQ(place_one(c, 3, Placement::kPack, held), (std::vector<DeviceSlot>{{1, 0}, {1, 1}, {1, 2}}));
  EXPECT_EQ(place_one(c, 2, Placement::kSpread, held), (std::vector<DeviceSlot>{{0, 0}, {1, 2}}));
  // Shrinking keeps the slots on the host holding most of the job (pack).
  EXPECT_EQ(place_one(c, 2, Placement::kPack, {{0, 3}, {1, 0}, {1, 1}}), (std::vector<DeviceSlot>{{1, 0}, {1, 1}}));
}

TEST(Placement, PolicyOptionSelectsIt) {
  RoundFacts f;
  f.cluster = two_hosts();
  f.jobs = {testing::job("j", 0.0, 4, 4, {{"K80", 1.0}})};
  for (const std::string& name : make_default_scheduler_registry().names()) {
    SchedulerOptions o;
    o.placement = Placement::kSpread;
    const Allocation spread = testing::decide_ok(*testing::make(name, o), f);
    EXPECT_EQ(spread.jobs[0].slots, (std::vector<DeviceSlot>{{0, 0}, {0, 1}, {1, 0}, {1, 1}})) << name;
    o.placement = Placement::kPack;
    EXPECT_EQ(testing::decide_ok(*testing::make(name, o), f).jobs[0].slots, testing::slots_of(0, 4)) << name;
  }
}

}  // namespace
}  // namespace omnilearn::scheduler
