// VirtualTraining: the run-level side of workload.numerics: real. It owns the real numerics (TrainingNumerics) and
// does what the testbed's rank 0 / parameter server does around them: evaluates on the test set on the testbed's
// schedule (emulator.eval_every updates, else at each epoch's end), records evaluations, feeds the run's stop rule
// the simulated time (emulator.time_budget_s) and each evaluation's accuracy (emulator.target_accuracy), and fills
// the summary's time to target. The drivers call it at a step's end (BSP) or an applied push (ASP). Not thread-safe: simulation thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/run_recorder.h"
#include "omnilearn/run/stop_rule.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/numerics.h"

namespace omnilearn::sim {

class VirtualTraining {
 public:
  // BSP evaluations are labelled with the 0-based step (as the testbed's rank 0 does), ASP ones with the count of
  // applied updates (the parameter server's). `recorder` and `stop` (the run's one rule) must outlive this.
  VirtualTraining(const scenarios::Scenario& scenario, std::unique_ptr<TrainingNumerics> numerics,
                  run::RunRecorder& recorder, run::StopRule& stop);

  // BSP: the step's computation (TrainingNumerics::bsp_step); each worker's outcome, or none after an error.
  std::vector<std::optional<BatchOutcome>> bsp_step(std::span<const BatchSize> batch, const std::vector<bool>& lost);
  // ASP: a push that reached the server (TrainingNumerics::asp_push), then the pull of a reply with parameters.
  std::optional<BatchOutcome> asp_push(WorkerId k, BatchSize batch, std::int64_t staleness, Seconds compute_s);
  void asp_pull(WorkerId k) { numerics_->asp_pull(k); }

  // After `updates` applied updates (BSP steps or ASP pushes), at simulated time `now_s`, the run now in `epoch`
  // (`epoch_ended`: this update crossed an epoch boundary): the time budget, then an evaluation when one is due
  // (none twice at one update count: a push the rule dropped leaves the count where it was).
  void after_update(std::int64_t updates, std::int64_t epoch, bool epoch_ended, Seconds now_s);
  // True once the run should stop: the stop rule says so, or an error.
  bool done() const { return stop_.stopped() || !status_.is_ok(); }
  // The run is over: a last evaluation unless the last update was just evaluated.
  void finish(std::int64_t updates, std::int64_t epoch, Seconds now_s);
  // time_to_target_s, and extra: steps_to_target, parameters, peak parameter versions (ASP), stopped at the target.
  void fill(run::RunSummary& summary) const;
  const Status& status() const { return status_; }

 private:
  void evaluate(std::int64_t updates, std::int64_t epoch, Seconds now_s);

  const scenarios::EmulatorSpec& settings_;
  const bool bsp_;
  std::unique_ptr<TrainingNumerics> numerics_;
  run::RunRecorder& recorder_;
  run::StopRule& stop_;
  Status status_;
  std::int64_t last_evaluated_ = -1;  // the update count of the last evaluation
  std::optional<Seconds> time_to_target_s_;
  std::int64_t steps_to_target_ = -1;
};

}  // namespace omnilearn::sim
