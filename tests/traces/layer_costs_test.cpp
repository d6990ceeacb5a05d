// Per-layer costs: measured points read back exactly, micro-batches interpolated in the per-sample time between
// measured ones and refused outside them, missing combinations and bad tables refused with messages naming what is
// there; the shipped Sailor tables read back a value of profiles_tmp.json; the Megatron FLOP count by hand.
#include "omnilearn/traces/layer_costs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace omnilearn::traces {
namespace {

// m: 2 layers measured on k1 at micro-batches 2 and 6 (tp 1) and on k2 at micro-batch 2 (tp 2).
constexpr const char* kCosts =
    "# a hand-written table\n"
    "model,device,micro_batch,tp,layer,forward_s,backward_s,update_s\n"
    "m,k1,2,1,0,0.2,0.4,0.05\n"
    "m,k1,2,1,1,0.02,0.04,0.05\n"
    "m,k1,6,1,0,0.9,1.2,0.07\n"
    "m,k1,6,1,1,0.06,0.12,0.07\n"
    "m,k2,2,2,0,0.1,0.2,0.03\n"
    "m,k2,2,2,1,0.01,0.02,0.03\n";
constexpr const char* kSizes =
    "model,tp,layer,params,param_bytes,activation_input_bytes,activation_output_bytes,activation_memory_bytes\n"
    "m,1,0,100,400,8,16,16\n"
    "m,1,1,50,200,16,16,64\n";

Result<LayerCostTable> make(const std::string& costs, const std::string& sizes) {
  auto c = parse_layer_costs(costs, "c.csv");
  if (!c.is_ok()) return c.status();
  auto s = parse_layer_sizes(sizes, "s.csv");
  if (!s.is_ok()) return s.status();
  return LayerCostTable::create(std::move(c).value(), std::move(s).value());
}

LayerCostTable table() {
  auto t = make(kCosts, kSizes);
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return std::move(t).value();
}

TEST(LayerCostsTest, MeasuredPointsReadBackExactly) {
  const LayerCostTable t = table();
  auto c = t.cost("m", "k1", 6, 1, 0);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->forward_s, 0.9);
  EXPECT_EQ(c->backward_s, 1.2);
  EXPECT_EQ(c->update_s, 0.07);
  EXPECT_FALSE(c->interpolated);
  auto s = t.size("m", 1, 1);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->params, 50);
  EXPECT_EQ(s->param_bytes, 200.0);
  EXPECT_EQ(s->activation_memory_bytes, 64.0);
  EXPECT_EQ(t.models(), std::vector<std::string>{"m"});
  EXPECT_EQ(t.kinds("m"), (std::vector<std::string>{"k1", "k2"}));
  EXPECT_EQ(t.tp_degrees("m", "k1"), std::vector<std::int64_t>{1});
  EXPECT_EQ(t.micro_batches("m", "k1", 1), (std::vector<std::int64_t>{2, 6}));
  EXPECT_EQ(*t.layer_count("m"), 2);
}

TEST(LayerCostsTest, MicroBatchesBetweenMeasuredOnesAreInterpolatedPerSample) {
  const LayerCostTable t = table();
  // Micro-batch 4, halfway: forward 0.1 -> 0.15 s per sample, so 4 x 0.125; backward 0.2 per sample at both ends;
  // the update linearly in the micro-batch, 0.05 -> 0.07.
  auto c = t.cost("m", "k1", 4, 1, 0);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->forward_s, 0.5);
  EXPECT_DOUBLE_EQ(c->backward_s, 0.8);
  EXPECT_DOUBLE_EQ(c->update_s, 0.06);
  EXPECT_TRUE(c->interpolated);
  // Micro-batch 3: a quarter of the way, forward per sample 0.1125.
  auto c3 = t.cost("m", "k1", 3, 1, 0);
  ASSERT_TRUE(c3.is_ok());
  EXPECT_DOUBLE_EQ(c3->forward_s, 3 * 0.1125);
}

