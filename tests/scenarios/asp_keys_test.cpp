// workload.asp: the paper's algorithm (update, pull) and the server rules with their parameters, read from a scenario
// file; refusals name file, line and field; the resolved scenario's JSON carries them only when not the defaults.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "bad_case.h"
#include "omnilearn/scenarios/scenario_json.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::scenarios {
namespace {

// Line 6 is workload.asp.
constexpr const char* kAsp =
    "mode: asp\n"
    "cluster: {nodes: [{name: a, cores: 4, core_speed: 1e9}, {name: b, cores: 2, core_speed: 1e9}]}\n"
    "workload:\n"
    "  model: resnet18\n"
    "  global_batch: 64\n"
    "  asp: {}\n"
    "policy: {name: omnilearn, min_batch: 16, max_batch: 96}\n";

std::string with_asp(const std::string& asp) { return testing::replace_once(kAsp, "asp: {}", "asp: " + asp); }

TEST(AspKeys, DefaultsAreThePlainAsgdThatRanBefore) {
  auto absent = parse_scenario(testing::replace_once(kAsp, "  asp: {}\n", ""), "dir/x.yaml");
  ASSERT_TRUE(absent.is_ok()) << absent.status().message();
  const AspSpec& a = absent->workload.asp;
  EXPECT_TRUE(a.is_default());
  EXPECT_EQ(a.update, AspUpdate::kGradient);
  EXPECT_EQ(a.pull, AspPull::kEveryPush);
  EXPECT_EQ(a.rule, AspRule::kAsgd);
  EXPECT_TRUE(a.applies(1000000));
  EXPECT_EQ(nlohmann::json::parse(scenario_to_json(*absent))["workload"].count("asp"), 0u) << "the defaults leave the JSON as it was";
}

TEST(AspKeys, ThePapersAlgorithm) {
  auto r = parse_scenario(with_asp("{update: model-overwrite, pull: per-epoch}"), "dir/x.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->workload.asp.update, AspUpdate::kModelOverwrite);
  EXPECT_EQ(r->workload.asp.pull, AspPull::kPerEpoch);
  EXPECT_FALSE(r->workload.asp.is_default());
  const nlohmann::json json = nlohmann::json::parse(scenario_to_json(*r));
  EXPECT_EQ(json["workload"]["asp"]["update"], "model-overwrite") << json.dump();
  EXPECT_EQ(json["workload"]["asp"]["pull"], "per-epoch") << json.dump();
  EXPECT_EQ(json["workload"]["asp"]["rule"], "asgd") << json.dump();
  EXPECT_EQ(r->workload.asp.epochs, AspEpochs::kFloor);
  EXPECT_EQ(json["workload"]["asp"].count("epochs"), 0u) << "floor leaves the JSON as it was";
  auto ceil = parse_scenario(with_asp("{update: model-overwrite, pull: per-epoch, epochs: ceil}"), "dir/x.yaml");
  ASSERT_TRUE(ceil.is_ok()) << ceil.status().message();
  EXPECT_EQ(ceil->workload.asp.epochs, AspEpochs::kCeil);
  EXPECT_EQ(nlohmann::json::parse(scenario_to_json(*ceil))["workload"]["asp"]["epochs"], "ceil");
}

TEST(AspKeys, EachRuleWithItsParameter) {
  struct Row {
    std::string asp;
    AspRule rule;
  };
  for (const Row& row : std::vector<Row>{{"{rule: asgd}", AspRule::kAsgd},
                                         {"{rule: staleness-aware}", AspRule::kStalenessAware},
                                         {"{rule: dc-asgd, dc_lambda: 0.5}", AspRule::kDcAsgd},
                                         {"{rule: ssp, staleness_bound: 0}", AspRule::kSsp},
                                         {"{rule: ringmaster, delay_threshold: 3}", AspRule::kRingmaster},
                                         {"{rule: rescaled}", AspRule::kRescaled},
                                         {"{rule: staleness-bounded, delay_threshold: 4}", AspRule::kStalenessBounded}}) {
    auto r = parse_scenario(with_asp(row.asp), "dir/x.yaml");
    ASSERT_TRUE(r.is_ok()) << row.asp << ": " << r.status().message();
    EXPECT_EQ(r->workload.asp.rule, row.rule) << row.asp;
  }
  auto dc = parse_scenario(with_asp("{rule: dc-asgd}"), "dir/x.yaml");
  ASSERT_TRUE(dc.is_ok());
  EXPECT_EQ(dc->workload.asp.dc_lambda, 0.04);  // Zheng et al.'s λ0
  auto ring = parse_scenario(with_asp("{rule: ringmaster, delay_threshold: 3}"), "dir/x.yaml");
  ASSERT_TRUE(ring.is_ok());
  EXPECT_TRUE(ring->workload.asp.applies(3));
  EXPECT_FALSE(ring->workload.asp.applies(4));
  auto never = parse_scenario(with_asp("{rule: ringmaster, delay_threshold: inf}"), "dir/x.yaml");
  ASSERT_TRUE(never.is_ok()) << never.status().message();
  EXPECT_EQ(never->workload.asp.delay_threshold, kNoDelayThreshold);
  EXPECT_TRUE(never->workload.asp.applies(std::numeric_limits<std::int64_t>::max() - 1));
  // The testbed's config.json carries it through JSON, R = inf included.
  const AspSpec back = nlohmann::json::parse(nlohmann::json(never->workload.asp).dump()).get<AspSpec>();
  EXPECT_EQ(back.delay_threshold, kNoDelayThreshold);
  EXPECT_EQ(back.rule, AspRule::kRingmaster);
  // A sweep sets it by --set.
  auto set = parse_scenario(kAsp, "dir/x.yaml", {"workload.asp.rule=ssp", "workload.asp.staleness_bound=2"});
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  EXPECT_EQ(set->workload.asp.staleness_bound, 2);
}

TEST(AspKeys, RefusalsNameTheField) {
  const std::vector<testing::BadCase> cases = {
      {"unknown rule", with_asp("{rule: hogwild}"), {},
       {"dir/x.yaml:6: workload.asp.rule: expected one of asgd | staleness-aware | dc-asgd | ssp | ringmaster | rescaled | "
        "staleness-bounded"}},
      {"unknown update", with_asp("{update: average}"), {},
       {"dir/x.yaml:6: workload.asp.update: expected one of gradient | model-overwrite"}},
      {"unknown pull", with_asp("{pull: never}"), {}, {"dir/x.yaml:6: workload.asp.pull: expected one of every-push | per-epoch"}},
      {"unknown epochs", with_asp("{pull: per-epoch, epochs: round}"), {},
       {"dir/x.yaml:6: workload.asp.epochs: expected one of floor | ceil"}},
      {"epochs without per-epoch", with_asp("{epochs: ceil}"), {}, {"workload.asp.epochs: counts the epochs of pull"}},
      {"unknown key", with_asp("{rule: ssp, bound: 2}"), {}, {"dir/x.yaml:6: workload.asp.bound: unknown key"}},
      {"ssp without its bound", with_asp("{rule: ssp}"), {}, {"workload.asp.rule: ssp needs staleness_bound"}},
      {"ringmaster without R", with_asp("{rule: ringmaster}"), {}, {"workload.asp.rule: ringmaster needs delay_threshold"}},
      {"a parameter of another rule", with_asp("{rule: asgd, staleness_bound: 2}"), {},
       {"workload.asp.staleness_bound: only used by ssp"}},
      {"lambda without dc-asgd", with_asp("{rule: ssp, staleness_bound: 1, dc_lambda: 1}"), {},
       {"workload.asp.dc_lambda: only used by dc-asgd"}},
      {"negative bound", with_asp("{rule: ssp, staleness_bound: -1}"), {},
       {"workload.asp.staleness_bound: expected an integer >= 0"}},
      {"fractional R", with_asp("{rule: ringmaster, delay_threshold: 2.5}"), {},
       {"workload.asp.delay_threshold: expected an integer >= 0"}},
      {"negative lambda", with_asp("{rule: dc-asgd, dc_lambda: -0.1}"), {}, {"workload.asp.dc_lambda: expected a number >= 0"}},
      {"a rule with model-overwrite", with_asp("{update: model-overwrite, rule: staleness-aware}"), {},
       {"workload.asp.rule: a rule applies pushed gradients"}},
      {"staleness-bounded without R", with_asp("{rule: staleness-bounded}"), {},
       {"workload.asp.rule: staleness-bounded needs delay_threshold"}},
      {"staleness-bounded with R = 0", with_asp("{rule: staleness-bounded, delay_threshold: 0}"), {},
       {"workload.asp.delay_threshold: expected a positive integer"}},
      {"staleness-bounded with R = inf", with_asp("{rule: staleness-bounded, delay_threshold: inf}"), {},
       {"workload.asp.delay_threshold: expected a positive integer"}},
      {"the policy without its rule",
       testing::replace_once(kAsp, "name: omnilearn", "name: staleness-bounded"), {},
       {"policy: staleness-bounded takes its bound from workload.asp"}},
      {"the rule with lr_scaling", with_asp("{rule: staleness-bounded, delay_threshold: 4}") + "emulator: {lr_scaling: true}\n",
       {}, {"emulator: lr_scaling: the staleness-bounded rule already scales"}},
      {"R with ssp", with_asp("{rule: ssp, staleness_bound: 1, delay_threshold: 4}"),
       {}, {"workload.asp.delay_threshold: only used by ringmaster"}},
      {"asp keys in bsp", testing::replace_once(with_asp("{rule: rescaled}"), "mode: asp", "mode: bsp"), {},
       {"dir/x.yaml:6: workload.asp: only used in asp mode"}},
  };
  for (const testing::BadCase& c : cases) testing::expect_refused(c, "dir/x.yaml");
}

// workload.partition: iid (the default, absent from the JSON) or sorted-shards with its shards per worker.
TEST(AspKeys, DataPartition) {
  auto absent = parse_scenario(kAsp, "dir/x.yaml");
  ASSERT_TRUE(absent.is_ok()) << absent.status().message();
  EXPECT_EQ(absent->workload.partition.kind, PartitionKind::kIid);
  EXPECT_EQ(nlohmann::json::parse(scenario_to_json(*absent))["workload"].count("partition"), 0u);
  auto scalar = parse_scenario(kAsp, "dir/x.yaml", {"workload.partition=sorted-shards"});
  ASSERT_TRUE(scalar.is_ok()) << scalar.status().message();
  EXPECT_EQ(scalar->workload.partition.kind, PartitionKind::kSortedShards);
  EXPECT_EQ(scalar->workload.partition.shards_per_worker, 1);
  auto map = parse_scenario(kAsp, "dir/x.yaml", {"workload.partition={kind: sorted-shards, shards_per_worker: 3}"});
  ASSERT_TRUE(map.is_ok()) << map.status().message();
  EXPECT_EQ(map->workload.partition.shards_per_worker, 3);
  const nlohmann::json json = nlohmann::json::parse(scenario_to_json(*map));
  EXPECT_EQ(json["workload"]["partition"]["kind"], "sorted-shards") << json.dump();
  EXPECT_EQ(json["workload"]["partition"]["shards_per_worker"], 3) << json.dump();
}

TEST(AspKeys, DataPartitionRefusals) {
  const std::string partition = testing::replace_once(kAsp, "  asp: {}\n", "  partition: PART\n");
  auto with = [&](const std::string& p) { return testing::replace_once(partition, "PART", p); };
  const std::vector<testing::BadCase> cases = {
      {"unknown kind", with("shuffled"), {}, {"dir/x.yaml:6: workload.partition: expected one of iid | sorted-shards"}},
      {"a map without kind", with("{shards_per_worker: 2}"), {}, {"workload.partition.kind: missing"}},
      {"shards for iid", with("{kind: iid, shards_per_worker: 2}"), {},
       {"workload.partition.shards_per_worker: only used by kind: sorted-shards"}},
      {"no shards", with("{kind: sorted-shards, shards_per_worker: 0}"), {},
       {"workload.partition.shards_per_worker: expected a positive integer"}},
      {"an unknown key", with("{kind: sorted-shards, classes: 2}"), {}, {"workload.partition", "classes"}},
      {"in bsp", testing::replace_once(with("sorted-shards"), "mode: asp", "mode: bsp"), {},
       {"dir/x.yaml:6: workload.partition: only used in asp mode"}},
      {"more shards than samples", with("{kind: sorted-shards, shards_per_worker: 30000}"),
       {"workload.dataset_samples=50000"},
       {"workload.partition: expected at most dataset_samples (50000) shards, got 2 workers x shards_per_worker "
        "30000"}},
  };
  for (const testing::BadCase& c : cases) testing::expect_refused(c, "dir/x.yaml");
}

}  // namespace
}  // namespace omnilearn::scenarios
