#include "omnilearn/controller/controller.h"

#include <gtest/gtest.h>

#include <numeric>

#include "omnilearn/controller/policy_registry.h"

namespace omnilearn::controller {
namespace {

ControllerOptions four_workers() {
  ControllerOptions o;
  o.global_batch = 128;
  o.workers.assign(4, WorkerSpec{.lo = 16, .hi = 96, .nominal_capacity = 1.0});
  o.every_n = 1;
  return o;
}

Result<Controller> make(const std::string& policy, ControllerOptions o) {
  auto p = make_default_registry().make(policy, PolicyOptions{});
  if (!p) return p.status();
  return Controller::create(std::move(o), std::move(*p));
}

// Reports one iteration per live worker with time = batch * seconds_per_sample[k].
void report_all(Controller& c, std::int64_t step, const std::vector<double>& seconds_per_sample) {
  for (WorkerId k = 0; k < c.worker_count(); ++k) {
    const BatchSize b = c.current_plan().batch[k];
    if (b == 0) continue;
    ASSERT_TRUE(c.report(IterationDone{k, step, 0.0, seconds_per_sample[k] * static_cast<double>(b), b}).is_ok());
  }
}

struct BadOptionsCase {
  const char* name;
  void (*mutate)(ControllerOptions&);
  const char* expected_field;
};

TEST(ControllerOptions, InvalidOptionsNameTheField) {
  const BadOptionsCase cases[] = {
      {"no workers", [](ControllerOptions& o) { o.workers.clear(); }, "workers"},
      {"B too large", [](ControllerOptions& o) { o.global_batch = 1000; }, "bounds cannot hold B"},
      {"B too small", [](ControllerOptions& o) { o.global_batch = 10; }, "bounds cannot hold B"},
      {"negative dead-band", [](ControllerOptions& o) { o.dead_band = -0.1; }, "dead_band"},
      {"hi < lo", [](ControllerOptions& o) { o.workers[2].hi = 8; }, "workers[2].hi"},
      {"zero lo", [](ControllerOptions& o) { o.workers[1].lo = 0; }, "workers[1].lo"},
      {"bad capacity", [](ControllerOptions& o) { o.workers[0].nominal_capacity = 0; }, "workers[0].nominal_capacity"},
      {"bad ewma", [](ControllerOptions& o) { o.ewma_alpha = 0; }, "ewma_alpha"},
      {"bad every_n", [](ControllerOptions& o) { o.every_n = 0; }, "every_n"},
  };
  for (const auto& tc : cases) {
    ControllerOptions o = four_workers();
    tc.mutate(o);
    auto c = make("uniform", o);
    ASSERT_FALSE(c.is_ok()) << tc.name;
    EXPECT_NE(c.status().message().find(tc.expected_field), std::string::npos)
        << tc.name << ": " << c.status().message();
  }
}

TEST(PolicyRegistry, UnknownPolicyListsTheKnownOnes) {
  auto p = make_default_registry().make("fastest", PolicyOptions{});
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("unknown policy 'fastest'"), std::string::npos);
  EXPECT_NE(p.status().message().find("omnilearn"), std::string::npos);
}

TEST(PolicyRegistry, OracleNeedsTrueCosts) {
  auto p = make_default_registry().make("oracle", PolicyOptions{});
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("true cost"), std::string::npos);
}

TEST(Controller, InitialPlanIsTheEqualSplitWithWeights) {
  auto c = make("omnilearn", four_workers());
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c->current_plan().batch, (std::vector<BatchSize>{32, 32, 32, 32}));
  for (double w : c->current_plan().weight) EXPECT_DOUBLE_EQ(w, 0.25);
  EXPECT_EQ(c->current_plan().reason, PlanReason::kInitial);
}

TEST(Controller, StaticPolicySplitsByNominalCapacityFromTheStart) {
  ControllerOptions o = four_workers();
  const double caps[] = {12, 12, 8, 16};
  for (int k = 0; k < 4; ++k) o.workers[k].nominal_capacity = caps[k];
  auto c = make("static", o);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c->current_plan().batch, (std::vector<BatchSize>{32, 32, 21, 43}));
}

