#include "omnilearn/emulator/emulator_config.h"

#include <gtest/gtest.h>

#include <numeric>

#include "omnilearn/emulator/testbed_config.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

scenarios::Scenario load(const std::string& rel, const std::vector<std::string>& overrides = {}) {
  auto s = scenarios::load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/" + rel, overrides);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

TEST(EmulatorConfig, TestbedHl8SharesFitTheBudget) {
  const auto s = load("testbed/bsp-hl8.yaml");
  const auto shares = worker_cpu_shares(s);
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_NEAR(std::accumulate(shares.begin(), shares.end(), 0.0), 1.5, 1e-9);
  EXPECT_NEAR(shares[3] / shares[2], 8.0, 1e-9);  // 32 vs 4 cores
  EXPECT_TRUE(validate_for_testbed(s, 2).is_ok());
  EXPECT_EQ(threads_for_share(shares[3]), 1);
}

TEST(EmulatorConfig, DynamicScheduleScalesByTheBusiestPhase) {
  const auto s = load("testbed/bsp-dynamic.yaml");
  // Each phase uses 48 of the declared 68 cores: the budget covers a phase, not the declared total.
  EXPECT_NEAR(cpu_scale(s), 1.5 / 48.0, 1e-9);
  EXPECT_TRUE(validate_for_testbed(s, 2).is_ok());
}

TEST(EmulatorConfig, MoreCpuThanTheHostIsAnError) {
  const auto s = load("testbed/bsp-hl8.yaml", {"emulator.cpu_budget=3"});
  const Status st = validate_for_testbed(s, 2);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("this host has 2"), std::string::npos) << st.message();
  EXPECT_FALSE(validate_for_testbed(load("paper/bsp-hl8.yaml"), 2).is_ok());  // cifar10
}

TEST(EmulatorConfig, NetworkFromTheSettingOrTheModelName) {
  scenarios::Scenario s = load("testbed/bsp-hl8.yaml");
  s.workload.model.name = "lenet";
  EXPECT_EQ(*resolve_network(s), Network::kLeNet);
  s.workload.model.name = "resnet-small";
  EXPECT_EQ(*resolve_network(s), Network::kResNet);
  s.workload.model.name = "gpt2";
  const auto unknown = resolve_network(s);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("workload.model"), std::string::npos);
  s.emulator.network = Network::kLeNet;  // the setting wins over the name
  EXPECT_EQ(*resolve_network(s), Network::kLeNet);
}

TEST(TestbedConfig, RoundTripsThroughItsFileWithTheNetworkResolved) {
  const std::string dir = testing::fresh_dir("testbed-config");
  const auto s = load("testbed/asp-hl8.yaml", {"emulator.throttle=process", "emulator.lr_scaling=true",
                                               "emulator.cpuset=0-1", "policy.every_n=7", "max_iterations=40",
                                               "workload.partition={kind: sorted-shards, shards_per_worker: 2}"});
  auto c = testbed_config(s);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_NE(c->settings.network, Network::kFromModel);
  c->world = 4, c->port = 1234, c->t0_ns = 99, c->store_file = dir + "/.rendezvous", c->data_dir = "/data";
  const std::string path = dir + "/config.json";
  ASSERT_TRUE(write_testbed_config(*c, path).is_ok());
  auto back = read_testbed_config(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->mode, controller::TrainingMode::kAsp);
  EXPECT_EQ(back->controller.policy, "omnilearn-asp");
  EXPECT_EQ(back->controller.options.every_n, 7);
  EXPECT_EQ(back->controller.options.workers.size(), 4u);
  EXPECT_EQ(back->controller.options.workers[3].nominal_capacity, c->controller.options.workers[3].nominal_capacity);
  EXPECT_EQ(back->max_iterations, 40);
  EXPECT_EQ(back->settings.throttle, scenarios::QuotaScope::kProcess);
  EXPECT_TRUE(back->settings.lr_scaling);
  EXPECT_EQ(back->settings.cpuset, "0-1");
  EXPECT_EQ(back->settings.network, c->settings.network);
  EXPECT_EQ(back->settings.sample_cost_s, s.emulator.sample_cost_s);
  EXPECT_EQ(back->t0_ns, 99);
  EXPECT_EQ(back->partition.kind, scenarios::PartitionKind::kSortedShards) << "each worker process reads its shards";
  EXPECT_EQ(back->partition.shards_per_worker, 2);
  EXPECT_EQ(back->store_file, dir + "/.rendezvous");
  // A file that is not one names itself.
  std::ofstream(dir + "/bad.json") << "{\"world\": \"four\"}";
  auto bad = read_testbed_config(dir + "/bad.json");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("bad.json"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace omnilearn::emulator
