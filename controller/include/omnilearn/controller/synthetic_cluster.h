// SyntheticCluster: a reference driver for the Controller with analytic workers t_k(b) = (alpha_k + beta_k b)
// x (1 + noise), run in lock-step BSP. Used by the controller demo and the closed-loop tests. Deterministic
// for a seed. Not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policies.h"

namespace omnilearn::controller {

struct SyntheticWorker {
  double alpha_s = 0.0;  // fixed time per iteration
  double beta_s = 0.01;  // seconds per sample
};

// What one BSP step looked like.
struct SyntheticStep {
  std::int64_t step = 0;
  Seconds time_s = 0.0;              // simulated time at the end of the step
  Seconds step_s = 0.0;              // slowest worker's compute time (the BSP step time)
  std::vector<Seconds> compute_s;    // per worker, 0 when down
  std::vector<BatchSize> batch;
  double imbalance = 0.0;            // max|t_k - t̄| / t̄ of this step's true (noise-free) times
  Plan plan;                         // what plan_next returned after this step
};

class SyntheticCluster {
 public:
  SyntheticCluster(std::vector<SyntheticWorker> workers, double noise_sigma, std::uint64_t seed);

  // Noise-free compute time of worker k at batch b.
  Seconds true_time(WorkerId k, BatchSize b) const;
  // The true cost functions, in the form the oracle policy wants.
  std::vector<CostFunction> cost_functions() const;
  void set_worker(WorkerId k, SyntheticWorker w) { workers_.at(k) = w; }

  // Runs one BSP step with the controller's current plan: reports every live worker's iteration, then asks
  // plan_next. An error if the controller rejects an event or its policy makes an invalid plan.
  Result<SyntheticStep> step(Controller& controller);

 private:
  std::vector<SyntheticWorker> workers_;
  double noise_sigma_;
  std::mt19937_64 rng_;
  std::int64_t step_ = 0;
  Seconds now_s_ = 0.0;
};

// Workers whose speeds are proportional to `cores` (e.g. the paper's 12/12/8/16 split of a 48-core host):
// beta_k = per_core_sample_s / cores_k, alpha_k = fixed_s.
std::vector<SyntheticWorker> workers_from_cores(const std::vector<int>& cores, double per_core_sample_s,
                                                double fixed_s);

}  // namespace omnilearn::controller