TEST(Controller, OmniLearnLawFollowsThroughput) {
  auto c = make("omnilearn", four_workers());
  ASSERT_TRUE(c.is_ok());
  report_all(*c, 1, {0.04, 0.04, 0.06, 0.03});  // throughputs 25, 25, 16.7, 33.3 samples/s
  auto p = c->plan_next(DecisionPoint{1, 0, 1.0});
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_TRUE(p->decided);
  EXPECT_TRUE(p->changed);
  EXPECT_EQ(p->batch, (std::vector<BatchSize>{32, 32, 21, 43}));
  EXPECT_NEAR(p->imbalance, (0.06 * 32 - 0.0425 * 32) / (0.0425 * 32), 1e-9);
  double sum = 0;
  for (WorkerId k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(p->weight[k], static_cast<double>(p->batch[k]) / 128.0);
    sum += p->weight[k];
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

TEST(Controller, DeadBandHoldsSmallChanges) {
  ControllerOptions o = four_workers();
  o.dead_band = 0.10;
  auto c = make("omnilearn", o);
  ASSERT_TRUE(c.is_ok());
  report_all(*c, 1, {0.040, 0.040, 0.041, 0.039});  // ~3% apart: proposals change batches by < 10%
  auto p = c->plan_next(DecisionPoint{1, 0, 1.0});
  ASSERT_TRUE(p.is_ok());
  EXPECT_TRUE(p->decided);
  EXPECT_FALSE(p->changed);
  EXPECT_EQ(p->reason, PlanReason::kHeldByDeadBand);
  EXPECT_EQ(p->batch, (std::vector<BatchSize>{32, 32, 32, 32}));
}

TEST(Controller, EveryNTriggerWaitsForNSteps) {
  ControllerOptions o = four_workers();
  o.every_n = 5;
  auto c = make("omnilearn", o);
  ASSERT_TRUE(c.is_ok());
  for (std::int64_t step = 1; step <= 5; ++step) {
    report_all(*c, step, {0.04, 0.04, 0.08, 0.02});
    auto p = c->plan_next(DecisionPoint{step, 0, 0.0});
    ASSERT_TRUE(p.is_ok());
    EXPECT_EQ(p->decided, step == 5) << "step " << step;
  }
}

TEST(Controller, EpochTriggerDecidesWhenTheEpochAdvances) {
  ControllerOptions o = four_workers();
  o.trigger = DecisionTrigger::kEveryEpoch;
  auto c = make("omnilearn", o);
  ASSERT_TRUE(c.is_ok());
  report_all(*c, 1, {0.04, 0.04, 0.08, 0.02});
  EXPECT_FALSE(c->plan_next(DecisionPoint{1, 0, 0.0})->decided);
  EXPECT_TRUE(c->plan_next(DecisionPoint{2, 1, 0.0})->decided);
}

TEST(Controller, ImbalanceTriggerFiresOnlyAboveTheThreshold) {
  ControllerOptions o = four_workers();
  o.trigger = DecisionTrigger::kImbalance;
  o.imbalance_threshold = 0.2;
  auto c = make("omnilearn", o);
  ASSERT_TRUE(c.is_ok());
  report_all(*c, 1, {0.040, 0.040, 0.044, 0.040});  // 7.5% imbalance
  EXPECT_FALSE(c->plan_next(DecisionPoint{1, 0, 0.0})->decided);
  ASSERT_TRUE(c->report(AvailabilityChange{2, 1.0, 0.5}).is_ok());
  report_all(*c, 2, {0.040, 0.040, 0.080, 0.040});  // now 43%
  EXPECT_TRUE(c->plan_next(DecisionPoint{2, 0, 0.0})->decided);
}

TEST(Controller, AvailabilityZeroRemovesTheWorkerAndReturnRejoins) {
  auto c = make("omnilearn", four_workers());
  ASSERT_TRUE(c.is_ok());
  ASSERT_TRUE(c->report(AvailabilityChange{1, 5.0, 0.0}).is_ok());
  EXPECT_FALSE(c->is_live(1));
  auto p = c->plan_next(DecisionPoint{1, 0, 5.0});
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->reason, PlanReason::kMembership);
  EXPECT_EQ(p->batch[1], 0);
  EXPECT_EQ(std::accumulate(p->batch.begin(), p->batch.end(), BatchSize{0}), 128);
  // Iterations reported for a down worker are ignored, not errors.
  EXPECT_TRUE(c->report(IterationDone{1, 2, 6.0, 1.0, 32}).is_ok());
  ASSERT_TRUE(c->report(AvailabilityChange{1, 9.0, 0.7}).is_ok());
  EXPECT_TRUE(c->is_live(1));
  p = c->plan_next(DecisionPoint{2, 0, 9.0});
  ASSERT_TRUE(p.is_ok());
  EXPECT_GT(p->batch[1], 0);
  EXPECT_EQ(std::accumulate(p->batch.begin(), p->batch.end(), BatchSize{0}), 128);
}

TEST(Controller, TooFewLiveWorkersHoldWhatTheirBoundsAllow) {
  ControllerOptions o = four_workers();
  o.workers.assign(4, WorkerSpec{.lo = 16, .hi = 40, .nominal_capacity = 1.0});
  auto c = make("uniform", o);
  ASSERT_TRUE(c.is_ok());
  ASSERT_TRUE(c->report(MembershipChange{0, 1.0, false}).is_ok());
  auto p = c->plan_next(DecisionPoint{1, 0, 1.0});
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->global_batch, 120);  // three workers at hi = 40
}

