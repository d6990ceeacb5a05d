// The data-parallel prediction: N GPUs of one kind training one workload of Zeus's single-GPU table at the same
// per-GPU batch and power limit, each step its compute plus a ring all-reduce, priced by GpuClusterModel and
// controller::joint_step_cost (docs/energy.md, "Several GPUs, data-parallel"). Modelled, not measured. Pure
// functions: thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/energy_control/gpu_cluster_model.h"
#include "omnilearn/traces/gpu_power_table.h"

namespace omnilearn::energy_control {

// One (N, b, L) point. Every GPU does the same work, so the per-GPU figures are the cluster's divided by N.
struct DataParallelPoint {
  std::string kind;
  std::string workload;
  std::int64_t gpus = 1;
  BatchSize batch_per_gpu = 1;
  double power_limit_w = 0.0;
  Seconds compute_s = 0.0;    // the table's time per epoch x b / D
  Seconds allreduce_s = 0.0;  // the model's ring all-reduce, not overlapped with the compute (0 for N = 1)
  Seconds step_s = 0.0;       // compute_s + allreduce_s
  double energy_per_gpu_step_j = 0.0;   // P(b, L) x compute_s + the wait power x allreduce_s
  double steps_per_epoch = 0.0;         // D / (N b)
  double energy_per_gpu_epoch_j = 0.0;  // energy_per_gpu_step_j x steps_per_epoch
  Seconds epoch_s = 0.0;                // step_s x steps_per_epoch
};

// For `kind` and `base.workload` (D, gradient bytes and link bandwidth from `base`; its kinds and global batch are
// ignored): every N of `gpus`, every per-GPU batch of `batches_per_gpu` (empty: the kind's measured batches of the
// workload) and every limit of the cluster model (those measured at all the workload's batches), in that order of
// nesting, limits increasing. Errors: an N below 1, and the model's (unknown kind or workload, a batch outside the
// measured range, bad spec fields).
Result<std::vector<DataParallelPoint>> predict_data_parallel(const traces::GpuPowerTable& table,
                                                             const std::string& kind, const GpuClusterSpec& base,
                                                             std::span<const std::int64_t> gpus,
                                                             std::span<const BatchSize> batches_per_gpu = {});

// The header of format_data_parallel_csv, then one line per point.
inline constexpr const char* kDataParallelCsvHeader =
    "kind,workload,gpus,batch_per_gpu,power_limit_w,step_s,allreduce_s,energy_per_gpu_step_j,"
    "energy_per_gpu_epoch_j,epoch_s";
std::string format_data_parallel_csv(const std::vector<DataParallelPoint>& points);

}  // namespace omnilearn::energy_control
