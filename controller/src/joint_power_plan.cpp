#include "omnilearn/controller/joint_power_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace omnilearn::controller {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Rounds of the fine search at most, each around the best plan of the one before.
constexpr int kRefineRounds = 6;

std::string worker_name(std::size_t k) { return "worker " + std::to_string(k); }

Status validate_curve(const WorkerPowerModel& w, const PowerLimitCurve& c, const std::string& where) {
  const auto n = static_cast<std::size_t>(w.hi - w.lo + 1);
  if (!(c.limit_w > 0.0) || !std::isfinite(c.limit_w)) return Status::invalid_argument(where + ": limit_w must be > 0");
  if (c.time_s.size() != n || c.power_w.size() != n) {
    return Status::invalid_argument(where + ": time_s and power_w need " + std::to_string(n) + " values (lo..hi)");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!(c.time_s[i] > 0.0) || !std::isfinite(c.time_s[i]) || !(c.power_w[i] > 0.0) || !std::isfinite(c.power_w[i])) {
      return Status::invalid_argument(where + " at batch " + std::to_string(w.lo + static_cast<BatchSize>(i)) +
                                      ": time and power must be positive and finite");
    }
  }
  return Status::ok();
}

Status validate_factors(std::size_t n, std::span<const double> time_factor) {
  if (time_factor.empty()) return Status::ok();
  if (time_factor.size() != n) return Status::invalid_argument("time_factor needs one value per worker");
  for (std::size_t k = 0; k < n; ++k) {
    if (!(time_factor[k] > 0.0) || !std::isfinite(time_factor[k])) {
      return Status::invalid_argument(worker_name(k) + ": time_factor must be positive and finite");
    }
  }
  return Status::ok();
}

double factor_of(std::span<const double> time_factor, std::size_t k) {
  return time_factor.empty() ? 1.0 : time_factor[k];
}

// The cheapest limit for worker `w` at batch `b` whose time (times `factor`) is at most `bound`: the excess energy
// (P − wait) t it costs and the limit's index, or an infinite energy if no limit meets the bound.
struct Choice {
  double excess_j = kInf;
  std::size_t limit = 0;
};
Choice cheapest_limit(const WorkerPowerModel& w, double factor, BatchSize b, Seconds bound) {
  Choice best;
  const auto i = static_cast<std::size_t>(b - w.lo);
  for (std::size_t l = 0; l < w.limits.size(); ++l) {
    const Seconds t = w.limits[l].time_s[i] * factor;
    if (t > bound) continue;
    const double excess = (w.limits[l].power_w[i] - w.wait_power_w) * t;
    if (excess < best.excess_j) best = {excess, l};
  }
  return best;
}

// The batches a worker may take in one search: from, from + step, ..., up to `to`.
struct Window {
  BatchSize from = 0;
  BatchSize to = 0;
  BatchSize step = 1;
};

// The least total excess energy with Σ b = total, b_k in window k and every compute time <= bound: a dynamic
// programme over the workers on the running sum. nullopt when nothing is feasible.
std::optional<JointPlan> solve_at_bound(std::span<const WorkerPowerModel> workers, std::span<const double> factors,
                                        std::span<const Window> windows, BatchSize total, Seconds bound) {
  const std::size_t n = workers.size();
  const auto states = static_cast<std::size_t>(total + 1);
  std::vector<double> cost(states, kInf);
  cost[0] = 0.0;
  std::vector<std::vector<BatchSize>> pick(n, std::vector<BatchSize>(states, 0));
  std::vector<Choice> choices;
  for (std::size_t k = 0; k < n; ++k) {
    choices.clear();
    for (BatchSize b = windows[k].from; b <= windows[k].to; b += windows[k].step) {
      choices.push_back(cheapest_limit(workers[k], factor_of(factors, k), b, bound));
    }
    std::vector<double> next(states, kInf);
    for (std::size_t s = 0; s < states; ++s) {
      if (cost[s] == kInf) continue;
      for (std::size_t j = 0; j < choices.size(); ++j) {
        const BatchSize b = windows[k].from + static_cast<BatchSize>(j) * windows[k].step;
        const auto to = s + static_cast<std::size_t>(b);
        if (to >= states) break;
        const double c = cost[s] + choices[j].excess_j;
        if (c < next[to]) next[to] = c, pick[k][to] = b;
      }
    }
    cost = std::move(next);
  }
  if (cost[states - 1] == kInf) return std::nullopt;
  JointPlan plan;
  plan.batch.assign(n, 0);
  plan.limit.assign(n, 0);
  auto s = static_cast<std::size_t>(total);
  for (std::size_t k = n; k-- > 0;) {
    plan.batch[k] = pick[k][s];
    plan.limit[k] = cheapest_limit(workers[k], factor_of(factors, k), plan.batch[k], bound).limit;
    s -= static_cast<std::size_t>(plan.batch[k]);
  }
  return plan;
}

