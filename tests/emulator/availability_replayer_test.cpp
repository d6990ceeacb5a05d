#include "omnilearn/emulator/availability_replayer.h"

#include <gtest/gtest.h>

#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::emulator {
namespace {

scenarios::Scenario parse(const std::string& availability) {
  const std::string yaml = std::string(
      "cluster:\n  nodes:\n    - {name: a, cores: 4, core_speed: 1e9}\n    - {name: b, cores: 4, core_speed: 1e9}\n"
      "workload:\n  model: {name: lenet, parameters: 1000, flops_per_sample: 1e6}\n  dataset: fashion-mnist\n"
      "  global_batch: 64\n  epochs: 3\n") + availability;
  auto s = scenarios::parse_scenario(yaml, "test.yaml");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

Result<AvailabilityReplayer> replay(const scenarios::Scenario& scenario) {
  auto plan = run::AvailabilityPlan::create(scenario);
  if (!plan) return plan.status();
  return AvailabilityReplayer::create(*plan);
}

TEST(AvailabilityReplayer, SecondsScheduleComesDueByWallTime) {
  auto r = replay(parse(
      "availability:\n  schedule:\n    unit: seconds\n    phases:\n      - {at: 0, cores: [4, 2]}\n"
      "      - {at: 1.5, cores: [1, 2]}\n      - {at: 3, cores: [4, 4]}\n"));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->initial(), (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(*r->next_time(), 1.5);
  EXPECT_TRUE(r->take_due(1.0, 0).empty());
  const auto due = r->take_due(1.6, 0);
  ASSERT_EQ(due.size(), 1u);  // worker 1 stays at 2 cores: no change recorded
  EXPECT_EQ(due[0].worker, 0u);
  EXPECT_EQ(due[0].fraction, 0.25);
  const auto later = r->take_due(10.0, 0);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_TRUE(r->empty());
}

TEST(AvailabilityReplayer, EpochScheduleComesDueByEpoch) {
  auto r = replay(parse(
      "availability:\n  schedule:\n    unit: epochs\n    phases:\n      - {at: 0, fractions: [1, 1]}\n"
      "      - {at: 2, fractions: [0.5, 1]}\n"));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_FALSE(r->next_time().has_value());
  EXPECT_TRUE(r->take_due(1e9, 1).empty());
  const auto due = r->take_due(0.0, 2);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].fraction, 0.5);
}

TEST(AvailabilityReplayer, TraceFileWithTimeScale) {
  auto r = replay(parse(std::string("availability:\n  trace: {path: ") + OMNILEARN_SOURCE_DIR +
                                              "/traces/data/azure-v1-16vms.csv, time_scale: 0.001}\n"));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_TRUE(r->next_time().has_value());
  EXPECT_LT(*r->next_time(), 10.0);  // scaled from the trace's minutes to milliseconds
  std::size_t n = 0;
  for (double t = 0; t < 60 && !r->empty(); t += 1.0) n += r->take_due(t, 0).size();
  EXPECT_GT(n, 0u);
}

}  // namespace
}  // namespace omnilearn::emulator
