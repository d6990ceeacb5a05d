// RoundDriver: the rounds of several jobs on one cluster, as the simulator (sim/cluster_simulation.h) and the testbed
// (emulator/jobs_testbed.h) both run them: which jobs are present (arrivals join in job order, finished jobs leave),
// their facts kept from round to round (the back end refreshes what it measured), the policy's allocation, each job's
// devices by kind (the allocations.csv rows), and the next round's time. The back end applies the allocation (stops
// and starts its jobs) and says which jobs finished; the driver reads no clock. One per run; not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scheduler/round_facts.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::scheduler {

class RoundDriver {
 public:
  // `arrivals`: every job's arrival time, in job order; `facts_of(j)` gives job j's facts that do not change (id,
  // arrival_s, workers, throughputs; the back end refreshes the rest each round), asked when it arrives (a run of a
  // million jobs holds the facts of those present only). `policy` decides every round.
  RoundDriver(std::unique_ptr<SchedulingPolicy> policy, ClusterFacts cluster, std::vector<Seconds> arrivals,
              std::function<JobFacts(std::size_t)> facts_of, std::vector<PackedPairFacts> packed_pairs = {});

  SchedulingPolicy& policy() { return *policy_; }
  const ClusterFacts& cluster() const { return round_.cluster; }

  // The jobs present at now_s: those arrived by then join (their index passed to `arrived`, in arrival order), and
  // those `finished` says have ended leave. Job indices in job order; facts(i) is present()[i]'s.
  const std::vector<std::size_t>& advance(Seconds now_s, const std::function<bool(std::size_t)>& finished,
                                          const std::function<void(std::size_t)>& arrived);
  const std::vector<std::size_t>& present() const { return present_; }
  JobFacts& facts(std::size_t i) { return round_.jobs[i]; }

  // The policy's allocation for the present jobs (their facts refreshed by the caller), in present()'s order; an
  // empty allocation when no job is present.
  Result<Allocation> decide();

  // The devices of `slots` by kind: (kind, count) for each kind held, in the cluster's kind order.
  std::vector<std::pair<std::string, int>> by_kind(const std::vector<DeviceSlot>& slots) const;

  // When the round after now_s begins: a round later, or, on a cluster `idle` (no job present), the round of the next
  // arrival; never after max_time_s (0: no limit).
  Seconds next_round(Seconds now_s, Seconds round_s, bool idle, Seconds max_time_s) const;
  // Whether every job has arrived and left.
  bool all_done() const { return arrived_ == by_arrival_.size() && present_.empty(); }

 private:
  std::unique_ptr<SchedulingPolicy> policy_;
  std::vector<Seconds> arrivals_;          // every job's arrival, in job order
  std::function<JobFacts(std::size_t)> facts_of_;
  std::vector<std::size_t> by_arrival_;    // job indices by arrival (stable: job order among equals)
  std::size_t arrived_ = 0;                // how many of by_arrival_ have arrived
  std::vector<std::size_t> present_;       // arrived and not finished, in job order
  RoundFacts round_;                       // the round's facts; round_.jobs follows present_
  std::vector<std::string> kinds_;         // the cluster's kinds
  std::vector<std::size_t> kind_of_host_;  // each host's kind index
};

}  // namespace omnilearn::scheduler
