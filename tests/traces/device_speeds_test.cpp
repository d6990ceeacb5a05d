// Device kinds and speeds: lookups measured, interpolated, clamped and derived; bad tables refused with file:line;
// the shipped tables load and hold the kinds the cluster presets use.
#include "omnilearn/traces/device_speeds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

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


// The lookup as a plain linear search over the table's points (how speed() first answered), to hold the resolved
// curves to: the same samples/s, bit for bit, and the same flags.
SpeedEstimate reference_speed(const DeviceSpeedTable& t, const std::string& model, const std::string& device,
                              std::int64_t batch) {
  const auto measured = [&](const std::string& on) {
    std::vector<const SpeedPoint*> pts;
    for (const SpeedPoint& p : t.points()) {
      if (p.model == model && p.device == on) pts.push_back(&p);
    }
    SpeedEstimate e;
    e.measured_on = on;
    if (batch <= pts.front()->batch || batch >= pts.back()->batch) {
      const SpeedPoint* p = batch <= pts.front()->batch ? pts.front() : pts.back();
      e.samples_per_s = p->samples_per_s;
      e.clamped = batch != p->batch;
      return e;
    }
    std::size_t i = 1;
    while (pts[i]->batch < batch) ++i;
    const auto b = static_cast<double>(batch);
    const double t_lo = static_cast<double>(pts[i - 1]->batch) / pts[i - 1]->samples_per_s;
    const double t_hi = static_cast<double>(pts[i]->batch) / pts[i]->samples_per_s;
    const double w = (b - static_cast<double>(pts[i - 1]->batch)) / static_cast<double>(pts[i]->batch - pts[i - 1]->batch);
    e.samples_per_s = b / (t_lo + w * (t_hi - t_lo));
    return e;
  };
  const std::vector<std::string> on = t.measured_kinds(model);
  if (std::find(on.begin(), on.end(), device) != on.end()) return measured(device);
  const DeviceKind* kind = t.find_kind(device);
  const DeviceKind* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const std::string& name : on) {
    const DeviceKind* k = t.find_kind(name);
    if (std::abs(k->peak_fp32_tflops - kind->peak_fp32_tflops) < best) {
      best = std::abs(k->peak_fp32_tflops - kind->peak_fp32_tflops);
      nearest = k;
    }
  }
  SpeedEstimate e = measured(nearest->name);
  e.samples_per_s *= kind->peak_fp32_tflops / nearest->peak_fp32_tflops;
  e.derived = true;
  return e;
}

TEST(DeviceSpeedsTest, ResolvedCurvesAnswerAsTheLinearSearchOnTheShippedTables) {
  const std::string data = std::string(OMNILEARN_TRACES_DATA) + "/../devices";
  auto t = read_device_speed_table(data + "/device-kinds.csv", data + "/device-speeds.csv");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  std::size_t compared = 0;
  for (const std::string& model : t->models()) {
    // Every batch to 256, each measured batch and its neighbours, then every 5% to twice the largest: every interval
    // and both clamps are crossed.
    std::vector<std::int64_t> batches;
    std::int64_t largest = 1;
    for (std::int64_t b = 1; b <= 256; ++b) batches.push_back(b);
    for (const SpeedPoint& p : t->points()) {
      if (p.model != model) continue;
      largest = std::max(largest, p.batch);
      for (std::int64_t b : {p.batch - 1, p.batch, p.batch + 1}) batches.push_back(std::max<std::int64_t>(1, b));
    }
    for (double b = 256; b <= 2.0 * static_cast<double>(largest); b *= 1.05) batches.push_back(std::llround(b));
    for (const DeviceKind& kind : t->kinds()) {
      auto curve = t->curve(model, kind.name);
      ASSERT_TRUE(curve.is_ok()) << model << " on " << kind.name << ": " << curve.status().message();
      for (const std::int64_t b : batches) {
        const SpeedEstimate want = reference_speed(*t, model, kind.name, b);
        const SpeedEstimate got = curve->estimate(b);
        ASSERT_EQ(got.samples_per_s, want.samples_per_s) << model << " on " << kind.name << " at " << b;
        ASSERT_EQ(curve->samples_per_s(b), want.samples_per_s) << model << " on " << kind.name << " at " << b;
        ASSERT_EQ(got.measured_on, want.measured_on);
        ASSERT_EQ(got.derived, want.derived);
        ASSERT_EQ(got.clamped, want.clamped) << model << " on " << kind.name << " at " << b;
        auto looked_up = t->speed(model, kind.name, b);
        ASSERT_TRUE(looked_up.is_ok());
        ASSERT_EQ(looked_up->samples_per_s, want.samples_per_s);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 1000u);
}

TEST(DeviceSpeedsTest, CurveRefusesWhatSpeedRefuses) {
  const DeviceSpeedTable t = table();
  auto kind = t.curve("m", "h100");
  ASSERT_FALSE(kind.is_ok());
  EXPECT_EQ(kind.status().message(), t.speed("m", "h100", 8).status().message());
  auto model = t.curve("gpt9", "slow");
  ASSERT_FALSE(model.is_ok());
  EXPECT_EQ(model.status().message(), t.speed("gpt9", "slow", 8).status().message());
  EXPECT_FALSE(t.speed("m", "slow", 0).is_ok());
}

}  // namespace
}  // namespace omnilearn::traces
