// When several jobs on one cluster stop, on the run layer's one stop rule (stop_rule.h), for the simulator and the
// testbed alike: a job once the samples it trained reach what it must train; the run on a stop request or at its time
// limit. Plain values: thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>

#include "omnilearn/base/units.h"
#include "omnilearn/run/stop_reason.h"
#include "omnilearn/run/stop_rule.h"

namespace omnilearn::run {

// Whether a job that trained `samples` in `steps` has trained its `total_samples` (samples come in whole batches, so
// reaching the rounded-up budget is reaching the total).
inline bool job_trained(std::int64_t steps, double samples, double total_samples) {
  StopLimits limits;
  limits.sample_budget = static_cast<std::int64_t>(std::ceil(total_samples));
  return StopRule(limits).progress(steps, static_cast<std::int64_t>(samples)) != StopReason::kNone;
}

// A run of several jobs: kRequested once `requested` says so, kTime at max_time_s (0: no limit) of the back end's
// clock, kNone while it goes on.
inline StopReason jobs_run_stop(Seconds now_s, Seconds max_time_s, const std::function<bool()>& requested) {
  StopLimits limits;
  limits.time_budget_s = max_time_s;
  StopRule rule(limits);
  if (requested && requested()) rule.stop(StopReason::kRequested);
  rule.elapsed(now_s);
  return rule.reason();
}

}  // namespace omnilearn::run