// Windows of every batch a worker may take, or of multiples of `step` within its bounds (nullopt if a worker has
// none).
std::optional<std::vector<Window>> full_windows(std::span<const WorkerPowerModel> workers, BatchSize step) {
  std::vector<Window> out;
  for (const auto& w : workers) {
    const BatchSize from = (w.lo + step - 1) / step * step;
    const BatchSize to = w.hi / step * step;
    if (from > to) return std::nullopt;
    out.push_back({from, to, step});
  }
  return out;
}

// Step-time bounds: geometric from the fastest any worker can be to the slowest it can be.
std::vector<Seconds> bound_grid(std::span<const WorkerPowerModel> workers, std::span<const double> factors,
                                int points) {
  Seconds lo = 0.0;  // every worker must compute at least its fastest time
  Seconds hi = 0.0;
  for (std::size_t k = 0; k < workers.size(); ++k) {
    Seconds fastest = kInf;
    for (const auto& c : workers[k].limits) {
      fastest = std::min(fastest, *std::min_element(c.time_s.begin(), c.time_s.end()) * factor_of(factors, k));
      hi = std::max(hi, *std::max_element(c.time_s.begin(), c.time_s.end()) * factor_of(factors, k));
    }
    lo = std::max(lo, fastest);
  }
  std::vector<Seconds> grid;
  for (int i = 0; i < points; ++i) grid.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / (points - 1)));
  return grid;
}

// Solves at `bound`, prices the plan and keeps it in `best` if it is cheaper.
void try_bound(std::span<const WorkerPowerModel> workers, std::span<const double> factors,
               std::span<const Window> windows, BatchSize total, Seconds bound, const JointCostOptions& options,
               std::optional<JointPlan>& best) {
  auto plan = solve_at_bound(workers, factors, windows, total, bound);
  if (!plan) return;
  auto cost = joint_step_cost(workers, plan->batch, plan->limit, options, factors);
  if (!cost) return;
  plan->predicted = *cost;
  if (!best || plan->predicted.cost < best->predicted.cost) best = std::move(plan);
}

}  // namespace

Status validate_power_models(std::span<const WorkerPowerModel> workers, const JointCostOptions& options) {
  if (!(options.eta >= 0.0 && options.eta <= 1.0)) return Status::invalid_argument("eta must be in [0, 1]");
  if (!(options.max_power_w > 0.0) || !std::isfinite(options.max_power_w)) {
    return Status::invalid_argument("max_power_w must be positive and finite");
  }
  if (!(options.comm_s >= 0.0) || !std::isfinite(options.comm_s))
    return Status::invalid_argument("comm_s must be >= 0");
  if (options.coarse_step < 1 || options.time_points < 2 || options.refine_points < 1) {
    return Status::invalid_argument("coarse_step >= 1, time_points >= 2 and refine_points >= 1 are required");
  }
  if (workers.empty()) return Status::invalid_argument("no workers");
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const auto& w = workers[k];
    if (w.lo < 1 || w.hi < w.lo) return Status::invalid_argument(worker_name(k) + ": bounds need 1 <= lo <= hi");
    if (w.limits.empty()) return Status::invalid_argument(worker_name(k) + ": no power limits");
    if (!(w.wait_power_w >= 0.0) || !std::isfinite(w.wait_power_w)) {
      return Status::invalid_argument(worker_name(k) + ": wait_power_w must be >= 0");
    }
    for (std::size_t l = 0; l < w.limits.size(); ++l) {
      OMNI_RETURN_IF_ERROR(validate_curve(w, w.limits[l], worker_name(k) + " limit " + std::to_string(l)));
    }
  }
  return Status::ok();
}

