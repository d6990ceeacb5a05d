// Published Megatron-LM runs: the shipped table reads, its selective rows agree with their MFU by the model-FLOP count
// of Korthikanti et al.'s appendix, and malformed rows are refused naming file, line and field.
#include "omnilearn/traces/published_runs.h"

#include <gtest/gtest.h>

#include <string>

namespace omnilearn::traces {
namespace {

constexpr const char* kHeader =
    "source,model,hidden,layers,heads,seq,vocab,tp,pp,dp,gpus,micro_batch,global_batch,recompute,iteration_s,mfu,"
    "device,peak_flops,note\n";
constexpr const char* kGood = "s,m,1024,8,16,2048,51200,2,4,2,16,,8,full,1.5,,A100-80,312e12,\n";

TEST(PublishedRunsTest, TheShippedTableReads) {
  auto runs = read_megatron_published(OMNILEARN_DEVICES_DIR "/megatron-published.csv");
  ASSERT_TRUE(runs.is_ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 9u);
  const PublishedRun& readme = runs->back();
  EXPECT_EQ(readme.source, "megatron-readme");
  EXPECT_EQ(readme.gpus, 1024);
  EXPECT_EQ(readme.tp, 8);
  EXPECT_EQ(readme.pp, 16);
  EXPECT_EQ(readme.micro_batch, 1);
  EXPECT_EQ(readme.global_batch, 1536);
  EXPECT_EQ(readme.iteration_s, 32.0);
  EXPECT_FALSE(readme.mfu.has_value());
  EXPECT_EQ(readme.recompute, Recompute::kFull);
}

TEST(PublishedRunsTest, SelectiveRowsAgreeWithTheirModelFlopsUtilization) {
  auto runs = read_megatron_published(OMNILEARN_DEVICES_DIR "/megatron-published.csv");
  ASSERT_TRUE(runs.is_ok()) << runs.status().message();
  int checked = 0;
  for (const PublishedRun& r : *runs) {
    if (!r.mfu) continue;
    // Model FLOPs per iteration: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) (forward and backward, no recomputation).
    const double b = static_cast<double>(r.global_batch), s = static_cast<double>(r.seq);
    const double l = static_cast<double>(r.layers), h = static_cast<double>(r.hidden);
    const double v = static_cast<double>(r.vocab);
    const double flops = 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
    const double mfu = flops / (r.iteration_s * static_cast<double>(r.gpus) * r.peak_flops);
    EXPECT_NEAR(mfu, *r.mfu, 0.002) << r.model;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(PublishedRunsTest, MalformedRowsAreRefusedNamingFileLineAndField) {
  ASSERT_TRUE(parse_megatron_published(std::string(kHeader) + kGood, "m.csv").is_ok());
  const struct {
    const char* row;
    const char* field;
  } cases[] = {
      {"s,m,1024,8,16,2048,51200,2,4,2,15,,8,full,1.5,,A100-80,312e12,\n", "gpus '15'"},
      {"s,m,1024,8,16,2048,51200,2,4,2,16,,8,partial,1.5,,A100-80,312e12,\n", "recompute 'partial'"},
      {"s,m,1024,8,16,2048,51200,2,4,2,16,,8,full,0,,A100-80,312e12,\n", "iteration_s '0'"},
      {"s,m,1024,8,16,2048,51200,2,4,2,16,,8,full,1.5,41.5,A100-80,312e12,\n", "mfu '41.5'"},
      {"s,m,1024,8,16,2048,51200,2,4,2,16,3,8,full,1.5,,A100-80,312e12,\n", "global_batch '8'"},
      {"s,m,1024,9,16,2048,51200,2,4,2,16,,8,full,1.5,,A100-80,312e12,\n", "layers '9'"},
      {"s,m,1000,8,16,2048,51200,2,4,2,16,,8,full,1.5,,A100-80,312e12,\n", "hidden '1000'"},
  };
  for (const auto& c : cases) {
    auto r = parse_megatron_published(std::string("# a comment\n") + kHeader + kGood + c.row, "m.csv");
    ASSERT_FALSE(r.is_ok()) << c.row;
    EXPECT_NE(r.status().message().find("m.csv:4: "), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace omnilearn::traces
