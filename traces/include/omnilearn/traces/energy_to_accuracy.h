// EnergyToAccuracy: the energy and time a recurring training job takes to reach its target metric at each measured
// (batch, power limit) of one GPU kind, from Zeus's measured epochs to target (ZeusTrainTrace) times its measured
// energy and time per epoch (GpuPowerTable), and the points Zeus's static analysis picks: the default batch at the
// largest limit (the baseline) and the least-cost point overall, at that limit and at that batch (docs/energy.md,
// "Energy to accuracy from Zeus's measured epochs"). Pure functions of their arguments: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/traces/gpu_power_table.h"
#include "omnilearn/traces/zeus_train.h"

namespace omnilearn::traces {

// A recurring training job as Zeus's simulator specifies one (zeus._legacy.job.Job).
struct ZeusJob {
  std::string workload;            // "dataset/network/optimizer"
  double target_metric = 0.0;      // the validation metric to reach, matched exactly against the trace's
  std::int64_t max_epochs = 0;     // a run that has not reached the target by this epoch has failed
  std::int64_t default_batch = 0;  // b0, the batch a user would pick; see EnergyToAccuracy::default_batch
};

// One (batch, power limit) and what reaching the target costs there, as Zeus's simulator expects it.
struct ToAccuracyPoint {
  std::int64_t batch = 0;
  std::int64_t power_limit_w = 0;
  double expected_epochs = 0.0;  // expected_epochs_to_target() of the batch's runs
  double reach_fraction = 0.0;   // of the batch's runs, those that reached the target within max_epochs
  double energy_j = 0.0;         // expected_epochs x the measured joules per epoch
  Seconds time_s = 0.0;          // expected_epochs x the measured seconds per epoch
  double cost_j = 0.0;           // eta x energy_j + (1 - eta) x max_power_w x time_s (Zeus's cost)
};

struct EnergyToAccuracy {
  std::string kind;
  ZeusJob job;
  // The baseline batch: job.default_batch, or the largest batch measured on the kind when that is smaller (Zeus's
  // run_alibaba.py: b0 = min(default, largest batch in the GPU's power trace)).
  std::int64_t default_batch = 0;
  double max_power_w = 0.0;  // MAXPOWER: the largest power limit measured for the workload on the kind
  double eta = 1.0;          // the weight of energy in the cost (1: energy only)
  // Every measured (batch, limit) whose batch reached the target, by batch then limit.
  std::vector<ToAccuracyPoint> points;
  std::vector<std::int64_t> unreached_batches;  // measured and trained, but no run reached the target in max_epochs
  std::vector<std::int64_t> untrained_batches;  // measured on the kind, absent from the training trace
  ToAccuracyPoint baseline;                     // default_batch at max_power_w
  ToAccuracyPoint best;        // the least cost over all points (ties: the smaller batch, then the lower limit)
  ToAccuracyPoint best_batch;  // the least cost at max_power_w: the batch alone chosen
  ToAccuracyPoint best_limit;  // the least cost at default_batch: the power limit alone chosen
};

// The expected epochs per reached target of a batch whose runs are `runs`, as Zeus's simulator (no early stopping,
// beta = infinity) expects them: each attempt draws one run uniformly; a run that reached the target by max_epochs
// costs its target epoch and ends the job, any other costs max_epochs and is retried. That is the sum over runs of
// (target epoch, or max_epochs) divided by the number that reached: with every run reaching, their mean. Nothing
// when none reached (the target is out of reach at this batch) or `runs` is empty.
std::optional<double> expected_epochs_to_target(const std::vector<ZeusRun>& runs, std::int64_t max_epochs);

// The job's energy and time to accuracy at every (batch, limit) measured for job.workload on `kind` whose batch has
// runs toward job.target_metric (measured points only: no interpolation), with cost weight `eta` in [0, 1].
// Errors: eta outside [0, 1], max_epochs or default_batch < 1 (invalid_argument); the workload not measured on
// `kind` or no runs toward the target (not_found, naming what is known); the baseline batch not measured, not
// trained or never reaching the target (invalid_argument, naming the batch).
Result<EnergyToAccuracy> energy_to_accuracy(const GpuPowerTable& power, const ZeusTrainTrace& train,
                                            const std::string& kind, const ZeusJob& job, double eta = 1.0);

// The saving of `point` against `baseline`, in percent: 100 x (1 - point / baseline), of the cost or of the energy
// (the time likewise, negative where the point is slower).
double cost_saving_pct(const ToAccuracyPoint& point, const ToAccuracyPoint& baseline);
double energy_saving_pct(const ToAccuracyPoint& point, const ToAccuracyPoint& baseline);
double time_saving_pct(const ToAccuracyPoint& point, const ToAccuracyPoint& baseline);

}  // namespace omnilearn::traces