TEST(LayerCostsTest, MissingCombinationsAreRefusedNamingWhatIsMeasured) {
  const LayerCostTable t = table();
  const auto message = [&](const std::string& model, const std::string& kind, std::int64_t mb, std::int64_t tp,
                           std::int64_t layer) {
    auto c = t.cost(model, kind, mb, tp, layer);
    EXPECT_FALSE(c.is_ok());
    return c.is_ok() ? std::string() : c.status().message();
  };
  const std::string kind = message("m", "v100", 2, 1, 0);
  EXPECT_NE(kind.find("'v100'"), std::string::npos) << kind;
  EXPECT_NE(kind.find("measured kinds: k1, k2"), std::string::npos) << kind;
  const std::string above = message("m", "k1", 8, 1, 0);
  EXPECT_NE(above.find("micro-batch 8"), std::string::npos) << above;
  EXPECT_NE(above.find("(2, 6)"), std::string::npos) << above;
  const std::string below = message("m", "k1", 1, 1, 0);
  EXPECT_NE(below.find("micro-batch 1"), std::string::npos) << below;
  const std::string only = message("m", "k2", 3, 2, 0);  // one measured micro-batch: nothing to interpolate
  EXPECT_NE(only.find("(2)"), std::string::npos) << only;
  const std::string tp = message("m", "k1", 2, 4, 0);
  EXPECT_NE(tp.find("measured tp degrees: 1"), std::string::npos) << tp;
  EXPECT_NE(message("x", "k1", 2, 1, 0).find("known models: m"), std::string::npos);
  EXPECT_NE(message("m", "k1", 2, 1, 2).find("expected 0..1"), std::string::npos);
  auto s = t.size("m", 2, 0);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("measured tp degrees: 1"), std::string::npos) << s.status().message();
}

TEST(LayerCostsTest, MalformedTablesAreRefusedWithFileLineAndField) {
  const std::string header = "model,device,micro_batch,tp,layer,forward_s,backward_s,update_s\n";
  const auto costs_error = [](const std::string& text) {
    auto r = parse_layer_costs(text, "c.csv");
    EXPECT_FALSE(r.is_ok());
    return r.is_ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(costs_error("model,device,mb\nm,k,1\n").find("c.csv:1: header"), std::string::npos);
  EXPECT_NE(costs_error(header + "m,k,2.5,1,0,1,1,1\n").find("c.csv:2: micro_batch '2.5' is not valid"),
            std::string::npos);
  EXPECT_NE(costs_error(header + "m,k,1,0,0,1,1,1\n").find("c.csv:2: tp '0'"), std::string::npos);
  EXPECT_NE(costs_error(header + "m,k,1,1,0,-1,1,1\n").find("c.csv:2: forward_s '-1'"), std::string::npos);
  EXPECT_NE(costs_error(header + "m,k,1,1,0,1,x,1\n").find("backward_s 'x'"), std::string::npos);
  EXPECT_NE(costs_error(header + "m,k,1,1,0,1,1\n").find("c.csv:2: row has 7 fields"), std::string::npos);
  EXPECT_NE(costs_error(header).find("no rows"), std::string::npos);
  auto sizes = parse_layer_sizes(
      "model,tp,layer,params,param_bytes,activation_input_bytes,activation_output_bytes,activation_memory_bytes\n"
      "m,1,0,100,400,8,16,nan\n",
      "s.csv");
  ASSERT_FALSE(sizes.is_ok());
  EXPECT_NE(sizes.status().message().find("s.csv:2: activation_memory_bytes 'nan'"), std::string::npos)
      << sizes.status().message();
}

TEST(LayerCostsTest, InconsistentTablesAreRefused) {
  const std::string header = "model,device,micro_batch,tp,layer,forward_s,backward_s,update_s\n";
  auto twice = make(header + "m,k,1,1,0,1,1,1\nm,k,1,1,0,1,1,1\n", kSizes);
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos) << twice.status().message();
  auto gap = make(header + "m,k,1,1,0,1,1,1\nm,k,1,1,2,1,1,1\n", kSizes);
  ASSERT_FALSE(gap.is_ok());
  EXPECT_NE(gap.status().message().find("layers must be 0..1"), std::string::npos) << gap.status().message();
  auto count = make(header + "m,k,1,1,0,1,1,1\n", kSizes);  // 1 layer profiled, 2 sized
  ASSERT_FALSE(count.is_ok());
  EXPECT_NE(count.status().message().find("expected 1"), std::string::npos) << count.status().message();
}

