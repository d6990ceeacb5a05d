// Flow-level all-reduces on SimGrid platforms: each algorithm against its closed form on a uniform star, a flat ring
// against a hierarchical ring on an oversubscribed fat-tree, a halved link in a platform file, and the overlap of
// gradient buckets in a whole run. Each simulation runs in a forked child (one SimGrid engine per process).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <string>
#include <vector>

#include "collective_model.h"
#include "collective_runner.h"
#include "omnilearn/scenarios/network_spec.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "platform_builder.h"
#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using scenarios::algorithm_name;
using scenarios::AllreduceAlgorithm;
using scenarios::AllreduceSpec;
using scenarios::ClusterSpec;

ClusterSpec uniform_star(std::size_t p) {
  ClusterSpec c;
  for (std::size_t k = 0; k < p; ++k) {
    scenarios::NodeSpec n;
    n.name = "w" + std::to_string(k);
    n.speed_flops = 1e12;
    n.bandwidth_Bps = 1.25e9;
    n.latency_s = 1e-5;
    c.workers.push_back(n);
  }
  c.parameter_server.speed_flops = 1e10;
  c.backbone_bandwidth_Bps = 1e15;  // never the bottleneck
  c.backbone_latency_s = 1e-6;
  return c;
}

// `spec`'s all-reduce of `bytes` among `participants`, flow by flow on `cluster`'s platform, in a child process's
// engine (SimOptions' default network configuration). Seconds; negative when the child failed.
double simulate(const ClusterSpec& cluster, const AllreduceSpec& spec, const std::vector<WorkerId>& participants,
                double bytes, std::int64_t chunks) {
  int fds[2];
  if (pipe(fds) != 0) return -1.0;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    testing::DefaultEngineArgs defaults;
    simgrid::s4u::Engine engine(&defaults.argc, defaults.argv.data());
    auto platform = build_platform(cluster, {});
    if (!platform) _exit(2);
    double seconds = -1.0;
    std::vector<simgrid::s4u::Host*> hosts;
    for (WorkerId w : participants) hosts.push_back(platform->workers[w]);
    const CollectiveSchedule schedule = make_schedule(spec, participants, bytes, chunks);
    simgrid::s4u::Actor::create("collective", hosts.front(), [&] { seconds = run_schedule(schedule, hosts); });
    engine.run();
    if (write(fds[1], &seconds, sizeof seconds) != sizeof seconds) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  double seconds = -1.0;
  if (read(fds[0], &seconds, sizeof seconds) != sizeof seconds) seconds = -1.0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return seconds;
}

std::vector<WorkerId> range(WorkerId from, WorkerId to) {
  std::vector<WorkerId> out(to - from);
  std::iota(out.begin(), out.end(), from);
  return out;
}

TEST(NetworkSim, EveryAlgorithmMatchesItsClosedFormOnAUniformStar) {
  for (AllreduceAlgorithm a :
       {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kHierarchicalRing, AllreduceAlgorithm::kDoubleBinaryTree,
        AllreduceAlgorithm::kHalvingDoubling, AllreduceAlgorithm::kParameterServer}) {
    for (std::size_t p : {12u, 16u}) {
      for (double bytes : {1e6, 45e6}) {
        AllreduceSpec spec;
        spec.algorithm = a;
        spec.workers_per_node = 4;
        spec.shards = 4;
        const ClusterSpec cluster = uniform_star(p);
        const Seconds alpha = 2.0 * 1e-5 + 1e-6;
        const std::int64_t chunks = tree_chunks(spec, p, bytes, alpha, 1.25e9);
        const double closed = closed_form_s(spec, p, bytes, alpha, 1.25e9, chunks);
        const double simulated = simulate(cluster, spec, range(0, static_cast<WorkerId>(p)), bytes, chunks);
        EXPECT_NEAR(simulated, closed, 0.01 * closed) << algorithm_name(a) << " p=" << p << " bytes=" << bytes;
      }
    }
  }
}