Result<StepCost> joint_step_cost(std::span<const WorkerPowerModel> workers, std::span<const BatchSize> batch,
                                 std::span<const std::size_t> limit, const JointCostOptions& options,
                                 std::span<const double> time_factor) {
  const std::size_t n = workers.size();
  if (batch.size() != n || limit.size() != n) return Status::invalid_argument("batch and limit need one per worker");
  OMNI_RETURN_IF_ERROR(validate_factors(n, time_factor));
  std::vector<Seconds> t(n);
  std::vector<double> p(n);
  Seconds compute_s = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto& w = workers[k];
    if (batch[k] < w.lo || batch[k] > w.hi || limit[k] >= w.limits.size()) {
      return Status::invalid_argument(worker_name(k) + ": batch " + std::to_string(batch[k]) + " or limit index " +
                                      std::to_string(limit[k]) + " outside its model");
    }
    const auto i = static_cast<std::size_t>(batch[k] - w.lo);
    t[k] = w.limits[limit[k]].time_s[i] * factor_of(time_factor, k);
    p[k] = w.limits[limit[k]].power_w[i];
    compute_s = std::max(compute_s, t[k]);
  }
  StepCost out;
  out.step_s = compute_s + options.comm_s;
  for (std::size_t k = 0; k < n; ++k) out.energy_j += p[k] * t[k] + workers[k].wait_power_w * (out.step_s - t[k]);
  out.cost = options.eta * out.energy_j + (1.0 - options.eta) * options.max_power_w * out.step_s;
  return out;
}

Result<JointPlan> plan_joint(std::span<const WorkerPowerModel> workers, BatchSize total,
                             const JointCostOptions& options, std::span<const double> time_factor) {
  OMNI_RETURN_IF_ERROR(validate_power_models(workers, options));
  OMNI_RETURN_IF_ERROR(validate_factors(workers.size(), time_factor));
  BatchSize sum_lo = 0;
  BatchSize sum_hi = 0;
  for (const auto& w : workers) sum_lo += w.lo, sum_hi += w.hi;
  if (total < sum_lo || total > sum_hi) {
    return Status::invalid_argument("total batch " + std::to_string(total) + " outside [sum(lo), sum(hi)] = [" +
                                    std::to_string(sum_lo) + ", " + std::to_string(sum_hi) + "]");
  }
  const auto grid = bound_grid(workers, time_factor, options.time_points);
  // Coarse: multiples of coarse_step summing to total (every batch when that is impossible).
  BatchSize step = options.coarse_step;
  auto coarse = full_windows(workers, step);
  if (!coarse || total % step != 0) step = 1, coarse = full_windows(workers, 1);
  std::optional<JointPlan> best;
  for (const Seconds bound : grid) try_bound(workers, time_factor, *coarse, total, bound, options, best);
  if (!best && step > 1) {  // no multiples of the step sum to total within the bounds: every batch instead
    step = 1;
    coarse = full_windows(workers, 1);
    for (const Seconds bound : grid) try_bound(workers, time_factor, *coarse, total, bound, options, best);
  }
  if (!best) return Status::invalid_argument("no plan meets the bounds at any step time");
  // Fine: every batch within one coarse step of the best plan so far, bounds within two coarse spacings of its
  // slowest compute; again around each better plan found, a few times.
  const double spread = std::pow(grid.back() / grid.front(), 2.0 / (options.time_points - 1));
  for (int round = 0; round < kRefineRounds; ++round) {
    const double before = best->predicted.cost;
    std::vector<Window> fine;
    for (std::size_t k = 0; k < workers.size(); ++k) {
      fine.push_back(
          {std::max(workers[k].lo, best->batch[k] - step), std::min(workers[k].hi, best->batch[k] + step), 1});
    }
    const Seconds slowest = best->predicted.step_s - options.comm_s;
    try_bound(workers, time_factor, fine, total, slowest, options, best);
    for (int i = 0; i <= options.refine_points; ++i) {
      const double x = 2.0 * static_cast<double>(i) / options.refine_points - 1.0;  // -1 .. 1
      try_bound(workers, time_factor, fine, total, slowest * std::pow(spread, x), options, best);
    }
    if (!(best->predicted.cost < before)) break;
  }
  return std::move(*best);
}

}  // namespace omnilearn::controller
