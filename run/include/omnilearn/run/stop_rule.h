// StopRule: when a run stops, one rule for every back end (the simulator, the testbed's workers, the PyTorch
// integration). It owns the limits (epochs or a sample budget, a step cap, a time budget, a target accuracy), is fed
// the run's progress (steps and samples applied, the training time in the back end's clock, each evaluation's
// accuracy) and answers the reason to stop. Not thread-safe: one instance per process, fed by the thread that applies
// the updates.
#pragma once

#include <cstdint>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/run/stop_reason.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::run {

// A limit of 0 is none. Steps are BSP steps or ASP updates applied; samples are those the applied updates processed.
struct StopLimits {
  std::int64_t dataset_samples = 0;  // samples per epoch
  std::int64_t epochs = 1;           // epochs to train; ignored when sample_budget > 0
  std::int64_t sample_budget = 0;    // > 0: stop after this many samples instead of after `epochs` epochs
  std::int64_t max_steps = 0;        // > 0: stop after this many steps
  Seconds time_budget_s = 0.0;       // > 0: stop once this much training time has passed
  double target_accuracy = 0.0;      // > 0: stop at an evaluation that reaches this test accuracy
};

// The limits a scenario sets: workload.dataset_samples, workload.epochs, workload.sample_budget, max_iterations,
// emulator.time_budget_s and emulator.target_accuracy.
StopLimits stop_limits(const scenarios::Scenario& scenario);
// Writes `limits` into those keys of `scenario` (the inverse of stop_limits), so that the manifest of a run whose
// limits came as options shows them.
void set_stop_limits(scenarios::Scenario& scenario, const StopLimits& limits);
// Limits given as options (a scenario's are checked by its parser): errors name the option at fault.
Status check_stop_limits(const StopLimits& limits);

class StopRule {
 public:
  explicit StopRule(const StopLimits& limits) : limits_(limits) {}

  // The totals after an applied update. Returns the reason they give, kNone if none: the step cap before the sample
  // budget or the epochs (the samples reach epochs x dataset_samples; dataset_samples and epochs below 1 count as 1).
  StopReason progress(std::int64_t steps, std::int64_t samples);
  // The training time so far, in the back end's clock: kTime once it reaches the time budget, else kNone.
  StopReason elapsed(Seconds training_s);
  // An evaluation's test accuracy: kTarget when it reaches the target, else kNone. An evaluation of the state the run
  // stopped at (the back ends' final one) still counts: reaching the target outranks the limit that stopped it.
  StopReason evaluation(double accuracy);
  // A reason found elsewhere: a stop request (kRequested), or the reason another process's rule gave.
  void stop(StopReason reason) { fire(reason); }

  // Why the run stops, kNone while it runs: of every reason fed so far, the one of highest precedence (requested,
  // target, time, steps, samples, epochs).
  StopReason reason() const { return reason_; }
  bool stopped() const { return reason_ != StopReason::kNone; }
  const StopLimits& limits() const { return limits_; }
  // The samples after which the run stops by samples or epochs: the budget, else epochs x dataset_samples.
  std::int64_t sample_limit() const;

 private:
  StopReason fire(StopReason reason);

  StopLimits limits_;
  StopReason reason_ = StopReason::kNone;
};

}  // namespace omnilearn::run
