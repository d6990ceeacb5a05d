// Every YAML file shipped under scenarios/ parses (sweep-*.yaml as sweeps, profiles/*.yaml as model profiles,
// clusters/*.yaml as device clusters), and
// the paper scenarios say what the paper's setups are.
#include <gtest/gtest.h>

#include <filesystem>

#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/scenarios/hybrid_scenario.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/scenarios/model_profile_file.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/scenarios/sweep.h"

namespace omnilearn::scenarios {
namespace {

const std::string kDir = std::string(OMNILEARN_SOURCE_DIR) + "/scenarios";

Scenario load(const std::string& relative) {
  auto r = load_scenario(kDir + "/" + relative);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::move(r).value() : Scenario{};
}

TEST(ShippedFiles, EveryYamlFileParses) {
  int scenarios = 0;
  int sweeps = 0;
  int jobs_scenarios = 0;
  int hybrid_scenarios = 0;
  int testbed_specs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kDir)) {
    const auto& p = entry.path();
    if (!entry.is_regular_file() || (p.extension() != ".yaml" && p.extension() != ".yml")) continue;
    SCOPED_TRACE(p.string());
    if (p.parent_path().filename() == "clusters") {  // device-cluster presets (device_cluster.h)
      auto cluster = load_device_cluster(p.string());
      EXPECT_TRUE(cluster.is_ok()) << cluster.status().message();
    } else if (p.parent_path().filename() == "profiles") {  // model profiles (omnilearn calibrate / validate wrote them)
      auto profile = load_model_profile(p.string());
      EXPECT_TRUE(profile.is_ok()) << profile.status().message();
    } else if (auto hybrid = read_scenario_kind(p.string()); hybrid && *hybrid == ScenarioKind::kHybrid) {
      auto s = load_hybrid_scenario(p.string());
      EXPECT_TRUE(s.is_ok()) << s.status().message();
      ++hybrid_scenarios;
    } else if (hybrid && *hybrid == ScenarioKind::kHybridTestbed) {
      ++testbed_specs;  // read by omnilearn emulate (cli/pipeline_testbed_command.cpp); here only its kind
    } else if (auto kind = read_scenario_kind(p.string()); kind && *kind == ScenarioKind::kJobs) {
      auto s = load_jobs_scenario(p.string());
      EXPECT_TRUE(s.is_ok()) << s.status().message();
      ++jobs_scenarios;
    } else if (p.filename().string().starts_with("sweep")) {
      auto s = load_sweep(p.string());
      ASSERT_TRUE(s.is_ok()) << s.status().message();
      for (const SweepPoint& point : expand(*s)) {
        const Status checked = check_point(*s, point);
        EXPECT_TRUE(checked.is_ok()) << checked.message();
      }
      ++sweeps;
    } else {
      auto s = load_scenario(p.string());
      EXPECT_TRUE(s.is_ok()) << s.status().message();
      ++scenarios;
    }
  }
  EXPECT_GE(scenarios, 11);
  EXPECT_GE(sweeps, 2);
  EXPECT_GE(jobs_scenarios, 2);
  EXPECT_GE(hybrid_scenarios, 3);
  EXPECT_GE(testbed_specs, 3);
}

TEST(ShippedFiles, BspLevelsSplitTheHost) {
  struct Level {
    const char* file;
    std::vector<int> cores;
  };
  const Level levels[] = {{"paper/bsp-hl1.yaml", {12, 12, 12, 12}}, {"paper/bsp-hl2.yaml", {12, 12, 8, 16}},
                          {"paper/bsp-hl4.yaml", {9, 8, 6, 25}},     {"paper/bsp-hl8.yaml", {6, 6, 4, 32}},
                          {"paper/asp-hl1.yaml", {10, 10, 10, 10}},  {"paper/asp-hl2.yaml", {8, 8, 8, 16}},
                          {"paper/asp-hl4.yaml", {10, 10, 4, 16}},   {"paper/asp-hl8.yaml", {4, 4, 4, 28}}};
  for (const Level& level : levels) {
    SCOPED_TRACE(level.file);
    const Scenario s = load(level.file);
    ASSERT_EQ(s.worker_count(), 4u);
    for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(s.cluster.workers[k].cores, level.cores[k]);
    EXPECT_EQ(s.workload.model.name, "resnet18");
    EXPECT_EQ(s.workload.dataset, "cifar10");
    EXPECT_EQ(s.workload.global_batch, 128);
    EXPECT_EQ(s.workload.epochs, 10);
    EXPECT_EQ(s.policy.min_batch, 16);
    EXPECT_EQ(s.policy.max_batch, 96);
    // An HL1-sized worker (12 cores) runs 32 samples in a realistic 0.5-1 s.
    const double per_core = s.cluster.workers[0].speed_flops / s.cluster.workers[0].cores;
    const double hl1_iteration_s =
        (32 * s.workload.model.flops_per_sample + s.workload.model.flops_per_iteration) / (12 * per_core);
    EXPECT_GT(hl1_iteration_s, 0.5);
    EXPECT_LT(hl1_iteration_s, 1.0);
    if (std::string(level.file).starts_with("paper/asp")) {
      EXPECT_EQ(s.mode, controller::TrainingMode::kAsp);
      EXPECT_EQ(s.cluster.parameter_server.cores, 8);
      EXPECT_EQ(s.policy.name, "omnilearn-asp");
    }
  }
}

TEST(ShippedFiles, DynamicScheduleFollowsTheLevels) {
  const Scenario s = load("paper/bsp-dynamic.yaml");
  EXPECT_EQ(s.workload.epochs, 45);
  ASSERT_EQ(s.availability.kind, AvailabilitySpec::Kind::kSchedule);
  EXPECT_EQ(s.availability.unit, ScheduleUnit::kEpochs);
  ASSERT_EQ(s.availability.phases.size(), 7u);
  const double starts[] = {0, 5, 10, 15, 25, 30, 35};
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(s.availability.phases[i].at, starts[i]);
  EXPECT_EQ(s.cluster.workers[3].cores, 32);
  EXPECT_DOUBLE_EQ(s.availability.phases[0].fractions[3], 12.0 / 32.0);
  EXPECT_DOUBLE_EQ(s.availability.phases[3].fractions[3], 1.0);
  EXPECT_DOUBLE_EQ(s.availability.phases[3].fractions[2], 4.0 / 12.0);
}

TEST(ShippedFiles, ThirtyTwoWorkers) {
  const Scenario s = load("paper/bsp-32workers-hl8.yaml");
  ASSERT_EQ(s.worker_count(), 32u);
  EXPECT_EQ(s.workload.global_batch, 1024);
  int total_cores = 0;
  for (const auto& n : s.cluster.workers) total_cores += n.cores;
  EXPECT_EQ(total_cores, 10 * 2 + 10 * 4 + 10 * 6 + 16 + 32);
  EXPECT_EQ(s.cluster.workers[31].cores, 32);
}

TEST(ShippedFiles, QuickExampleIsTiny) {
  const Scenario s = load("examples/quick.yaml");
  EXPECT_LE(s.workload.dataset_samples * s.workload.epochs / s.workload.global_batch, 16);
  EXPECT_EQ(s.availability.kind, AvailabilitySpec::Kind::kSchedule);
}

}  // namespace
}  // namespace omnilearn::scenarios
