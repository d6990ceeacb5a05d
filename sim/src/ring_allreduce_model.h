// The analytic form of the ring all-reduce flow model, for rings too large to simulate flow by flow: max-min fair
// sharing of one backbone by one flow per worker, each capped by its own links. Pure function: thread-safe.
#pragma once

#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/sim/quota_wait.h"

namespace omnilearn::sim {

// Seconds each flow takes to move `bytes` when flow i may not exceed caps[i] bytes/s and all flows share a
// backbone of `backbone_Bps`, with max-min fairness re-evaluated as flows finish (the model SimGrid's CM02
// network model solves for the same flows on the star platform). Latency is not included.
std::vector<Seconds> max_min_flow_times(const std::vector<double>& caps, double backbone_Bps, double bytes);


}  // namespace omnilearn::sim
