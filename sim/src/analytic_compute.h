// analytic_compute_end: when a computation on a worker's host ends, found without a SimGrid activity. It repeats
// the arithmetic of SimGrid 3.32's CPU model (Cas01 with lazy updates, default precisions) for one execution alone
// on its host, over the host's speed profile. Not thread-safe: it moves the availability model's reading of the
// worker (see AvailabilityModel::speed_scale_at).
#pragma once

#include "availability_model.h"
#include "omnilearn/base/units.h"

namespace omnilearn::sim {

struct ComputeEnd {
  Seconds end_s = 0.0;
  bool aborted = false;  // the worker went down first: end_s is when that was announced
};

// The end of `flops` flop that start at `start_s` on worker k's host, whose power state computes `peak_flops` at
// scale 1. SimGrid's rate is the speed profile's scale times the peak; at each change of scale during the work it
// takes what the old rate did since the last change off the remaining work and dates the end at the new rate. A
// change to down before that end aborts the work at the time the availability actor announces it (as the driver's
// cancellation did). Requires start_s no earlier than any earlier read of worker k.
ComputeEnd analytic_compute_end(AvailabilityModel& availability, WorkerId k, Seconds start_s, double flops,
                                double peak_flops);

}  // namespace omnilearn::sim
