// Device kinds and speeds: lookups measured, interpolated, clamped and derived; bad tables refused with file:line;
// the shipped tables load and hold the kinds the cluster presets use.
#include "omnilearn/traces/device_speeds.h"

#include <gtest/gtest.h>

#include <string>

namespace omnilearn::traces {
namespace {

constexpr const char* kKinds =
    "# kinds\n"
    "device,peak_fp32_tflops,memory_gb,description\n"
    "slow,5,16,a slow one\n"
    "fast,10,16,\"a fast one, with a comma\"\n"
    "faster,20,40,\n";
// m: step time 0.1 s + 0.01 s per sample on slow (batch 10: 50 samples/s; batch 30: 75 samples/s).
constexpr const char* kSpeeds =
    "model,dataset,device,batch,samples_per_s,source\n"
    "m,d,slow,10,50,test\n"
    "m,d,slow,30,75,test\n"
    "n,d,fast,8,80,test\n";

DeviceSpeedTable table() {
  auto kinds = parse_device_kinds(kKinds, "k.csv");
  EXPECT_TRUE(kinds.is_ok()) << kinds.status().message();
  auto points = parse_speed_points(kSpeeds, "s.csv");
  EXPECT_TRUE(points.is_ok()) << points.status().message();
  auto t = DeviceSpeedTable::create(std::move(kinds).value(), std::move(points).value());
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return std::move(t).value();
}

TEST(DeviceSpeedsTest, MeasuredPointsAndStepTimeInterpolation) {
  const DeviceSpeedTable t = table();
  EXPECT_EQ(t.kinds()[1].description, "a fast one, with a comma");
  auto at10 = t.speed("m", "slow", 10);
  ASSERT_TRUE(at10.is_ok());
  EXPECT_DOUBLE_EQ(at10->samples_per_s, 50.0);
  EXPECT_FALSE(at10->derived);
  EXPECT_FALSE(at10->clamped);
  // Batch 20: step time halfway between 0.2 s and 0.4 s = 0.3 s, so 20 / 0.3 samples/s.
  auto at20 = t.speed("m", "slow", 20);
  ASSERT_TRUE(at20.is_ok());
  EXPECT_NEAR(at20->samples_per_s, 20.0 / 0.3, 1e-9);
  // Outside the measured batches: the nearest one's speed, flagged.
  auto at100 = t.speed("m", "slow", 100);
  ASSERT_TRUE(at100.is_ok());
  EXPECT_DOUBLE_EQ(at100->samples_per_s, 75.0);
  EXPECT_TRUE(at100->clamped);
  EXPECT_EQ(t.measured_kinds("m"), std::vector<std::string>{"slow"});
  EXPECT_EQ(t.models(), (std::vector<std::string>{"m", "n"}));
}

TEST(DeviceSpeedsTest, UnmeasuredKindsScaleTheNearestMeasuredKindByPeakRate) {
  const DeviceSpeedTable t = table();
  // m is measured on slow only: on faster (20 vs 5 TFLOPS) 4x.
  auto m = t.speed("m", "faster", 10);
  ASSERT_TRUE(m.is_ok());
  EXPECT_DOUBLE_EQ(m->samples_per_s, 200.0);
  EXPECT_TRUE(m->derived);
  EXPECT_EQ(m->measured_on, "slow");
  // n is measured on fast only: on slow half of it.
  auto n = t.speed("n", "slow", 8);
  ASSERT_TRUE(n.is_ok());
  EXPECT_DOUBLE_EQ(n->samples_per_s, 40.0);
  auto unknown_kind = t.speed("m", "h100", 8);
  ASSERT_FALSE(unknown_kind.is_ok());
  EXPECT_EQ(unknown_kind.status().message(),
            "device kind 'h100' is not in the table (expected one of: slow, fast, faster)");
  auto unknown_model = t.speed("gpt9", "slow", 8);
  ASSERT_FALSE(unknown_model.is_ok());
  EXPECT_EQ(unknown_model.status().message(), "model 'gpt9' has no measured speed (expected one of: m, n)");
}

TEST(DeviceSpeedsTest, BadTablesAreRefusedWithFileAndLine) {
  const struct {
    const char* speeds;
    const char* expected;
  } cases[] = {
      {"model,dataset,device,batch,samples_per_s,source\nm,d,slow,0,5,t\n", "s.csv:2: batch '0' is not valid"},
      {"model,dataset,device,batch,samples_per_s,source\nm,d,slow,4,-5,t\n", "s.csv:2: samples_per_s '-5' is not valid"},
      {"model,dataset,device,batch,samples_per_s,source\nm,d,slow,4\n", "s.csv:2: row has 4 fields; expected 6"},
      {"model,device\n", "s.csv:1: header 'model,device' is wrong"},
      {"# only a comment\n", "s.csv:1: no rows"},
  };
  for (const auto& c : cases) {
    auto p = parse_speed_points(c.speeds, "s.csv");
    ASSERT_FALSE(p.is_ok()) << c.speeds;
    EXPECT_EQ(p.status().message().rfind(c.expected, 0), 0u) << p.status().message();
  }
  auto k = parse_device_kinds("device,peak_fp32_tflops,memory_gb,description\na,0,16,\n", "k.csv");
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().message().rfind("k.csv:2: peak_fp32_tflops '0' is not valid", 0), 0u);
  // A point on an unknown kind, and a point given twice.
  auto kinds = parse_device_kinds(kKinds, "k.csv");
  ASSERT_TRUE(kinds.is_ok());
  EXPECT_FALSE(DeviceSpeedTable::create(*kinds, {{"m", "d", "tpu", 1, 1.0, "t"}}).is_ok());
  EXPECT_FALSE(DeviceSpeedTable::create(*kinds, {{"m", "d", "slow", 1, 1.0, "t"}, {"m", "d", "slow", 1, 2.0, "t"}}).is_ok());
}

TEST(DeviceSpeedsTest, ShippedTablesLoadAndCoverTheAnchorsKinds) {
  const std::string data = std::string(OMNILEARN_TRACES_DATA) + "/../devices";
  auto t = read_device_speed_table(data + "/device-kinds.csv", data + "/device-speeds.csv");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  for (const char* kind : {"k80", "p100", "v100", "t4", "a100", "rtx2080ti"}) {
    EXPECT_NE(t->find_kind(kind), nullptr) << kind;
  }
  // Gavel's ResNet-18 at batch 128 alone on one V100 (steps/s x 128), read back exactly as measured.
  auto v100 = t->speed("resnet18", "v100", 128);
  ASSERT_TRUE(v100.is_ok());
  EXPECT_FALSE(v100->derived);
  EXPECT_FALSE(v100->clamped);
  auto k80 = t->speed("resnet18", "k80", 128);
  ASSERT_TRUE(k80.is_ok());
  EXPECT_GT(v100->samples_per_s, 2.0 * k80->samples_per_s);  // Gavel: V100 several times a K80 on ResNet-18
  // Pollux's measured T4 and the derived A100 of a model measured only on T4.
  auto t4 = t->speed("bert", "t4", 12);
  ASSERT_TRUE(t4.is_ok());
  EXPECT_FALSE(t4->derived);
  auto a100 = t->speed("bert", "a100", 12);
  ASSERT_TRUE(a100.is_ok());
  EXPECT_TRUE(a100->derived);
  EXPECT_EQ(a100->measured_on, "t4");
  EXPECT_NEAR(a100->samples_per_s / t4->samples_per_s, 19.5 / 8.1, 1e-12);
}

}  // namespace
}  // namespace omnilearn::traces
