// The network keys of a scenario: cluster.topology with its parameters, cluster.platform (with `nodes`, or alone: the
// file's hosts as the workers), workload.allreduce and the gradient buckets; each error names its field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

// Hosts in the manner of SimGrid's small_platform.xml, with what a reader must skip or pick: a host in a comment, a
// <prop> child, single quotes, a power-state list with `pstate`, a `core` attribute, units with prefixes.
const char* const kSmallPlatform =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<!-- <host id=\"Ghost\" speed=\"1f\"/> is commented out -->\n"
    "<platform version=\"4.1\">\n"
    "  <zone id=\"z\" routing=\"Full\">\n"
    "    <host id=\"Tremblay\" speed=\"98.095Mf\"/>\n"
    "    <host id=\"Jupiter\" speed=\"76.296Mf\"/>\n"
    "    <host id=\"Fafard\" speed=\"76.296Mf\"/>\n"
    "    <host id='Ginette' speed='48.492Mf, 20Mf' pstate='1'>\n"
    "      <prop id=\"ram\" value=\"1GB\"/>\n"
    "    </host>\n"
    "    <host id=\"Bourassa\" speed=\"98.095Mf\" core=\"2\"/>\n"
    "    <link id=\"l\" bandwidth=\"41.279125MBps\" latency=\"59.904us\"/>\n"
    "  </zone>\n"
    "</platform>\n";

// `cluster_lines` as the cluster of a scenario beside the platform file `xml` (p.xml), both in a fresh folder.
Result<Scenario> parse_beside(const std::string& xml, const std::string& cluster_lines) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "omnilearn_platform" / info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "p.xml") << xml;
  return parse_scenario("cluster:\n" + cluster_lines +
                            "workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1}\n"
                            "policy: {name: uniform, min_batch: 4, max_batch: 56}\n",
                        (dir / "s.yaml").string());
}

std::vector<std::string> names_of(const ClusterSpec& cluster) {
  std::vector<std::string> names;
  for (const NodeSpec& w : cluster.workers) names.push_back(w.name);
  return names;
}

TEST(NetworkParser, APlatformFileAloneGivesItsHostsAtTheirSpeeds) {
  // No parameter server named: every host but the last by name (Tremblay, left for the server).
  auto r = parse_beside(kSmallPlatform, "  platform: p.xml\n");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->cluster.topology, Topology::kPlatformFile);
  const std::vector<std::string> first_four = {"Bourassa", "Fafard", "Ginette", "Jupiter"};
  EXPECT_EQ(names_of(r->cluster), first_four);
  EXPECT_EQ(r->cluster.platform.hosts, first_four);
  ASSERT_EQ(r->cluster.workers.size(), 4u);
  EXPECT_DOUBLE_EQ(r->cluster.workers[0].speed_flops, 98.095e6);
  EXPECT_DOUBLE_EQ(r->cluster.workers[1].speed_flops, 76.296e6);
  EXPECT_DOUBLE_EQ(r->cluster.workers[2].speed_flops, 20e6);  // pstate 1 of its list
  EXPECT_DOUBLE_EQ(r->cluster.workers[3].speed_flops, 76.296e6);
  EXPECT_TRUE(r->cluster.preset.empty());

  // The named server is left out, so worker Tremblay runs on host Tremblay.
  auto named = parse_beside(kSmallPlatform, "  platform: {file: p.xml, parameter_server: Bourassa}\n");
  ASSERT_TRUE(named.is_ok()) << named.status().message();
  EXPECT_EQ(names_of(named->cluster), (std::vector<std::string>{"Fafard", "Ginette", "Jupiter", "Tremblay"}));
  EXPECT_DOUBLE_EQ(named->cluster.workers[3].speed_flops, 98.095e6);
  EXPECT_EQ(named->cluster.platform.parameter_server, "Bourassa");
}

TEST(NetworkParser, WorkersTakesTheFirstHostsByNameOrOfTheList) {
  auto two = parse_beside(kSmallPlatform, "  platform: {file: p.xml, parameter_server: Bourassa}\n  workers: 2\n");
  ASSERT_TRUE(two.is_ok()) << two.status().message();
  EXPECT_EQ(names_of(two->cluster), (std::vector<std::string>{"Fafard", "Ginette"}));
  EXPECT_EQ(two->cluster.platform.hosts, (std::vector<std::string>{"Fafard", "Ginette"}));

  // A host list gives the order; a host listed twice serves two workers (they share its cores).
  auto listed = parse_beside(kSmallPlatform, "  platform: {file: p.xml, hosts: [Tremblay, Jupiter, Tremblay]}\n");
  ASSERT_TRUE(listed.is_ok()) << listed.status().message();
  EXPECT_EQ(names_of(listed->cluster), (std::vector<std::string>{"Tremblay", "Jupiter", "Tremblay-1"}));
  EXPECT_EQ(listed->cluster.platform.hosts, (std::vector<std::string>{"Tremblay", "Jupiter", "Tremblay"}));
  EXPECT_DOUBLE_EQ(listed->cluster.workers[2].speed_flops, 98.095e6);
  auto first =
      parse_beside(kSmallPlatform, "  platform: {file: p.xml, hosts: [Tremblay, Jupiter, Fafard]}\n  workers: 2\n");
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_EQ(names_of(first->cluster), (std::vector<std::string>{"Tremblay", "Jupiter"}));
}

