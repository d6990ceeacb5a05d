// `kind: hybrid` files: a valid file gives the run spec it says; hostile ones are refused naming the file, line and
// field.
#include <gtest/gtest.h>

#include "omnilearn/scenarios/hybrid_scenario.h"

namespace omnilearn::scenarios {
namespace {

constexpr const char* kValid = R"(kind: hybrid
name: t
model: {profile: OPT-350}
cluster:
  kinds:
    - {name: A100-40, memory_gb: 42.3, gpus_per_node: 4, nvlink: 600GBps}
  nodes:
    - {kind: A100-40, count: 2}
  network: {inter_node: 100Gbps, latency: 5us}
job:
  shape: {dp: 2, pp: 2, tp: 2}
  micro_batch: 2
  global_batch: 64
  schedule: interleaved
  chunks: 2
control:
  policies: [equal, omnilearn]
  layer_every_n: 7
availability:
  episodes:
    - {device: 3, from: 10s, to: 20s, speed: 0.5}
    - {node: 1, from: 30s, to: 40s, link: 0.25}
steps: 12
)";

TEST(HybridScenario, AValidFileGivesItsSpec) {
  auto s = parse_hybrid_scenario(kValid, "t.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->profile, "OPT-350");
  EXPECT_EQ(s->spec.cluster.devices.size(), 8u);
  EXPECT_EQ(s->spec.cluster.nodes, 2);
  EXPECT_EQ(s->spec.cluster.devices[5].node, 1);
  EXPECT_DOUBLE_EQ(s->spec.cluster.network.inter_node_bytes_per_s, 12.5e9);
  EXPECT_EQ(s->spec.shape.dp, 2);
  EXPECT_EQ(s->spec.schedule.kind, hybrid::ScheduleKind::kInterleaved);
  EXPECT_EQ(s->spec.schedule.chunks, 2);
  EXPECT_EQ(s->spec.control.layer_every_n, 7);
  ASSERT_EQ(s->policies.size(), 2u);
  EXPECT_EQ(s->policies[1], hybrid::HybridPolicy::kOmnilearn);
  ASSERT_EQ(s->spec.episodes.size(), 2u);
  EXPECT_EQ(s->spec.episodes[1].target, hybrid::SpeedEpisode::Target::kNodeLink);
  EXPECT_DOUBLE_EQ(s->spec.episodes[1].factor, 0.25);
  EXPECT_EQ(s->spec.steps, 12);
}

struct Bad {
  const char* override_text;
  const char* expected;  // a piece of the message
};

TEST(HybridScenario, HostileFilesAreRefusedNamingTheField) {
  const Bad cases[] = {
      {"cluster.nodes=[{kind: T4, count: 1}]", "cluster.nodes[0].kind: kind 'T4' is not in cluster.kinds"},
      {"job.global_batch=63", "job.global_batch: expected a multiple of micro_batch (2)"},
      {"job.schedule=zero-bubble", "job.schedule"},
      {"job.shape.tp=0", "job.shape.tp"},
      {"availability.episodes=[{device: 99, from: 1s, to: 2s, speed: 0.5}]", "no such device; the cluster has 8"},
      {"availability.episodes=[{node: 0, from: 5s, to: 2s, link: 0.5}]", "expected to > from"},
      {"control.policy=fastest", "policy 'fastest' is not known"},
      {"model={profile: OPT-350, transformer: {hidden: 8, layers: 2, seq: 4, vocab: 16}}", "model"},
      {"cluster.kinds=[{name: A100-40, gpus_per_node: 4}]", "memory_gb"},
      {"steps=-3", "steps"},
      {"kind=training", "kind: expected hybrid"},
      {"surprise=1", "surprise"},
      {"name=../../elsewhere", "name"},
      {"cluster.kinds[0].name=\"A100,40\"", "a kind's name of 1 to 64 letters"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.override_text);
    std::vector<std::string> overrides = {c.override_text};
    if (std::string(c.override_text).starts_with("control.policy=")) overrides.insert(overrides.begin(), "control.policies=null");
    auto s = parse_hybrid_scenario(kValid, "t.yaml", overrides);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.status().message().find("t.yaml"), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find(c.expected), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace omnilearn::scenarios
