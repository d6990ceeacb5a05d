// AvailabilityPlan: a scenario's availability resolved once for a run, for both back ends: the levels in force at the
// start, an epoch schedule's levels, and the time-driven part (a schedule in seconds, a trace file with its window,
// node mapping and time scale, a generator, and the noise trace on top) as one AvailabilityTrace with one series per
// worker. The simulator turns it into power states, speed profiles and a daemon actor; the testbed into a queue of
// throttle changes. Immutable once made: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::run {

class AvailabilityPlan {
 public:
  // Reads trace files and runs generators. Errors name the availability field or trace file at fault (a phase
  // without one fraction per worker, a fraction outside [0, 1], epochs that do not increase, an unknown generator).
  static Result<AvailabilityPlan> create(const scenarios::Scenario& scenario);

  std::size_t worker_count() const { return workers_; }
  // An epoch schedule's phases (sorted, one fraction in [0, 1] per worker); empty unless the schedule is in epochs.
  const std::vector<scenarios::AvailabilityPhase>& epoch_phases() const { return epoch_phases_; }
  // The epoch schedule's levels in force in `epoch`; nullptr when no phase has started (every level is 1).
  const std::vector<double>* epoch_levels(std::int64_t epoch) const;
  // The time-driven part in the back end's seconds (simulated or since training started); nullopt when nothing
  // changes over time.
  const std::optional<traces::AvailabilityTrace>& timed() const { return timed_; }
  // Worker k's fraction at time 0 of epoch 0: the epoch level times the timed level (0: down).
  double initial(WorkerId k) const;

 private:
  std::size_t workers_ = 0;
  std::vector<scenarios::AvailabilityPhase> epoch_phases_;
  std::optional<traces::AvailabilityTrace> timed_;
};

}  // namespace omnilearn::run
