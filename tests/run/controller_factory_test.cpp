#include "omnilearn/run/controller_factory.h"

#include <gtest/gtest.h>

#include <string>

#include "omnilearn/run/records.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::run {
namespace {

scenarios::Scenario parse(const std::string& extra) {
  auto s = scenarios::parse_scenario(R"(
cluster:
  nodes:
    - {name: a, cores: 4, core_speed: 1e9}
    - {name: b, cores: 1, core_speed: 1e9}
workload: {model: resnet18, dataset: cifar10, dataset_samples: 512, global_batch: 64, epochs: 1}
)" + extra, "factory.yaml");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

TEST(ControllerFactory, TheSpecCarriesThePolicySettings) {
  const ControllerSpec spec = controller_spec(parse("policy: {name: affine, gain: 0.5, fit_window: 4, min_batch: 8, "
                                                    "max_batch: 56, dead_band: 0.1}\n"));
  EXPECT_EQ(spec.policy, "affine");
  EXPECT_EQ(spec.gain, 0.5);
  EXPECT_EQ(spec.fit_window, 4u);
  EXPECT_EQ(spec.options.dead_band, 0.1);
  ASSERT_EQ(spec.options.workers.size(), 2u);
  EXPECT_EQ(spec.options.workers[1].lo, 8);
  EXPECT_EQ(spec.options.workers[0].hi, 56);
  EXPECT_EQ(spec.options.workers[0].nominal_capacity, 4e9);
  auto c = make_controller(spec);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->policy().name(), "affine");
}

TEST(ControllerFactory, AspModeGetsTheAsynchronousLawOnce) {
  const ControllerSpec spec = controller_spec(parse("mode: asp\npolicy: {name: omnilearn}\n"));
  EXPECT_EQ(spec.policy, "omnilearn-asp");
  EXPECT_EQ(spec.options.mode, controller::TrainingMode::kAsp);
  auto c = make_controller(spec);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->policy().name(), "omnilearn-asp");
}

TEST(ControllerFactory, TheOracleNeedsTheTrueCostsHook) {
  const ControllerSpec spec = controller_spec(parse("policy: {name: oracle}\n"));
  auto without = make_controller(spec);
  ASSERT_FALSE(without.is_ok());
  EXPECT_NE(without.status().message().find("policy.name"), std::string::npos) << without.status().message();
  auto with = make_controller(spec, [](const controller::ClusterSnapshot& snapshot) {
    std::vector<controller::CostFunction> costs;
    for (std::size_t k = 0; k < snapshot.workers.size(); ++k) {
      costs.emplace_back([k](BatchSize b) { return (k == 0 ? 0.001 : 0.004) * static_cast<double>(b); });
    }
    return costs;
  });
  ASSERT_TRUE(with.is_ok()) << with.status().message();
}

TEST(ControllerFactory, PlanRecordCopiesThePlan) {
  auto c = make_controller(controller_spec(parse("policy: {name: static}\n")));
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const controller::Plan& p = c->current_plan();
  const PlanRecord r = plan_record(p, 3);
  EXPECT_EQ(r.epoch, 3);
  EXPECT_EQ(r.step, p.step);
  EXPECT_EQ(r.batch, p.batch);
  EXPECT_EQ(r.weight, p.weight);
  EXPECT_EQ(r.reason, controller::to_string(p.reason));
  EXPECT_GT(r.batch[0], r.batch[1]);  // static splits by nominal speed: 4 cores against 1
}

// Levels at the start (the testbed's TestbedConfig::initial_availability): a worker down from the start leaves the
// plan at step 0, as the simulator's first plan does; with every level 1 nothing is decided and the plan stands.
TEST(ControllerFactory, StartLevelsTakeDownWorkersOutBeforeTheFirstStep) {
  const ControllerSpec spec = controller_spec(parse("policy: {name: omnilearn, min_batch: 8, max_batch: 56}\n"));
  auto nominal = make_controller(spec);
  ASSERT_TRUE(nominal.is_ok()) << nominal.status().message();
  const controller::Plan before = nominal->current_plan();
  for (const std::vector<double>& levels : {std::vector<double>{}, std::vector<double>{1.0, 1.0}}) {
    auto same = apply_start_levels(*nominal, levels);
    ASSERT_TRUE(same.is_ok()) << same.status().message();
    EXPECT_FALSE(same->decided);
    EXPECT_EQ(same->batch, before.batch);
  }
  auto down = make_controller(spec);
  ASSERT_TRUE(down.is_ok());
  auto plan = apply_start_levels(*down, {1.0, 0.0});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_TRUE(plan->decided);
  EXPECT_EQ(plan->batch[1], 0) << "worker 1 is down from the start";
  EXPECT_EQ(plan->batch[0], 56) << "the global batch of 64 goes to worker 0, up to its bound";
  EXPECT_EQ(down->current_plan().batch, plan->batch);
}

}  // namespace
}  // namespace omnilearn::run
