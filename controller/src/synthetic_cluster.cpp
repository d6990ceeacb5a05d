#include "omnilearn/controller/synthetic_cluster.h"

#include <algorithm>
#include <cmath>

namespace omnilearn::controller {

SyntheticCluster::SyntheticCluster(std::vector<SyntheticWorker> workers, double noise_sigma, std::uint64_t seed)
    : workers_(std::move(workers)), noise_sigma_(noise_sigma), rng_(seed) {}

Seconds SyntheticCluster::true_time(WorkerId k, BatchSize b) const {
  return workers_.at(k).alpha_s + workers_.at(k).beta_s * static_cast<double>(b);
}

std::vector<CostFunction> SyntheticCluster::cost_functions() const {
  std::vector<CostFunction> out;
  for (WorkerId k = 0; k < workers_.size(); ++k) {
    out.push_back([w = workers_[k]](BatchSize b) { return w.alpha_s + w.beta_s * static_cast<double>(b); });
  }
  return out;
}

Result<SyntheticStep> SyntheticCluster::step(Controller& controller) {
  SyntheticStep s;
  s.step = ++step_;
  s.batch = controller.current_plan().batch;
  s.compute_s.assign(workers_.size(), 0.0);
  std::normal_distribution<double> noise(0.0, noise_sigma_);
  double mean = 0.0;
  int live = 0;
  for (WorkerId k = 0; k < workers_.size(); ++k) {
    if (!controller.is_live(k) || s.batch[k] == 0) continue;
    const double factor = noise_sigma_ > 0.0 ? std::max(0.05, 1.0 + noise(rng_)) : 1.0;
    s.compute_s[k] = true_time(k, s.batch[k]) * factor;
    s.step_s = std::max(s.step_s, s.compute_s[k]);
    mean += true_time(k, s.batch[k]);
    ++live;
  }
  mean /= std::max(live, 1);
  for (WorkerId k = 0; k < workers_.size(); ++k) {
    if (s.compute_s[k] > 0.0) s.imbalance = std::max(s.imbalance, std::abs(true_time(k, s.batch[k]) - mean) / mean);
  }
  now_s_ += s.step_s;
  s.time_s = now_s_;
  for (WorkerId k = 0; k < workers_.size(); ++k) {
    if (s.compute_s[k] == 0.0) continue;
    OMNI_RETURN_IF_ERROR(controller.report(IterationDone{k, s.step, now_s_, s.compute_s[k], s.batch[k]}));
  }
  auto plan = controller.plan_next(DecisionPoint{s.step, 0, now_s_});
  if (!plan) return plan.status();
  s.plan = std::move(*plan);
  return s;
}

std::vector<SyntheticWorker> workers_from_cores(const std::vector<int>& cores, double per_core_sample_s,
                                                double fixed_s) {
  std::vector<SyntheticWorker> out;
  for (int c : cores) out.push_back(SyntheticWorker{fixed_s, per_core_sample_s / c});
  return out;
}

}  // namespace omnilearn::controller
