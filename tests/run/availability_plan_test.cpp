#include "omnilearn/run/availability_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::run {
namespace {

constexpr const char* kTwoWorkers = R"(
cluster:
  nodes:
    - {name: a, cores: 2, core_speed: 1e9}
    - {name: b, cores: 2, core_speed: 1e9}
workload: {model: resnet18, dataset: cifar10, dataset_samples: 512, global_batch: 64, epochs: 3}
)";

scenarios::Scenario parse(const std::string& availability) {
  auto s = scenarios::parse_scenario(std::string(kTwoWorkers) + availability, "plan.yaml");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

TEST(AvailabilityPlan, NothingChangesWithoutAvailability) {
  auto plan = AvailabilityPlan::create(parse(""));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->worker_count(), 2u);
  EXPECT_FALSE(plan->timed().has_value());
  EXPECT_TRUE(plan->epoch_phases().empty());
  EXPECT_EQ(plan->epoch_levels(5), nullptr);
  EXPECT_EQ(plan->initial(0), 1.0);
}

TEST(AvailabilityPlan, EpochScheduleGivesTheLevelsInForcePerEpoch) {
  auto plan = AvailabilityPlan::create(parse(R"(
availability:
  schedule:
    unit: epochs
    phases:
      - {at: 0, fractions: [1.0, 0.5]}
      - {at: 2, fractions: [0.25, 0.0]}
)"));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_FALSE(plan->timed().has_value());  // an epoch schedule alone changes nothing over time
  ASSERT_NE(plan->epoch_levels(1), nullptr);
  EXPECT_EQ((*plan->epoch_levels(1))[1], 0.5);
  EXPECT_EQ((*plan->epoch_levels(2))[0], 0.25);
  EXPECT_EQ(plan->initial(1), 0.5);
}

TEST(AvailabilityPlan, SecondsScheduleIsTimedAndStartsAtItsFirstLevels) {
  auto plan = AvailabilityPlan::create(parse(R"(
availability:
  schedule:
    unit: seconds
    phases:
      - {at: 0, fractions: [0.5, 1.0]}
      - {at: 10s, fractions: [1.0, 0.0]}
)"));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_TRUE(plan->timed().has_value());
  EXPECT_TRUE(plan->epoch_phases().empty());
  EXPECT_EQ(plan->initial(0), 0.5);
  EXPECT_EQ(plan->timed()->fraction_at(1, 10.0), 0.0);
}

TEST(AvailabilityPlan, APhaseWithTheWrongWorkerCountIsNamed) {
  // A Scenario built in code (not through the parser) is checked once here.
  scenarios::Scenario s = parse("");
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kEpochs;
  s.availability.phases = {{0.0, {1.0, 1.0}}, {1.0, {0.5}}};
  auto plan = AvailabilityPlan::create(s);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("availability.phases[1].fractions: 1 values for 2 workers"), std::string::npos)
      << plan.status().message();
  s.availability.phases = {{0.0, {1.0, 1.0}}, {0.0, {0.5, 0.5}}};
  plan = AvailabilityPlan::create(s);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("availability.phases[1].at"), std::string::npos);
  s.availability.phases = {{0.0, {1.5, 1.0}}};
  EXPECT_FALSE(AvailabilityPlan::create(s).is_ok());
}

}  // namespace
}  // namespace omnilearn::run
