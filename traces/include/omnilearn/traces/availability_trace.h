// AvailabilityTrace: validated, immutable, piecewise-constant availability (fraction of nominal capacity)
// per worker over time. Immutable after create(): safe to share and read from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// From time_s on (until the next point) the worker runs at `fraction` of its nominal capacity; 0 = down.
struct TracePoint {
  Seconds time_s = 0.0;
  double fraction = 1.0;
  friend bool operator==(const TracePoint&, const TracePoint&) = default;
};

// One worker's name and its change points, sorted by strictly increasing time.
struct WorkerSeries {
  std::string name;
  std::vector<TracePoint> points;
};

class AvailabilityTrace {
 public:
  // Validates and normalises. Requires: at least one worker; unique, non-empty names without ',', '#' at the
  // start, or whitespace at either end; finite times >= 0, strictly increasing per worker; fractions in [0,1].
  // Normalises: a worker with no point at 0 gets (0, 1.0) first; a point repeating the previous fraction is
  // dropped. duration_s defaults to loop_after_s, else the last change time; it may not precede any change.
  // loop_after_s (> 0, after every change) makes the trace repeat with that period.
  static Result<AvailabilityTrace> create(std::vector<WorkerSeries> workers,
                                          std::optional<Seconds> duration_s = std::nullopt,
                                          std::optional<Seconds> loop_after_s = std::nullopt);

  std::size_t worker_count() const { return workers_.size(); }
  const std::string& worker_name(WorkerId worker) const;
  // The dense index of the worker called `name`, if any.
  std::optional<WorkerId> find_worker(std::string_view name) const;
  // The change points of one worker: the first is at time 0, fractions differ between neighbours.
  const std::vector<TracePoint>& changes(WorkerId worker) const;
  const std::vector<WorkerSeries>& workers() const { return workers_; }

  // The fraction in force at time t (t < 0 reads as 0). Past duration() a looping trace wraps around with
  // period loop_after_s(); a non-looping one holds its last value.
  double fraction_at(WorkerId worker, Seconds t) const;
  // Times in [t0, t1) where this worker's fraction may change, t0 first; loops are unrolled.
  std::vector<Seconds> change_times_in(WorkerId worker, Seconds t0, Seconds t1) const;

  Seconds duration() const { return duration_s_; }
  std::optional<Seconds> loop_after_s() const { return loop_after_s_; }

 private:
  AvailabilityTrace() = default;
  std::vector<WorkerSeries> workers_;
  Seconds duration_s_ = 0.0;
  std::optional<Seconds> loop_after_s_;
};

}  // namespace omnilearn::traces