TEST(Controller, MemoryGuardCapsAWorkerWhoseThroughputFellWhenItsBatchGrew) {
  auto c = make("omnilearn", four_workers());
  ASSERT_TRUE(c.is_ok());
  report_all(*c, 1, {0.04, 0.04, 0.04, 0.02});  // worker 3 twice as fast
  auto p = c->plan_next(DecisionPoint{1, 0, 1.0});
  ASSERT_TRUE(p.is_ok());
  const BatchSize grown = p->batch[3];
  ASSERT_GT(grown, 32);
  // At the larger batch worker 3 thrashes: 3x slower per sample, so its throughput fell.
  report_all(*c, 2, {0.04, 0.04, 0.04, 0.06});
  p = c->plan_next(DecisionPoint{2, 0, 2.0});
  ASSERT_TRUE(p.is_ok());
  EXPECT_LE(p->batch[3], 32);
  EXPECT_EQ(c->snapshot(2, 2.0).workers[3].hi, 32);
}

TEST(Controller, RejectsMalformedEvents) {
  auto c = make("uniform", four_workers());
  ASSERT_TRUE(c.is_ok());
  EXPECT_FALSE(c->report(IterationDone{9, 1, 0.0, 1.0, 32}).is_ok());
  EXPECT_FALSE(c->report(IterationDone{0, 1, 0.0, -1.0, 32}).is_ok());
  EXPECT_FALSE(c->report(AvailabilityChange{0, 1.0, 1.5}).is_ok());
  EXPECT_FALSE(c->report(MembershipChange{4, 1.0, true}).is_ok());
}

TEST(Controller, AspLawDoesNotConserveTheSum) {
  ControllerOptions o = four_workers();
  o.mode = TrainingMode::kAsp;
  auto c = make("omnilearn", o);
  ASSERT_TRUE(c.is_ok());
  report_all(*c, 1, {0.04, 0.04, 0.08, 0.02});  // times 1.28, 1.28, 2.56, 0.64; mean 1.44
  auto p = c->plan_next(DecisionPoint{1, 0, 1.0});
  ASSERT_TRUE(p.is_ok());
  // b' = X t̄: 25 * 1.44 = 36, 36, 12.5 * 1.44 = 18, 50 * 1.44 = 72
  EXPECT_EQ(p->batch, (std::vector<BatchSize>{36, 36, 18, 72}));
}

}  // namespace
}  // namespace omnilearn::controller
