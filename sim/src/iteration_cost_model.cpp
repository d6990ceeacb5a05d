#include "omnilearn/sim/iteration_cost_model.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace omnilearn::sim {
namespace {

bool positive(double v) { return v > 0.0 && std::isfinite(v); }
bool non_negative(double v) { return v >= 0.0 && std::isfinite(v); }

}  // namespace

Seconds quota_burst_seconds(Seconds cpu_s, double share, Seconds period_s, std::optional<double> phase) {
  if (!(share < 1.0) || !(period_s > 0.0) || !(cpu_s > 0.0)) return cpu_s / std::min(share, 1.0);
  const Seconds quota = share * period_s;
  // Starting with `left` of the current period to go, it may use its whole quota until the period ends, then one
  // quota per period; the last period's partial use ends the burst.
  auto at = [&](Seconds left) {
    const Seconds first = std::min(quota, left);
    if (cpu_s <= first) return cpu_s;
    const Seconds rest = cpu_s - first;
    const double full_periods = std::ceil(rest / quota) - 1.0;
    return left + full_periods * period_s + (rest - full_periods * quota);
  };
  if (phase) return at(period_s * (1.0 - std::clamp(*phase, 0.0, 1.0)));
  constexpr int kPhases = 2000;  // the expectation over the phase, by the midpoint rule
  Seconds total = 0.0;
  for (int i = 0; i < kPhases; ++i) total += at(period_s * (1.0 - (i + 0.5) / kPhases));
  return total / kPhases;
}

std::vector<double> water_fill(const std::vector<double>& shares, double available) {
  double total = 0.0;
  for (double s : shares) total += s;
  if (!(total > available)) return shares;
  // sum_k min(s_k, L) = available: raise L over the ascending shares.
  std::vector<double> sorted = shares;
  std::sort(sorted.begin(), sorted.end());
  double below = 0.0;  // sum of the shares under the level
  double level = available / static_cast<double>(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const double rest = static_cast<double>(sorted.size() - i);
    level = (available - below) / rest;
    if (level <= sorted[i]) break;
    below += sorted[i];
  }
  std::vector<double> out;
  for (double s : shares) out.push_back(std::min(s, level));
  return out;
}

double cpu_slowdown(const scenarios::ModelProfile& model, double share) {
  const std::vector<double>& s = model.slowdown_shares;
  const std::vector<double>& f = model.slowdown_factors;
  if (s.empty() || s.size() != f.size()) return 1.0 / share;
  if (share <= s.front()) return f.front() * s.front() / share;
  if (share >= s.back()) return f.back() * s.back() / share;
  const auto hi = static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), share) - s.begin());
  const std::size_t lo = hi - 1;
  // Between two points the throughput (1 / slowdown), not the slowdown, is interpolated linearly: a quota that
  // holds its share exactly (slowdown 1/s) is then exact at every share. The slowdown itself is convex in the
  // share, and a straight line through it overstated a worker at 0.125 of a core by 9% (between 0.1 and 0.2).
  const double w = (share - s[lo]) / (s[hi] - s[lo]);
  return 1.0 / ((1.0 - w) / f[lo] + w / f[hi]);
}

namespace {

// model.compute_noise at share s: piecewise-linear between its points, constant beyond either end.
Seconds noise_at(const scenarios::ModelProfile& model, double share) {
  const std::vector<double>& s = model.noise_shares;
  const std::vector<double>& v = model.noise_std_s;
  if (share <= s.front()) return v.front();
  if (share >= s.back()) return v.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), share) - s.begin());
  const double w = (share - s[hi - 1]) / (s[hi] - s[hi - 1]);
  return v[hi - 1] + w * (v[hi] - v[hi - 1]);
}

}  // namespace

