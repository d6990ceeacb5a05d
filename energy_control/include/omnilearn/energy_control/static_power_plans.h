// Static (batch, power limit) plans for a GpuClusterModel, the baselines of the joint controller: Zeus's choice
// per kind with equal batches, and the best plan of a grid searched offline. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/joint_power_plan.h"
#include "omnilearn/energy_control/gpu_cluster_model.h"
#include "omnilearn/traces/gpu_power_table.h"

namespace omnilearn::energy_control {

// Zeus on one GPU of a kind: the measured (batch, limit) of least cost per epoch, η E_epoch + (1 − η) P_max
// T_epoch with P_max the kind's highest limit (Zeus's zeus_cost on one GPU), among the model's limits; and the limit
// of least cost at one given batch.
struct ZeusChoice {
  std::string kind;
  BatchSize batch = 0;
  double limit_w = 0.0;
};
Result<ZeusChoice> zeus_best_measured(const traces::GpuPowerTable& table, const std::string& kind,
                                      const std::string& workload, double eta);
// The index into `worker`'s limits of least single-GPU cost at `batch` (within its bounds).
std::size_t zeus_limit_at_batch(const controller::WorkerPowerModel& worker, BatchSize batch, double eta);

// Equal batches B / n (the remainder one each to the lowest ids), each worker at limit index `limit[k]`. Error if
// an equal batch leaves a worker's bounds.
Result<controller::JointPlan> equal_batch_plan(const GpuClusterModel& model, std::vector<std::size_t> limit);

// Every worker's highest limit (OmniLearn alone runs there).
std::vector<std::size_t> highest_limits(const GpuClusterModel& model);
// Every worker at the limit of `limit_w` by kind (Zeus's choices); error if a kind has no such limit.
Result<std::vector<std::size_t>> limits_by_kind(const GpuClusterModel& model, const std::vector<ZeusChoice>& choices);

// The best static grid point, found offline on the noise-free model with each worker's times multiplied by
// `time_factor[k]` (empty: 1): the workers of one kind and factor share a batch (a multiple of `batch_step` within
// their bounds) and a limit (any of theirs); every combination whose batches sum to B is priced as
// joint_step_cost prices it and the cheapest returned. Error if none sums to B.
Result<controller::JointPlan> best_static_grid(const GpuClusterModel& model, BatchSize batch_step,
                                               std::span<const double> time_factor = {});

}  // namespace omnilearn::energy_control
