#include "omnilearn/run/stop_rule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "omnilearn/run/jobs_stop.h"

namespace omnilearn::run {
namespace {

constexpr StopReason kAll[] = {StopReason::kNone, StopReason::kEpochs, StopReason::kSamples,  StopReason::kSteps,
                               StopReason::kTime, StopReason::kTarget, StopReason::kRequested};

TEST(StopReason, NamesAndCodesRoundTrip) {
  std::vector<std::string> names;
  for (StopReason r : kAll) {
    names.emplace_back(to_string(r));
    EXPECT_EQ(parse_stop_reason(to_string(r)), r) << to_string(r);
    EXPECT_EQ(stop_reason_from_code(stop_reason_code(r)), r) << to_string(r);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"none", "epochs", "samples", "steps", "time", "target", "requested"}));
  EXPECT_FALSE(parse_stop_reason("budget").has_value());
  EXPECT_FALSE(parse_stop_reason("Epochs").has_value());
  EXPECT_FALSE(parse_stop_reason("").has_value());
  EXPECT_FALSE(stop_reason_from_code(-1).has_value());
  EXPECT_FALSE(stop_reason_from_code(7).has_value());
}

StopLimits epochs(std::int64_t dataset, std::int64_t n) {
  StopLimits l;
  l.dataset_samples = dataset, l.epochs = n;
  return l;
}

TEST(StopRule, EpochsAtTheLastSampleOfTheLastEpoch) {
  StopRule rule(epochs(100, 2));
  EXPECT_EQ(rule.sample_limit(), 200);
  EXPECT_EQ(rule.progress(7, 199), StopReason::kNone);
  EXPECT_FALSE(rule.stopped());
  EXPECT_EQ(rule.reason(), StopReason::kNone);
  EXPECT_EQ(rule.progress(8, 200), StopReason::kEpochs);
  EXPECT_TRUE(rule.stopped());
  EXPECT_EQ(rule.reason(), StopReason::kEpochs);
}

TEST(StopRule, SampleBudgetReplacesTheEpochs) {
  StopLimits l = epochs(100, 5);
  l.sample_budget = 150;
  StopRule rule(l);
  EXPECT_EQ(rule.sample_limit(), 150);
  EXPECT_EQ(rule.progress(1, 149), StopReason::kNone);
  EXPECT_EQ(rule.progress(2, 160), StopReason::kSamples);
  EXPECT_EQ(rule.reason(), StopReason::kSamples);
}

TEST(StopRule, StepCap) {
  StopLimits l = epochs(100, 1);
  l.max_steps = 3;
  StopRule rule(l);
  EXPECT_EQ(rule.progress(2, 20), StopReason::kNone);
  EXPECT_EQ(rule.progress(3, 30), StopReason::kSteps);
  EXPECT_EQ(rule.reason(), StopReason::kSteps);
}

TEST(StopRule, TimeBudgetInTheBackEndsClock) {
  StopLimits l = epochs(100, 1);
  l.time_budget_s = 60.0;
  StopRule rule(l);
  EXPECT_EQ(rule.elapsed(59.999), StopReason::kNone);
  EXPECT_EQ(rule.elapsed(60.0), StopReason::kTime);
  EXPECT_EQ(rule.reason(), StopReason::kTime);
}

TEST(StopRule, TargetAccuracyAtAnEvaluation) {
  StopLimits l = epochs(100, 1);
  l.target_accuracy = 0.85;
  StopRule rule(l);
  EXPECT_EQ(rule.evaluation(0.849), StopReason::kNone);
  EXPECT_EQ(rule.evaluation(0.85), StopReason::kTarget);
  EXPECT_EQ(rule.reason(), StopReason::kTarget);
}

TEST(StopRule, RequestedFromOutside) {
  StopRule rule(epochs(100, 1));
  rule.stop(StopReason::kRequested);
  EXPECT_EQ(rule.reason(), StopReason::kRequested);
}

TEST(StopRule, ZeroLimitsAreNone) {
  StopRule rule(epochs(100, 1));  // no cap, no budget, no time budget, no target
  EXPECT_EQ(rule.progress(1000000, 99), StopReason::kNone);
  EXPECT_EQ(rule.elapsed(1e9), StopReason::kNone);
  EXPECT_EQ(rule.evaluation(1.0), StopReason::kNone);
  EXPECT_FALSE(rule.stopped());
}

TEST(StopRule, EpochSizeAndEpochsBelowOneCountAsOne) {
  StopRule rule(epochs(0, 0));
  EXPECT_EQ(rule.sample_limit(), 1);
  EXPECT_EQ(rule.progress(1, 1), StopReason::kEpochs);
}

// Two reasons firing on the same update: the run's reason is the one of higher precedence, whichever is fed first.
struct SameUpdate {
  const char* name;
  std::vector<StopReason> fired;  // in feeding order
  StopReason expected;
};

void feed(StopRule& rule, StopReason r) {
  switch (r) {
    case StopReason::kEpochs:  // the epoch is complete
      EXPECT_EQ(rule.progress(1, 100), r);
      break;
    case StopReason::kSteps:  // the cap, before the epoch ends
      EXPECT_EQ(rule.progress(5, 50), r);
      break;
    case StopReason::kTime:
      EXPECT_EQ(rule.elapsed(10.0), r);
      break;
    case StopReason::kTarget:
      EXPECT_EQ(rule.evaluation(0.9), r);
      break;
    default:
      rule.stop(r);
      break;
  }
}

