#include "round_view.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "omnilearn/base/check.h"
#include "omnilearn/scheduler/placement.h"

namespace omnilearn::scheduler::detail {

RoundView::RoundView(const RoundFacts& facts)
    : kinds(facts.cluster.kinds()), capacity(kinds.size(), 0), host_kind(facts.cluster.kind_of_hosts(kinds)) {
  for (std::size_t h = 0; h < host_kind.size(); ++h) capacity[host_kind[h]] += facts.cluster.hosts[h].slots;
  tput.assign(facts.jobs.size(), std::vector<double>(kinds.size(), 0.0));
  held.assign(facts.jobs.size(), std::vector<int>(kinds.size(), 0));
  for (const JobFacts& job : facts.jobs) balances.push_back(job.balances_batches);
  for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      auto it = facts.jobs[j].throughput_per_worker.find(kinds[k]);
      if (it != facts.jobs[j].throughput_per_worker.end()) tput[j][k] = it->second;
    }
    for (const DeviceSlot& s : facts.jobs[j].current) ++held[j][host_kind[s.host]];
  }
}

int RoundView::usable(std::size_t j, const std::vector<int>& free) const {
  int n = 0;
  for (std::size_t k = 0; k < kinds.size(); ++k) n += tput[j][k] > 0.0 ? free[k] : 0;
  return n;
}

double RoundView::best_throughput(std::size_t j) const { return *std::max_element(tput[j].begin(), tput[j].end()); }

double RoundView::rate(std::size_t j, const std::vector<int>& counts) const {
  return effective_throughput(tput[j], counts, balances[j]);
}

Result<RoundFacts> unshare_devices(const RoundFacts& facts, std::vector<std::optional<DeviceSlot>>& shared) {
  const std::size_t n = facts.jobs.size();
  // Arrival order (stable: ties keep the facts' order).
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return facts.jobs[a].arrival_s < facts.jobs[b].arrival_s; });
  // Who shares what: the first in arrival order is the host, a second the guest; a third is an error.
  std::map<DeviceSlot, std::vector<std::size_t>> holders;
  for (const std::size_t j : order) {
    for (const DeviceSlot& s : facts.jobs[j].current) holders[s].push_back(j);
  }
  RoundFacts out = facts;
  shared.assign(n, std::nullopt);
  for (const auto& [slot, js] : holders) {
    if (js.size() <= 1) continue;
    if (js.size() > 2) {
      return Status::invalid_argument("job '" + facts.jobs[js[2]].id + "': current names slot " +
                                      std::to_string(slot.slot) + " of host " + std::to_string(slot.host) +
                                      ", which two other jobs hold (packing puts at most two jobs on a device)");
    }
    for (const std::size_t j : js) {
      if (facts.jobs[j].current.size() != 1) {
        return Status::invalid_argument("job '" + facts.jobs[j].id +
                                        "': shares a device while holding several (only one-worker jobs are packed)");
      }
      shared[j] = slot;
    }
    out.jobs[js[1]].current.clear();  // the guest
  }
  return out;
}

std::optional<std::pair<double, double>> pair_fractions(const RoundFacts& facts, const std::string& kind,
                                                        const std::string& a, const std::string& b) {
  for (const PackedPairFacts& p : facts.packed_pairs) {
    if (p.kind != kind) continue;
    if (p.key_a == a && p.key_b == b) return std::pair{p.fraction_a, p.fraction_b};
    if (p.key_a == b && p.key_b == a) return std::pair{p.fraction_b, p.fraction_a};
  }
  return std::nullopt;
}

std::vector<std::vector<DeviceSlot>> current_slots(const RoundFacts& facts) {
  std::vector<std::vector<DeviceSlot>> out;
  out.reserve(facts.jobs.size());
  for (const JobFacts& job : facts.jobs) out.push_back(job.current);
  return out;
}

std::vector<std::size_t> arrival_order(const RoundFacts& facts) {
  std::vector<std::size_t> order(facts.jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(facts.jobs[a].arrival_s, facts.jobs[a].id) < std::tie(facts.jobs[b].arrival_s, facts.jobs[b].id);
  });
  return order;
}

