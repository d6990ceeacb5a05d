// The simulator's scale paths give the rows of its reference paths: BSP steps driven by one coordinator against one
// actor per worker, plans.csv written compactly against in full, and SimGrid settings passed through.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::read_csv;
using testing::read_text;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

// Eight unequal workers on unequal links; `churn` adds a Markov on/off generator that takes workers down
// mid-iteration and back.
scenarios::Scenario eight_workers(bool churn, const std::string& policy = "omnilearn") {
  auto s = four_worker_scenario({12, 12, 8, 16, 4, 6, 12, 24}, policy);
  s.cluster.workers[0].bandwidth_Bps = 0.3e9;
  s.cluster.workers[5].bandwidth_Bps = 0.6e9;
  s.cluster.backbone_bandwidth_Bps = 4.0e9;
  s.workload.global_batch = 256;
  s.workload.dataset_samples = 256 * 40;
  s.policy.max_batch = 128;
  if (churn) {
    s.availability.kind = scenarios::AvailabilitySpec::Kind::kGenerator;
    s.availability.generator.kind = scenarios::GeneratorKind::kMarkov;
    s.availability.generator.mtbf_s = 6;
    s.availability.generator.mttr_s = 1.5;
    s.availability.generator.duration_s = 200;
  }
  return s;
}

void expect_same_run(const std::string& a, const std::string& b) {
  for (const char* file : {"iterations.csv", "plans.csv", "availability.csv", "summary.json", "timeline.json"}) {
    EXPECT_EQ(read_text(a + "/" + file), read_text(b + "/" + file)) << file;
  }
}

TEST(SimScale, CoordinatorStepsGiveTheRowsOfPerWorkerActors) {
  for (const bool churn : {false, true}) {
    const auto s = eight_workers(churn);
    SimOptions actors;
    actors.flow_allreduce_max_workers = 0;  // analytic all-reduce in both
    actors.bsp_actors = SimOptions::BspActors::kPerWorker;
    SimOptions coordinator = actors;
    coordinator.bsp_actors = SimOptions::BspActors::kCoordinator;
    const std::string a = test_dir(churn ? "actors-churn" : "actors");
    const std::string b = test_dir(churn ? "coordinator-churn" : "coordinator");
    ASSERT_EQ(run_in_child(s, a, actors), "");
    ASSERT_EQ(run_in_child(s, b, coordinator), "");
    if (churn) {
      // The run must exercise failures: aborted iterations (batch 0 rows) and availability changes.
      EXPECT_GT(read_csv(a + "/availability.csv").size(), 10u);
    }
    SCOPED_TRACE(churn ? "churn" : "steady");
    expect_same_run(a, b);
  }
}

TEST(SimScale, CoordinatorFlowsMatchPerWorkerFlows) {
  // A coordinated step with few participants sends the ring flows itself: the same flows, from one actor.
  const auto s = eight_workers(true);
  SimOptions actors;
  actors.bsp_actors = SimOptions::BspActors::kPerWorker;
  SimOptions coordinator;
  coordinator.bsp_actors = SimOptions::BspActors::kCoordinator;
  const std::string a = test_dir("actors");
  const std::string b = test_dir("coordinator");
  ASSERT_EQ(run_in_child(s, a, actors), "");
  ASSERT_EQ(run_in_child(s, b, coordinator), "");
  expect_same_run(a, b);
}

