// Builders for hand-made RoundFacts in the scheduler's tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/scheduler/scheduler_registry.h"

namespace omnilearn::scheduler::testing {

inline JobFacts job(std::string id, Seconds arrival_s, int min_workers, int max_workers,
                    std::map<std::string, double> throughput, bool balances = false) {
  JobFacts j = fixed_job_facts(std::move(id), arrival_s, min_workers, max_workers, std::move(throughput), balances);
  j.remaining_samples = 1e9;
  return j;
}

// Slots 0..n-1 of host h.
inline std::vector<DeviceSlot> slots_of(std::size_t h, int n, int first = 0) {
  std::vector<DeviceSlot> s;
  for (int i = first; i < first + n; ++i) s.push_back({h, i});
  return s;
}

// Devices of each kind, by name, in `a`.
inline std::map<std::string, int> kinds_of(const ClusterFacts& cluster, const JobAllocation& a) {
  std::map<std::string, int> n;
  for (const DeviceSlot& s : a.slots) ++n[cluster.hosts[s.host].kind];
  return n;
}

inline std::unique_ptr<SchedulingPolicy> make(const std::string& name, const SchedulerOptions& options = {}) {
  auto p = make_default_scheduler_registry().make(name, options);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return std::move(*p);
}

inline Allocation decide_ok(SchedulingPolicy& policy, const RoundFacts& facts) {
  auto a = policy.decide(facts);
  EXPECT_TRUE(a.is_ok()) << policy.name() << ": " << a.status().message();
  return a.is_ok() ? *a : Allocation{};
}

// Feeds an allocation back as the next round's facts: `current`, service by kind (and packed service, for a job
// sharing its one device) and waiting time over round_s.
inline void advance(RoundFacts& facts, const Allocation& a, Seconds round_s) {
  for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
    JobFacts& job = facts.jobs[j];
    job.current = a.jobs[j].slots;
    for (const DeviceSlot& s : job.current) {
      const std::string& kind = facts.cluster.hosts[s.host].kind;
      job.service_by_kind[kind] += round_s;
      for (std::size_t other = 0; other < facts.jobs.size(); ++other) {
        if (other != j && a.jobs[other].slots == std::vector<DeviceSlot>{s}) job.packed_service_by_kind[kind] += round_s;
      }
    }
    job.waiting_s = job.current.empty() ? job.waiting_s + round_s : 0.0;
  }
  facts.now_s += round_s;
}

}  // namespace omnilearn::scheduler::testing
