// CollectiveRunner: the flow-level execution of a collective schedule (collective_model.h) on a SimGrid platform:
// every flow of a phase is a Comm between two hosts, started together, so links and switches share bandwidth by
// SimGrid's network model. Call from an actor, inside the engine run; simulation thread only.
#pragma once

#include <simgrid/forward.h>

#include <vector>

#include "collective_model.h"
#include "omnilearn/base/units.h"

namespace omnilearn::sim {

// Runs `schedule` among `hosts` (hosts[i] is participant i) from the calling actor, phase after phase: the phase's
// flows concurrently, then its extra hop latencies (each the longest route latency among its flows), the whole
// phase `repeat` times (the first one simulated, the others as the same duration again: the network holds nothing
// else meanwhile). Returns the simulated seconds it took.
Seconds run_schedule(const CollectiveSchedule& schedule, const std::vector<simgrid::s4u::Host*>& hosts);

}  // namespace omnilearn::sim
