// Bad scenario inputs, one row each: every error must name the file and line (or the override) and the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bad_case.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::scenarios {
namespace {

// Line numbers of kGood: 1 cluster, 2 nodes, 3 node a, 4 node b, 5 workload, 6 model, 7 dataset, 8 global_batch,
// 9 epochs, 10 policy, 11 name, 12 min_batch, 13 max_batch.
constexpr const char* kGood =
    "cluster:\n"
    "  nodes:\n"
    "    - {name: a, cores: 4, core_speed: 1e9, bandwidth: 10Gbps, latency: 50us}\n"
    "    - {name: b, cores: 4, speed: 4e9}\n"
    "workload:\n"
    "  model: resnet18\n"
    "  dataset: cifar10\n"
    "  global_batch: 64\n"
    "  epochs: 1\n"
    "policy:\n"
    "  name: omnilearn\n"
    "  min_batch: 8\n"
    "  max_batch: 56\n";

using testing::BadCase;
std::string replace(const std::string& text, const std::string& from, const std::string& to) {
  return testing::replace_once(text, from, to);
}

std::vector<BadCase> bad_cases() {
  const std::string g = kGood;
  return {
      {"malformed YAML", "cluster: [1, 2\nworkload: {}\n", {}, {"dir/x.yaml:", "malformed YAML"}},
      {"not a mapping", "- a\n- b\n", {}, {"dir/x.yaml:1:", "expected a mapping"}},
      {"wrong type", replace(g, "global_batch: 64", "global_batch: lots"), {},
       {"dir/x.yaml:8: workload.global_batch: expected a positive integer, got \"lots\""}},
      {"fractional integer", replace(g, "global_batch: 64", "global_batch: 64.5"), {},
       {"dir/x.yaml:8: workload.global_batch: expected a positive integer"}},
      {"unknown top-level key", g + "colour: red\n", {}, {"dir/x.yaml:14: colour: unknown key (expected one of:"}},
      {"unknown nested key", replace(g, "  min_batch: 8", "  min_bacth: 8"), {},
       {"dir/x.yaml:12: policy.min_bacth: unknown key", "min_batch"}},
      {"unknown node key", replace(g, "speed: 4e9}", "speed: 4e9, ram: 8}"), {},
       {"dir/x.yaml:4: cluster.nodes[1].ram: unknown key"}},
      {"unknown policy", replace(g, "name: omnilearn", "name: fastest"), {},
       {"dir/x.yaml:11: policy.name: unknown policy 'fastest' (expected one of: affine,", "uniform"}},
      {"negative speed", replace(g, "speed: 4e9", "speed: -3"), {},
       {"dir/x.yaml:4: cluster.nodes[1].speed: expected a positive number, got \"-3\""}},
      {"speed missing", replace(g, ", speed: 4e9", ""), {},
       {"dir/x.yaml:4: cluster.nodes[1]: expected one of speed, core_speed"}},
      {"speed twice", replace(g, "speed: 4e9", "speed: 4e9, core_speed: 1e9"), {},
       {"dir/x.yaml:4: cluster.nodes[1].core_speed: give only one of speed, core_speed"}},
      {"bad bandwidth", replace(g, "10Gbps", "10Gbs"), {},
       {"dir/x.yaml:3: cluster.nodes[0].bandwidth: expected a positive bandwidth", "got \"10Gbs\""}},
      {"bad latency", replace(g, "50us", "50 parsecs"), {}, {"dir/x.yaml:3: cluster.nodes[0].latency: expected a duration"}},
      {"duplicate names", replace(g, "name: b", "name: a"), {}, {"cluster.nodes: worker name 'a' is used twice"}},
      {"preset and nodes", replace(g, "cluster:\n", "cluster:\n  preset: cloud\n"), {},
       {"dir/x.yaml:3: cluster.nodes: give only one of preset, nodes"}},
      {"preset without workers", replace(g, "cluster:\n  nodes:\n    - {name: a, cores: 4, core_speed: 1e9, bandwidth: "
                                            "10Gbps, latency: 50us}\n    - {name: b, cores: 4, speed: 4e9}\n",
                                         "cluster:\n  preset: cloud\n"),
       {}, {"dir/x.yaml:2: cluster.workers: expected a positive integer"}},
      {"unknown preset", replace(g, "cluster:\n  nodes:\n    - {name: a, cores: 4, core_speed: 1e9, bandwidth: "
                                    "10Gbps, latency: 50us}\n    - {name: b, cores: 4, speed: 4e9}\n",
                                 "cluster:\n  preset: mainframe\n  workers: 2\n"),
       {}, {"dir/x.yaml:2: cluster.preset: unknown cluster preset 'mainframe'"}},
      {"unknown model", replace(g, "model: resnet18", "model: bert"), {},
       {"dir/x.yaml:6: workload.model: unknown model 'bert' (expected one of: resnet18"}},
      {"missing model file", replace(g, "model: resnet18", "model: profiles/none.yaml"), {},
       {"dir/x.yaml:6: workload.model: model profile file 'dir/profiles/none.yaml' not found"}},
      {"unknown dataset", replace(g, "dataset: cifar10", "dataset: imagenet"), {},
       {"dir/x.yaml:7: workload.dataset: unknown dataset 'imagenet'", "dataset_samples"}},
      {"epochs and budget", replace(g, "epochs: 1", "epochs: 1\n  sample_budget: 1000"), {},
       {"dir/x.yaml:10: workload.sample_budget: give only one of epochs, sample_budget"}},
      {"bounds cannot hold B", replace(g, "global_batch: 64", "global_batch: 200"), {},
       {"dir/x.yaml:8: workload.global_batch: expected between 16 and 112", "got 200"}},
      {"min above max", replace(g, "max_batch: 56", "max_batch: 4"), {},
       {"dir/x.yaml:13: policy.max_batch: expected min_batch <= max_batch"}},
      {"asp law in bsp", replace(g, "name: omnilearn", "name: omnilearn-asp"), {},
       {"dir/x.yaml:11: policy.name:", "in bsp mode use 'omnilearn'"}},
      {"ewma out of range", g + "  ewma_alpha: 0\n", {}, {"dir/x.yaml:14: policy.ewma_alpha: expected a number in (0, 1]"}},
      {"bad mode", g + "mode: sync\n", {}, {"dir/x.yaml:14: mode: expected one of bsp | asp, got \"sync\""}},
      {"missing workload", "cluster: {preset: cloud, workers: 2}\n", {}, {"dir/x.yaml:1: workload: missing"}},
      {"missing trace file", g + "availability:\n  trace: {path: traces/none.csv}\n", {},
       {"dir/x.yaml:15: availability.trace.path: trace file 'dir/traces/none.csv' not found"}},
      {"two availability kinds",
       g + "availability:\n  schedule: {phases: [{at: 0, fractions: [1, 1]}]}\n  generator: {kind: markov}\n", {},
       {"dir/x.yaml:16: availability.generator: give only one of schedule, trace, generator"}},
      {"cores above nominal", g + "availability:\n  schedule:\n    phases:\n      - {at: 0, cores: [4, 6]}\n", {},
       {"dir/x.yaml:17: availability.schedule.phases[0].cores[1]: worker b has 4 nominal cores, got 6"}},
      {"fractions count", g + "availability:\n  schedule:\n    phases:\n      - {at: 0, fractions: [1]}\n", {},
       {"dir/x.yaml:17: availability.schedule.phases[0].fractions: expected 2 values (one per worker), got 1"}},
      {"fraction above one", g + "availability:\n  schedule:\n    phases:\n      - {at: 0, fractions: [1, 1.5]}\n", {},
       {"dir/x.yaml:17: availability.schedule.phases[0].fractions[1]: expected a number in [0, 1], got \"1.5\""}},
      {"first phase not at 0", g + "availability:\n  schedule:\n    phases:\n      - {at: 2, fractions: [1, 1]}\n", {},
       {"dir/x.yaml:17: availability.schedule.phases[0].at: expected 0"}},
      {"phases out of order",
       g + "availability:\n  schedule:\n    phases:\n      - {at: 0, fractions: [1, 1]}\n      - {at: 0, fractions: [1, 1]}\n",
       {}, {"dir/x.yaml:18: availability.schedule.phases[1].at: expected a start after the previous phase's 0"}},
      {"unknown generator", g + "availability:\n  generator: {kind: chaos}\n", {},
       {"dir/x.yaml:15: availability.generator.kind: expected one of markov | random-walk | diurnal"}},
      {"override of unknown key", g, {"policy.nme=3"},
       {"dir/x.yaml (--set policy.nme=3): policy.nme: unknown key"}},
      {"override of unknown section", g, {"cluster.gpu.count=3"},
       {"dir/x.yaml (--set cluster.gpu.count=3): cluster.gpu: unknown key"}},
      {"override with a bad value", g, {"workload.global_batch=big"},
       {"dir/x.yaml (--set workload.global_batch=big): workload.global_batch: expected a positive integer, got \"big\""}},
      {"override of an unknown policy", g, {"policy.name=fastest"},
       {"dir/x.yaml (--set policy.name=fastest): policy.name: unknown policy 'fastest'"}},
      {"override without =", g, {"policy.name"}, {"dir/x.yaml (--set policy.name): expected path.to.key=value"}},
      {"override of a bad path", g, {"policy..name=x"}, {"malformed key path 'policy..name'"}},
      {"override index out of range", g, {"cluster.nodes[5].cores=2"},
       {"(--set cluster.nodes[5].cores=2): cluster.nodes[5]: index out of range"}},
      {"override into a scalar", g, {"workload.model.name=x"}, {"workload.model: cannot set a key inside \"resnet18\""}},
      {"override removing nothing", g, {"availability=~"}, {"(--set availability=~): availability: nothing to remove"}},
      {"override with malformed value", g, {"policy.name=[a"}, {"(--set policy.name=[a): value is not valid YAML"}},
  };
}

TEST(ScenarioErrors, EachBadInputNamesFileLineAndField) {
  for (const BadCase& c : bad_cases()) testing::expect_refused(c, "dir/x.yaml");
}

TEST(ScenarioErrors, TheGoodBaseParses) {
  auto r = parse_scenario(kGood, "dir/x.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
}

TEST(ScenarioErrors, MissingFileIsNotFound) {
  auto r = load_scenario("/nonexistent/omnilearn/x.yaml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/omnilearn/x.yaml"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::scenarios
