// Goodput: devices and batches chosen for cluster goodput, in Pollux's spirit; docs/scheduler.md has the rule.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

using detail::RoundView;

constexpr double kFloor = 1e-3;  // Pollux's offset in its power mean of speedups (pollux.py: p = -1)

// Job j's cost on n devices, n = 0..max_workers: 1 / (speedup + kFloor), Pollux's power mean with p = -1 being the
// number of jobs over the sum of these. The speedup is the job's goodput on n devices over its goodput on its fair
// share (the cluster's devices over the jobs present, within [1, max_workers]; Pollux's fair-share base), times
// Pollux's restart penalty when n is not what it holds: max(age - restarts x delay, 0) / (age + delay), delay the
// checkpoint and restore seconds. Counts below min_workers (but 0) cost as much as 0.
std::vector<double> job_costs(const RoundFacts& facts, const RoundView& view, const SchedulerOptions& options,
                              std::size_t j) {
  const JobFacts& job = facts.jobs[j];
  const auto max_n = static_cast<std::size_t>(job.max_workers);
  std::vector<double> goodput(max_n + 1, 0.0);
  for (std::size_t n = 1; n <= max_n; ++n) {
    goodput[n] = job.goodput_by_workers.empty() ? static_cast<double>(n) * view.best_throughput(j)
                                                : job.goodput_by_workers[n - 1];
  }
  const int devices = facts.cluster.total_slots();
  const auto jobs = static_cast<int>(facts.jobs.size());
  const auto fair = static_cast<std::size_t>(std::clamp((devices + jobs - 1) / jobs, 1, job.max_workers));
  const double base = goodput[fair] > 0.0 ? goodput[fair] : 1.0;
  const double age_s = facts.now_s - job.arrival_s;
  const double delay_s = options.checkpoint_s + options.restore_s;
  const double penalty = delay_s > 0.0 ? std::max(age_s - job.restarts * delay_s, 0.0) / (age_s + delay_s) : 1.0;
  const auto held = static_cast<std::size_t>(detail::total(view.held[j]));
  std::vector<double> cost(max_n + 1, 1.0 / kFloor);
  for (std::size_t n = static_cast<std::size_t>(job.min_workers); n <= max_n; ++n) {
    cost[n] = 1.0 / (goodput[n] / base * (n == held ? 1.0 : penalty) + kFloor);
  }
  return cost;
}

// Device counts by job: from none, repeatedly the step (job j from n_j to n' devices, within the free ones and
// [min_workers, max_workers]) that lowers the sum of costs most per device added, while one lowers it. Ties: the
// earlier job in `order`, then the smaller step.
std::vector<int> greedy_counts(const std::vector<std::vector<double>>& cost, const std::vector<std::size_t>& order,
                               int free) {
  std::vector<int> n(cost.size(), 0);
  for (;;) {
    double best_rate = 0.0;
    std::size_t best_job = cost.size();
    int best_n = 0;
    for (const std::size_t j : order) {
      const int top = std::min(static_cast<int>(cost[j].size()) - 1, n[j] + free);
      for (int to = n[j] + 1; to <= top; ++to) {
        const double rate = (cost[j][static_cast<std::size_t>(n[j])] - cost[j][static_cast<std::size_t>(to)]) /
                            static_cast<double>(to - n[j]);
        if (rate > best_rate * (1.0 + 1e-12) + 1e-15) best_rate = rate, best_job = j, best_n = to;
      }
    }
    if (best_job == cost.size()) return n;
    free -= best_n - n[best_job];
    n[best_job] = best_n;
  }
}

class GoodputPolicy final : public detail::ValidatingPolicy {
 public:
  explicit GoodputPolicy(SchedulerOptions options) : ValidatingPolicy(std::move(options)) {}
  std::string_view name() const override { return "goodput"; }
  bool adapts_batches() const override { return true; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    OMNI_RETURN_IF_ERROR(validate(facts));
    const RoundView view(facts);
    const std::size_t jobs = facts.jobs.size();
    // Pollux's order: least attained service first, then arrival.
    std::vector<std::size_t> order = detail::arrival_order(facts);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return facts.jobs[a].attained_service() < facts.jobs[b].attained_service();
    });
    std::vector<std::vector<double>> cost(jobs);
    for (std::size_t j = 0; j < jobs; ++j) cost[j] = job_costs(facts, view, options(), j);
    const std::vector<int> n = greedy_counts(cost, order, facts.cluster.total_slots());
    // Kinds, the largest jobs first (then in order); a job whose kinds cannot hold its count gets none.
    std::vector<std::size_t> by_size = order;
    std::stable_sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) { return n[a] > n[b]; });
    std::vector<int> free = view.capacity;
    std::vector<std::vector<int>> counts(jobs, std::vector<int>(view.kind_count(), 0));
    for (const std::size_t j : by_size) {
      if (n[j] == 0) continue;
      std::vector<int> c = detail::choose_kinds(view, j, n[j], free, detail::KindChoice::kFastest);
      if (c.empty()) continue;
      detail::take_counts(free, c);
      counts[j] = std::move(c);
    }
    Allocation out = detail::place_counts(facts, options(), counts, by_size);
    for (std::size_t j = 0; j < jobs; ++j) {
      const auto got = out.jobs[j].slots.size();
      if (got > 0 && !facts.jobs[j].batch_by_workers.empty()) {
        out.jobs[j].global_batch = facts.jobs[j].batch_by_workers[got - 1];
      }
    }
    return out;
  }
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_goodput_policy(const SchedulerOptions& options) {
  return detail::make_policy<GoodputPolicy>(options);
}

}  // namespace omnilearn::scheduler
