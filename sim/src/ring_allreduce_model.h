// The analytic form of the ring all-reduce flow model, for rings too large to simulate flow by flow: max-min fair
// sharing of one backbone by one flow per worker, each capped by its own links. Pure function: thread-safe.
#pragma once

#include <vector>

#include "omnilearn/base/units.h"

namespace omnilearn::sim {

// Seconds each flow takes to move `bytes` when flow i may not exceed caps[i] bytes/s and all flows share a
// backbone of `backbone_Bps`, with max-min fairness re-evaluated as flows finish (the model SimGrid's CM02
// network model solves for the same flows on the star platform). Latency is not included.
std::vector<Seconds> max_min_flow_times(const std::vector<double>& caps, double backbone_Bps, double bytes);

// The CPU-quota term of a ring all-reduce among processes held to CPU shares (of one core) by CFS quotas with
// period `period_s`: each ring step waits for its most throttled participant (share s < 1) to get CPU again, on
// average (1 - s) / 2 of its period (lengthened, as the testbed does, so that the quota s * period is at least
// 1 ms); the others, idle while they waited for it, still hold quota. Returns `ring_steps` times that wait; 0 when
// every share is >= 1 or period_s is 0. (Taking the expected maximum over all throttled participants instead
// overestimated the testbed's all-reduce by 30-60% on a quiet host.)
Seconds quota_ring_wait_s(const std::vector<double>& shares, Seconds period_s, std::size_t ring_steps);

}  // namespace omnilearn::sim
