// Allocation arithmetic shared by the policies: equal-finish-time solving under bounds (water-filling) and
// integer rounding that keeps an exact sum. Pure functions: thread-safe.
#pragma once

#include <span>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::controller {

// A worker's compute time as an affine function of its batch: t(b) = alpha + beta * b, beta > 0.
struct AffineCost {
  double alpha = 0.0;
  double beta = 1.0;
};

// Returns continuous batches x_k = clamp((T - alpha_k) / beta_k, lo_k, hi_k) with the single finish time T that
// makes sum(x) == total. With alpha = 0 and beta = 1/w this is the proportional split x_k ∝ w_k, clipped by
// water-filling. Requires sum(lo) <= total <= sum(hi), lo <= hi, beta > 0 (checked: an error otherwise).
Result<std::vector<double>> solve_equal_time(std::span<const AffineCost> costs, std::span<const BatchSize> lo,
                                             std::span<const BatchSize> hi, double total);

// Rounds `x` (lo <= x <= hi, sum(x) == total up to rounding) to integers with the same sum by largest
// remainder, never leaving [lo, hi]. Ties go to the lower index. Requires a feasible total.
std::vector<BatchSize> round_largest_remainder(std::span<const double> x, std::span<const BatchSize> lo,
                                               std::span<const BatchSize> hi, BatchSize total);

// Proportional split of `total` by positive `weights` under bounds, rounded: the composition of the two above.
Result<std::vector<BatchSize>> allocate_proportional(std::span<const double> weights, std::span<const BatchSize> lo,
                                                     std::span<const BatchSize> hi, BatchSize total);

}  // namespace omnilearn::controller
