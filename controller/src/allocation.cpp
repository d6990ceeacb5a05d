#include "omnilearn/controller/allocation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace omnilearn::controller {
namespace {

double clamp_batch(const AffineCost& c, BatchSize lo, BatchSize hi, double t) {
  return std::clamp((t - c.alpha) / c.beta, static_cast<double>(lo), static_cast<double>(hi));
}

double total_at(std::span<const AffineCost> costs, std::span<const BatchSize> lo, std::span<const BatchSize> hi,
                double t) {
  double sum = 0.0;
  for (std::size_t k = 0; k < costs.size(); ++k) sum += clamp_batch(costs[k], lo[k], hi[k], t);
  return sum;
}

}  // namespace

Result<std::vector<double>> solve_equal_time(std::span<const AffineCost> costs, std::span<const BatchSize> lo,
                                             std::span<const BatchSize> hi, double total) {
  const std::size_t n = costs.size();
  if (lo.size() != n || hi.size() != n) return Status::invalid_argument("costs, lo and hi differ in length");
  double sum_lo = 0.0;
  double sum_hi = 0.0;
  double t_min = INFINITY;
  double t_max = -INFINITY;
  for (std::size_t k = 0; k < n; ++k) {
    if (!(costs[k].beta > 0.0) || !std::isfinite(costs[k].alpha) || !std::isfinite(costs[k].beta)) {
      return Status::invalid_argument("worker " + std::to_string(k) + ": cost slope must be positive and finite");
    }
    if (lo[k] > hi[k]) return Status::invalid_argument("worker " + std::to_string(k) + ": lo > hi");
    sum_lo += static_cast<double>(lo[k]);
    sum_hi += static_cast<double>(hi[k]);
    t_min = std::min(t_min, costs[k].alpha + costs[k].beta * static_cast<double>(lo[k]));
    t_max = std::max(t_max, costs[k].alpha + costs[k].beta * static_cast<double>(hi[k]));
  }
  if (total < sum_lo - 1e-9 || total > sum_hi + 1e-9) {
    return Status::invalid_argument("total " + std::to_string(total) + " outside [sum(lo), sum(hi)] = [" +
                                    std::to_string(sum_lo) + ", " + std::to_string(sum_hi) + "]");
  }
  std::vector<double> x(n);
  if (n == 0) return x;
  // Bisection on the common finish time T locates which workers sit at a bound; the free workers then give
  // T exactly: sum_free (T - alpha)/beta = total - sum_fixed.
  double a = t_min;
  double b = t_max;
  for (int i = 0; i < 100 && b - a > 1e-13 * std::max(1.0, std::abs(b)); ++i) {
    const double mid = 0.5 * (a + b);
    (total_at(costs, lo, hi, mid) < total ? a : b) = mid;
  }
  const double t = 0.5 * (a + b);
  double fixed = 0.0;
  double inv_beta = 0.0;
  double alpha_over_beta = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const double free_x = (t - costs[k].alpha) / costs[k].beta;
    if (free_x <= static_cast<double>(lo[k])) {
      fixed += static_cast<double>(lo[k]);
    } else if (free_x >= static_cast<double>(hi[k])) {
      fixed += static_cast<double>(hi[k]);
    } else {
      inv_beta += 1.0 / costs[k].beta;
      alpha_over_beta += costs[k].alpha / costs[k].beta;
    }
  }
  const double t_exact = inv_beta > 0.0 ? (total - fixed + alpha_over_beta) / inv_beta : t;
  for (std::size_t k = 0; k < n; ++k) x[k] = clamp_batch(costs[k], lo[k], hi[k], t_exact);
  return x;
}

std::vector<BatchSize> round_largest_remainder(std::span<const double> x, std::span<const BatchSize> lo,
                                               std::span<const BatchSize> hi, BatchSize total) {
  const std::size_t n = x.size();
  std::vector<BatchSize> out(n);
  BatchSize sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    out[k] = std::clamp(static_cast<BatchSize>(std::floor(x[k])), lo[k], hi[k]);
    sum += out[k];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto remainder = [&](std::size_t k) { return x[k] - static_cast<double>(out[k]); };
  // Largest remainder first; ties by the lower index so the result is deterministic.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder(a) > remainder(b); });
  // Floating-point slack can leave the deficit off by one in either direction; walk the order as often as needed.
  while (sum < total) {
    bool moved = false;
    for (std::size_t k : order) {
      if (sum == total) break;
      if (out[k] < hi[k]) ++out[k], ++sum, moved = true;
    }
    if (!moved) break;
  }
  while (sum > total) {
    bool moved = false;
    for (auto it = order.rbegin(); it != order.rend() && sum > total; ++it) {
      if (out[*it] > lo[*it]) --out[*it], --sum, moved = true;
    }
    if (!moved) break;
  }
  return out;
}

Result<std::vector<BatchSize>> allocate_proportional(std::span<const double> weights, std::span<const BatchSize> lo,
                                                     std::span<const BatchSize> hi, BatchSize total) {
  std::vector<AffineCost> costs(weights.size());
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (!(weights[k] > 0.0) || !std::isfinite(weights[k])) {
      return Status::invalid_argument("worker " + std::to_string(k) + ": weight must be positive and finite");
    }
    costs[k] = AffineCost{.alpha = 0.0, .beta = 1.0 / weights[k]};
  }
  auto x = solve_equal_time(costs, lo, hi, static_cast<double>(total));
  if (!x) return x.status();
  return round_largest_remainder(*x, lo, hi, total);
}

}  // namespace omnilearn::controller
