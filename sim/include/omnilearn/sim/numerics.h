// TrainingNumerics: the seam between the simulator's clock and real training (workload.numerics: real). The
// simulator decides WHEN each iteration happens and calls these at the moments the drivers reach; an implementation
// decides WHAT they compute (the LibTorch one is emulator/include/omnilearn/emulator/torch_numerics.h). The simulator
// itself never links Torch. Not thread-safe: called from the simulation thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

// What one worker's iteration computed on its own batch.
struct BatchOutcome {
  double loss = 0.0;
  double accuracy = 0.0;
};

struct EvaluationOutcome {
  double loss = 0.0;
  double accuracy = 0.0;  // in [0, 1]
};

class TrainingNumerics {
 public:
  virtual ~TrainingNumerics() = default;

  // BSP: a step is complete. batch[k] is what worker k was given this step (0: it took no part), lost[k] true when
  // its work was lost (it went down mid-step). The step's samples are drawn from the global sampler for `batch`,
  // each surviving worker's gradient is computed on the shared parameters, the gradients are combined with weights
  // b_k / Σ b over the survivors and applied once. Returns each worker's outcome (empty for those that computed
  // nothing), or an error.
  virtual Result<std::vector<std::optional<BatchOutcome>>> bsp_step(std::span<const BatchSize> batch,
                                                                    const std::vector<bool>& lost) = 0;
  // ASP: worker k's push of `batch` samples, computed in `compute_s`, reached the server `staleness` updates of
  // other workers after k pulled. The gradient is computed on k's parameters (those it pulled, or its own copy
  // between the pulls of workload.asp.pull: per-epoch), on k's next samples; the server applies it by workload.asp's
  // update and rule (a rule may drop it: the server's parameters then stay as they are).
  virtual Result<BatchOutcome> asp_push(WorkerId k, BatchSize batch, std::int64_t staleness, Seconds compute_s) = 0;
  // ASP: the server sends worker k the current parameters (k computes its next iteration on them).
  virtual void asp_pull(WorkerId k) = 0;
  // The current (BSP: shared; ASP: server's) parameters on the test set.
  virtual Result<EvaluationOutcome> evaluate() = 0;
  // Trainable parameters of the model, and (ASP) the largest number of distinct parameter versions held at once.
  virtual std::int64_t parameters() const = 0;
  virtual std::int64_t peak_versions() const { return 1; }
};

// Makes the numerics for `scenario` (its workload.numerics is kReal). Errors name the scenario field at fault.
using NumericsFactory = std::function<Result<std::unique_ptr<TrainingNumerics>>(const scenarios::Scenario&)>;

}  // namespace omnilearn::sim
