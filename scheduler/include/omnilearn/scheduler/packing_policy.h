// Packing: two one-worker jobs share one device (space sharing) when both gain, after Gavel (Narayanan et al.,
// "Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning Workloads", OSDI 2020, section 3.1: a pair is
// worth packing when the fractions of their speeds alone they keep sum to more than 1). This is a pass run after
// any policy decides, not Gavel's max_min_fairness_packed LP (docs/scheduler.md, "Packing"):
// - on a device two jobs share in the facts, the earlier arrival (ties: the earlier in RoundFacts::jobs) is the
//   host, the other the guest; the base policy decides as if guests held nothing;
// - then, in arrival order, a job the base policy left waiting, with min_workers 1 and a packing key, is packed only
//   if no device of a kind it can run on is free: onto a device the base policy gave to a job holding that one
//   device alone (not already packed, with a packing key), where RoundFacts::packed_pairs gives the pair on that
//   kind fractions summing to more than 1. It keeps the device it already shares (no restart cost) if that one
//   qualifies; otherwise the largest sum wins, ties to the lower host and slot.
// Multi-worker jobs are never packed. An allocation with packing gives a packed slot to exactly two jobs.
#pragma once

#include <memory>

#include "omnilearn/base/status.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::scheduler {

// Wraps `base` with the packing pass; name() is the base's.
std::unique_ptr<SchedulingPolicy> make_packing_policy(std::unique_ptr<SchedulingPolicy> base,
                                                      const SchedulerOptions& options);

}  // namespace omnilearn::scheduler
