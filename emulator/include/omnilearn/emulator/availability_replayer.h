// AvailabilityReplayer: a run's availability plan (run/availability_plan.h: a schedule by seconds or epochs, a trace
// file, a generator, noise) as a queue of changes that the launcher applies on its own thread
// through a ResourceThrottler. Time is wall seconds since training started (rank 0 reports it). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/availability_plan.h"

namespace omnilearn::emulator {

struct AvailabilityEvent {
  Seconds time_s = 0.0;      // when it is due (epoch-scheduled events: 0, see `epoch`)
  std::int64_t epoch = -1;   // >= 0 for an epoch-scheduled change
  WorkerId worker = 0;
  double fraction = 1.0;
};

class AvailabilityReplayer {
 public:
  // The plan as a queue; an epoch schedule with a timed part (noise) is an error.
  static Result<AvailabilityReplayer> create(const run::AvailabilityPlan& plan);

  // Fractions in force at the start (time 0, epoch 0).
  const std::vector<double>& initial() const { return initial_; }
  // Removes and returns the changes due by wall time `now_s` or epoch `epoch`, in order; each changes the
  // fraction of its worker (repeats of the level in force are dropped).
  std::vector<AvailabilityEvent> take_due(Seconds now_s, std::int64_t epoch);
  // Wall time of the next timed change, if any.
  std::optional<Seconds> next_time() const;
  bool empty() const { return next_ >= events_.size(); }

 private:
  std::vector<double> initial_;
  std::vector<double> current_;
  std::vector<AvailabilityEvent> events_;  // timed ones sorted by time, or epoch ones sorted by epoch
  std::size_t next_ = 0;
};

}  // namespace omnilearn::emulator
