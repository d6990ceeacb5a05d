// Joint batch and power-limit planning for one BSP step: every worker's batch (their sum fixed) and power limit
// chosen together to minimise Zeus's cost η·E + (1 − η)·P_max·T of the step, from per-worker tables of time and
// power over (batch, limit) given as plain vectors (docs/energy.md, "Batches and power limits together"). Pure
// functions: thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::controller {

// One power limit a worker may run at: its compute time per step and average power at each batch lo..hi.
struct PowerLimitCurve {
  double limit_w = 0.0;
  std::vector<Seconds> time_s;  // [b - lo]: compute seconds of one step at batch b
  std::vector<double> power_w;  // [b - lo]: average power while computing, W
};

// What one worker can do: its batch bounds, its limits (any order) and the power it draws while it waits at the
// barrier or in the all-reduce.
struct WorkerPowerModel {
  BatchSize lo = 1;
  BatchSize hi = 1;
  std::vector<PowerLimitCurve> limits;
  double wait_power_w = 0.0;
};

// The cost of a step and how the search looks for its minimum.
struct JointCostOptions {
  double eta = 0.5;           // Zeus's η in [0, 1]: the weight of energy against time
  double max_power_w = 0.0;   // P_max: Zeus's max_power, for a cluster the sum of the workers' highest limits
  Seconds comm_s = 0.0;       // all-reduce after the slowest compute; every worker draws its wait power meanwhile
  BatchSize coarse_step = 8;  // batch spacing of the first, coarse search (1: every batch at once)
  int time_points = 64;       // step-time bounds tried by the coarse search, geometric between the extremes
  int refine_points = 16;     // bounds tried per refining round, around the best plan's slowest compute
};

// A step's figures: T = max compute + comm_s; E = Σ P_k t_k + wait_k (T − t_k); cost = η E + (1 − η) P_max T.
struct StepCost {
  Seconds step_s = 0.0;
  double energy_j = 0.0;
  double cost = 0.0;
};

// A plan: per worker, its batch and the index of its limit in WorkerPowerModel::limits.
struct JointPlan {
  std::vector<BatchSize> batch;
  std::vector<std::size_t> limit;
  StepCost predicted;  // under the models (and time factors) it was planned with
};

// Checks the models and options: lo >= 1, hi >= lo, at least one limit, each curve hi - lo + 1 positive finite
// times and powers, wait power >= 0, 0 <= eta <= 1, max_power_w > 0, comm_s >= 0, coarse_step >= 1,
// time_points >= 2, refine_points >= 1. Errors name the worker and field.
Status validate_power_models(std::span<const WorkerPowerModel> workers, const JointCostOptions& options);

// The figures of a step at `batch` and `limit` (indices), each worker's times multiplied by `time_factor[k]`
// (empty: 1). Requires a plan within the models (checked: invalid_argument).
Result<StepCost> joint_step_cost(std::span<const WorkerPowerModel> workers, std::span<const BatchSize> batch,
                                 std::span<const std::size_t> limit, const JointCostOptions& options,
                                 std::span<const double> time_factor = {});

// The plan of least cost with Σ batch = total and lo_k <= batch_k <= hi_k, times multiplied by `time_factor`
// (empty: 1). For a bound T on the slowest compute, a dynamic programme over the workers gives the batches of least
// Σ (P_k − wait_k) t_k with every worker at its cheapest limit meeting T (exact for that T). T is scanned over a
// geometric grid with batches on multiples of coarse_step (every batch if none sums to total), then, in up to six
// rounds, around the best plan's slowest compute with every batch within one coarse step of that plan's. Errors:
// invalid models or options, total outside [Σ lo, Σ hi], no feasible plan.
Result<JointPlan> plan_joint(std::span<const WorkerPowerModel> workers, BatchSize total,
                             const JointCostOptions& options, std::span<const double> time_factor = {});

}  // namespace omnilearn::controller
