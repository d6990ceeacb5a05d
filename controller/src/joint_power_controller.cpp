#include "omnilearn/controller/joint_power_controller.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace omnilearn::controller {

Result<JointPowerController> JointPowerController::create(std::vector<WorkerPowerModel> workers, BatchSize global_batch,
                                                          JointControllerOptions options) {
  if (options.every_n < 1) return Status::invalid_argument("every_n must be >= 1");
  if (!(options.ewma_alpha > 0.0 && options.ewma_alpha <= 1.0)) {
    return Status::invalid_argument("ewma_alpha must be in (0, 1]");
  }
  JointPowerController c(std::move(workers), global_batch, options);
  c.ratio_.assign(c.workers_.size(), 1.0);
  c.samples_.assign(c.workers_.size(), 0);
  auto plan = plan_joint(c.workers_, global_batch, options.cost);
  if (!plan) return plan.status();
  c.plan_ = std::move(*plan);
  return c;
}

Status JointPowerController::report(WorkerId worker, Seconds compute_s) {
  if (worker >= workers_.size()) return Status::invalid_argument("unknown worker " + std::to_string(worker));
  if (!(compute_s > 0.0) || !std::isfinite(compute_s)) {
    return Status::invalid_argument("worker " + std::to_string(worker) + ": compute_s must be positive and finite");
  }
  const auto& w = workers_[worker];
  const Seconds predicted = w.limits[plan_.limit[worker]].time_s[static_cast<std::size_t>(plan_.batch[worker] - w.lo)];
  const double sample = compute_s / predicted;
  // Bias-corrected as the batch controller's EWMA: the plain mean until 1/alpha samples, then weight alpha.
  const auto n = ++samples_[worker];
  const double weight = std::max(options_.ewma_alpha, 1.0 / static_cast<double>(n));
  ratio_[worker] += weight * (sample - ratio_[worker]);
  return Status::ok();
}

Result<bool> JointPowerController::plan_next(std::int64_t step) {
  if (step % options_.every_n != 0) return false;
  auto plan = plan_joint(workers_, global_batch_, options_.cost, ratio_);
  if (!plan) return plan.status();
  plan_ = std::move(*plan);
  return true;
}

}  // namespace omnilearn::controller
