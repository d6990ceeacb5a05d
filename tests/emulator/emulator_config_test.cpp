#include "omnilearn/emulator/emulator_config.h"

#include <gtest/gtest.h>

#include <numeric>

#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::emulator {
namespace {

scenarios::Scenario load(const std::string& rel) {
  auto s = scenarios::load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/" + rel);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

TEST(EmulatorConfig, SettingsRoundTrip) {
  EmulatorConfig c;
  ASSERT_TRUE(apply_setting(c, "network=resnet").is_ok());
  ASSERT_TRUE(apply_setting(c, "cpu_budget=1.25").is_ok());
  ASSERT_TRUE(apply_setting(c, "eval_every=25").is_ok());
  ASSERT_TRUE(apply_setting(c, "cpuset=0-1").is_ok());
  EXPECT_TRUE(c.throttle_compute_only);  // the default: communication threads outside the quota
  ASSERT_TRUE(apply_setting(c, "throttle=process").is_ok());
  ASSERT_TRUE(apply_setting(c, "warmup_updates=500").is_ok());
  EmulatorConfig d;
  for (const auto& s : to_settings(c)) ASSERT_TRUE(apply_setting(d, s).is_ok()) << s;
  EXPECT_EQ(d.network, Network::kResNet);
  EXPECT_EQ(d.cpu_budget, 1.25);
  EXPECT_EQ(d.eval_every, 25);
  EXPECT_EQ(d.cpuset, "0-1");
  EXPECT_FALSE(d.throttle_compute_only);
  EXPECT_EQ(d.warmup_updates, 500);
}

TEST(EmulatorConfig, BadSettingsNameTheKey) {
  EmulatorConfig c;
  EXPECT_NE(apply_setting(c, "nope=1").message().find("emulator.nope"), std::string::npos);
  EXPECT_FALSE(apply_setting(c, "cpu_budget=-1").is_ok());
  EXPECT_FALSE(apply_setting(c, "network=vgg").is_ok());
  EXPECT_FALSE(apply_setting(c, "eval_every").is_ok());
  EXPECT_NE(apply_setting(c, "throttle=threads").message().find("compute or process"), std::string::npos);
}

TEST(EmulatorConfig, TestbedHl8SharesFitTheBudget) {
  const auto s = load("testbed/bsp-hl8.yaml");
  const auto shares = worker_cpu_shares(s, EmulatorConfig{});
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_NEAR(std::accumulate(shares.begin(), shares.end(), 0.0), 1.5, 1e-9);
  EXPECT_NEAR(shares[3] / shares[2], 8.0, 1e-9);  // 32 vs 4 cores
  EXPECT_TRUE(validate_for_testbed(s, EmulatorConfig{}, 2).is_ok());
  EXPECT_EQ(threads_for_share(shares[3]), 1);
}

TEST(EmulatorConfig, DynamicScheduleScalesByTheBusiestPhase) {
  const auto s = load("testbed/bsp-dynamic.yaml");
  EmulatorConfig c;
  // Each phase uses 48 of the declared 68 cores: the budget covers a phase, not the declared total.
  EXPECT_NEAR(cpu_scale(s, c), 1.5 / 48.0, 1e-9);
  EXPECT_TRUE(validate_for_testbed(s, c, 2).is_ok());
}

TEST(EmulatorConfig, MoreCpuThanTheHostIsAnError) {
  const auto s = load("testbed/bsp-hl8.yaml");
  EmulatorConfig c;
  c.cpu_budget = 3.0;
  const Status st = validate_for_testbed(s, c, 2);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("this host has 2"), std::string::npos) << st.message();
  EXPECT_FALSE(validate_for_testbed(load("paper/bsp-hl8.yaml"), EmulatorConfig{}, 2).is_ok());  // cifar10
}

TEST(EmulatorConfig, NetworkFromModelName) {
  EXPECT_EQ(*network_for_model("lenet"), Network::kLeNet);
  EXPECT_EQ(*network_for_model("resnet-small"), Network::kResNet);
  EXPECT_FALSE(network_for_model("gpt2").is_ok());
}

}  // namespace
}  // namespace omnilearn::emulator