TEST(LayerCostsTest, TheShippedSailorTablesReadBackProfilesTmpJson) {
  auto t =
      read_layer_cost_table(OMNILEARN_DEVICES_DIR "/sailor-layers.csv", OMNILEARN_DEVICES_DIR "/sailor-models.csv");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  // profiles_tmp.json["OPT-350"]["A100-40"]["1"]["1"]["2"] = [0.002314, 0.005909, 0.002938].
  auto c = t->cost("OPT-350", "A100-40", 1, 1, 2);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->forward_s, 0.002314);
  EXPECT_EQ(c->backward_s, 0.005909);
  EXPECT_EQ(c->update_s, 0.002938);
  EXPECT_EQ(*t->layer_count("OPT-350"), 26);  // embedding, 24 transformer layers, head
  EXPECT_EQ(t->models(), (std::vector<std::string>{"GPT-Neo-2.7", "LLAMA-3-8", "OPT-30", "OPT-350"}));
  // llm_info.json["OPT-350"]["1"]["1"]: 12596224 parameters (12·h² + 13·h at h = 1024), 8388608 bytes out.
  auto s = t->size("OPT-350", 1, 1);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->params, 12596224);
  EXPECT_EQ(s->activation_output_bytes, 8388608.0);
}

TEST(LayerCostsTest, TransformerShorthandMatchesTheMegatronCountByHand) {
  // OPT-350's shape (h 1024, 24 layers, s 2048, V 50272), micro-batch 2, tp 2, 1 TFLOP/s at half efficiency.
  auto r = transformer_layer_costs(1024, 24, 2048, 50272, /*micro_batch=*/2, /*tp=*/2, /*peak_flops=*/1e12,
                                   /*efficiency=*/0.5);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 26u);
  // (24·2·2048·1024² + 4·2·2048²·1024) / 2 = (103079215104 + 34359738368) / 2 = 68719476736 = 2^36.
  const TransformerLayer& l = (*r)[1];
  EXPECT_DOUBLE_EQ(l.forward_flops, 68719476736.0);
  EXPECT_DOUBLE_EQ(l.cost.forward_s, 68719476736.0 / 5e11);
  EXPECT_DOUBLE_EQ(l.cost.backward_s, 2 * 68719476736.0 / 5e11);
  EXPECT_EQ(l.size.params, 12 * 1024 * 1024 / 2 + 13 * 1024);
  EXPECT_DOUBLE_EQ(l.size.activation_memory_bytes, 2048.0 * 1024 * (10 + 12));
  // Head: 2·2·2048·1024·50272 / 2 = 210856050688; embedding: no FLOPs.
  EXPECT_DOUBLE_EQ((*r)[25].forward_flops, 210856050688.0);
  EXPECT_EQ((*r)[25].size.params, 25136 * 1024 + 2 * 1024);
  EXPECT_DOUBLE_EQ((*r)[0].forward_flops, 0.0);
  // At tp 1 a transformer layer holds Sailor's measured OPT-350 layer's 12596224 parameters.
  auto one = transformer_layer_costs(1024, 24, 2048, 50272, 1, 1, 1e12, 0.5);
  ASSERT_TRUE(one.is_ok());
  EXPECT_EQ((*one)[1].size.params, 12596224);
  auto bad_tp = transformer_layer_costs(1000, 2, 16, 100, 1, 3, 1e12, 0.5);
  ASSERT_FALSE(bad_tp.is_ok());
  EXPECT_NE(bad_tp.status().message().find("tp 3"), std::string::npos) << bad_tp.status().message();
  auto bad_eff = transformer_layer_costs(1024, 2, 16, 100, 1, 1, 1e12, 1.5);
  ASSERT_FALSE(bad_eff.is_ok());
  EXPECT_NE(bad_eff.status().message().find("efficiency"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::traces
