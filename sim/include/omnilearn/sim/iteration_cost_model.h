// IterationCostModel: what one training iteration costs on each worker — compute flop for a batch
// (c0 + c1 * b) and the gradient bytes to exchange. Immutable after create(): safe to share between threads.
#pragma once

#include <optional>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

// Compute time at CPU share `share` (of one core) over the time at a full core, from the profile's measured
// table (piecewise-linear; proportional to 1/share beyond either end), or 1/share without a table.
double cpu_slowdown(const scenarios::ModelProfile& model, double share);

// Wall time of a burst needing `cpu_s` CPU seconds in a process held to `share` of a core by a CFS quota of
// period `period_s`, starting `phase` (in [0, 1]) into a period with its quota unused (the process was idle): it
// runs up to a full quota at once, then one quota per period. Without `phase`, the expectation over a uniform
// phase: about cpu_s / share for long bursts, less for short ones. cpu_s / share when share >= 1 or period_s is 0.
Seconds quota_burst_seconds(Seconds cpu_s, double share, Seconds period_s, std::optional<double> phase = std::nullopt);

// Water-filling of `available` cores over CPU shares: min(s_k, L) with L such that they add up to `available`;
// the shares unchanged when they fit.
std::vector<double> water_fill(const std::vector<double>& shares, double available);

class IterationCostModel {
 public:
  // Per worker, c0 = model.flops_per_iteration and c1 = model.flops_per_sample; when the profile carries a
  // measured law (compute seconds a + c * b at full speed) it wins and is converted to flop at each node's
  // nominal speed: c0 = a * speed, c1 = c * speed. With model.host_core_flops the worker runs at CPU share
  // s = speed / host_core_flops and both are multiplied by cpu_slowdown(model, s), so at full availability it
  // computes (a + c * b) * slowdown(s) seconds; with model.host_cpu_available, s is first water-filled into it.
  // With model.quota_period_s too, a worker held back by its own quota (share < 1, not cut by other load) computes
  // a burst: quota_burst_seconds of the CPU (a + c * b) * slowdown(s) * s, since it idled in the all-reduce before.
  // Gradient bytes default to 4 bytes per parameter. Errors name the model field that is missing or invalid.
  static Result<IterationCostModel> create(const scenarios::ModelProfile& model,
                                           const std::vector<scenarios::NodeSpec>& workers);

  // Flop worker `k` computes for one iteration at batch `b`. For a worker that computes quota bursts (bursts()),
  // `phase` in [0, 1] is how far into its quota period the burst starts (drivers sample it: the jitter a quota
  // gives); absent, the expectation over phases.
  double flops(WorkerId k, BatchSize b, std::optional<double> phase = std::nullopt) const;
  bool bursts(WorkerId k) const;
  // model.compute_jitter_cv: drivers multiply each step's flop by a log-normal factor of mean 1 and this CV (and
  // then sample no quota phase); model.compute_noise, when given, takes its place. 0: none.
  double jitter_cv() const { return jitter_cv_; }
  double jitter_shared() const { return jitter_shared_; }  // model.compute_jitter_shared
  // model.compute_noise: whether there is a table, and worker k's standard deviation of a step's compute in
  // seconds at its CPU share (0 without a table).
  bool has_noise() const { return !noise_std_s_.empty(); }
  Seconds noise_std_s(WorkerId k) const { return noise_std_s_.empty() ? 0.0 : noise_std_s_.at(k); }
  // Seconds that iteration takes on worker `k` running at `fraction` of its nominal speed (fraction > 0).
  Seconds seconds(WorkerId k, BatchSize b, double fraction = 1.0) const;
  // Worker `k`'s CPU share of one host core (speed / model.host_core_flops); absent without host_core_flops.
  std::optional<double> cpu_share(WorkerId k) const;
  double gradient_bytes() const { return gradient_bytes_; }
  double speed(WorkerId k) const { return speed_.at(k); }  // the node's nominal flop/s
  std::size_t worker_count() const { return c0_.size(); }

 private:
  IterationCostModel() = default;
  std::vector<double> c0_;
  std::vector<double> c1_;
  std::vector<double> speed_;
  std::vector<double> share_;           // empty without host_core_flops
  std::vector<double> burst_period_s_;  // > 0: the worker computes quota bursts of this period
  double gradient_bytes_ = 0.0;
  double jitter_cv_ = 0.0;
  double jitter_shared_ = 0.0;
  std::vector<Seconds> noise_std_s_;  // per worker; empty without model.compute_noise
};

}  // namespace omnilearn::sim
