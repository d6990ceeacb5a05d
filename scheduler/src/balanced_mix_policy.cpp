// Ours: LAS's order, each job's devices valued at its effective throughput, mixed kinds for the jobs whose batch
// controller balances them; docs/scheduler.md has the rule.
#include <algorithm>
#include <numeric>

#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

using detail::RoundView;

// Kind indices by the job's per-worker throughput, fastest first (ties: lower index); kinds it cannot run on left out.
std::vector<std::size_t> fastest_kinds(const RoundView& view, std::size_t j) {
  std::vector<std::size_t> kinds;
  for (std::size_t k = 0; k < view.kind_count(); ++k) {
    if (view.tput[j][k] > 0.0) kinds.push_back(k);
  }
  std::stable_sort(kinds.begin(), kinds.end(),
                   [&](std::size_t a, std::size_t b) { return view.tput[j][a] > view.tput[j][b]; });
  return kinds;
}

// The n fastest free devices for job j, starting from `counts` (devices it keeps).
std::vector<int> top_up_fastest(const RoundView& view, std::size_t j, int n, const std::vector<int>& free,
                                std::vector<int> counts) {
  for (std::size_t k : fastest_kinds(view, j)) {
    counts[k] += std::min(n - detail::total(counts), free[k] - counts[k]);
  }
  return counts;
}

// The devices job j starts the round with: n of them, or none when fewer are free.
//  - balancing job: what it holds (beyond n, its slowest given up), then the fastest free devices;
//  - equal-batch job: n of a kind it holds, if that kind has room; else n of the fastest single kind with room;
//    when no kind has room, the n fastest free devices, at n x the slowest one's throughput.
std::vector<int> admit(const RoundView& view, std::size_t j, int n, const std::vector<int>& free) {
  if (view.usable(j, free) < n) return {};
  const std::size_t kinds = view.kind_count();
  std::vector<int> counts(kinds, 0);
  if (view.balances[j]) {
    for (std::size_t k = 0; k < kinds; ++k) counts[k] = std::min(view.held[j][k], free[k]);
    const std::vector<std::size_t> fast = fastest_kinds(view, j);
    for (auto it = fast.rbegin(); it != fast.rend() && detail::total(counts) > n; ++it) {
      counts[*it] -= std::min(counts[*it], detail::total(counts) - n);
    }
    return top_up_fastest(view, j, n, free, std::move(counts));
  }
  std::size_t best = kinds;
  for (std::size_t k = 0; k < kinds; ++k) {
    if (view.held[j][k] > 0 && free[k] >= n) best = k;  // a running job is not moved
  }
  const bool kept = best < kinds;
  for (std::size_t k = 0; k < kinds && !kept; ++k) {
    if (view.tput[j][k] <= 0.0 || free[k] < n) continue;
    if (best == kinds || view.tput[j][k] > view.tput[j][best]) best = k;
  }
  if (best < kinds) {
    counts[best] = n;
    return counts;
  }
  return top_up_fastest(view, j, n, free, std::move(counts));
}

class BalancedMixPolicy final : public detail::ValidatingPolicy {
 public:
  explicit BalancedMixPolicy(SchedulerOptions options) : ValidatingPolicy(std::move(options)) {}
  std::string_view name() const override { return "balanced-mix"; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    OMNI_RETURN_IF_ERROR(validate(facts));
    const RoundView view(facts);
    const std::size_t jobs = facts.jobs.size();
    const std::vector<std::size_t> order = detail::las_order(facts, options());
    std::vector<int> free = view.capacity;
    std::vector<std::vector<int>> counts(jobs, std::vector<int>(view.kind_count(), 0));
    // 1. In LAS order, every job that fits gets its minimum.
    for (std::size_t j : order) {
      std::vector<int> c = admit(view, j, facts.jobs[j].min_workers, free);
      if (c.empty()) continue;
      detail::take_counts(free, c);
      counts[j] = std::move(c);
    }
    // 2. In the same order, a running job gets back what it held, if free and faster (no restart).
    for (std::size_t j : order) {
      if (detail::total(counts[j]) == 0) continue;
      std::vector<int> back(view.kind_count(), 0);
      for (std::size_t k = 0; k < view.kind_count(); ++k) back[k] = std::max(0, view.held[j][k] - counts[j][k]);
      std::vector<int> with_back = counts[j];
      detail::give_counts(with_back, back);
      if (std::equal(back.begin(), back.end(), free.begin(), [](int b, int f) { return b <= f; }) &&
          detail::total(with_back) <= facts.jobs[j].max_workers && view.rate(j, with_back) > view.rate(j, counts[j])) {
        detail::take_counts(free, back);
        counts[j] = std::move(with_back);
      }
    }
    // 3. The devices left go, one at a time, where they add the most (see grow()); a running job that would grow
    //    only if the restart pays for itself: restart + remaining / new rate < remaining / rate without growing.
    const std::vector<std::vector<int>> before = counts;
    const std::vector<int> free_before = free;
    std::vector<bool> frozen(jobs, false);
    for (;;) {
      counts = before;
      free = free_before;
      grow(view, facts, order, frozen, counts, free);
      bool reverted = false;
      for (std::size_t j = 0; j < jobs; ++j) {
        if (frozen[j] || counts[j] == before[j] || before[j] != view.held[j]) continue;
        const double remaining = facts.jobs[j].remaining_samples;
        const double restart_s = options().checkpoint_s + options().restore_s;
        if (!(restart_s + remaining / view.rate(j, counts[j]) < remaining / view.rate(j, before[j]))) {
          frozen[j] = true;
          reverted = true;
        }
      }
      if (!reverted) break;
    }
    return detail::place_counts(facts, options(), counts, order);
  }

 private:
  // Gives free devices one at a time to the (job, kind) whose effective throughput grows most, in units of the
  // job's fastest worker (so jobs of different speeds compare); only jobs already running this round, below their
  // maximum, not frozen; only a gain > 0 (an equal-batch job gets a slower device only when its n + 1 workers at
  // the new slowest pace outrun its n at the current one).
  // Ties: the earlier job in `order`, then the lower kind.
  static void grow(const RoundView& view, const RoundFacts& facts, const std::vector<std::size_t>& order,
                   const std::vector<bool>& frozen, std::vector<std::vector<int>>& counts, std::vector<int>& free) {
    for (;;) {
      double best_gain = 1e-12;
      std::size_t best_job = facts.jobs.size(), best_kind = 0;
      for (std::size_t j : order) {
        const int have = detail::total(counts[j]);
        if (frozen[j] || have == 0 || have >= facts.jobs[j].max_workers) continue;
        const double now = view.rate(j, counts[j]);
        for (std::size_t k = 0; k < view.kind_count(); ++k) {
          if (free[k] == 0 || view.tput[j][k] <= 0.0) continue;
          ++counts[j][k];
          const double gain = (view.rate(j, counts[j]) - now) / view.best_throughput(j);
          --counts[j][k];
          if (gain > best_gain) best_gain = gain, best_job = j, best_kind = k;
        }
      }
      if (best_job == facts.jobs.size()) return;
      ++counts[best_job][best_kind];
      --free[best_kind];
    }
  }
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_balanced_mix_policy(const SchedulerOptions& options) {
  return detail::make_policy<BalancedMixPolicy>(options);
}

}  // namespace omnilearn::scheduler
