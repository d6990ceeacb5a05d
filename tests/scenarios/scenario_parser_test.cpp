#include "omnilearn/scenarios/scenario_parser.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "omnilearn/scenarios/scenario_json.h"
#include "temp_dir.h"

namespace omnilearn::scenarios {
namespace {

using testing::TempDir;

constexpr const char* kTwoWorkers =
    "cluster:\n"
    "  nodes:\n"
    "    - {name: a, cores: 4, core_speed: 1e9, bandwidth: 10Gbps, latency: 50us}\n"
    "    - {name: b, cores: 8, speed: 4e9}\n"
    "workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 2}\n"
    "policy: {name: omnilearn, min_batch: 8, max_batch: 56}\n";

TEST(ScenarioParser, ReadsValuesAndDefaults) {
  auto r = parse_scenario(kTwoWorkers, "some/dir/two.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Scenario& s = *r;
  EXPECT_EQ(s.name, "two");
  EXPECT_EQ(s.source_path, "some/dir/two.yaml");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.mode, controller::TrainingMode::kBsp);
  ASSERT_EQ(s.worker_count(), 2u);
  EXPECT_EQ(s.cluster.workers[0].name, "a");
  EXPECT_DOUBLE_EQ(s.cluster.workers[0].speed_flops, 4e9);
  EXPECT_DOUBLE_EQ(s.cluster.workers[0].bandwidth_Bps, 1.25e9);
  EXPECT_DOUBLE_EQ(s.cluster.workers[0].latency_s, 50e-6);
  EXPECT_DOUBLE_EQ(s.cluster.workers[1].speed_flops, 4e9);
  EXPECT_EQ(s.cluster.workers[1].cores, 8);
  EXPECT_EQ(s.cluster.parameter_server.name, "ps");
  EXPECT_EQ(s.cluster.topology, Topology::kStar);
  EXPECT_EQ(s.workload.model.name, "resnet18");
  EXPECT_EQ(s.workload.dataset_samples, 50000);
  EXPECT_EQ(s.workload.global_batch, 64);
  EXPECT_EQ(s.workload.epochs, 2);
  EXPECT_EQ(s.policy.name, "omnilearn");
  EXPECT_EQ(s.policy.min_batch, 8);
  EXPECT_EQ(s.policy.max_batch, 56);
  EXPECT_EQ(s.availability.kind, AvailabilitySpec::Kind::kNone);
  EXPECT_EQ(s.outputs.dir, "runs");
  EXPECT_TRUE(s.outputs.timeline);
}

TEST(ScenarioParser, ControllerOptionsCarryBoundsCapacityAndTrigger) {
  auto r = parse_scenario(std::string(kTwoWorkers) + "mode: asp\n",
                          "two.yaml", {"policy.decide=imbalance", "policy.imbalance_threshold=0.1",
                                       "policy.dead_band=0.02", "policy.ewma_alpha=0.5", "policy.memory_guard=false",
                                       "policy.every_n=4", "policy.fit_window=5"});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const controller::ControllerOptions o = r->controller_options();
  EXPECT_EQ(o.mode, controller::TrainingMode::kAsp);
  EXPECT_EQ(o.global_batch, 64);
  ASSERT_EQ(o.workers.size(), 2u);
  EXPECT_EQ(o.workers[1].lo, 8);
  EXPECT_EQ(o.workers[1].hi, 56);
  EXPECT_DOUBLE_EQ(o.workers[0].nominal_capacity, 4e9);
  EXPECT_EQ(o.trigger, controller::DecisionTrigger::kImbalance);
  EXPECT_DOUBLE_EQ(o.imbalance_threshold, 0.1);
  EXPECT_DOUBLE_EQ(o.dead_band, 0.02);
  EXPECT_DOUBLE_EQ(o.ewma_alpha, 0.5);
  EXPECT_FALSE(o.memory_guard);
  EXPECT_EQ(o.every_n, 4);
  EXPECT_EQ(o.history_length, 5u);
  EXPECT_TRUE(o.validate().is_ok());
  // In ASP, "omnilearn" is the ASP form of the law.
  EXPECT_EQ(r->policy.name, "omnilearn-asp");
}

TEST(ScenarioParser, OverridesChangeAnything) {
  auto r = parse_scenario(kTwoWorkers, "two.yaml",
                          {"policy.name=uniform", "cluster.nodes[1].cores=16", "seed=42", "name=renamed",
                           "availability.schedule.phases=[{at: 0, fractions: [1, 1]}, {at: 1, cores: [2, 4]}]",
                           "workload.model={name: tiny, parameters: 1000, flops_per_sample: 1e6}"});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->policy.name, "uniform");
  EXPECT_EQ(r->cluster.workers[1].cores, 16);
  EXPECT_DOUBLE_EQ(r->cluster.workers[1].speed_flops, 4e9);  // `speed` is the whole node's
  EXPECT_EQ(r->seed, 42u);
  EXPECT_EQ(r->name, "renamed");
  ASSERT_EQ(r->availability.kind, AvailabilitySpec::Kind::kSchedule);
  EXPECT_EQ(r->availability.unit, ScheduleUnit::kEpochs);
  ASSERT_EQ(r->availability.phases.size(), 2u);
  EXPECT_DOUBLE_EQ(r->availability.phases[1].fractions[0], 0.5);
  EXPECT_DOUBLE_EQ(r->availability.phases[1].fractions[1], 0.25);
  EXPECT_EQ(r->workload.model.name, "tiny");
  EXPECT_DOUBLE_EQ(r->workload.model.gradient_bytes, 4000);
  EXPECT_DOUBLE_EQ(r->workload.model.flops_per_iteration, 0);

