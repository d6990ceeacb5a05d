// The cluster model read from Zeus's shipped table, the static plans, and the joint controller's goal on the shipped
// scenario (issue 35, part 4): lower cost than OmniLearn alone at the highest limits and than Zeus per kind with
// equal batches, within 3% of the best static grid point. Prints the table of docs/energy.md.
#include "omnilearn/energy_control/joint_power_study.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "omnilearn/energy_control/gpu_cluster_model.h"
#include "omnilearn/energy_control/static_power_plans.h"

namespace omnilearn::energy_control {
namespace {

const std::string kShipped = std::string(OMNILEARN_DEVICES_DIR) + "/zeus-power.csv";

const traces::GpuPowerTable& shipped() {
  static const traces::GpuPowerTable table = [] {
    auto t = traces::read_gpu_power_table(kShipped);
    OMNI_CHECK(t.is_ok(), t.status().message());
    return std::move(*t);
  }();
  return table;
}

// The scenario of docs/energy.md: two GPUs of each measured kind training ResNet-50 on ImageNet, B = 512.
GpuClusterSpec mixed_cluster() {
  GpuClusterSpec spec;
  spec.kinds = {"v100", "v100", "a40", "a40", "p100", "p100", "rtx6000", "rtx6000"};
  return spec;
}

TEST(GpuClusterModel, ReadsTheShippedTable) {
  auto model = build_gpu_cluster_model(shipped(), mixed_cluster());
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ASSERT_EQ(model->workers.size(), 8u);
  const auto& v100 = model->workers[0];
  EXPECT_EQ(v100.lo, 8);
  EXPECT_EQ(v100.hi, 360);
  EXPECT_EQ(model->workers[4].hi, 128);  // the P100's largest measured ResNet-50 batch
  ASSERT_EQ(v100.limits.size(), 7u);     // 100..250 W
  EXPECT_EQ(v100.limits.back().limit_w, 250.0);
  // The measured row v100 ResNet-50 b = 128 at 250 W: 3603.60 s per epoch, 222.44 W.
  EXPECT_NEAR(v100.limits.back().time_s[128 - 8], 3603.5966666666664 * 128 / kImageNetTrainSamples, 1e-12);
  EXPECT_NEAR(v100.limits.back().power_w[128 - 8], 222.43902320007504, 1e-9);
  EXPECT_NEAR(v100.wait_power_w, 34.75158532315594, 1e-9);  // NCF, batch 16384, 150 W
  EXPECT_DOUBLE_EQ(model->cost.max_power_w, 2 * (250.0 + 300.0 + 250.0 + 260.0));
  EXPECT_NEAR(model->cost.comm_s, 2.0 * 7 / 8 * kResNet50GradientBytes / (25e9 / 8), 1e-12);
}

TEST(GpuClusterModel, RefusesWhatTheTableDoesNotHold) {
  auto spec = mixed_cluster();
  spec.kinds.push_back("h100");
  EXPECT_FALSE(build_gpu_cluster_model(shipped(), spec).is_ok());
  spec = mixed_cluster();
  spec.global_batch = 32;  // below 8 workers x 8
  EXPECT_NE(build_gpu_cluster_model(shipped(), spec).status().message().find("outside"), std::string::npos);
  spec = mixed_cluster();
  spec.workload = "imagenet/resnet50/sgd";
  EXPECT_FALSE(build_gpu_cluster_model(shipped(), spec).is_ok());
}

TEST(StaticPowerPlans, ZeusAndTheGrid) {
  auto model = build_gpu_cluster_model(shipped(), mixed_cluster());
  ASSERT_TRUE(model.is_ok());
  // Zeus on one GPU of each kind (η = 0.5): its measured (batch, limit) of least cost per epoch, and its limit of
  // least cost at the equal share B / n = 64.
  const struct {
    std::string kind;
    std::size_t worker;
    BatchSize batch;
    double limit_w, at_share_w;
  } expected[] = {
      {"v100", 0, 360, 175, 175}, {"a40", 2, 128, 200, 225}, {"p100", 4, 128, 150, 150}, {"rtx6000", 6, 64, 175, 175}};
  for (const auto& e : expected) {
    auto z = zeus_best_measured(shipped(), e.kind, mixed_cluster().workload, 0.5);
    ASSERT_TRUE(z.is_ok()) << z.status().message();
    const auto& w = model->workers[e.worker];
    EXPECT_EQ(z->batch, e.batch) << e.kind;
    EXPECT_EQ(z->limit_w, e.limit_w) << e.kind;
    EXPECT_EQ(w.limits[zeus_limit_at_batch(w, 64, 0.5)].limit_w, e.at_share_w) << e.kind;
  }
  auto grid = best_static_grid(*model, 8);
  ASSERT_TRUE(grid.is_ok()) << grid.status().message();
  BatchSize sum = 0;
  for (const auto b : grid->batch) sum += b;
  EXPECT_EQ(sum, 512);
  EXPECT_EQ(grid->batch[0], grid->batch[1]);
  // No equal-batch plan at any limits beats the grid.
  auto equal = equal_batch_plan(*model, highest_limits(*model));
  ASSERT_TRUE(equal.is_ok());
  EXPECT_LT(grid->predicted.cost, equal->predicted.cost);
}

TEST(JointPowerStudy, MeetsTheGoalOnTheShippedScenario) {
  const StudyOptions options;
  auto results = run_joint_power_study(shipped(), mixed_cluster(), options);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  std::cout << format_joint_power_table(*results);
  auto cost = [&](PowerPolicy p) { return (*results)[static_cast<std::size_t>(p)].cost.mean; };
  const double joint = cost(PowerPolicy::kJoint);
  EXPECT_LT(joint, cost(PowerPolicy::kOmniLearnMaxLimits));
  EXPECT_LT(joint, cost(PowerPolicy::kZeusEqualBatches));
  EXPECT_LT(joint, cost(PowerPolicy::kZeusAtShare));
  EXPECT_LE(joint, 1.03 * cost(PowerPolicy::kBestStaticGrid));
  // Paired over the seeds: the savings against (i) and (ii) are positive with 95% confidence.
  for (const auto p : {PowerPolicy::kOmniLearnMaxLimits, PowerPolicy::kZeusEqualBatches}) {
    const auto& s = (*results)[static_cast<std::size_t>(p)].joint_saving;
    EXPECT_GT(s.mean - s.half_width, 0.0) << to_string(p);
  }
}

// One V100 25% slower than its table (a GPU that throttles): the joint controller learns it from measured times
// and stays within 3% of the best static grid point searched on the truth; Zeus's and the table's plans do not know.
TEST(JointPowerStudy, LearnsAGpuSlowerThanItsTable) {
  StudyOptions options;
  options.true_time_factor = {1.25, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  auto results = run_joint_power_study(shipped(), mixed_cluster(), options);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  std::cout << format_joint_power_table(*results);
  auto cost = [&](PowerPolicy p) { return (*results)[static_cast<std::size_t>(p)].cost.mean; };
  const double joint = cost(PowerPolicy::kJoint);
  EXPECT_LT(joint, cost(PowerPolicy::kOmniLearnMaxLimits));
  EXPECT_LT(joint, cost(PowerPolicy::kZeusEqualBatches));
  EXPECT_LE(joint, 1.03 * cost(PowerPolicy::kBestStaticGrid));
  options.true_time_factor.pop_back();
  EXPECT_FALSE(run_joint_power_study(shipped(), mixed_cluster(), options).is_ok());
}

TEST(JointPowerStudy, Intervals) {
  const auto i = mean_interval({1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(i.mean, 2.0);
  EXPECT_NEAR(i.half_width, 4.303 * 1.0 / std::sqrt(3.0), 1e-12);
  EXPECT_DOUBLE_EQ(mean_interval({5.0}).half_width, 0.0);
}

}  // namespace
}  // namespace omnilearn::energy_control
