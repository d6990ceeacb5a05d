// Factories for the built-in batch policies (DESIGN.md §3). Each returns a fresh, independent instance.
#pragma once

#include <functional>
#include <span>
#include <memory>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/batch_policy.h"

namespace omnilearn::controller {

// A worker's true compute time per iteration as a function of its batch; must be non-decreasing in b.
using CostFunction = std::function<Seconds(BatchSize)>;
// Supplies the true current cost function of every worker (indexed by WorkerId) at a decision point.
using TrueCostProvider = std::function<std::vector<CostFunction>(const ClusterSnapshot&)>;

// Options shared by the policies; each reads only what it uses.
struct PolicyOptions {
  // Fraction of the proportional correction applied per decision (the law's gain); 1 = the published law.
  double gain = 1.0;
  // affine: how many recent observations per worker the least-squares fit uses.
  std::size_t fit_window = 8;
  // oracle: the true cost functions (the simulator provides them). Required by "oracle".
  TrueCostProvider true_costs;
};

// Equal batches B/N (the usual default), remainder to the lowest ids.
std::unique_ptr<BatchPolicy> make_uniform_policy();
// Open-loop split of B in proportion to each worker's nominal capacity.
std::unique_ptr<BatchPolicy> make_static_policy();
// BSP law: b_k' = b_k - X_k (t_k - t̄) (i.e. X_k t̄), scaled so sum = B, water-filled into bounds, rounded.
std::unique_ptr<BatchPolicy> make_omnilearn_policy(const PolicyOptions& options);
// ASP law: the same per-worker correction against the mean time, clipped to bounds; the sum floats.
std::unique_ptr<BatchPolicy> make_omnilearn_asp_policy(const PolicyOptions& options);
// Fits t_k(b) = alpha_k + beta_k b per worker and solves for equal finish time in one step.
std::unique_ptr<BatchPolicy> make_affine_policy(const PolicyOptions& options);
// The optimal integer plan for the true costs (a lower bound no policy can beat). Needs options.true_costs.
Result<std::unique_ptr<BatchPolicy>> make_oracle_policy(const PolicyOptions& options);

// The optimal integer plan minimising max_k cost_k(b_k) subject to sum b = total and lo <= b <= hi, for
// non-decreasing costs (greedy unit allocation, exact for this problem). Requires sum(lo) <= total <= sum(hi).
std::vector<BatchSize> oracle_plan(std::span<const CostFunction> costs, std::span<const BatchSize> lo,
                                   std::span<const BatchSize> hi, BatchSize total);

}  // namespace omnilearn::controller