// Above 512 workers the coordinator drives every step: it must run the scenario's collective (algorithm, topology,
// buckets) as the worker actors do, not the star's plain ring. Flow-level (a fat-tree, hierarchical ring) and
// analytic (halving-doubling with overlapping buckets on the star), each with churn.
TEST(SimScale, CoordinatorRunsTheScenariosCollective) {
  auto fat_tree = eight_workers(true);
  fat_tree.cluster.topology = scenarios::Topology::kFatTree;
  fat_tree.cluster.network.levels = 2;
  fat_tree.cluster.network.down = {4, 3};  // 12 leaves: 8 workers and the parameter server
  fat_tree.cluster.network.up = {1, 1};
  fat_tree.cluster.network.link_count = {1, 1};
  fat_tree.cluster.network.bandwidth_Bps = 1e9;
  fat_tree.cluster.network.latency_s = 5e-6;
  fat_tree.workload.allreduce.algorithm = scenarios::AllreduceAlgorithm::kHierarchicalRing;
  fat_tree.workload.allreduce.workers_per_node = 4;
  auto buckets = eight_workers(true);
  for (auto& w : buckets.cluster.workers) w.bandwidth_Bps = 1e9;
  buckets.cluster.backbone_bandwidth_Bps = 8e9;
  buckets.workload.allreduce.algorithm = scenarios::AllreduceAlgorithm::kHalvingDoubling;
  buckets.workload.allreduce.buckets = 4;
  for (const auto& [name, s] : {std::pair{"fat-tree", fat_tree}, std::pair{"buckets", buckets}}) {
    SCOPED_TRACE(name);
    SimOptions actors;
    actors.bsp_actors = SimOptions::BspActors::kPerWorker;
    SimOptions coordinator;
    coordinator.bsp_actors = SimOptions::BspActors::kCoordinator;
    const std::string a = test_dir(std::string("collective-actors-") + name);
    const std::string b = test_dir(std::string("collective-coordinator-") + name);
    ASSERT_EQ(run_in_child(s, a, actors), "");
    ASSERT_EQ(run_in_child(s, b, coordinator), "");
    if (std::string(name) == "fat-tree") {
      EXPECT_GT(summary_number(b, "allreduce_flow_level_runs"), 0.0);
    }
    EXPECT_EQ(summary_number(b, "allreduce_buckets"), summary_number(a, "allreduce_buckets"));
    expect_same_run(a, b);
  }
}

TEST(SimScale, CfgReachesSimGridAndTheManifest) {
  // LV08 models TCP (bandwidth factor 0.97, latency factor 13.01): the same flows take longer than under CM02.
  const auto s = eight_workers(false, "uniform");
  const std::string cm02 = test_dir("cm02");
  const std::string lv08 = test_dir("lv08");
  ASSERT_EQ(run_in_child(s, cm02), "");
  SimOptions options;
  options.simgrid_args.push_back("--cfg=network/model:LV08");
  ASSERT_EQ(run_in_child(s, lv08, options), "");
  EXPECT_GT(summary_number(lv08, "total_time_s"), summary_number(cm02, "total_time_s"));
  const auto manifest = nlohmann::json::parse(read_text(lv08 + "/manifest.json"));
  EXPECT_EQ(manifest["simgrid_args"].back(), "--cfg=network/model:LV08");
}

TEST(SimScale, StacksGoUnguardedOnlyWhenTheActorsWouldPassTheMappingLimit) {
  const auto s = eight_workers(false, "uniform");
  const std::string guarded = test_dir("guarded");
  ASSERT_EQ(run_in_child(s, guarded), "");
  const auto args = nlohmann::json::parse(read_text(guarded + "/manifest.json"))["simgrid_args"];
  EXPECT_EQ(std::find(args.begin(), args.end(), "--cfg=contexts/guard-size:0"), args.end());
  // 10 actors need 2 x 10 + 4,096 mappings: over a limit of 4,000, the stacks lose their guard pages.
  SimOptions low;
  low.max_map_count = 4000;
  const std::string unguarded = test_dir("unguarded");
  ASSERT_EQ(run_in_child(s, unguarded, low), "");
  EXPECT_EQ(nlohmann::json::parse(read_text(unguarded + "/manifest.json"))["simgrid_args"].front(),
            "--cfg=contexts/guard-size:0");
  for (const char* file : {"iterations.csv", "plans.csv", "summary.json"}) {
    EXPECT_EQ(read_text(guarded + "/" + file), read_text(unguarded + "/" + file)) << file;
  }
  // A guard the user asks for is then an error that says what to set.
  low.simgrid_args.push_back("--cfg=contexts/guard-size:1");
  const std::string error = run_in_child(s, test_dir("asked"), low);
  EXPECT_NE(error.find("sysctl -w vm.max_map_count=4116"), std::string::npos) << error;
}

