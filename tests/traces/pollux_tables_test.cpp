// PolluxJobModel on the shipped tables (traces/devices/pollux-*.csv), against values computed by hand from the
// rows of Pollux's raw files (../shared/traces-raw/pollux-osdi21/traces/cifar10/*.csv, quoted below), and the
// shipped tables against the raw files when those are present.
#include "omnilearn/traces/pollux_tables.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "raw_trace_test_util.h"

namespace omnilearn::traces {
namespace {

using test::raw;

const std::string kSteps = std::string(OMNILEARN_DEVICES_DIR) + "/pollux-steps.csv";
const std::string kEfficiency = std::string(OMNILEARN_DEVICES_DIR) + "/pollux-efficiency.csv";

const PolluxJobModel& model() {
  static const PolluxJobModel m = [] {
    auto r = PolluxJobModel::read(kSteps, kEfficiency);
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return std::move(r).value();
  }();
  return m;
}

TEST(PolluxJobModel, ReadsTheSixApplications) {
  EXPECT_EQ(model().applications(),
            (std::vector<std::string>{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}));
  EXPECT_EQ(PolluxJobModel::application("resnet18"), "cifar10");
  EXPECT_EQ(PolluxJobModel::application("resnet50"), "imagenet");
  EXPECT_EQ(PolluxJobModel::application("lm"), "");
  EXPECT_EQ(model().init_batch("cifar10"), 128);
  EXPECT_EQ(model().max_batch("cifar10"), 4096);
}

TEST(PolluxJobModel, MeasuredPlacementInterpolatesInTheLocalBatch) {
  // placements.csv: 11,91,0.11819097995758057,0.044123965072631825 and 11,129,0.1327885866165161,0.02719344959259033
  const double f = (100.0 - 91.0) / (129.0 - 91.0);
  auto t = model().step_time("cifar10", {1, 1}, 100.0);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_NEAR(t->step_s, 0.11819097995758057 + f * (0.1327885866165161 - 0.11819097995758057), 1e-12);
  EXPECT_NEAR(t->sync_s, 0.044123965072631825 + f * (0.02719344959259033 - 0.044123965072631825), 1e-12);
  EXPECT_TRUE(t->measured_placement);
  EXPECT_FALSE(t->clamped);
  // A rotation of a measured placement is that placement (13,64: 0.1449049234390259); zeros are ignored.
  auto r = model().step_time("cifar10", {3, 0, 1}, 64.0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_DOUBLE_EQ(r->step_s, 0.1449049234390259);
  // Outside the measured local batches: the nearest one's time (1,32: 0.0427886962890625).
  auto c = model().step_time("cifar10", {1}, 8.0);
  ASSERT_TRUE(c.is_ok());
  EXPECT_DOUBLE_EQ(c->step_s, 0.0427886962890625);
  EXPECT_TRUE(c->clamped);
}

TEST(PolluxJobModel, MoreThanFourNodesComeFromTheScalabilityTable) {
  // scalability.csv: 6,6,32,0.14090566635131835 and 6,6,45,0.1393126964569092 (six nodes of one GPU).
  auto t = model().step_time("cifar10", {1, 1, 1, 1, 1, 1}, 32.0);
  ASSERT_TRUE(t.is_ok());
  EXPECT_DOUBLE_EQ(t->step_s, 0.14090566635131835);
  EXPECT_FALSE(t->measured_placement);
  auto m = model().step_time("cifar10", {1, 1, 1, 1, 1, 1}, 38.5);
  ASSERT_TRUE(m.is_ok());
  EXPECT_NEAR(m->step_s, 0.5 * (0.14090566635131835 + 0.1393126964569092), 1e-12);
  // Five nodes lie halfway between four (the placements' mean at 4 nodes, 4 replicas) and six.
  auto five = model().step_time("cifar10", {1, 1, 1, 1, 1}, 32.0);
  auto four = model().step_time("cifar10", {1, 1, 1, 1}, 32.0);
  ASSERT_TRUE(five.is_ok() && four.is_ok());
  EXPECT_GT(five->step_s, std::min(four->step_s, t->step_s));
  EXPECT_LT(five->step_s, std::max(four->step_s, t->step_s));
}

TEST(PolluxJobModel, JobStepAccumulatesAsPolluxDoes) {
  // One GPU above the smallest validated batch (128) accumulates once: 256 = 2 x 128.
  auto s = model().job_step("cifar10", {1}, 256);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->accum_steps, 1);
  EXPECT_EQ(s->atomic_bsz, 128);
  EXPECT_EQ(s->batch, 256);
  auto one = model().step_time("cifar10", {1}, 128.0);
  ASSERT_TRUE(one.is_ok());
  EXPECT_DOUBLE_EQ(s->seconds, one->step_s + (one->step_s - one->sync_s));
  // Four GPUs on one node at 512: 128 each, no accumulation; 3 GPUs at 128: ceil(42.67) = 43 each, 129 in all.
  auto four = model().job_step("cifar10", {4}, 512);
  ASSERT_TRUE(four.is_ok());
  EXPECT_EQ(four->accum_steps, 0);
  EXPECT_EQ(four->atomic_bsz, 128);
  auto three = model().job_step("cifar10", {2, 1}, 128);
  ASSERT_TRUE(three.is_ok());
  EXPECT_EQ(three->batch, 129);
}

TEST(PolluxJobModel, StatisticalEfficiency) {
  // validation-256.csv, epoch 0: grad_sqr 17.379458169870425, grad_var 13.937760473946334; scale 2.
  const double sqr = 17.379458169870425, var = 13.937760473946334;
  auto e = model().efficiency("cifar10", 256.0, 0);
  ASSERT_TRUE(e.is_ok()) << e.status().message();
  EXPECT_NEAR(*e, (var + sqr) / (var / 2.0 + sqr) / 2.0, 1e-12);
  auto one = model().efficiency("cifar10", 128.0, 5);
  ASSERT_TRUE(one.is_ok());
  EXPECT_DOUBLE_EQ(*one, 1.0);
  EXPECT_FALSE(model().efficiency("cifar10", 64.0, 0).is_ok());   // below the validated batches
  EXPECT_FALSE(model().efficiency("cifar10", 128.0, 100).is_ok());  // past the validated epochs
}

TEST(PolluxJobModel, SamplesNeeded) {
  // At the smallest batch: Pollux's progress after 100 epochs (the least over the six validated batches, epoch 99:
  // 39062.90816659533 steps of 128) x 128; after one epoch 390.71438596642224 x 128.
  auto all = model().samples_needed("cifar10", 128.0, 100.0);
  ASSERT_TRUE(all.is_ok()) << all.status().message();
  EXPECT_NEAR(*all, 39062.90816659533 * 128.0, 1e-6);
  auto first = model().samples_needed("cifar10", 256.0, 1.0);
  ASSERT_TRUE(first.is_ok());
  auto e0 = model().efficiency("cifar10", 256.0, 0);
  EXPECT_NEAR(*first, 390.71438596642224 * 128.0 / *e0, 1e-6);
  auto half = model().samples_needed("cifar10", 256.0, 0.5);
  ASSERT_TRUE(half.is_ok());
  EXPECT_NEAR(*half, *first / 2.0, 1e-6);
  // Larger batches need more samples (efficiency < 1).
  auto big = model().samples_needed("cifar10", 2048.0, 100.0);
  ASSERT_TRUE(big.is_ok());
  EXPECT_GT(*big, *all);
  EXPECT_FALSE(model().samples_needed("cifar10", 128.0, 101.0).is_ok());
}

TEST(PolluxJobModel, SamplesBetweenAndEpochsAfterAreInverses) {
  // A job at 256 for its first 10.5 epochs, then at 1024 to 100: the two parts sum to each batch's share.
  auto head = model().samples_between("cifar10", 256.0, 0.0, 10.5);
  auto tail = model().samples_between("cifar10", 1024.0, 10.5, 100.0);
  auto whole = model().samples_needed("cifar10", 1024.0, 100.0);
  auto first = model().samples_needed("cifar10", 1024.0, 10.5);
  ASSERT_TRUE(head.is_ok() && tail.is_ok() && whole.is_ok() && first.is_ok());
  EXPECT_NEAR(*tail, *whole - *first, 1e-6 * *whole);
  auto back = model().epochs_after("cifar10", 256.0, 0.0, *head, 100.0);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_NEAR(*back, 10.5, 1e-9);
  auto on = model().epochs_after("cifar10", 1024.0, 10.5, *tail, 100.0);
  ASSERT_TRUE(on.is_ok());
  EXPECT_NEAR(*on, 100.0, 1e-9);
  EXPECT_EQ(*model().epochs_after("cifar10", 1024.0, 10.5, 10.0 * *tail, 100.0), 100.0);  // capped
  EXPECT_FALSE(model().samples_between("cifar10", 256.0, 2.0, 1.0).is_ok());
  EXPECT_EQ(model().min_local_batch("cifar10"), 32.0);
}

TEST(PolluxJobModel, ErrorsNameTheApplication) {
  auto t = model().step_time("lm", {1}, 32.0);
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("application 'lm' has no measured steps (measured: bert, cifar10"),
            std::string::npos);
  auto bad = PolluxJobModel::read(kEfficiency, kSteps);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("pollux-efficiency.csv:4: expected the header"), std::string::npos)
      << bad.status().message();
}

// The shipped tables hold every row of the raw files, as written there.
TEST(PolluxJobModel, ShippedTablesAreTheRawRows) {
  RAW_OR_SKIP(dir, "pollux-osdi21/traces");
  std::size_t raw_rows = 0;
  for (const char* app : {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) {
    for (const char* file : {"placements.csv", "scalability.csv"}) {
      std::ifstream in(dir + "/" + app + "/" + file);
      std::string line;
      std::getline(in, line);
      while (std::getline(in, line)) {
        if (!line.empty()) ++raw_rows;
      }
    }
  }
  std::ifstream shipped(kSteps);
  std::string line;
  std::size_t rows = 0;
  while (std::getline(shipped, line)) {
    if (!line.empty() && line[0] != '#' && line.rfind("app,", 0) != 0) ++rows;
  }
  EXPECT_EQ(rows, raw_rows);
}

}  // namespace
}  // namespace omnilearn::traces
