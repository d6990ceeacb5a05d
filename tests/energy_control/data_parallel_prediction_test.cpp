// The data-parallel prediction (issue 35, part 1): N = 1 is Zeus's single-GPU row; more GPUs add only the ring
// all-reduce to the step, charged at the wait power; a lower power limit never shortens the compute.
#include "omnilearn/energy_control/data_parallel_prediction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "omnilearn/hybrid/stage_costs.h"

namespace omnilearn::energy_control {
namespace {

const traces::GpuPowerTable& shipped() {
  static const traces::GpuPowerTable table = [] {
    auto t = traces::read_gpu_power_table(std::string(OMNILEARN_DEVICES_DIR) + "/zeus-power.csv");
    OMNI_CHECK(t.is_ok(), t.status().message());
    return std::move(*t);
  }();
  return table;
}

const std::vector<std::int64_t> kGpus = {1, 2, 4};

TEST(DataParallelPrediction, OneGpuIsTheTablesRow) {
  const GpuClusterSpec spec;
  auto points = predict_data_parallel(shipped(), "v100", spec, std::vector<std::int64_t>{1});
  ASSERT_TRUE(points.is_ok()) << points.status().message();
  // Every measured batch (8 of them) at every measured limit (100-250 W by 25).
  ASSERT_EQ(points->size(), 8u * 7u);
  const double d = static_cast<double>(spec.samples_per_epoch);
  for (const auto& p : *points) {
    auto row = shipped().figure("v100", spec.workload, p.batch_per_gpu, p.power_limit_w);
    ASSERT_TRUE(row.is_ok());
    EXPECT_EQ(row->source, traces::GpuFigureSource::kMeasured);
    const double b = static_cast<double>(p.batch_per_gpu);
    EXPECT_EQ(p.allreduce_s, 0.0);
    EXPECT_NEAR(p.step_s, row->time_per_epoch_s * b / d, 1e-12);
    EXPECT_NEAR(p.energy_per_gpu_step_j, row->energy_per_epoch_j * b / d, 1e-9);
    EXPECT_NEAR(p.epoch_s, row->time_per_epoch_s, 1e-6);
    EXPECT_NEAR(p.energy_per_gpu_epoch_j, row->energy_per_epoch_j, 1e-3);
  }
  // The measured V100 row at batch 256 and 250 W: 3514.99 s and 774176 J per epoch.
  const auto& top = points->at(6 * 7 + 6);
  EXPECT_EQ(top.batch_per_gpu, 256);
  EXPECT_EQ(top.power_limit_w, 250.0);
  EXPECT_NEAR(top.epoch_s, 3514.99, 0.01);
}

TEST(DataParallelPrediction, MoreGpusAddOnlyTheAllReduceAtTheWaitPower) {
  const GpuClusterSpec spec;
  auto wait = lowest_measured_power(shipped(), "v100");
  ASSERT_TRUE(wait.is_ok());
  for (const auto& kind : shipped().kinds()) {
    auto points = predict_data_parallel(shipped(), kind, spec, kGpus);
    ASSERT_TRUE(points.is_ok()) << points.status().message();
    ASSERT_EQ(points->size() % 3, 0u);
    const std::size_t per_n = points->size() / 3;
    auto kind_wait = lowest_measured_power(shipped(), kind);
    ASSERT_TRUE(kind_wait.is_ok());
    for (std::size_t i = 0; i < per_n; ++i) {
      const auto& one = (*points)[i];
      for (std::size_t j = 1; j < 3; ++j) {
        const auto& many = (*points)[j * per_n + i];
        ASSERT_EQ(many.batch_per_gpu, one.batch_per_gpu);
        ASSERT_EQ(many.power_limit_w, one.power_limit_w);
        const double ring = hybrid::ring_allreduce_s(many.gpus, spec.gradient_bytes, spec.bandwidth_bytes_per_s, 0.0);
        EXPECT_GT(ring, 0.0);
        EXPECT_DOUBLE_EQ(many.allreduce_s, ring);
        EXPECT_NEAR(many.step_s - one.step_s, ring, 1e-12) << kind << " x" << many.gpus;
        EXPECT_NEAR(many.energy_per_gpu_step_j - one.energy_per_gpu_step_j, *kind_wait * ring, 1e-9);
        // N GPUs share the epoch: D / (N b) steps each.
        EXPECT_NEAR(many.steps_per_epoch * static_cast<double>(many.gpus), one.steps_per_epoch, 1e-9);
      }
    }
  }
  EXPECT_NEAR(*wait, 34.75, 0.01);  // docs/energy.md: the V100's lowest measured row, NCF at batch 16384
  // The ring's 2(N-1)/N: 4 GPUs take 1.5 x the all-reduce of 2.
  auto points = predict_data_parallel(shipped(), "v100", spec, kGpus, std::vector<BatchSize>{256});
  ASSERT_TRUE(points.is_ok());
  EXPECT_NEAR((*points)[14].allreduce_s / (*points)[7].allreduce_s, 1.5, 1e-12);
}

// The model never makes a lower limit faster: its compute is the table's at every N, so the only reversals are
// Zeus's own measurements (12 adjacent-limit pairs of ResNet-50 on the A40, P100 and RTX 6000, up to 6.7% at
// batch 8; none on the V100).
TEST(DataParallelPrediction, ALowerLimitNeverShortensTheCompute) {
  const GpuClusterSpec spec;
  int reversed = 0;
  for (const auto& kind : shipped().kinds()) {
    auto points = predict_data_parallel(shipped(), kind, spec, kGpus);
    ASSERT_TRUE(points.is_ok()) << points.status().message();
    for (std::size_t i = 1; i < points->size(); ++i) {
      const auto& lower = (*points)[i - 1];
      const auto& higher = (*points)[i];
      if (lower.gpus != higher.gpus || lower.batch_per_gpu != higher.batch_per_gpu) continue;
      ASSERT_LT(lower.power_limit_w, higher.power_limit_w);
      auto t_lower = shipped().figure(kind, spec.workload, lower.batch_per_gpu, lower.power_limit_w);
      auto t_higher = shipped().figure(kind, spec.workload, higher.batch_per_gpu, higher.power_limit_w);
      ASSERT_TRUE(t_lower.is_ok() && t_higher.is_ok());
      const bool measured_reversed = t_lower->time_per_epoch_s < t_higher->time_per_epoch_s;
      EXPECT_EQ(lower.compute_s < higher.compute_s, measured_reversed)
          << kind << " x" << lower.gpus << " b " << lower.batch_per_gpu << " at " << lower.power_limit_w << " W";
      if (lower.compute_s < higher.compute_s) {
        EXPECT_NE(kind, "v100");
        EXPECT_LT(higher.compute_s / lower.compute_s, 1.07);
        if (lower.gpus == 1) ++reversed;
      }
    }
  }
  EXPECT_EQ(reversed, 12);
}

TEST(DataParallelPrediction, RefusesWhatItCannotPredict) {
  const GpuClusterSpec spec;
  auto zero = predict_data_parallel(shipped(), "v100", spec, std::vector<std::int64_t>{0});
  ASSERT_FALSE(zero.is_ok());
  EXPECT_NE(zero.status().message().find("gpus must be >= 1"), std::string::npos);
  EXPECT_FALSE(predict_data_parallel(shipped(), "t4", spec, kGpus).is_ok());
  auto outside = predict_data_parallel(shipped(), "v100", spec, kGpus, std::vector<BatchSize>{4});
  ASSERT_FALSE(outside.is_ok());
  EXPECT_NE(outside.status().message().find("batch 4"), std::string::npos) << outside.status().message();
}

}  // namespace
}  // namespace omnilearn::energy_control
