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
  // staleness-bounded: R, the staleness a worker's push is sized to arrive within (workload.asp.delay_threshold of
  // the rule of that name). Required (> 0) by "staleness-bounded".
  double staleness_bound = 0.0;
};

// Equal batches B/N (the usual default), remainder to the lowest ids.
std::unique_ptr<BatchPolicy> make_uniform_policy();
// Open-loop split of B in proportion to each worker's nominal capacity.
std::unique_ptr<BatchPolicy> make_static_policy();
// BSP law: b_k' = b_k - X_k (t_k - t̄) (i.e. X_k t̄), scaled so sum = B, water-filled into bounds, rounded.
std::unique_ptr<BatchPolicy> make_omnilearn_policy(const PolicyOptions& options);
// ASP law: the same per-worker correction against the mean time, clipped to bounds; the sum floats.
std::unique_ptr<BatchPolicy> make_omnilearn_asp_policy(const PolicyOptions& options);
// ASP: each live worker at b_ref = B / n, except where its push would arrive more than R updates stale: there the
// largest batch whose expected staleness is within R (staleness_bounded_plan). Needs options.staleness_bound > 0.
Result<std::unique_ptr<BatchPolicy>> make_staleness_bounded_policy(const PolicyOptions& options);
// Fits t_k(b) = alpha_k + beta_k b per worker and solves for equal finish time in one step.
std::unique_ptr<BatchPolicy> make_affine_policy(const PolicyOptions& options);
// The optimal integer plan for the true costs (a lower bound no policy can beat). Needs options.true_costs.
Result<std::unique_ptr<BatchPolicy>> make_oracle_policy(const PolicyOptions& options);

// The optimal integer plan minimising max_k cost_k(b_k) subject to sum b = total and lo <= b <= hi, for
// non-decreasing costs (greedy unit allocation, exact for this problem). Requires sum(lo) <= total <= sum(hi).
std::vector<BatchSize> oracle_plan(std::span<const CostFunction> costs, std::span<const BatchSize> lo,
                                   std::span<const BatchSize> hi, BatchSize total);

// The staleness-bounded batches. Worker k computes a sample in c_k = per_sample_s[k] seconds (0: not live, batch
// 0), so its push of b_k samples takes t_k = c_k b_k and arrives about τ_k = t_k Σ_{j≠k} 1 / t_j updates stale (the
// other workers' pushes meanwhile). Starting from min(b_ref, hi_k) (at least lo_k) for every live worker, each
// round lowers every b_k above lo_k to the largest batch with τ_k <= bound at the other workers' current rates, from
// the same round's batches, until no batch changes. Batches only fall, so it ends; at the end every live k has
// τ_k <= bound or b_k = lo_k. Requires equal lengths, lo <= hi, b_ref >= 1 and bound > 0.
std::vector<BatchSize> staleness_bounded_plan(std::span<const double> per_sample_s, std::span<const BatchSize> lo,
                                              std::span<const BatchSize> hi, BatchSize b_ref, double bound);

}  // namespace omnilearn::controller