  // Later overrides win; `~` removes a key.
  auto removed = parse_scenario(std::string(kTwoWorkers) + "availability: {generator: {kind: markov}}\n", "two.yaml",
                                {"policy.name=affine", "policy.name=static", "availability=~"});
  ASSERT_TRUE(removed.is_ok()) << removed.status().message();
  EXPECT_EQ(removed->policy.name, "static");
  EXPECT_EQ(removed->availability.kind, AvailabilitySpec::Kind::kNone);
}

TEST(ScenarioParser, PresetClusterAndUnits) {
  auto r = parse_scenario(
      "cluster: {preset: cloud, workers: 4, backbone: {bandwidth: 40Gbps, latency: 2us},"
      " parameter_server: {cores: 32, core_speed: 2e10}}\n"
      "workload: {model: vgg11, dataset: food101, global_batch: 64, sample_budget: 100000}\n"
      "policy: {name: affine, decide: every-epoch}\n"
      "availability:\n"
      "  generator: {kind: diurnal, period: 1h, amplitude: 0.5, duration: 2h, low: 0.1}\n"
      "outputs: {dir: out, timeline: no}\n"
      "max_iterations: 1000\n",
      "p.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->cluster.preset, "cloud");
  ASSERT_EQ(r->worker_count(), 4u);
  EXPECT_EQ(r->cluster.workers[3].cores, 16);
  EXPECT_DOUBLE_EQ(r->cluster.backbone_bandwidth_Bps, 5e9);
  EXPECT_DOUBLE_EQ(r->cluster.backbone_latency_s, 2e-6);
  EXPECT_EQ(r->cluster.parameter_server.cores, 32);
  EXPECT_DOUBLE_EQ(r->cluster.parameter_server.speed_flops, 6.4e11);
  EXPECT_EQ(r->workload.dataset_samples, 75750);
  EXPECT_NEAR(r->workload.model.flops_per_sample, 3 * 7.6e9, 1e3);  // 224 px profile for food101
  EXPECT_EQ(r->workload.sample_budget, 100000);
  EXPECT_EQ(r->workload.epochs, 2);
  EXPECT_EQ(r->policy.trigger, controller::DecisionTrigger::kEveryEpoch);
  EXPECT_EQ(r->availability.kind, AvailabilitySpec::Kind::kGenerator);
  EXPECT_EQ(r->availability.generator.kind, GeneratorKind::kDiurnal);
  EXPECT_DOUBLE_EQ(r->availability.generator.period_s, 3600);
  EXPECT_DOUBLE_EQ(r->availability.generator.duration_s, 7200);
  EXPECT_DOUBLE_EQ(r->availability.generator.low, 0.1);
  EXPECT_EQ(r->outputs.dir, "out");
  EXPECT_FALSE(r->outputs.timeline);
  EXPECT_EQ(r->max_iterations, 1000);
}

TEST(ScenarioParser, NodeCountsExpandInOrder) {
  auto r = parse_scenario(
      "cluster:\n  nodes:\n    - {name: big, cores: 8, core_speed: 1e9}\n"
      "    - {name: s, count: 3, cores: 2, core_speed: 1e9}\n    - {cores: 1, speed: 5e8}\n"
      "workload: {model: alexnet, dataset: custom, dataset_samples: 1000, global_batch: 80, epochs: 1}\n",
      "c.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->worker_count(), 5u);
  EXPECT_EQ(r->cluster.workers[0].name, "big");
  EXPECT_EQ(r->cluster.workers[1].name, "s0");
  EXPECT_EQ(r->cluster.workers[3].name, "s2");
  EXPECT_EQ(r->cluster.workers[4].name, "w4");
  EXPECT_EQ(r->workload.dataset, "custom");
  EXPECT_EQ(r->workload.dataset_samples, 1000);
  EXPECT_EQ(r->policy.name, "uniform");
}

TEST(ScenarioParser, ResolvesTraceAndProfilePathsAgainstTheScenarioFolder) {
  TempDir tmp;
  tmp.write("traces/t.csv", "time_s,worker,fraction\n0,a,1\n");
  tmp.write("noise.csv", "time_s,worker,fraction\n0,a,1\n");
  tmp.write("profiles/calibrated.yaml",
            "name: resnet18-measured\nparameters: 11.7e6\nflops_per_sample: 1.7e9\nflops_per_iteration: 1e8\n"
            "measured_fixed_s: 0.01\nmeasured_per_sample_s: 0.02\n");
  const std::string path = tmp.write(
      "scen/s.yaml",
      "cluster: {preset: edge, workers: 2}\n"
      "workload: {model: ../profiles/calibrated.yaml, dataset: cifar10, global_batch: 32, epochs: 1}\n"
      "availability:\n"
      "  trace: {path: ../traces/t.csv, nodes: [a, b], time_scale: 0.01, window: [1h, 2h]}\n"
      "  noise: {path: ../noise.csv}\n");
  auto r = load_scenario(path);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->availability.kind, AvailabilitySpec::Kind::kTrace);
  EXPECT_EQ(r->availability.trace.path, (tmp.path() / "traces/t.csv").string());
  EXPECT_EQ(r->availability.trace.nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(r->availability.trace.time_scale, 0.01);
  EXPECT_DOUBLE_EQ(r->availability.trace.window_start_s, 3600);
  EXPECT_DOUBLE_EQ(r->availability.trace.window_end_s, 7200);
  ASSERT_TRUE(r->availability.noise.has_value());
  EXPECT_EQ(r->availability.noise->path, (tmp.path() / "noise.csv").string());
  EXPECT_EQ(r->workload.model.name, "resnet18-measured");
  EXPECT_DOUBLE_EQ(r->workload.model.flops_per_iteration, 1e8);
  ASSERT_TRUE(r->workload.model.measured_fixed_s.has_value());
  EXPECT_DOUBLE_EQ(*r->workload.model.measured_per_sample_s, 0.02);
}

TEST(ScenarioParser, ProfileCarriesTheCpuTestbedTerms) {
  TempDir tmp;
  tmp.write("profile.yaml",
            "name: lenet-calibrated\nparameters: 22310\nflops_per_sample: 1e6\nmeasured_fixed_s: 0.001\n"
            "measured_per_sample_s: 0.0002\nhost_core_flops: 1.92e11\n"
            "cpu_slowdown: {share: [0.25, 0.5, 1.0], slowdown: [4.9, 2.4, 1.0]}\n"
            "allreduce_fixed_s: 0.002\nquota_period_s: 0.01\nquota_holds_comm: false\nhost_cpu_available: 1.2\n"
            "compute_noise: {share: [0.125, 0.5], std_s: [0.012, 0.004]}\ncompute_jitter_shared: 0.1\n");
  const std::string path = tmp.write(
      "s.yaml", "cluster: {preset: edge, workers: 2}\nworkload: {model: profile.yaml, global_batch: 32, epochs: 1}\n");
  auto r = load_scenario(path);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ModelProfile& m = r->workload.model;
  ASSERT_TRUE(m.host_core_flops.has_value());
  EXPECT_DOUBLE_EQ(*m.host_core_flops, 1.92e11);
  EXPECT_EQ(m.slowdown_shares, (std::vector<double>{0.25, 0.5, 1.0}));
  EXPECT_EQ(m.slowdown_factors, (std::vector<double>{4.9, 2.4, 1.0}));
  EXPECT_DOUBLE_EQ(m.allreduce_fixed_s, 0.002);
  EXPECT_DOUBLE_EQ(m.quota_period_s, 0.01);
  EXPECT_FALSE(m.quota_holds_comm);
  ASSERT_TRUE(m.host_cpu_available.has_value());
  EXPECT_DOUBLE_EQ(*m.host_cpu_available, 1.2);
  EXPECT_EQ(m.noise_shares, (std::vector<double>{0.125, 0.5}));
  EXPECT_EQ(m.noise_std_s, (std::vector<double>{0.012, 0.004}));
  const auto j = nlohmann::json::parse(scenario_to_json(*r));
  EXPECT_EQ(j["workload"]["model"]["cpu_slowdown"]["slowdown"][1], 2.4);
  EXPECT_EQ(j["workload"]["model"]["host_core_flops"], 1.92e11);
  EXPECT_EQ(j["workload"]["model"]["quota_holds_comm"], false);
  EXPECT_EQ(j["workload"]["model"]["compute_noise"]["std_s"][0], 0.012);
  EXPECT_EQ(j["workload"]["model"]["compute_jitter_shared"], 0.1);
}

TEST(ScenarioParser, CpuSlowdownTableErrorsNameTheField) {
  const struct {
    const char* table;
    const char* expected;
  } cases[] = {
      {"{share: [0.5, 0.25], slowdown: [2, 4]}", "cpu_slowdown.share: expected strictly ascending shares"},
      {"{share: [0.5], slowdown: [2, 4]}", "cpu_slowdown.slowdown: expected as many values"},
      {"{share: [1.5], slowdown: [1]}", "cpu_slowdown.share"},
      {"{share: [0.5]}", "cpu_slowdown.slowdown: missing"},
      {"{share: [0.5], slowdown: [2]}, compute_noise: {share: [0.5], std_s: [0.01]}",
       "compute_noise: needs host_core_flops"},
  };
  for (const auto& c : cases) {
    auto r = parse_scenario(std::string("cluster: {preset: edge, workers: 1}\n"
                                        "workload: {global_batch: 32, epochs: 1, model: {parameters: 10, "
                                        "flops_per_sample: 1e6, cpu_slowdown: ") +
                                c.table + "}}\n",
                            "s.yaml");
    ASSERT_FALSE(r.is_ok()) << c.table;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status().message();
  }
  auto no_law = parse_scenario(
      "cluster: {preset: edge, workers: 1}\n"
      "workload: {global_batch: 32, epochs: 1, model: {parameters: 10, flops_per_sample: 1e6, host_core_flops: 1e9}}\n",
      "s.yaml");
  ASSERT_FALSE(no_law.is_ok());
  auto descending = parse_scenario(
      "cluster: {preset: edge, workers: 1}\n"
      "workload: {global_batch: 32, epochs: 1, model: {parameters: 10, flops_per_sample: 1e6, measured_fixed_s: 0.001, "
      "measured_per_sample_s: 0.0001, host_core_flops: 1e9, compute_noise: {share: [0.5, 0.25], std_s: [1, 2]}}}\n",
      "s.yaml");
  ASSERT_FALSE(descending.is_ok());
  EXPECT_NE(descending.status().message().find("compute_noise.share: expected strictly ascending"), std::string::npos)
      << descending.status().message();
  EXPECT_NE(no_law.status().message().find("host_core_flops: needs the measured law"), std::string::npos)
      << no_law.status().message();
}

TEST(ScenarioParser, ProfileFileErrorsNameThatFile) {
  TempDir tmp;
  const std::string profile = tmp.write("p.json", "{\"parameters\": 10,\n \"flops_per_sample\": -1}\n");
  const std::string path = tmp.write(
      "s.yaml", "cluster: {preset: hpc, workers: 1}\nworkload: {model: p.json, global_batch: 32, epochs: 1}\n");
  auto r = load_scenario(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find(profile + ":2: flops_per_sample: expected a positive number"),
            std::string::npos)
      << r.status().message();
}

TEST(ScenarioJson, IsValidJsonWithTheResolvedValues) {
  auto r = parse_scenario(std::string(kTwoWorkers) +
                              "availability: {schedule: {unit: seconds, phases: [{at: 0, cores: [4, 4]}, "
                              "{at: 10s, fractions: [0.5, 1]}]}}\n",
                          "two.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const std::string text = scenario_to_json(*r);
  EXPECT_EQ(text, scenario_to_json(*r));
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["name"], "two");
  EXPECT_EQ(j["mode"], "bsp");
  EXPECT_EQ(j["cluster"]["workers"].size(), 2u);
  EXPECT_EQ(j["cluster"]["workers"][1]["speed_flops"], 4e9);
  EXPECT_EQ(j["policy"]["name"], "omnilearn");
  EXPECT_EQ(j["availability"]["kind"], "schedule");
  EXPECT_EQ(j["availability"]["unit"], "seconds");
  EXPECT_EQ(j["availability"]["phases"][0]["fractions"][1], 0.5);
  EXPECT_EQ(j["availability"]["phases"][1]["at"], 10.0);
  EXPECT_FALSE(j["workload"]["model"].contains("measured_fixed_s"));
}

TEST(ScenarioParser, EmulatorSectionForTheTestbed) {
  auto defaults = parse_scenario(kTwoWorkers, "two.yaml");
  ASSERT_TRUE(defaults.is_ok()) << defaults.status().message();
  EXPECT_EQ(defaults->emulator.network, Network::kFromModel);
  EXPECT_DOUBLE_EQ(defaults->emulator.cpu_budget, 1.5);
  EXPECT_DOUBLE_EQ(defaults->emulator.target_accuracy, 0.85);
  EXPECT_EQ(defaults->emulator.throttle, QuotaScope::kCompute);
  EXPECT_EQ(defaults->emulator.device, Device::kCpu);

  auto r = parse_scenario(std::string(kTwoWorkers) +
                              "emulator: {network: resnet, cpu_budget: 1.0, target_accuracy: 0.8, eval_every: 50, "
                              "throttle: process, warmup_updates: 300}\n",
                          "two.yaml", {"emulator.time_budget_s=120", "emulator.device=cuda", "emulator.lr_scaling=true"});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->emulator.network, Network::kResNet);
  EXPECT_DOUBLE_EQ(r->emulator.cpu_budget, 1.0);
  EXPECT_DOUBLE_EQ(r->emulator.target_accuracy, 0.8);
  EXPECT_EQ(r->emulator.eval_every, 50);
  EXPECT_DOUBLE_EQ(r->emulator.time_budget_s, 120.0);
  EXPECT_EQ(r->emulator.throttle, QuotaScope::kProcess);
  EXPECT_EQ(r->emulator.warmup_updates, 300);
  EXPECT_EQ(r->emulator.device, Device::kCuda);
  EXPECT_TRUE(r->emulator.lr_scaling);
  EXPECT_EQ(defaults->emulator.warmup_updates, 0);
  auto bad_throttle = parse_scenario(std::string(kTwoWorkers) + "emulator: {throttle: threads}\n", "two.yaml");
  ASSERT_FALSE(bad_throttle.is_ok());
  EXPECT_NE(bad_throttle.status().message().find("emulator.throttle"), std::string::npos)
      << bad_throttle.status().message();
  EXPECT_NE(bad_throttle.status().message().find("compute | process"), std::string::npos) << bad_throttle.status().message();

  auto bad = parse_scenario(std::string(kTwoWorkers) + "emulator: {network: vgg}\n", "two.yaml");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("emulator.network"), std::string::npos) << bad.status().message();
  auto unknown = parse_scenario(std::string(kTwoWorkers) + "emulator: {gpus: 2}\n", "two.yaml");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("gpus"), std::string::npos) << unknown.status().message();
}

