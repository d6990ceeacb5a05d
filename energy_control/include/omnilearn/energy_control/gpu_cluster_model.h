// GpuClusterModel: a data-parallel BSP job on a mixed GPU cluster modelled from Zeus's measured single-GPU tables
// (traces::GpuPowerTable): per worker, the compute time per step and the power at every batch of its kind's measured
// range and every limit measured there; a ring all-reduce after the slowest worker; a wait power per kind. The
// model behind docs/energy.md, "Batches and power limits together". Immutable values: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/controller/joint_power_plan.h"
#include "omnilearn/traces/gpu_power_table.h"

namespace omnilearn::energy_control {

// ImageNet-1k's training set (ILSVRC-2012), the samples of one epoch of Zeus's ResNet-50 rows.
inline constexpr std::int64_t kImageNetTrainSamples = 1281167;
// ResNet-50's gradient in fp32: 25.6 million parameters (scenarios/src/model_catalog.cpp) x 4 bytes.
inline constexpr double kResNet50GradientBytes = 25.6e6 * 4.0;

struct GpuClusterSpec {
  std::string workload = "imagenet/resnet50/adadelta";     // as the table names it: dataset/network/optimizer
  std::vector<std::string> kinds;                          // one per worker, as the table names them ("v100")
  std::int64_t samples_per_epoch = kImageNetTrainSamples;  // D: a step at batch b takes time_per_epoch x b / D
  BatchSize global_batch = 512;                            // B = Σ b_k, kept by every policy
  double gradient_bytes = kResNet50GradientBytes;
  double bandwidth_bytes_per_s = 25e9 / 8.0;  // each worker's link in the ring (25 Gb/s)
  double eta = 0.5;                           // Zeus's η (its default eta_knob)
};

struct GpuClusterModel {
  std::vector<std::string> kinds;                     // per worker
  std::vector<controller::WorkerPowerModel> workers;  // per worker; limits in increasing order
  controller::JointCostOptions cost;                  // η, P_max = Σ highest limits, comm_s = the ring
  std::int64_t samples_per_epoch = 0;
  BatchSize global_batch = 0;

  double steps_per_epoch() const { return static_cast<double>(samples_per_epoch) / static_cast<double>(global_batch); }
};

// The lowest average power of any measured row of `kind` (any workload, batch and limit): the GPU's wait power in
// this model, for the table has no idle figure. not_found for an unknown kind.
Result<double> lowest_measured_power(const traces::GpuPowerTable& table, const std::string& kind);

// Builds the model. Each worker's batches are its kind's measured range for the workload, capped at B; its limits
// those measured at every one of its batches; its curves the table's figure() at every integer batch (time per
// step = time_per_epoch x b / D). Errors: no workers, an unknown kind or workload (the table's message), B outside
// the workers' bounds, a non-positive D, bandwidth or gradient, eta outside [0, 1].
Result<GpuClusterModel> build_gpu_cluster_model(const traces::GpuPowerTable& table, const GpuClusterSpec& spec);

}  // namespace omnilearn::energy_control