// Long, fast links: CM02 caps each flow at TCP's window over the round trip (network/TCP-gamma / 2 latency), and the
// analytic path of a whole run takes that cap as its bandwidth, like the flow-level run.
TEST(NetworkSim, TheTcpWindowCapsTheAnalyticPathLikeTheFlowLevelOne) {
  ClusterSpec c = uniform_star(8);
  for (auto& w : c.workers) w.latency_s = 5e-3, w.bandwidth_Bps = 1.25e10;
  AllreduceSpec hd;
  hd.algorithm = AllreduceAlgorithm::kHalvingDoubling;
  const double simulated = simulate(c, hd, range(0, 8), 45e6, 1);
  const Seconds alpha = 2.0 * 5e-3 + 1e-6;
  const double capped = 4194304.0 / (2.0 * alpha);
  ASSERT_LT(capped, 1.25e10);
  EXPECT_NEAR(closed_form_s(hd, 8, 45e6, alpha, capped, 1), simulated, 0.01 * simulated);
  auto s = testing::four_worker_scenario({8, 8, 8, 8}, "uniform");
  s.cluster.workers = std::vector<scenarios::NodeSpec>(c.workers.begin(), c.workers.begin() + 4);
  s.cluster.backbone_bandwidth_Bps = 1e15;
  s.workload.allreduce.algorithm = AllreduceAlgorithm::kHalvingDoubling;
  s.workload.dataset_samples = 128 * 2;
  const std::string dir = testing::test_dir("run");
  ASSERT_EQ(testing::run_in_child(s, dir), "");
  const double expected = closed_form_s(s.workload.allreduce, 4, s.workload.model.gradient_bytes, alpha, capped, 1);
  EXPECT_NEAR(testing::mean_column(testing::read_csv(dir + "/iterations.csv"), "comm_s"), expected, 0.001 * expected);
}

// Unequal links (three bandwidth classes) and a backbone that binds: the max-min analytic time of the one-flow-per-rank
// algorithms against their flow-level run.
TEST(NetworkSim, MaxMinAnalyticMatchesTheFlowLevelRunOnAnUnequalStar) {
  ClusterSpec c = uniform_star(16);
  const double classes[] = {1.25e9, 0.625e9, 2.5e9};
  for (std::size_t k = 0; k < c.workers.size(); ++k) c.workers[k].bandwidth_Bps = classes[k % 3];
  c.backbone_bandwidth_Bps = 8e9;  // less than the 16 links together
  std::vector<StarLink> links;
  for (const auto& w : c.workers) links.push_back({w.bandwidth_Bps, w.latency_s});
  for (AllreduceAlgorithm a :
       {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kHierarchicalRing, AllreduceAlgorithm::kHalvingDoubling}) {
    for (std::size_t p : {12u, 16u}) {
      AllreduceSpec spec;
      spec.algorithm = a;
      spec.workers_per_node = 4;
      const auto ranks = range(0, static_cast<WorkerId>(p));
      const std::vector<StarLink> mine(links.begin(), links.begin() + static_cast<long>(p));
      const auto analytic = star_max_min_time_s(make_schedule(spec, ranks, 45e6, 1), mine, c.backbone_bandwidth_Bps,
                                                c.backbone_latency_s, 4194304.0);
      ASSERT_TRUE(analytic.has_value()) << algorithm_name(a);
      const double simulated = simulate(c, spec, ranks, 45e6, 1);
      EXPECT_NEAR(*analytic, simulated, 0.01 * simulated) << algorithm_name(a) << " p=" << p;
    }
  }
  AllreduceSpec ps;
  ps.algorithm = AllreduceAlgorithm::kParameterServer;
  EXPECT_FALSE(star_max_min_time_s(make_schedule(ps, range(0, 16), 45e6, 1), links, 8e9, 1e-6, 4194304.0));
}

// 16 workers on four leaf switches of 4 hosts with one uplink each (4:1): the flat ring pays 2(P-1) steps of the
// core-crossing latency, the hierarchical ring 2(n-1) leaf steps and 2(m-1) core steps.
TEST(NetworkSim, OnAnOversubscribedFatTreeAFlatRingIsSlowerThanAHierarchicalOne) {
  ClusterSpec c = uniform_star(16);
  c.topology = scenarios::Topology::kFatTree;
  c.network.levels = 2;
  c.network.down = {4, 5};
  c.network.up = {1, 1};
  c.network.link_count = {1, 1};
  c.network.bandwidth_Bps = 12.5e9;
  c.network.latency_s = 5e-6;
  AllreduceSpec ring;
  AllreduceSpec hierarchical;
  hierarchical.algorithm = AllreduceAlgorithm::kHierarchicalRing;
  hierarchical.workers_per_node = 4;
  const double flat_s = simulate(c, ring, range(0, 16), 1e6, 1);
  const double hier_s = simulate(c, hierarchical, range(0, 16), 1e6, 1);
  ASSERT_GT(hier_s, 0.0);
  EXPECT_GT(flat_s, 1.2 * hier_s) << "flat " << flat_s << " s, hierarchical " << hier_s << " s";
}