std::size_t las_queue(double attained_service, const std::vector<double>& thresholds) {
  return static_cast<std::size_t>(std::upper_bound(thresholds.begin(), thresholds.end(), attained_service) -
                                  thresholds.begin());
}

std::vector<std::size_t> las_order(const RoundFacts& facts, const SchedulerOptions& options) {
  std::vector<std::size_t> queue(facts.jobs.size());
  for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
    const JobFacts& job = facts.jobs[j];
    const bool starved = job.current.empty() && job.waiting_s >= options.las_starvation_s;
    queue[j] = starved ? 0 : las_queue(job.attained_service(), options.las_thresholds);
  }
  std::vector<std::size_t> order = arrival_order(facts);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return queue[a] < queue[b]; });
  return order;
}

std::vector<int> choose_kinds(const RoundView& view, std::size_t j, int n, const std::vector<int>& free,
                              KindChoice choice) {
  const std::size_t kinds = view.kind_count();
  if (view.usable(j, free) < n) return {};
  std::vector<int> counts(kinds, 0);
  for (std::size_t k = 0; k < kinds; ++k) {
    if (view.tput[j][k] > 0.0) counts[k] = std::min(view.held[j][k], free[k]);
  }
  // More than n held: give up devices of the kinds held fewest of first (ties: the higher kind index).
  while (total(counts) > n) {
    std::size_t drop = kinds;
    for (std::size_t k = 0; k < kinds; ++k) {
      if (counts[k] > 0 && (drop == kinds || counts[k] <= counts[drop])) drop = k;
    }
    --counts[drop];
  }
  // Whether kind a is preferred to kind b (both with room left).
  const auto better = [&](std::size_t a, std::size_t b) {
    const int left_a = free[a] - counts[a], left_b = free[b] - counts[b];
    if (choice == KindChoice::kFastest && view.tput[j][a] != view.tput[j][b]) return view.tput[j][a] > view.tput[j][b];
    return left_a > left_b;
  };
  // The preferred candidate with room left, or `kinds` when none.
  const auto pick = [&](auto&& candidate) {
    std::size_t best = kinds;
    for (std::size_t k = 0; k < kinds; ++k) {
      if (view.tput[j][k] > 0.0 && free[k] - counts[k] > 0 && candidate(k) && (best == kinds || better(k, best))) {
        best = k;
      }
    }
    return best;
  };
  if (total(counts) == 0) {
    const std::size_t k = pick([&](std::size_t c) { return free[c] >= n; });
    if (k < kinds) {
      counts[k] = n;
      return counts;
    }
  }
  while (total(counts) < n) {
    std::size_t k = pick([&](std::size_t c) { return view.held[j][c] > 0; });
    if (k == kinds) k = pick([](std::size_t) { return true; });
    OMNI_CHECK(k < kinds, "choose_kinds: usable devices counted but not found");
    counts[k] += std::min(n - total(counts), free[k] - counts[k]);
  }
  return counts;
}

void give_counts(std::vector<int>& free, const std::vector<int>& counts) {
  for (std::size_t k = 0; k < counts.size(); ++k) free[k] += counts[k];
}

void take_counts(std::vector<int>& free, const std::vector<int>& counts) {
  for (std::size_t k = 0; k < counts.size(); ++k) {
    free[k] -= counts[k];
    OMNI_CHECK(free[k] >= 0, "a kind's devices were taken beyond its capacity");
  }
}

int total(const std::vector<int>& counts) { return std::accumulate(counts.begin(), counts.end(), 0); }

Allocation place_counts(const RoundFacts& facts, const SchedulerOptions& options,
                        const std::vector<std::vector<int>>& counts, const std::vector<std::size_t>& order) {
  return make_allocation(facts, options,
                         place_jobs(facts.cluster, current_slots(facts), counts, order, options.placement));
}

}  // namespace omnilearn::scheduler::detail