TEST(SimScale, BadSimGridSettingsAreClearErrorsNotAborts) {
  const auto s = four_worker_scenario({12, 12}, "uniform");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--cfg=network/model:Nope", "network/model must be one of LV08"},  // SimGrid would abort
      {"--cfg=nocolon", "expected --cfg=name:value"},                    // SimGrid would abort
      {"--log=bad", "expected --log=category.setting:value"},            // SimGrid would abort
      {"--log=root.thres:loud", "the threshold must be one of"},
      {"--cfg=bogus/key:1", "Bad config key: bogus/key"},                // SimGrid throws
      {"--cfg=contexts/stack-size:abc", "invalid integer"},
      {"--help-cfg", "only --cfg=name:value and --log=category.setting:value"},
  };
  for (const auto& [arg, expected] : cases) {
    SimOptions options;
    options.simgrid_args.push_back(arg);
    const std::string error = run_in_child(s, test_dir("bad"), options);
    EXPECT_NE(error.find(expected), std::string::npos) << arg << ": " << error;
    EXPECT_NE(error.find(arg), std::string::npos) << arg << ": " << error;
    EXPECT_EQ(error.find("Existing config keys"), std::string::npos) << error;
  }
  // SimGrid's trace integration asserts on speed profiles that do not repeat (a random walk's partial levels).
  SimOptions ti;
  ti.simgrid_args.push_back("--cfg=cpu/optim:TI");
  auto walk = eight_workers(true);
  walk.availability.generator.kind = scenarios::GeneratorKind::kRandomWalk;
  walk.availability.generator.step_s = 2;
  const std::string error = run_in_child(walk, test_dir("ti"), ti);
  EXPECT_NE(error.find("trace integration needs availability that repeats"), std::string::npos) << error;
  // A worker that only goes down and up keeps its speed: no profile, so trace integration runs (a Markov chain's).
  EXPECT_EQ(run_in_child(eight_workers(true), test_dir("ti-markov"), ti), "");
}

// plans.csv's decisions as full per-worker tables, from either form: (step, time, reason) and batch/weight cells.
struct PlanTable {
  std::vector<std::string> heads;
  std::vector<std::vector<std::string>> batch, weight;
};
std::string shortest(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}
PlanTable read_plans(const std::string& dir, std::size_t workers) {
  PlanTable t;
  std::vector<std::string> batch(workers), weight(workers);
  bool compact = false;
  std::string total;  // a compact decision's sum of batches: its weights are the batch shares
  auto finish_decision = [&] {
    if (total.empty() || t.heads.empty()) return;
    for (std::size_t k = 0; k < workers; ++k) {
      const long long sum = std::stoll(total);
      weight[k] = shortest(sum > 0 ? static_cast<double>(std::stoll(batch[k])) / static_cast<double>(sum) : 0.0);
    }
    t.weight.back() = weight;
  };
  for (const auto& r : read_csv(dir + "/plans.csv")) {
    const std::string head = r.at("step") + "/" + r.at("time_s") + "/" + r.at("reason") + "/" + r.at("changed") +
                             "/" + r.at("imbalance");
    if (r.at("worker").empty()) {  // a compact decision's marker
      finish_decision();
      compact = true;
      total = r.at("batch");
      t.heads.push_back(head);
      t.batch.push_back(batch);
      t.weight.push_back(weight);
      continue;
    }
    const auto k = std::stoul(r.at("worker"));
    if (!compact && (k == 0 || t.heads.empty())) {
      t.heads.push_back(head);
      t.batch.push_back(batch);
      t.weight.push_back(weight);
    }
    t.batch.back()[k] = batch[k] = r.at("batch");
    t.weight.back()[k] = weight[k] = r.at("weight");
  }
  finish_decision();
  return t;
}

TEST(SimScale, CompactPlansReadBackToTheFullPlans) {
  const auto s = eight_workers(true);
  SimOptions full, changes;
  full.plan_rows = run::PlanRows::kFull;
  changes.plan_rows = run::PlanRows::kChanges;
  const std::string a = test_dir("full");
  const std::string b = test_dir("changes");
  ASSERT_EQ(run_in_child(s, a, full), "");
  ASSERT_EQ(run_in_child(s, b, changes), "");
  const PlanTable f = read_plans(a, 8), c = read_plans(b, 8);
  ASSERT_GT(f.heads.size(), 5u);
  EXPECT_EQ(c.heads, f.heads);
  EXPECT_EQ(c.batch, f.batch);
  EXPECT_EQ(c.weight, f.weight);
  EXPECT_LT(read_csv(b + "/plans.csv").size(), read_csv(a + "/plans.csv").size());
  // Everything else is the same run.
  for (const char* file : {"iterations.csv", "availability.csv", "summary.json"}) {
    EXPECT_EQ(read_text(a + "/" + file), read_text(b + "/" + file)) << file;
  }
}

}  // namespace
}  // namespace omnilearn::sim
