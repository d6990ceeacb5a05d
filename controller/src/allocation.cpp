#include "omnilearn/controller/allocation.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace omnilearn::controller {
namespace {

double clamp_batch(const AffineCost& c, BatchSize lo, BatchSize hi, double t) {
  return std::clamp((t - c.alpha) / c.beta, static_cast<double>(lo), static_cast<double>(hi));
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
  // Σ x_k(T) is piecewise linear and non-decreasing in T. Safeguarded Newton: each step solves the linear piece
  // the current T sits on (exact once on the right piece, so a handful of O(n) passes), with bisection of the
  // bracket [a, b] whenever a step would leave it.
  std::vector<double> inv_beta(n);
  double sum_inv = 0.0;
  double sum_alpha_inv = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    inv_beta[k] = 1.0 / costs[k].beta;
    sum_inv += inv_beta[k];
    sum_alpha_inv += costs[k].alpha * inv_beta[k];
  }
  double a = t_min;
  double b = t_max;
  double t = std::clamp((total + sum_alpha_inv) / sum_inv, a, b);
  const double tolerance = 1e-9 * std::max(1.0, total);
  for (int iteration = 0; iteration < 200; ++iteration) {
    double g = -total;
    double slope = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      const double y = (t - costs[k].alpha) * inv_beta[k];
      if (y <= static_cast<double>(lo[k])) {
        g += static_cast<double>(lo[k]);
      } else if (y >= static_cast<double>(hi[k])) {
        g += static_cast<double>(hi[k]);
      } else {
        g += y;
        slope += inv_beta[k];
      }
    }
    if (std::abs(g) <= tolerance) break;
    (g < 0.0 ? a : b) = t;
    double next = slope > 0.0 ? t - g / slope : 0.5 * (a + b);
    if (!(next > a && next < b)) next = 0.5 * (a + b);
    if (next == t) break;
    t = next;
  }
  for (std::size_t k = 0; k < n; ++k) x[k] = clamp_batch(costs[k], lo[k], hi[k], t);
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
  // Hand out the deficit (or take back a surplus) by remainder: largest first when adding, smallest first when
  // taking; ties by the lower index, so the result is deterministic. Only the first |deficit| of that order
  // matter, so a partial selection (linear time) replaces a full sort.
  auto remainder = [&](std::size_t k) { return x[k] - static_cast<double>(out[k]); };
  auto adjust = [&](bool add) {
    std::vector<std::size_t> eligible;
    eligible.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      if (add ? out[k] < hi[k] : out[k] > lo[k]) eligible.push_back(k);
    }
    const auto first = [&](std::size_t a, std::size_t b) {
      const double ra = remainder(a), rb = remainder(b);
      if (ra != rb) return add ? ra > rb : ra < rb;
      return add ? a < b : a > b;
    };
    const std::size_t count = std::min<std::size_t>(eligible.size(), static_cast<std::size_t>(std::abs(total - sum)));
    if (count == 0) return false;
    std::nth_element(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(count - 1), eligible.end(), first);
    for (std::size_t i = 0; i < count; ++i) {
      out[eligible[i]] += add ? 1 : -1;
      sum += add ? 1 : -1;
    }
    return true;
  };
  // Floating-point slack can leave the deficit off by a little in either direction; repeat until it is closed.
  while (sum != total && adjust(sum < total)) {
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