TEST(StopRule, PrecedenceWhenTwoFireOnTheSameUpdate) {
  const std::vector<SameUpdate> cases = {
      {"steps over epochs", {StopReason::kEpochs, StopReason::kSteps}, StopReason::kSteps},
      {"time over steps", {StopReason::kSteps, StopReason::kTime}, StopReason::kTime},
      {"time over steps, fed first", {StopReason::kTime, StopReason::kSteps}, StopReason::kTime},
      {"time over epochs", {StopReason::kEpochs, StopReason::kTime}, StopReason::kTime},
      {"target over epochs (the final evaluation)", {StopReason::kEpochs, StopReason::kTarget}, StopReason::kTarget},
      {"target over time", {StopReason::kTime, StopReason::kTarget}, StopReason::kTarget},
      {"target over time, fed first", {StopReason::kTarget, StopReason::kTime}, StopReason::kTarget},
      {"requested over target", {StopReason::kTarget, StopReason::kRequested}, StopReason::kRequested},
      {"requested over epochs, fed first", {StopReason::kRequested, StopReason::kEpochs}, StopReason::kRequested},
  };
  for (const SameUpdate& c : cases) {
    StopLimits l = epochs(100, 1);
    l.max_steps = 5, l.time_budget_s = 10.0, l.target_accuracy = 0.9;
    StopRule rule(l);
    for (StopReason r : c.fired) feed(rule, r);
    EXPECT_EQ(rule.reason(), c.expected) << c.name << ": got " << to_string(rule.reason());
  }
}

TEST(StopRule, OneProgressCallGivesTheStepCapBeforeTheSamples) {
  StopLimits l = epochs(100, 1);
  l.max_steps = 4;
  StopRule rule(l);
  EXPECT_EQ(rule.progress(4, 100), StopReason::kSteps);
  EXPECT_EQ(rule.reason(), StopReason::kSteps);
  l.sample_budget = 50;
  StopRule budget(l);
  EXPECT_EQ(budget.progress(4, 100), StopReason::kSteps);
}

TEST(StopRule, LimitsFromAScenarioAndBack) {
  scenarios::Scenario s;
  s.workload.dataset_samples = 600, s.workload.epochs = 3, s.workload.sample_budget = 1000;
  s.max_iterations = 40, s.emulator.time_budget_s = 90.0, s.emulator.target_accuracy = 0.7;
  const StopLimits l = stop_limits(s);
  EXPECT_EQ(l.dataset_samples, 600);
  EXPECT_EQ(l.epochs, 3);
  EXPECT_EQ(l.sample_budget, 1000);
  EXPECT_EQ(l.max_steps, 40);
  EXPECT_EQ(l.time_budget_s, 90.0);
  EXPECT_EQ(l.target_accuracy, 0.7);
  scenarios::Scenario t;
  set_stop_limits(t, l);
  const StopLimits back = stop_limits(t);
  EXPECT_EQ(back.dataset_samples, 600);
  EXPECT_EQ(back.epochs, 3);
  EXPECT_EQ(back.sample_budget, 1000);
  EXPECT_EQ(back.max_steps, 40);
  EXPECT_EQ(back.time_budget_s, 90.0);
  EXPECT_EQ(back.target_accuracy, 0.7);
}

TEST(StopRule, OptionsAreCheckedNamingTheOption) {
  EXPECT_TRUE(check_stop_limits(epochs(100, 1)).is_ok());
  struct Bad {
    const char* option;
    void (*spoil)(StopLimits&);
  };
  const Bad bad[] = {
      {"dataset_samples", [](StopLimits& l) { l.dataset_samples = 0; }},
      {"epochs", [](StopLimits& l) { l.epochs = 0; }},
      {"sample_budget", [](StopLimits& l) { l.sample_budget = -1; }},
      {"max_steps", [](StopLimits& l) { l.max_steps = -1; }},
      {"time_budget_s", [](StopLimits& l) { l.time_budget_s = -1.0; }},
      {"target_accuracy", [](StopLimits& l) { l.target_accuracy = 1.5; }},
  };
  for (const Bad& b : bad) {
    StopLimits l = epochs(100, 1);
    b.spoil(l);
    const Status st = check_stop_limits(l);
    ASSERT_FALSE(st.is_ok()) << b.option;
    EXPECT_EQ(st.message().rfind(b.option, 0), 0u) << st.message();
  }
}

}  // namespace
}  // namespace omnilearn::run

namespace omnilearn::run {
namespace {

TEST(JobsStop, AJobIsTrainedOnceItsSamplesReachItsTotal) {
  EXPECT_FALSE(job_trained(10, 100.0, 100.5));  // a fractional total: the batch that passes it ends the job
  EXPECT_TRUE(job_trained(11, 110.0, 100.5));
  EXPECT_TRUE(job_trained(10, 100.0, 100.0));
  EXPECT_FALSE(job_trained(0, 0.0, 1.0));
}

TEST(JobsStop, ARunStopsOnRequestBeforeItsTimeLimit) {
  EXPECT_EQ(jobs_run_stop(10.0, 0.0, nullptr), StopReason::kNone);  // no limit, no request
  EXPECT_EQ(jobs_run_stop(10.0, 60.0, [] { return false; }), StopReason::kNone);
  EXPECT_EQ(jobs_run_stop(60.0, 60.0, [] { return false; }), StopReason::kTime);
  EXPECT_EQ(jobs_run_stop(60.0, 60.0, [] { return true; }), StopReason::kRequested);  // the request outranks the limit
  EXPECT_EQ(jobs_run_stop(5.0, 60.0, [] { return true; }), StopReason::kRequested);
}

}  // namespace
}  // namespace omnilearn::run
