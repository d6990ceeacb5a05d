// The simulator's scale paths give the rows of its reference paths: BSP steps driven by one coordinator against one
// actor per worker, plans.csv written compactly against in full, and SimGrid settings passed through.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace omnilearn::sim