TEST(ScenarioParser, UsersModelAndDataSettings) {
  auto r = parse_scenario(std::string(kTwoWorkers) +
                              "emulator: {model_file: m.pt, input_shape: [3, 32, 32], loss: nll, train_data: a.pt, "
                              "test_data: b.pt}\n",
                          "two.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->emulator.model_file, "m.pt");
  EXPECT_EQ(r->emulator.input_shape, (std::vector<std::int64_t>{3, 32, 32}));
  EXPECT_EQ(r->emulator.loss, Loss::kNll);
  const std::pair<const char*, const char*> bad[] = {
      {"emulator: {train_data: a.pt}\n", "train_data and test_data go together"},
      {"emulator: {network: lenet, model_file: m.pt}\n", "emulator.model_file"},
      {"emulator: {network: torchscript}\n", "needs emulator.model_file"},
      {"emulator: {input_shape: [1, 2.5]}\n", "emulator.input_shape"},
      {"emulator: {input_shape: []}\n", "emulator.input_shape"},
      {"emulator: {loss: hinge}\n", "emulator.loss"}};
  for (const auto& [yaml, expected] : bad) {
    auto e = parse_scenario(std::string(kTwoWorkers) + yaml, "two.yaml");
    ASSERT_FALSE(e.is_ok()) << yaml;
    EXPECT_NE(e.status().message().find(expected), std::string::npos) << e.status().message();
  }
}

}  // namespace
}  // namespace omnilearn::scenarios
