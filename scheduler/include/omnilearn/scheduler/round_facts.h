// RoundFacts: what a scheduling policy knows at the start of a round: the cluster (hosts, each with one device
// kind and a number of device slots) and the jobs present (demand, throughput per kind, service so far, what they
// hold now). The caller (a simulator or testbed driving several jobs) fills them; the scheduler reads no clock.
// Plain values: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::scheduler {

// One host: `slots` devices of one kind (a GPU model, a CPU class; any name the jobs' throughputs use).
struct HostFacts {
  std::string name;
  std::string kind;
  int slots = 1;

  friend bool operator==(const HostFacts&, const HostFacts&) = default;
};

struct ClusterFacts {
  std::vector<HostFacts> hosts;

  // The device kinds present, sorted by name: the order every per-kind vector of this module uses.
  std::vector<std::string> kinds() const;
  // Each host's kind as an index into `kinds` (kinds()).
  std::vector<std::size_t> kind_of_hosts(const std::vector<std::string>& kinds) const;
  // Devices of each kind, in kinds() order.
  std::vector<int> capacity_by_kind() const;
  int total_slots() const;
};

// One device: slot `slot` (0-based) of host `host` (an index into ClusterFacts::hosts).
struct DeviceSlot {
  std::size_t host = 0;
  int slot = 0;

  friend auto operator<=>(const DeviceSlot&, const DeviceSlot&) = default;
};

struct JobFacts {
  std::string id;                  // unique among the round's jobs; errors name it
  Seconds arrival_s = 0.0;         // when the job was submitted; <= RoundFacts::now_s
  int min_workers = 1;             // a rigid job has min_workers == max_workers (the workers it requested)
  int max_workers = 1;             // elastic jobs run with any count in [min_workers, max_workers]
  double remaining_samples = 0.0;  // work left; >= 0
  // Samples/s of ONE worker of this job on each kind, by kind name. A kind left out (or 0) is one the job cannot
  // run on (its model does not fit there, say). Every name must be a kind of the cluster.
  std::map<std::string, double> throughput_per_worker;
  // Whether the job's batch controller balances batches across its workers (OmniLearn's): then a set of mixed
  // kinds runs at the sum of its workers' throughputs; otherwise (equal batches) at n x the slowest worker's.
  bool balances_batches = false;
  std::vector<DeviceSlot> current;  // the devices the job holds in the round that ends now; empty when waiting
  // Worker-seconds the job has run on each kind since it arrived (one worker for one second is 1), by kind name.
  // Their sum is the job's attained service (Tiresias's workers x time).
  std::map<std::string, double> service_by_kind;
  // With packing: the part of service_by_kind spent sharing a device with another job, by kind name (gavel-packed
  // weighs a job's time packed apart from its time alone). Empty when it never shared.
  std::map<std::string, double> packed_service_by_kind;
  Seconds waiting_s = 0.0;  // seconds since the job last held devices (since arrival if it never ran)
  // With packing (SchedulerOptions::packing): what RoundFacts::packed_pairs names this job by (its model and
  // batch, say); empty: never packed. Two jobs may then share one device (each holding that one slot).
  std::string packing_key;
  // For the goodput scheduler (goodput_policy.h), when the job's model predicts its goodput (samples of progress/s:
  // throughput x statistical efficiency, Pollux's): goodput_by_workers[n-1] is the best goodput on n devices (as few
  // hosts as hold them) over the global batches the job may train at, batch_by_workers[n-1] that batch. Both
  // max_workers long, or both empty (then the job's goodput is its effective throughput at its own batch).
  std::vector<double> goodput_by_workers;
  std::vector<std::int64_t> batch_by_workers;
  int restarts = 0;  // times the job was preempted, moved or resized so far (the goodput scheduler's restart penalty)

  double attained_service() const;
};

// A job's facts that do not change while it is present: what a back end gives RoundDriver when the job arrives (the
// rest it refreshes each round).
JobFacts fixed_job_facts(std::string id, Seconds arrival_s, int min_workers, int max_workers,
                         std::map<std::string, double> throughput_per_worker, bool balances_batches);

// Two jobs packed on one device of `kind`: the job keyed `key_a` keeps `fraction_a` of its speed alone, `key_b`
// keeps `fraction_b` (scheduler/packing_policy.h).
struct PackedPairFacts {
  std::string kind;
  std::string key_a;
  std::string key_b;
  double fraction_a = 0.0;
  double fraction_b = 0.0;
};

struct RoundFacts {
  Seconds now_s = 0.0;  // the round's start, in the caller's time; only differences with arrival_s are used
  ClusterFacts cluster;
  std::vector<JobFacts> jobs;  // the jobs present: arrived, not finished. Allocation::jobs follows this order
  std::vector<PackedPairFacts> packed_pairs;  // the pairs that may be packed (read only with packing)
};

// Checks everything a policy relies on; the message names the host or job and the field at fault. Required before
// any other function of this module reads the facts (every built-in policy's decide() calls it).
Status validate_round_facts(const RoundFacts& facts);

// The cluster a policy validated last: deciding round after round on one cluster, its hosts are checked once and
// then compared. One per policy; not thread-safe.
struct ValidatedCluster {
  bool valid = false;
  std::vector<HostFacts> hosts;
  std::map<std::string, int> slots_of_kind;  // its devices by kind
  std::vector<std::size_t> first_slot;       // each host's first slot, counting the cluster's slots; then the total
};
// validate_round_facts(facts), skipping the cluster's checks when its hosts equal `last`'s; records them when valid.
Status validate_round_facts(const RoundFacts& facts, ValidatedCluster& last);

// Devices of each kind among `slots`, in cluster.kinds() order.
std::vector<int> count_by_kind(const ClusterFacts& cluster, const std::vector<DeviceSlot>& slots);

// A job's samples/s on a set with counts[k] devices of kind k, its one-worker throughput there being
// per_worker[k]: the sum of the workers' throughputs when the job balances its batches, else the number of workers
// times the slowest one's throughput (equal batches wait for the slowest). 0 for an empty set or one holding a kind
// the job cannot run on (per_worker 0).
double effective_throughput(std::span<const double> per_worker, std::span<const int> counts, bool balances_batches);
// The same for `job` on `slots` of `cluster`.
double effective_throughput(const JobFacts& job, const ClusterFacts& cluster, const std::vector<DeviceSlot>& slots);

}  // namespace omnilearn::scheduler
