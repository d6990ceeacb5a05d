// JointPowerController: each decision, every worker's batch (Σ b = B kept) and power limit chosen together by
// plan_joint() from per-worker (batch, limit) -> (time, power) models, corrected by what the driver measured: the
// predicted compute time of worker k is the model's times an EWMA of measured / predicted over its past steps.
// It never reads a clock. Not thread-safe: one driver thread.
#pragma once

#include <cstdint>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/controller/joint_power_plan.h"

namespace omnilearn::controller {

struct JointControllerOptions {
  JointCostOptions cost;
  std::int64_t every_n = 10;  // steps between decisions
  double ewma_alpha = 0.1;    // weight of the newest ratio, in (0, 1]; the plain mean of the first 1/alpha samples
};

class JointPowerController {
 public:
  // Checks the models and options and makes the first plan from the models alone (every ratio 1).
  static Result<JointPowerController> create(std::vector<WorkerPowerModel> workers, BatchSize global_batch,
                                             JointControllerOptions options);

  // One step's measured compute time of `worker` (no waiting, no communication), run at the plan in force.
  // Errors: an unknown worker, a time that is not positive and finite.
  Status report(WorkerId worker, Seconds compute_s);

  // Called after step `step` (1, 2, ...): replans when step is a multiple of every_n, from the models times the
  // learnt ratios. Returns whether it decided. Errors come from plan_joint.
  Result<bool> plan_next(std::int64_t step);

  const JointPlan& current_plan() const { return plan_; }
  // Measured / predicted compute time of `worker` (1 before any report).
  double time_ratio(WorkerId worker) const { return ratio_.at(worker); }

 private:
  JointPowerController(std::vector<WorkerPowerModel> workers, BatchSize global_batch, JointControllerOptions options)
      : workers_(std::move(workers)), global_batch_(global_batch), options_(options) {}

  std::vector<WorkerPowerModel> workers_;
  BatchSize global_batch_ = 0;
  JointControllerOptions options_;
  std::vector<double> ratio_;
  std::vector<std::int64_t> samples_;
  JointPlan plan_;
};

}  // namespace omnilearn::controller