TEST(NetworkParser, MoreWorkersThanHostsIsAnErrorAtItsLine) {
  auto r = parse_beside(kSmallPlatform, "  platform: {file: p.xml, parameter_server: Bourassa}\n  workers: 5\n");
  ASSERT_FALSE(r.is_ok());
  const std::string dir = (std::filesystem::path(::testing::TempDir()) / "omnilearn_platform" /
                           ::testing::UnitTest::GetInstance()->current_test_info()->name())
                              .string();
  EXPECT_EQ(r.status().message(), dir + "/s.yaml:3: cluster.workers: expected at most 4 workers, got 5: '" + dir +
                                      "/p.xml' has 5 hosts (one host is left for the parameter server)");
  // Unnamed, the server still takes a host.
  auto unnamed = parse_beside(kSmallPlatform, "  platform: p.xml\n  workers: 5\n");
  ASSERT_FALSE(unnamed.is_ok());
  EXPECT_NE(unnamed.status().message().find("s.yaml:3: cluster.workers: expected at most 4 workers, got 5"),
            std::string::npos)
      << unnamed.status().message();
  auto listed = parse_beside(kSmallPlatform, "  platform: {file: p.xml, hosts: [Fafard]}\n  workers: 2\n");
  ASSERT_FALSE(listed.is_ok());
  EXPECT_NE(listed.status().message().find("expected at most 1 workers, got 2"), std::string::npos)
      << listed.status().message();
}

TEST(NetworkParser, PlatformAloneErrorsNameTheFileAndLine) {
  struct Case {
    std::string xml, cluster, message;
  };
  const std::string head = "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n";
  const Case cases[] = {
      {kSmallPlatform, "  platform: {file: p.xml, hosts: [Fafard, Nowhere]}\n",
       "s.yaml:2: cluster.platform.hosts[1]: no host 'Nowhere' in '"},
      {head + "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>\n",
       "  platform: p.xml\n", "p.xml' line 3: <cluster> makes hosts that are not read here"},
      {head + "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"fast\"/>\n", "  platform: p.xml\n",
       "p.xml' line 4: host 'b': speed 'fast' is not a speed"},
      {head + "<host id=\"a\" speed=\"1Gf\"/>\n\n<host id=\"a\" speed=\"1Gf\"/>\n", "  platform: p.xml\n",
       "p.xml' line 5: host 'a' is defined twice"},
      {head + "<host speed=\"1Gf\"/>\n", "  platform: p.xml\n", "p.xml' line 3: <host> without an id"},
      {head + "<host id=\"a\" speed=\"1Gf,2Gf\" pstate=\"2\"/>\n", "  platform: p.xml\n",
       "host 'a': pstate '2' is not one of its 2 speeds"},
      {head + "<!-- <host id=\"a\" speed=\"1Gf\"/>\n", "  platform: p.xml\n", "p.xml' line 3: unterminated '<!--'"},
      {head + "<host id=\"only\" speed=\"1Gf\"/>\n", "  platform: p.xml\n",
       "s.yaml:2: cluster.platform: '"},  // one host: none left for a worker beside the server
      {kSmallPlatform, "  workers: 2\n", "s.yaml:2: cluster: expected one of preset, nodes, platform"},
      {kSmallPlatform, "  nodes: [{speed: 1e9}]\n  workers: 2\n  platform: p.xml\n",
       "cluster.workers: only used with `preset` or a platform file alone"},
  };
  for (const Case& c : cases) {
    auto r = parse_beside(c.xml, c.cluster);
    ASSERT_FALSE(r.is_ok()) << c.cluster;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
}

// The shipped example: four-hosts.xml's four hosts by name and speed, the server on `ps`.
TEST(NetworkParser, TheShippedPlatformAloneScenarioHasTheFilesHosts) {
  auto r = load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/four-hosts.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(names_of(r->cluster), (std::vector<std::string>{"alpha", "bravo", "charlie", "delta"}));
  const double speeds[] = {2e12, 1e12, 1e12, 5e11};
  for (std::size_t k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(r->cluster.workers[k].speed_flops, speeds[k]) << k;
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