Result<IterationCostModel> IterationCostModel::create(const scenarios::ModelProfile& model,
                                                      const std::vector<scenarios::NodeSpec>& workers) {
  const std::string where = "workload.model '" + model.name + "'";
  const bool measured = model.measured_fixed_s.has_value() || model.measured_per_sample_s.has_value();
  if (measured) {
    if (!non_negative(model.measured_fixed_s.value_or(0.0))) {
      return Status::invalid_argument(where + ": measured_fixed_s must be >= 0");
    }
    if (!positive(model.measured_per_sample_s.value_or(0.0))) {
      return Status::invalid_argument(where + ": measured_per_sample_s must be > 0");
    }
  } else {
    if (!positive(model.flops_per_sample)) return Status::invalid_argument(where + ": flops_per_sample must be > 0");
    if (!non_negative(model.flops_per_iteration)) {
      return Status::invalid_argument(where + ": flops_per_iteration must be >= 0");
    }
  }
  if (model.host_core_flops && !(measured && positive(*model.host_core_flops))) {
    return Status::invalid_argument(where + ": host_core_flops must be > 0 and needs the measured law");
  }
  IterationCostModel m;
  m.gradient_bytes_ = model.gradient_bytes > 0.0 ? model.gradient_bytes : 4.0 * model.parameters;
  if (!non_negative(m.gradient_bytes_)) return Status::invalid_argument(where + ": gradient_bytes must be >= 0");
  std::vector<double> granted;  // the CPU each worker gets, after other load on the host
  if (model.host_core_flops) {
    for (const auto& w : workers) granted.push_back(w.speed_flops / *model.host_core_flops);
    if (model.host_cpu_available) granted = water_fill(granted, *model.host_cpu_available);
  }
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const double speed = workers[k].speed_flops;
    if (!positive(speed)) {
      return Status::invalid_argument("cluster.workers[" + std::to_string(k) + "].speed_flops: must be > 0");
    }
    m.speed_.push_back(speed);
    if (measured) {
      double slowdown = 1.0;
      if (model.host_core_flops) {
        m.share_.push_back(speed / *model.host_core_flops);
        slowdown = cpu_slowdown(model, granted[k]);
      }
      // Held back by its own quota (not by other load): its compute is a burst after an idle all-reduce.
      const bool burst = model.host_core_flops && model.quota_period_s > 0.0 && m.share_.back() < 1.0 &&
                         granted[k] >= m.share_.back() * (1.0 - 1e-9);
      m.burst_period_s_.push_back(burst ? std::max(model.quota_period_s, 1e-3 / m.share_.back()) : 0.0);
      m.c0_.push_back(model.measured_fixed_s.value_or(0.0) * speed * slowdown);
      m.c1_.push_back(*model.measured_per_sample_s * speed * slowdown);
    } else {
      m.c0_.push_back(model.flops_per_iteration);
      m.c1_.push_back(model.flops_per_sample);
    }
  }
  if (!model.noise_shares.empty()) {
    if (model.noise_std_s.size() != model.noise_shares.size()) {
      return Status::invalid_argument(where + ": compute_noise needs one std_s per share");
    }
    if (m.share_.empty()) return Status::invalid_argument(where + ": compute_noise needs host_core_flops");
    for (double s : m.share_) m.noise_std_s_.push_back(noise_at(model, s));
  }
  m.jitter_cv_ = model.compute_jitter_cv;
  m.jitter_shared_ = model.compute_jitter_shared;
  return m;
}

double IterationCostModel::flops(WorkerId k, BatchSize b, std::optional<double> phase) const {
  const double linear = c0_.at(k) + c1_.at(k) * static_cast<double>(b);
  if (burst_period_s_.empty() || burst_period_s_.at(k) <= 0.0) return linear;
  // The CPU the step needs is the slowed-down law times the share (slowdown(s) * s: CPU per step over full-core
  // time); the quota turns it into wall time.
  const double s = share_.at(k);
  return quota_burst_seconds(linear / speed_.at(k) * s, s, burst_period_s_.at(k), phase) * speed_.at(k);
}

bool IterationCostModel::bursts(WorkerId k) const {
  return !burst_period_s_.empty() && burst_period_s_.at(k) > 0.0;
}

std::optional<double> IterationCostModel::cpu_share(WorkerId k) const {
  if (share_.empty()) return std::nullopt;
  return share_.at(k);
}

Seconds IterationCostModel::seconds(WorkerId k, BatchSize b, double fraction) const {
  return flops(k, b) / (speed_.at(k) * fraction);
}

}  // namespace omnilearn::sim