// Torus and dragonfly zones build, and a ring on them takes at least its time on their links without contention.
TEST(NetworkSim, TorusAndDragonflyCarryACollective) {
  ClusterSpec torus = uniform_star(8);
  torus.topology = scenarios::Topology::kTorus;
  torus.network.dimensions = {3, 3};
  ClusterSpec dragonfly = uniform_star(8);
  dragonfly.topology = scenarios::Topology::kDragonfly;
  dragonfly.network.groups = {2, 1};
  dragonfly.network.chassis = {1, 1};
  dragonfly.network.routers = {2, 1};
  dragonfly.network.nodes = 3;
  AllreduceSpec ring;
  const double bound = 2.0 * 7.0 / 8.0 * 45e6 / torus.network.bandwidth_Bps;
  for (const ClusterSpec& c : {torus, dragonfly}) {
    const double seconds = simulate(c, ring, range(0, 8), 45e6, 1);
    EXPECT_GE(seconds, bound) << scenarios::topology_name(c.topology);
    EXPECT_LT(seconds, 10.0 * bound) << scenarios::topology_name(c.topology);
  }
}

// The shipped two-rack platform file, and copies with one link at half its bandwidth.
std::string platform_with(const std::string& link, const std::string& dir) {
  const std::string source = std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/two-racks.xml";
  std::string text = testing::read_text(source);
  if (!link.empty()) {
    const std::string from = "<link id=\"" + link + "\" bandwidth=\"12.5GBps\"";
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << link;
    text.replace(at, from.size(), "<link id=\"" + link + "\" bandwidth=\"6.25GBps\"");
  }
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/platform-" + (link.empty() ? std::string("base") : link) + ".xml";
  std::ofstream(path) << text;
  return path;
}

ClusterSpec two_racks(const std::string& path) {
  ClusterSpec c = uniform_star(8);
  c.topology = scenarios::Topology::kPlatformFile;
  c.platform.path = path;
  return c;
}

TEST(NetworkSim, HalvingALinkSlowsTheCollectivesThatCrossItOnly) {
  const std::string dir = testing::test_dir("platforms");
  AllreduceSpec ring;
  const double bytes = 45e6;
  const ClusterSpec base = two_racks(platform_with("", dir));
  const double rack0 = simulate(base, ring, range(0, 4), bytes, 1);
  const double rack1 = simulate(base, ring, range(4, 8), bytes, 1);
  const double both = simulate(base, ring, range(0, 8), bytes, 1);
  ASSERT_GT(rack0, 0.0);
  ASSERT_GT(both, 0.0);
  // The core link carries the two rack-crossing flows of the 8-worker ring only.
  const ClusterSpec slow_core = two_racks(platform_with("core", dir));
  EXPECT_DOUBLE_EQ(simulate(slow_core, ring, range(0, 4), bytes, 1), rack0);
  EXPECT_DOUBLE_EQ(simulate(slow_core, ring, range(4, 8), bytes, 1), rack1);
  EXPECT_GT(simulate(slow_core, ring, range(0, 8), bytes, 1), 1.5 * both);
  // h05's own link: the rings through h05 only.
  const ClusterSpec slow_host = two_racks(platform_with("l-h05", dir));
  EXPECT_DOUBLE_EQ(simulate(slow_host, ring, range(0, 4), bytes, 1), rack0);
  EXPECT_GT(simulate(slow_host, ring, range(4, 8), bytes, 1), 1.5 * rack1);
  EXPECT_GT(simulate(slow_host, ring, range(0, 8), bytes, 1), 1.5 * both);
}

// The shipped scenario on the shipped platform file: workers on h00..h07 by name, the server on `ps`; its ring takes
// the ring's closed form on those links (no contention: one flow crosses the core each way).
TEST(NetworkSim, TheShippedPlatformFileScenarioRuns) {
  auto s = scenarios::load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/two-racks.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const std::string dir = testing::test_dir("run");
  ASSERT_EQ(testing::run_in_child(*s, dir), "");
  const auto rows = testing::read_csv(dir + "/iterations.csv");
  ASSERT_FALSE(rows.empty());
  const double bytes = s->workload.model.gradient_bytes;
  const double ring = 2.0 * 7.0 / 8.0 * bytes / 12.5e9 + 14.0 * 4e-6;  // the slowest hop crosses the core: 4 us
  EXPECT_NEAR(testing::mean_column(rows, "comm_s"), ring, 0.01 * ring);
  const std::string manifest = testing::read_text(dir + "/manifest.json");
  EXPECT_NE(manifest.find("\"path\": \"flow-level\""), std::string::npos) << manifest.substr(0, 2000);
}

