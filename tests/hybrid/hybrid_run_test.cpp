// Runs of hybrid jobs: the shipped fail-slow scenario's goals (modelled: the controller against the oracle and the
// equal plan in the same model), the mixed cluster against a homogeneous one of the same total speed, determinism,
// and hostile plans refused with the field named.
#include <cmath>
#include <limits>
#include <memory>

#include <gtest/gtest.h>

#include "omnilearn/hybrid/hybrid_run.h"
#include "omnilearn/scenarios/hybrid_scenario.h"

namespace omnilearn::hybrid {
namespace {

std::string source_dir(const std::string& file) { return std::string(OMNILEARN_SOURCE_DIR) + "/" + file; }

std::unique_ptr<LayerCostSource> profiles(const std::string& model) {
  auto table = traces::read_layer_cost_table(source_dir("traces/devices/sailor-layers.csv"),
                                             source_dir("traces/devices/sailor-models.csv"));
  EXPECT_TRUE(table.is_ok());
  auto s = make_profile_source(std::make_shared<const traces::LayerCostTable>(std::move(table).value()), model);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return std::move(s).value();
}

scenarios::HybridScenario failslow() {
  auto s = scenarios::load_hybrid_scenario(source_dir("scenarios/hybrid/gptneo-mixed-failslow.yaml"));
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return std::move(s).value();
}

HybridRunResult run(HybridRunSpec spec, HybridPolicy policy, const LayerCostSource& source) {
  spec.policy = policy;
  auto r = run_hybrid(spec, source);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return std::move(r).value();
}

double mean_step(const HybridRunResult& r, Seconds from = 0.0, Seconds to = std::numeric_limits<double>::max()) {
  double sum = 0.0;
  int n = 0;
  for (const StepRecord& s : r.steps) {
    if (s.start_s >= from && s.start_s < to) {
      sum += s.step_s;
      ++n;
    }
  }
  return sum / n;
}

// FALCON's measure: 1 - the policy's slowdown / the equal plan's, each the episode's mean step over that of the
// same length just before.
double mitigated(const HybridRunResult& policy, const HybridRunResult& equal, Seconds from, Seconds to) {
  auto slowdown = [&](const HybridRunResult& r) {
    return mean_step(r, from, to) / mean_step(r, from - (to - from), from) - 1.0;
  };
  return 1.0 - slowdown(policy) / slowdown(equal);
}

TEST(HybridRun, TheControllerStaysNearTheOracleAndMitigatesEachFailSlowEpisode) {
  const auto s = failslow();
  const auto source = profiles(s.profile);
  const auto equal = run(s.spec, HybridPolicy::kEqual, *source);
  const auto omnilearn = run(s.spec, HybridPolicy::kOmnilearn, *source);
  const auto oracle = run(s.spec, HybridPolicy::kOracle, *source);
  EXPECT_LE(mean_step(omnilearn), 1.05 * mean_step(oracle));
  EXPECT_LT(mean_step(omnilearn), mean_step(equal));
  ASSERT_EQ(s.spec.episodes.size(), 2u);
  for (const SpeedEpisode& e : s.spec.episodes) {
    EXPECT_GE(mitigated(omnilearn, equal, e.from_s, e.to_s), 0.60) << "episode from " << e.from_s;
  }
}

TEST(HybridRun, TheMixedClusterRunsWithinFivePercentOfAHomogeneousOneOfTheSameTotalSpeed) {
  auto s = failslow();
  s.spec.episodes.clear();
  s.spec.steps = 100;
  const auto source = profiles(s.profile);
  const auto mixed = run(s.spec, HybridPolicy::kOmnilearn, *source);
  // The same GPUs all of the fastest kind, each slowed to the mixed cluster's mean speed (per-GPU rates measured as
  // the whole model's forward and backward at the job's micro-batch and tp).
  auto costs = StageCosts::build(*source, s.spec.cluster, s.spec.micro_batch, s.spec.shape.tp);
  ASSERT_TRUE(costs.is_ok());
  const std::int64_t layers = costs->layer_count();
  double rate_sum = 0.0, fastest = 0.0;
  std::int64_t fastest_kind = 0;
  for (const Device& d : s.spec.cluster.devices) {
    const double rate = 1.0 / (costs->forward_s(d.kind, 0, layers) + costs->backward_s(d.kind, 0, layers));
    rate_sum += rate;
    if (rate > fastest) {
      fastest = rate;
      fastest_kind = d.kind;
    }
  }
  HybridRunSpec homogeneous = s.spec;
  const double factor = rate_sum / static_cast<double>(homogeneous.cluster.devices.size()) / fastest;
  for (std::size_t d = 0; d < homogeneous.cluster.devices.size(); ++d) {
    homogeneous.cluster.devices[d].kind = fastest_kind;
    homogeneous.episodes.push_back({SpeedEpisode::Target::kDevice, static_cast<std::int64_t>(d), 0.0, 1e12, factor});
  }
  const auto reference = run(homogeneous, HybridPolicy::kEqual, *source);
  std::printf("mixed %.4f s per step, homogeneous of the same total speed %.4f s (speed factor %.3f)\n",
              mean_step(mixed), mean_step(reference), factor);
  EXPECT_LE(mean_step(mixed), 1.05 * mean_step(reference));
}

TEST(HybridRun, TheSameSpecGivesTheSameRun) {
  const auto s = failslow();
  const auto source = profiles(s.profile);
  const auto a = run(s.spec, HybridPolicy::kOmnilearn, *source);
  const auto b = run(s.spec, HybridPolicy::kOmnilearn, *source);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) EXPECT_EQ(a.steps[i].step_s, b.steps[i].step_s);
  EXPECT_EQ(a.plans.size(), b.plans.size());
}

TEST(HybridRun, HostilePlansAreRefusedWithTheFieldNamed) {
  const auto s = failslow();
  const auto source = profiles(s.profile);
  HybridRunSpec spec = s.spec;
  spec.policy = HybridPolicy::kEqual;
  spec.layers_per_stage = {9, 8, 8, 8};  // 33 of GPT-Neo-2.7's 34
  auto r = run_hybrid(spec, *source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("layers[0]: the stages hold 33 layers, the model has 34"), std::string::npos)
      << r.status().message();
  spec = s.spec;
  spec.policy = HybridPolicy::kEqual;
  spec.shape = {2, 4, 8};  // TP 8 on nodes of 4
  r = run_hybrid(spec, *source);
  ASSERT_FALSE(r.is_ok());
  spec.shape = {3, 4, 4};  // 48 GPUs on a cluster of 32: a stage with no device
  r = run_hybrid(spec, *source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("needs 48 devices, 32 are available"), std::string::npos) << r.status().message();
  spec = s.spec;
  spec.policy = HybridPolicy::kEqual;
  spec.memory.state_bytes_per_param = 1000.0;  // 2.7B parameters over 4 stages of 4 GPUs: 170 GB per GH200
  r = run_hybrid(spec, *source);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("the plan does not fit: device"), std::string::npos) << r.status().message();
}

