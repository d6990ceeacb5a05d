// The network keys of a scenario: cluster.topology with its parameters, cluster.platform, workload.allreduce and the
// gradient buckets; each error names its field.
#include <gtest/gtest.h>

#include <string>

#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::scenarios {
namespace {

std::string scenario_with(const std::string& cluster_extra, const std::string& workload_extra) {
  return "cluster:\n"
         "  nodes:\n"
         "    - {count: 8, speed: 1e12}\n" +
         cluster_extra + "workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1" + workload_extra +
         "}\n"
         "policy: {name: uniform, min_batch: 8, max_batch: 56}\n";
}

TEST(NetworkParser, ReadsAFatTree) {
  auto r = parse_scenario(scenario_with("  topology: {kind: fat-tree, levels: 2, down: [4, 3], up: [1, 2], "
                                        "link_count: [1, 1], bandwidth: 100Gbps, latency: 2us}\n",
                                        ""),
                          "ft.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->cluster.topology, Topology::kFatTree);
  EXPECT_EQ(r->cluster.network.levels, 2);
  EXPECT_EQ(r->cluster.network.down, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(r->cluster.network.up, (std::vector<std::int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(r->cluster.network.bandwidth_Bps, 12.5e9);
  EXPECT_DOUBLE_EQ(r->cluster.network.latency_s, 2e-6);
}

TEST(NetworkParser, ReadsATorusAndADragonfly) {
  auto torus = parse_scenario(scenario_with("  topology: {kind: torus, dimensions: [3, 3]}\n", ""), "t.yaml");
  ASSERT_TRUE(torus.is_ok()) << torus.status().message();
  EXPECT_EQ(torus->cluster.network.dimensions, (std::vector<std::int64_t>{3, 3}));
  auto dragonfly = parse_scenario(
      scenario_with("  topology: {kind: dragonfly, groups: [2, 1], chassis: [1, 1], routers: [2, 1], nodes: 3}\n", ""),
      "d.yaml");
  ASSERT_TRUE(dragonfly.is_ok()) << dragonfly.status().message();
  EXPECT_EQ(dragonfly->cluster.topology, Topology::kDragonfly);
}

TEST(NetworkParser, ErrorsNameTheField) {
  struct Case {
    std::string cluster, workload, field;
  };
  const Case cases[] = {
      {"  topology: fat-tree\n", "", "needs its parameters"},
      {"  topology: {kind: fat-tree, levels: 2, down: [4], up: [1, 1], link_count: [1, 1]}\n", "",
       "cluster.topology.down"},
      {"  topology: {kind: torus, dimensions: [2, 4]}\n", "", "leaves"},  // 8 leaves for 8 workers + the server
      {"  topology: {kind: ring}\n", "", "kind"},
      {"  platform: missing.xml\n", "", "not found"},
      {"", ", allreduce: butterfly", "allreduce"},
      {"", ", allreduce: {algorithm: ring, chunks: 4}", "chunks"},
      {"", ", allreduce: {algorithm: hierarchical-ring, shards: 2}", "shards"},
      {"", ", buckets: 4, bucket_bytes: 1000", "bucket"},
      {"", ", buckets: 0", "buckets"},
      {"", ", allreduce: hierarchical-ring", "workers_per_node"},
  };
  for (const Case& c : cases) {
    auto r = parse_scenario(scenario_with(c.cluster, c.workload), "bad.yaml");
    ASSERT_FALSE(r.is_ok()) << c.cluster << c.workload;
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
}

TEST(NetworkParser, ReadsTheAllReduceAndBuckets) {
  auto r = parse_scenario(
      scenario_with("", ", allreduce: {algorithm: hierarchical-ring, workers_per_node: 4}, bucket_bytes: 25e6"),
      "a.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->workload.allreduce.algorithm, AllreduceAlgorithm::kHierarchicalRing);
  EXPECT_EQ(r->workload.allreduce.workers_per_node, 4);
  EXPECT_DOUBLE_EQ(r->workload.allreduce.bucket_bytes, 25e6);
  auto plain = parse_scenario(scenario_with("", ", allreduce: halving-doubling, buckets: 8"), "b.yaml");
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_EQ(plain->workload.allreduce.algorithm, AllreduceAlgorithm::kHalvingDoubling);
  EXPECT_EQ(plain->workload.allreduce.buckets, 8);
}

TEST(NetworkParser, ThePlatformFileIsResolvedNextToTheScenario) {
  auto r = parse_scenario(scenario_with("  platform: {file: two-racks.xml, parameter_server: ps}\n", ""),
                          std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/two-racks.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->cluster.topology, Topology::kPlatformFile);
  EXPECT_EQ(r->cluster.platform.path, std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/two-racks.xml");
  EXPECT_EQ(r->cluster.platform.parameter_server, "ps");
}

TEST(NetworkParser, TheHpcFatTreePresetHasRoomForEveryWorker) {
  for (std::size_t workers : {1u, 15u, 16u, 64u, 1024u}) {
    auto c = make_cluster_preset("hpc-fat-tree", workers);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    EXPECT_EQ(c->topology, Topology::kFatTree);
    EXPECT_GE(static_cast<std::size_t>(c->network.down[0] * c->network.down[1]), workers + 1);
  }
}

}  // namespace
}  // namespace omnilearn::scenarios
