// Sailor's plans, kinds and network tables: every shipped plan reads and agrees with the raw JSON and with the layer
// tables; the network's bandwidth is Sailor's polynomial by hand; malformed rows are refused naming file, line and
// field.
#include "omnilearn/traces/sailor_plans.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "omnilearn/traces/layer_costs.h"

namespace omnilearn::traces {
namespace {

constexpr const char* kPlanHeader =
    "model,file,nodes,gpus,kind,pp,tp,dp,micro_batch,global_batch,layers_per_stage,measured_iteration_s,"
    "measured_red_grads_s,measured_max_mem_bytes,note\n";
constexpr const char* kGoodPlan = "m,a/p.json,2,8,GH-96,2,4,1,2,8,0-3;4-9,1.5,0.1,1000,\n";

std::vector<SailorPlan> shipped_plans() {
  auto plans = read_sailor_plans(OMNILEARN_DEVICES_DIR "/sailor-gh200-plans.csv");
  EXPECT_TRUE(plans.is_ok()) << plans.status().message();
  return plans.is_ok() ? std::move(plans).value() : std::vector<SailorPlan>{};
}

const SailorPlan* find_plan(const std::vector<SailorPlan>& plans, const std::string& file) {
  for (const SailorPlan& p : plans) {
    if (p.file == file) return &p;
  }
  return nullptr;
}

TEST(SailorPlansTest, EveryShippedPlanReads) {
  const std::vector<SailorPlan> plans = shipped_plans();
  ASSERT_EQ(plans.size(), 27u);
  for (const SailorPlan& p : plans) {
    EXPECT_EQ(p.gpus, p.nodes * 4) << p.file;  // nodes of 4 GH200
    EXPECT_EQ(p.kind, "GH-96") << p.file;
    EXPECT_EQ(p.tp, 4) << p.file;
    EXPECT_GT(p.measured_iteration_s, 0.0) << p.file;
  }
}

TEST(SailorPlansTest, AShippedPlanEqualsItsRawFile) {
  const std::vector<SailorPlan> plans = shipped_plans();
  // validation-gh200/OPT-350/N16/plan_config_N16_D4.json: num_stages 4, layers [0..4] [5..11] [12..18] [19..25],
  // dp [4, 4, 4, 4], ["GH-96", 4, ...] tp 4, mbs 8, gbs 1024, real 2.72578, red_grads 0.06151, max_mem 25140658176,
  // N 16.
  const SailorPlan* p = find_plan(plans, "validation-gh200/OPT-350/N16/plan_config_N16_D4.json");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->model, "OPT-350");
  EXPECT_EQ(p->nodes, 16);
  EXPECT_EQ(p->gpus, 64);
  EXPECT_EQ(p->pp, 4);
  EXPECT_EQ(p->dp, 4);
  EXPECT_EQ(p->micro_batch, 8);
  EXPECT_EQ(p->global_batch, 1024);
  ASSERT_EQ(p->stages.size(), 4u);
  EXPECT_EQ(p->stages[1].first, 5);
  EXPECT_EQ(p->stages[1].last, 11);
  EXPECT_EQ(p->stages[3].last, 25);
  EXPECT_EQ(p->measured_iteration_s, 2.72578);
  EXPECT_EQ(p->measured_red_grads_s, 0.06151);
  EXPECT_EQ(p->measured_max_mem_bytes, 25140658176.0);
  EXPECT_EQ(p->note, "");
}

TEST(SailorPlansTest, TheQuirksAreReadAsTheirNotesSay) {
  const std::vector<SailorPlan> plans = shipped_plans();
  // GPT-NEO's 4-stage plans list layer 29 in the third stage where 19 belongs.
  const SailorPlan* neo = find_plan(plans, "validation-gh200/GPT-NEO/N32/plan_config_N32_D8.json");
  ASSERT_NE(neo, nullptr);
  ASSERT_EQ(neo->stages.size(), 4u);
  EXPECT_EQ(neo->stages[2].first, 16);
  EXPECT_EQ(neo->stages[2].last, 24);
  EXPECT_NE(neo->note.find("lacks 19"), std::string::npos) << neo->note;
  // Both N4_D4 plans are kept and flagged.
  for (const char* file :
       {"validation-gh200/GPT-NEO/N4/plan_config_N4_D4.json", "validation-gh200/OPT-350/N4/plan_config_N4_D4.json"}) {
    const SailorPlan* p = find_plan(plans, file);
    ASSERT_NE(p, nullptr) << file;
    EXPECT_EQ(p->measured_red_grads_s, 1.06094) << file;
    EXPECT_NE(p->note.find("suspicious"), std::string::npos) << file;
  }
}

TEST(SailorPlansTest, EveryPlanCoversItsModelsLayersOrItsNoteSaysNot) {
  auto layers =
      read_layer_cost_table(OMNILEARN_DEVICES_DIR "/sailor-layers.csv", OMNILEARN_DEVICES_DIR "/sailor-models.csv");
  ASSERT_TRUE(layers.is_ok()) << layers.status().message();
  for (const SailorPlan& p : shipped_plans()) {
    auto n = layers->layer_count(p.model);
    ASSERT_TRUE(n.is_ok()) << p.file << ": " << n.status().message();
    if (p.stages.back().last + 1 != *n) {
      EXPECT_NE(p.note.find("where the model has"), std::string::npos) << p.file;
    }
  }
}

TEST(SailorPlansTest, MalformedPlanRowsAreRefusedNamingFileLineAndField) {
  ASSERT_TRUE(parse_sailor_plans(std::string(kPlanHeader) + kGoodPlan, "p.csv").is_ok());
  const struct {
    const char* row;
    const char* field;
  } cases[] = {
      {"m,a/p.json,2,9,GH-96,2,4,1,2,8,0-3;4-9,1.5,0.1,1000,\n", "gpus '9'"},
      {"m,a/p.json,2,8,GH-96,2,4,1,3,8,0-3;4-9,1.5,0.1,1000,\n", "global_batch '8'"},
      {"m,a/p.json,2,8,GH-96,2,4,1,2,8,0-3;5-9,1.5,0.1,1000,\n", "layers_per_stage '0-3;5-9'"},
      {"m,a/p.json,2,8,GH-96,2,4,1,2,8,0-9,1.5,0.1,1000,\n", "layers_per_stage '0-9'"},
      {"m,a/p.json,2,8,GH-96,2,4,1,2,8,0-3;4-9,-1,0.1,1000,\n", "measured_iteration_s '-1'"},
      {"m,a/p.json,2,8,GH-96,0,4,1,2,8,0-3;4-9,1.5,0.1,1000,\n", "pp '0'"},
      {",a/p.json,2,8,GH-96,2,4,1,2,8,0-3;4-9,1.5,0.1,1000,\n", "model ''"},
  };
  for (const auto& c : cases) {
    auto r = parse_sailor_plans(std::string("# a comment\n") + kPlanHeader + kGoodPlan + c.row, "p.csv");
    ASSERT_FALSE(r.is_ok()) << c.row;
    EXPECT_NE(r.status().message().find("p.csv:4: "), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
}

TEST(SailorPlansTest, TheShippedKindsEqualBasicClusterConfig) {
  auto kinds = read_sailor_kinds(OMNILEARN_DEVICES_DIR "/sailor-kinds.csv");
  ASSERT_TRUE(kinds.is_ok()) << kinds.status().message();
  ASSERT_EQ(kinds->size(), 7u);
  bool found = false;
  for (const SailorKind& k : *kinds) {
    if (k.kind != "GH-96") continue;
    found = true;
    EXPECT_EQ(k.gpus_per_node, 4);  // basic_cluster_config.json["GH-96"]
    EXPECT_EQ(k.memory_bytes, 102625181696.0);
  }
  EXPECT_TRUE(found);
  auto twice = parse_sailor_kinds("kind,gpus_per_node,memory_bytes\nk,4,10\nk,8,10\n", "k.csv");
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("k.csv:3: kind 'k'"), std::string::npos) << twice.status().message();
}

TEST(SailorPlansTest, BandwidthIsSailorsPolynomialInLog2Megabytes) {
  auto net = read_sailor_network(OMNILEARN_DEVICES_DIR "/sailor-network.csv");
  ASSERT_TRUE(net.is_ok()) << net.status().message();
  // network_coeffs_all_homo.json["inter"]["GH-96"]["1"] = [[-0.16570216, 2.79431173, 11.74409677], 22934533176.5...].
  // At 1e6 bytes x = 0: c0 GB/s. At 4e6 bytes x = 2: 4·c2 + 2·c1 + c0 = 16.66991159 GB/s.
  auto at_1mb = net->bandwidth_bytes_per_s("GH-96", NetworkScope::kInter, 1, 1e6);
  ASSERT_TRUE(at_1mb.is_ok()) << at_1mb.status().message();
  EXPECT_DOUBLE_EQ(*at_1mb, 11.74409677e9);
  auto at_4mb = net->bandwidth_bytes_per_s("GH-96", NetworkScope::kInter, 1, 4e6);
  ASSERT_TRUE(at_4mb.is_ok());
  EXPECT_NEAR(*at_4mb, 16.66991159e9, 1.0);
  auto l = net->link("GH-96", NetworkScope::kInter, 1);
  ASSERT_TRUE(l.is_ok());
  EXPECT_EQ(l->max_bandwidth_bytes_per_s, 22934533176.529445);
  // intra_node_bandwidths.json["GH-96"]["4"]: c0 = 82.0621593 GB/s at 1 MB.
  auto intra = net->bandwidth_bytes_per_s("GH-96", NetworkScope::kIntra, 4, 1e6);
  ASSERT_TRUE(intra.is_ok());
  EXPECT_DOUBLE_EQ(*intra, 82.0621593e9);
  // Not capped: the fit may exceed the measured peak (A100-40 intra 2 at 1 GiB).
  auto big = net->bandwidth_bytes_per_s("A100-40", NetworkScope::kIntra, 2, 1073741824.0);
  auto peak = net->link("A100-40", NetworkScope::kIntra, 2);
  ASSERT_TRUE(big.is_ok() && peak.is_ok());
  EXPECT_GT(*big, peak->max_bandwidth_bytes_per_s);
}

TEST(SailorPlansTest, BandwidthRefusesWhatSailorsFitCannotAnswer) {
  auto net = read_sailor_network(OMNILEARN_DEVICES_DIR "/sailor-network.csv");
  ASSERT_TRUE(net.is_ok()) << net.status().message();
  // One byte: x = log2(1e-6), where the GH-96 polynomial is negative.
  auto tiny = net->bandwidth_bytes_per_s("GH-96", NetworkScope::kInter, 1, 1.0);
  ASSERT_FALSE(tiny.is_ok());
  EXPECT_NE(tiny.status().message().find("positive"), std::string::npos) << tiny.status().message();
  EXPECT_FALSE(net->bandwidth_bytes_per_s("GH-96", NetworkScope::kInter, 1, 0.0).is_ok());
  auto size = net->bandwidth_bytes_per_s("GH-96", NetworkScope::kIntra, 3, 1e6);
  ASSERT_FALSE(size.is_ok());
  EXPECT_NE(size.status().message().find("measured: 2, 4"), std::string::npos) << size.status().message();
  auto kind = net->bandwidth_bytes_per_s("H100", NetworkScope::kInter, 1, 1e6);
  ASSERT_FALSE(kind.is_ok());
  EXPECT_NE(kind.status().message().find("GH-96"), std::string::npos) << kind.status().message();
}

TEST(SailorPlansTest, MalformedNetworkRowsAreRefused) {
  const std::string header = "kind,scope,gpus,c2,c1,c0,max_bandwidth_bytes_per_s\n";
  auto scope = parse_sailor_network(header + "k,both,2,0,1,2,5\n", "n.csv");
  ASSERT_FALSE(scope.is_ok());
  EXPECT_NE(scope.status().message().find("n.csv:2: scope 'both'"), std::string::npos) << scope.status().message();
  auto coefficient = parse_sailor_network(header + "k,intra,2,0,x,2,5\n", "n.csv");
  ASSERT_FALSE(coefficient.is_ok());
  EXPECT_NE(coefficient.status().message().find("c1 'x'"), std::string::npos) << coefficient.status().message();
  auto links = parse_sailor_network(header + "k,intra,2,0,1,2,5\nk,intra,2,0,1,3,5\n", "n.csv");
  ASSERT_TRUE(links.is_ok());
  EXPECT_FALSE(SailorNetwork::create(std::move(links).value()).is_ok());
}

}  // namespace
}  // namespace omnilearn::traces
