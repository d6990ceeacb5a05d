// Summary statistics of an availability trace over [0, duration): per worker, and the heterogeneity level of
// the whole cluster over time. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::traces {

struct WorkerStatistics {
  std::string name;
  double mean_fraction = 0.0;  // time-weighted over [0, duration); the value at 0 for a zero-length trace
  double min_fraction = 0.0;
  double max_fraction = 0.0;
  Seconds down_s = 0.0;          // time at fraction 0
  std::size_t change_count = 0;  // changes after time 0
};

// From time_s on, `level` = max/min fraction among the live workers (fraction > 0); 1 when at most one
// worker is live (nothing to compare).
struct HeterogeneityStep {
  Seconds time_s = 0.0;
  double level = 1.0;
  std::size_t live_workers = 0;
};

struct TraceStatistics {
  Seconds duration_s = 0.0;
  std::vector<WorkerStatistics> workers;
  std::vector<HeterogeneityStep> heterogeneity;  // a step series over [0, duration), starting at 0
  double mean_heterogeneity = 1.0;               // time-weighted mean of `level`
  double max_heterogeneity = 1.0;
  std::size_t min_live_workers = 0;
};

TraceStatistics compute_statistics(const AvailabilityTrace& trace);

}  // namespace omnilearn::traces