TEST(HybridRun, AProfileWithNaNIsRefusedNamingTheLayerAndField) {
  std::vector<traces::LayerCostRow> rows;
  std::vector<traces::LayerSizeRow> sizes;
  for (std::int64_t l = 0; l < 3; ++l) {
    rows.push_back({"M", "K", 1, 1, l, {0.01, l == 1 ? std::nan("") : 0.02, 0.001, false}});
    sizes.push_back({"M", 1, l, {1000, 4000.0, 10.0, 10.0, 10.0}});
  }
  auto table = traces::LayerCostTable::create(rows, sizes);
  if (!table.is_ok()) {
    // The table's own reader may refuse it first: then it names the value.
    EXPECT_NE(table.status().message().find("nan"), std::string::npos) << table.status().message();
    return;
  }
  auto source = make_profile_source(std::make_shared<const traces::LayerCostTable>(std::move(table).value()), "M");
  ASSERT_TRUE(source.is_ok());
  HybridCluster cluster;
  DeviceKind k;
  k.name = "K";
  cluster.kinds.push_back(k);
  cluster.devices.push_back({0, 0});
  cluster.nodes = 1;
  auto costs = StageCosts::build(**source, cluster, 1, 1);
  ASSERT_FALSE(costs.is_ok());
  EXPECT_NE(costs.status().message().find("layer 1 on K: backward_s is nan"), std::string::npos)
      << costs.status().message();
}

}  // namespace
}  // namespace omnilearn::hybrid

