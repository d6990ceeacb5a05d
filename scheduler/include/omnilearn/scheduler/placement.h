// Placement: turns how many devices of each kind every job gets into concrete device slots on hosts, packed or
// spread, keeping each job on the slots it already holds where it can (a kept slot needs no restart).
// Pure function: thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "omnilearn/scheduler/round_facts.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::scheduler {

// Returns each job's slots (sorted) for `counts[j]` devices of each kind (cluster.kinds() order).
// First every job keeps as many of its `current[j]` slots of each kind as its count allows (when it has more than
// that, pack drops those on the hosts where it has the fewest, spread those where it has the most); then the jobs,
// in `order` (indices of every job, each once), take the rest of their counts from the free slots:
//  - kPack: first the hosts the job is already on; then the host whose free slots fit the rest most tightly
//    (best fit); when none fits it all, the host with the most free slots, and again.
//  - kSpread: one slot at a time, to the host holding the fewest of the job's slots, then the most free slots.
// Ties go to the lower host index, and within a host to the lower slot. Requires that the counts fit the cluster's
// capacity by kind, that `current` holds valid, disjoint slots (validate_round_facts) and that order names every
// job (checked: OMNI_CHECK).
std::vector<std::vector<DeviceSlot>> place_jobs(const ClusterFacts& cluster,
                                                const std::vector<std::vector<DeviceSlot>>& current,
                                                const std::vector<std::vector<int>>& counts,
                                                const std::vector<std::size_t>& order, Placement placement);

}  // namespace omnilearn::scheduler
