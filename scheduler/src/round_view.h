// RoundView: validated RoundFacts indexed for the policies (kinds by index, throughputs and held counts as
// vectors), and the pieces the policies share: the arrival and LAS orders, the kind choice, the
// final placement and the factory. Private to the scheduler module. Pure values: thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/scheduler/round_facts.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::scheduler::detail {

struct RoundView {
  std::vector<std::string> kinds;         // ClusterFacts::kinds()
  std::vector<int> capacity;              // devices per kind
  std::vector<std::size_t> host_kind;     // kind index of each host
  std::vector<std::vector<double>> tput;  // [job][kind]: samples/s of one worker, 0 where it cannot run
  std::vector<std::vector<int>> held;     // [job][kind]: devices held now
  std::vector<bool> balances;             // [job]: JobFacts::balances_batches

  // Requires validate_round_facts(facts) to have passed.
  explicit RoundView(const RoundFacts& facts);

  std::size_t kind_count() const { return kinds.size(); }
  // Devices of the kinds job j can run on, among `free`.
  int usable(std::size_t j, const std::vector<int>& free) const;
  // The job's best per-worker throughput over all kinds (> 0 for validated facts).
  double best_throughput(std::size_t j) const;
  // The job's samples/s on `counts` (effective_throughput, from the vectors above).
  double rate(std::size_t j, const std::vector<int>& counts) const;
};

// The facts with devices two jobs share (packing) held by one: on each shared device the earlier arrival (ties: the
// earlier in RoundFacts::jobs) keeps it, the other (the guest) is given as holding nothing. `shared[j]` is set to the
// device job j shares, if any. An error naming the job for a device three jobs hold, or a sharing job that holds
// more than one device. For policies that pack; the result still needs validate_round_facts.
Result<RoundFacts> unshare_devices(const RoundFacts& facts, std::vector<std::optional<DeviceSlot>>& shared);

// The fractions (of `a`, of `b`) of the pair keyed `a`, `b` on `kind` in facts.packed_pairs, if listed.
std::optional<std::pair<double, double>> pair_fractions(const RoundFacts& facts, const std::string& kind,
                                                        const std::string& a, const std::string& b);

// Each job's current slots.
std::vector<std::vector<DeviceSlot>> current_slots(const RoundFacts& facts);

// Job indices by arrival time, then id.
std::vector<std::size_t> arrival_order(const RoundFacts& facts);

// Tiresias's queue of a job: the number of thresholds at or below its attained service.
std::size_t las_queue(double attained_service, const std::vector<double>& thresholds);

// Job indices by LAS priority: queue (0 for a job that holds nothing and has waited las_starvation_s or more), then
// arrival time, then id.
std::vector<std::size_t> las_order(const RoundFacts& facts, const SchedulerOptions& options);

// How choose_kinds picks among kinds: by the job's per-worker speed (fastest first; ties: the most free) or by free
// devices alone, speeds unseen (the heterogeneity-blind baselines fifo-blind and las-blind).
enum class KindChoice { kFastest, kMostFree };

// Choice of `n` devices for job j among `free` (by kind): it keeps the kinds it holds (up to n; beyond n it gives up
// those of the kinds it holds fewest of); a job holding nothing takes a single kind when one has n free (kFastest:
// the fastest such kind, ties to the most free; kMostFree: the one with the most free); the rest comes from the
// kinds it holds, then the other kinds in the same preference. Only kinds it can run on. Returns counts by kind, or
// an empty vector when fewer than n usable devices are free. Ties at the end go to the lower kind index.
std::vector<int> choose_kinds(const RoundView& view, std::size_t j, int n, const std::vector<int>& free,
                              KindChoice choice);

// Adds `counts` to `free` (both by kind).
void give_counts(std::vector<int>& free, const std::vector<int>& counts);
// Subtracts `counts` from `free` (both by kind).
void take_counts(std::vector<int>& free, const std::vector<int>& counts);
int total(const std::vector<int>& counts);

// Every policy's last step: places `counts` (by job, by kind) on the cluster, the jobs taking free slots in `order`,
// with options.placement (place_jobs), and returns the allocation that makes (make_allocation).
Allocation place_counts(const RoundFacts& facts, const SchedulerOptions& options,
                        const std::vector<std::vector<int>>& counts, const std::vector<std::size_t>& order);

// The base of the policies that keep their options and validate each round's facts: the cluster validated last is
// remembered, so that its checks are skipped while it stays the same (decide() is called round after round).
class ValidatingPolicy : public SchedulingPolicy {
 protected:
  explicit ValidatingPolicy(SchedulerOptions options) : options_(std::move(options)) {}
  const SchedulerOptions& options() const { return options_; }
  // validate_round_facts(facts), the cluster's checks skipped when its hosts equal those validated last.
  Status validate(const RoundFacts& facts) const { return validate_round_facts(facts, checked_); }

 private:
  SchedulerOptions options_;
  mutable ValidatedCluster checked_;
};

// Every policy's make_*_policy: an error for invalid `options` (validate_scheduler_options), else a `Policy` built
// from them.
template <class Policy>
Result<std::unique_ptr<SchedulingPolicy>> make_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<Policy>(options));
}

}  // namespace omnilearn::scheduler::detail