namespace omnilearn::hybrid {
namespace {

TEST(HybridRun, LevelThreeReplansWhenAReplicaAtItsFewestMicroBatchesStillEndsLast) {
  const auto source = profiles("GPT-Neo-2.7");
  HybridRunSpec spec;
  DeviceKind gh;
  gh.name = "GH-96";
  gh.memory_bytes = 102.6e9;
  gh.gpus_per_node = 4;
  gh.intra_node_bytes_per_s = 450e9;
  spec.cluster.kinds.push_back(gh);
  spec.cluster.nodes = 2;
  for (std::int64_t d = 0; d < 8; ++d) spec.cluster.devices.push_back({0, d / 4});
  spec.shape = {2, 1, 4};
  spec.micro_batch = 1;
  spec.global_batch = 16;
  spec.steps = 40;
  spec.control.restart_s = 1.0;
  // The second node's GPUs at 2% of their speed for the whole run: its replica cannot keep up even with one
  // micro-batch, so the controller re-plans (here: four replicas whose slow stage holds only the head).
  for (std::int64_t d = 4; d < 8; ++d) spec.episodes.push_back({SpeedEpisode::Target::kDevice, d, 0.0, 1e12, 0.02});
  const auto r = run(spec, HybridPolicy::kOmnilearn, *source);
  bool replanned = false;
  for (const PlanRecord& p : r.plans) replanned = replanned || (p.level == 3 && p.reason == "lower levels at their bounds");
  EXPECT_TRUE(replanned);
  double early = 0.0, late = 0.0;
  for (int i = 1; i <= 3; ++i) early += r.steps[static_cast<std::size_t>(i)].step_s / 3.0;
  for (std::size_t i = r.steps.size() - 5; i < r.steps.size(); ++i) late += r.steps[i].step_s / 5.0;
  EXPECT_LT(late, early / 2.0);
}

}  // namespace
}  // namespace omnilearn::hybrid

namespace omnilearn::hybrid {
namespace {

TEST(HybridRun, ADeviceThatLeavesCostsOneReplanAndItsReturnAtMostOne) {
  auto s = failslow();
  s.spec.episodes = {{SpeedEpisode::Target::kDevice, 21, 200.0, 500.0, 0.0}};
  s.spec.steps = 300;
  const auto source = profiles(s.profile);
  for (HybridPolicy policy : {HybridPolicy::kEqual, HybridPolicy::kStatic, HybridPolicy::kOmnilearn, HybridPolicy::kOracle}) {
    SCOPED_TRACE(policy_name(policy));
    const auto r = run(s.spec, policy, *source);
    int left = 0, joined = 0;
    for (const PlanRecord& p : r.plans) {
      left += p.level == 3 && p.reason == "devices left";
      joined += p.level == 3 && p.reason == "devices joined";
    }
    EXPECT_EQ(left, 1);
    // Back, it re-plans only where it makes room for another replica, and never again and again.
    const bool adapts = policy == HybridPolicy::kOmnilearn || policy == HybridPolicy::kOracle;
    EXPECT_LE(joined, adapts ? 1 : 0);
    // While it is gone, no plan names it.
    for (const StepRecord& step : r.steps) {
      if (step.start_s >= 200.0 && step.start_s < 500.0) {
        EXPECT_EQ(step.live_devices, 31);
      }
    }
  }
}

}  // namespace
}  // namespace omnilearn::hybrid
