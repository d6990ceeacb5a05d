// Metric curves: samples to a target on a hand-made table (first crossing, linearly interpolated, on the nearest batch
// in log scale), lower-is-better metrics, a target never reached, unknown models, bad tables refused with file:line,
// and the shipped table (Pollux's curves) loads.
#include "omnilearn/traces/metric_curves.h"

#include <gtest/gtest.h>

#include <string>

namespace omnilearn::traces {
namespace {

constexpr const char* kCurves =
    "# curves\n"
    "model,app,direction,global_batch,samples,metric\n"
    "m,appm,higher,100,1000,0.5\n"
    "m,appm,higher,100,2000,0.7\n"
    "m,appm,higher,100,4000,0.9\n"
    "m,appm,higher,400,2000,0.4\n"
    "m,appm,higher,400,6000,0.8\n"
    "w,appw,lower,10,500,0.6\n"
    "w,appw,lower,10,1500,0.3\n";

MetricCurveTable table() {
  auto curves = parse_metric_curves(kCurves, "c.csv");
  EXPECT_TRUE(curves.is_ok()) << curves.status().message();
  auto t = MetricCurveTable::create(std::move(curves).value());
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return std::move(t).value();
}

TEST(MetricCurvesTest, FirstCrossingInterpolatedOnTheNearestBatch) {
  const MetricCurveTable t = table();
  // Batch 100, target 0.8: between (2000, 0.7) and (4000, 0.9), half way: 3000.
  EXPECT_DOUBLE_EQ(*t.samples_to_target("m", 100, 0.8), 3000.0);
  EXPECT_DOUBLE_EQ(*t.samples_to_target("m", 100, 0.9), 4000.0);
  // Reached at the first point: its samples.
  EXPECT_DOUBLE_EQ(*t.samples_to_target("m", 100, 0.45), 1000.0);
  // Batch 190: |log(190/100)| = 0.642 < |log(400/190)| = 0.744, so the batch-100 curve.
  EXPECT_DOUBLE_EQ(*t.samples_to_target("m", 190, 0.8), 3000.0);
  // Batch 210: |log(400/210)| = 0.644 < |log(210/100)| = 0.742: 2000 + (0.6-0.4)/(0.8-0.4) x 4000 = 4000.
  EXPECT_DOUBLE_EQ(*t.samples_to_target("m", 210, 0.6), 4000.0);
  // Batch 200 is as far from both in log scale: the smaller batch's curve.
  EXPECT_EQ(t.nearest("m", 200)->global_batch, 100);
  EXPECT_EQ(t.models(), (std::vector<std::string>{"m", "w"}));
}

TEST(MetricCurvesTest, LowerIsBetterCrossesDownwards) {
  const MetricCurveTable t = table();
  // 0.6 -> 0.3 over 500 -> 1500 samples: 0.4 at 500 + (0.2/0.3) x 1000.
  EXPECT_NEAR(*t.samples_to_target("w", 10, 0.4), 500.0 + 2000.0 / 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(*t.samples_to_target("w", 10, 0.7), 500.0);  // a higher error is reached at once
}

TEST(MetricCurvesTest, TargetNeverReachedNamesAppBatchAndBest) {
  const MetricCurveTable t = table();
  auto high = t.samples_to_target("m", 100, 0.95);
  ASSERT_FALSE(high.is_ok());
  EXPECT_EQ(high.status().message(),
            "model 'm' (appm) at global batch 100 never reaches the target 0.95 (higher is better); the best measured "
            "is 0.9");
  auto low = t.samples_to_target("w", 10, 0.2);
  ASSERT_FALSE(low.is_ok());
  EXPECT_NE(low.status().message().find("lower is better); the best measured is 0.3"), std::string::npos);
  auto unknown = t.samples_to_target("x", 10, 0.5);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("model 'x' has no measured metric curve"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("models with curves: m, w"), std::string::npos);
}

TEST(MetricCurvesTest, BadTablesAreRefusedWithFileAndLine) {
  const std::string head = "model,app,direction,global_batch,samples,metric\n";
  auto direction = parse_metric_curves(head + "m,a,up,1,1,0.5\n", "c.csv");
  ASSERT_FALSE(direction.is_ok());
  EXPECT_EQ(direction.status().message().rfind("c.csv:2: direction 'up' is not valid", 0), 0u);
  auto order = parse_metric_curves(head + "m,a,higher,1,5,0.5\nm,a,higher,2,1,0.5\nm,a,higher,1,5,0.6\n", "c.csv");
  ASSERT_FALSE(order.is_ok());
  EXPECT_EQ(order.status().message().rfind("c.csv:4: samples '5' is not valid", 0), 0u);
  auto mixed = parse_metric_curves(head + "m,a,higher,1,5,0.5\nm,a,lower,1,6,0.4\n", "c.csv");
  ASSERT_FALSE(mixed.is_ok());
  EXPECT_EQ(mixed.status().message().rfind("c.csv:3: ", 0), 0u);
  auto header = parse_metric_curves("model,batch\nm,1\n", "c.csv");
  ASSERT_FALSE(header.is_ok());
  EXPECT_EQ(header.status().message().rfind("c.csv:1: header", 0), 0u);
  // Curves of one model with different directions.
  EXPECT_FALSE(MetricCurveTable::create({{"m", "a", true, 1, {{1, 0.5}}}, {"m", "a", false, 2, {{1, 0.5}}}}).is_ok());
}

TEST(MetricCurvesTest, ShippedTableHasPolluxsSixApplications) {
  const std::string data = std::string(OMNILEARN_TRACES_DATA) + "/../devices";
  auto t = read_metric_curve_table(data + "/metric-curves.csv");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->models(), (std::vector<std::string>{"bert", "deepspeech2", "ncf", "resnet18", "resnet50", "yolov3"}));
  EXPECT_TRUE(t->nearest("resnet18", 128)->higher_is_better);
  EXPECT_FALSE(t->nearest("deepspeech2", 20)->higher_is_better);  // word error rate
  // ResNet-18 on CIFAR-10 at batch 128 reaches 90% within Pollux's 100 epochs of 50,000 samples, after more than 10.
  auto cifar = t->samples_to_target("resnet18", 128, 0.9);
  ASSERT_TRUE(cifar.is_ok()) << cifar.status().message();
  EXPECT_GT(*cifar, 10 * 50000.0);
  EXPECT_LT(*cifar, 100 * 50000.0);
  EXPECT_FALSE(t->samples_to_target("resnet18", 128, 0.99).is_ok());
}

}  // namespace
}  // namespace omnilearn::traces
