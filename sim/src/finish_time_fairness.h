// Finish-time fairness (Themis, Mahajan et al., NSDI 2020): a job's rho is its completion time over T_id, the time it
// would take on its fair share of the cluster, 1/N of each kind where N is the number of jobs it met (itself
// included) averaged over its life (docs/jobs.md, "Finish-time fairness"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/sim/cluster_options.h"

namespace omnilearn::sim {

// One device kind of the cluster, its groups merged.
struct FairShareKind {
  std::string kind;
  double devices = 0.0;
  std::int64_t largest_node = 0;  // devices on its largest node
  double bandwidth_Bps = 0.0;     // its slowest node link
  Seconds latency_s = 0.0;        // its longest node latency
};

// The kinds of `cluster` (sorted by name); a group without a link uses the defaults given.
std::vector<FairShareKind> fair_share_kinds(const scenarios::DeviceCluster& cluster, double default_bandwidth_Bps,
                                            Seconds default_latency_s);

// What T_id needs of a job.
struct FairShareJob {
  std::int64_t workers = 1;       // requested
  std::int64_t global_batch = 1;  // samples per step
  double total_samples = 0.0;
  double gradient_bytes = 0.0;
  bool balances_batches = false;             // its batch policy is not `uniform`
  std::map<std::string, double> throughput;  // one worker's samples/s per kind, at global_batch / workers
};

// T_id: the job's time alone on devices_k / contention of each kind (fractions are time slices), taking its workers
// fastest kind first; whole steps, each computing then all-reducing as the simulator does. Requires contention >= 1
// and a throughput for every kind.
Seconds fair_share_time(const FairShareJob& job, const std::vector<FairShareKind>& kinds, double contention);

// The number of jobs present (arrived, not finished; a job not finished is present until stop_s) over time,
// integrated once from the jobs' arrivals and ends, sorted: each job's average costs a binary search, not a pass over
// every job.
class ContentionProfile {
 public:
  ContentionProfile(const std::vector<JobOutcome>& jobs, Seconds stop_s);
  // N of `job` (one of the jobs given): the jobs present averaged over [its arrival, its end, or stop_s]; 1 when that
  // is empty.
  double average(const JobOutcome& job) const;

 private:
  double integral(Seconds t) const;  // of the jobs present from the first event to t
  Seconds until(const JobOutcome& o) const { return o.finished() ? o.end_s : stop_s_; }

  Seconds stop_s_;
  std::vector<Seconds> times_;    // the distinct event times, ascending
  std::vector<double> before_;    // the integral up to times_[i]
  std::vector<double> present_;   // jobs present from times_[i] to the next
};

// Fills contention and fair_s of each finished job of `summary` (jobs[i] describes summary.jobs[i]) and mean_rho,
// max_rho over them (0 when none finished).
void add_finish_time_fairness(ClusterSummary& summary, const std::vector<FairShareJob>& jobs,
                              const std::vector<FairShareKind>& kinds, Seconds stop_s);

}  // namespace omnilearn::sim
