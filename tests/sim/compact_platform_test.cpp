// The compact platform (build_platform's `compact`: no SimGrid host per worker) for BSP runs whose times the
// coordinator computes itself: which runs may take it, and that they write the files of the full platform's run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <simgrid/s4u/Engine.hpp>

#include "bsp_driver.h"
#include "platform_builder.h"
#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::phase;
using testing::read_text;
using testing::run_forked;
using testing::run_in_child;
using testing::test_dir;

SimOptions coordinator(bool compact) {
  SimOptions o;
  o.flow_allreduce_max_workers = 0;  // the analytic all-reduce whoever takes part
  o.bsp_actors = SimOptions::BspActors::kCoordinator;
  o.compact_platform = compact;
  return o;
}

// A heterogeneous four-worker cluster on a backbone that never saturates, 40 steps.
scenarios::Scenario four_workers() {
  auto s = four_worker_scenario({12, 6, 8, 16}, "omnilearn");
  s.cluster.backbone_bandwidth_Bps = 1e15;
  s.workload.global_batch = 256;
  s.workload.dataset_samples = 256 * 40;
  return s;
}

// The same scenario with and without the workers' hosts writes the same files, byte for byte.
void expect_same_files(const scenarios::Scenario& s) {
  const std::string compact = test_dir("compact"), full = test_dir("full");
  ASSERT_EQ(run_in_child(s, compact, coordinator(true)), "");
  ASSERT_EQ(run_in_child(s, full, coordinator(false)), "");
  for (const char* file : {"iterations.csv", "plans.csv", "availability.csv", "summary.json"}) {
    EXPECT_EQ(read_text(compact + "/" + file), read_text(full + "/" + file)) << file;
  }
}

TEST(CompactPlatform, HeterogeneousWorkersGiveTheSameRows) { expect_same_files(four_workers()); }

TEST(CompactPlatform, EpochPowerStatesGiveTheSameRows) {
  auto s = four_workers();
  s.workload.dataset_samples = 256 * 10;
  s.workload.epochs = 3;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kEpochs;
  s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(1, {0.25, 1, 0.5, 1}), phase(2, {1, 0.5, 0.5, 0.75})};
  expect_same_files(s);
}

TEST(CompactPlatform, ARepeatingTraceWithDownsGivesTheSameRows) {
  const std::string trace = test_dir("trace") + ".csv";
  std::filesystem::create_directories(std::filesystem::path(trace).parent_path());
  std::ofstream(trace) << "# loop_after_s=3.3\ntime_s,worker,fraction\n0,a,1\n0.7,a,0.45\n1.9,a,1\n2.95,a,0.8\n"
                          "0,b,1\n1.1,b,0\n1.45,b,0.6\n2.2,b,1\n";
  auto s = four_workers();
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kTrace;
  s.availability.trace.path = trace;
  s.availability.trace.nodes = {"a", "b", "b", "a"};
  s.availability.trace.time_scale = 0.37;
  expect_same_files(s);
}

TEST(CompactPlatform, AnAnalyticAllReduceOnAUniformStarGivesTheSameRows) {
  auto s = four_workers();
  s.workload.allreduce.algorithm = scenarios::AllreduceAlgorithm::kHalvingDoubling;
  expect_same_files(s);
}

// Whether each run needs the workers' hosts, asked inside an engine (the decision reads SimGrid's CPU settings).
TEST(CompactPlatform, OnlyRunsWithoutSimGridActivitiesGoWithoutHosts) {
  const std::string failures = run_forked([] {
    testing::DefaultEngineArgs defaults;
    simgrid::s4u::Engine engine(&defaults.argc, defaults.argv.data());
    std::string out;
    auto expect = [&](bool needed, const scenarios::Scenario& s, const SimOptions& o, std::size_t never_down,
                      const char* what) {
      if (BspDriver::needs_worker_hosts(s, o, never_down) != needed) out.append(what).append("; ");
    };
    const auto s = four_workers();
    expect(false, s, coordinator(true), 4, "a ring of analytic steps");
    expect(true, s, coordinator(false), 4, "compact_platform off");
    SimOptions flows = coordinator(true);
    flows.flow_allreduce_max_workers = 2;
    expect(false, s, flows, 3, "three workers that never go down, above the flows' limit");
    expect(true, s, flows, 2, "a ring that can fall to the flows' limit");
    SimOptions actors = coordinator(true);
    actors.bsp_actors = SimOptions::BspActors::kPerWorker;
    expect(true, s, actors, 4, "per-worker actors");
    auto tree = s;
    tree.workload.allreduce.algorithm = scenarios::AllreduceAlgorithm::kDoubleBinaryTree;
    expect(false, tree, coordinator(true), 0, "a tree on a uniform star (closed form)");
    tree.cluster.workers[1].bandwidth_Bps /= 2;
    expect(true, tree, coordinator(true), 4, "a tree on unequal links (flows)");
    auto asp = s;
    asp.mode = controller::TrainingMode::kAsp;
    expect(true, asp, coordinator(true), 4, "ASP");
    return out;
  });
  EXPECT_EQ(failures, "");
}

TEST(CompactPlatform, HasTheParameterServerAndCountsTheWorkers) {
  const std::string failures = run_forked([] {
    testing::DefaultEngineArgs defaults;
    simgrid::s4u::Engine engine(&defaults.argc, defaults.argv.data());
    auto platform = build_platform(four_workers().cluster, {}, /*compact=*/true);
    if (!platform) return platform.status().message();
    if (platform->worker_count != 4 || !platform->workers.empty() || platform->parameter_server == nullptr) {
      return std::string("not the compact form");
    }
    return engine.get_host_count() == 1 ? std::string() : std::string("worker hosts were built");
  });
  EXPECT_EQ(failures, "");
}

}  // namespace
}  // namespace omnilearn::sim