// The shipped platform-alone scenario: four-hosts.xml's hosts are the workers, each computing at its file speed (2, 1,
// 1 and 0.5 Tflop/s: at equal first batches, compute time x speed is the same for all four).
TEST(NetworkSim, APlatformFileAloneComputesAtItsHostsSpeeds) {
  auto s = scenarios::load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/four-hosts.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  const std::string dir = testing::test_dir("run");
  ASSERT_EQ(testing::run_in_child(*s, dir), "");
  const auto rows = testing::read_csv(dir + "/iterations.csv");
  const double speeds[] = {2e12, 1e12, 1e12, 5e11};
  std::vector<double> work;  // compute_s x speed of each worker's first step
  for (const auto& row : rows) {
    if (row.at("step") != "0") continue;
    const std::size_t k = std::stoul(row.at("worker"));
    ASSERT_LT(k, 4u);
    ASSERT_EQ(row.at("batch"), rows.front().at("batch"));
    work.push_back(std::stod(row.at("compute_s")) * speeds[k]);
  }
  ASSERT_EQ(work.size(), 4u);
  for (double w : work) EXPECT_NEAR(w, work.front(), 1e-9 * work.front());
}

// `nodes` with a platform file still place worker k on the k-th host by name, and a speed that disagrees with the
// file's is an error naming both.
TEST(NetworkSim, ANodeSpeedThatDisagreesWithThePlatformFileIsAnError) {
  auto with_nodes = [](const std::string& nodes) {
    return scenarios::parse_scenario(
        "cluster:\n  nodes: " + nodes +
            "\n  platform: {file: four-hosts.xml, parameter_server: ps}\n"
            "workload: {model: resnet18, dataset: cifar10, dataset_samples: 1024, global_batch: 512, epochs: 1}\n"
            "policy: {name: uniform, min_batch: 8, max_batch: 256}\n",
        std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/nodes.yaml");
  };
  auto equal = with_nodes("[{speed: 2e12}, {count: 2, speed: 1e12}, {speed: 5e11}]");
  ASSERT_TRUE(equal.is_ok()) << equal.status().message();
  EXPECT_EQ(testing::run_in_child(*equal, testing::test_dir("equal")), "");
  auto unequal = with_nodes("[{count: 4, speed: 1e12}]");
  ASSERT_TRUE(unequal.is_ok()) << unequal.status().message();
  const std::string error = testing::run_in_child(*unequal, testing::test_dir("unequal"));
  EXPECT_NE(error.find("host 'alpha' computes at"), std::string::npos) << error;
  EXPECT_NE(error.find("worker 0 is given"), std::string::npos) << error;
}

// Four equal workers on a uniform star, halving-doubling: one bucket adds the whole all-reduce after the compute;
// 50 buckets on this compute-bound step hide nearly all of it.
TEST(NetworkSim, BucketsOverlapTheAllReduceWithTheBackwardPass) {
  auto s = testing::four_worker_scenario({8, 8, 8, 8}, "uniform");
  s.workload.allreduce.algorithm = AllreduceAlgorithm::kHalvingDoubling;
  s.workload.dataset_samples = 128 * 4;
  const std::string one_dir = testing::test_dir("one"), many_dir = testing::test_dir("many");
  ASSERT_EQ(testing::run_in_child(s, one_dir), "");
  s.workload.allreduce.buckets = 50;
  ASSERT_EQ(testing::run_in_child(s, many_dir), "");
  const auto one = testing::read_csv(one_dir + "/iterations.csv");
  const auto many = testing::read_csv(many_dir + "/iterations.csv");
  const double compute = testing::mean_column(one, "compute_s");
  const double bytes = s.workload.model.gradient_bytes;
  const double allreduce = closed_form_s(s.workload.allreduce, 4, bytes, 2.1e-5, 1.25e9, 1);
  ASSERT_GT(compute, allreduce);  // compute-bound
  EXPECT_NEAR(testing::mean_column(one, "comm_s"), allreduce, 1e-6 * allreduce);
  const double step_many = testing::mean_column(many, "compute_s") + testing::mean_column(many, "comm_s");
  EXPECT_LT(step_many, 1.02 * std::max(compute, allreduce));
  EXPECT_GE(step_many, std::max(compute, allreduce) * (1.0 - 1e-9));
}

}  // namespace
}  // namespace omnilearn::sim
