// Gavel's heterogeneity-aware max-min fairness: the LP (max_min_fairness.h) and the round mechanism
// (round_mechanism.h); docs/scheduler.md has the rule.
#include <algorithm>

#include "omnilearn/scheduler/max_min_fairness.h"
#include "omnilearn/scheduler/round_mechanism.h"
#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

class GavelPolicy final : public SchedulingPolicy {
 public:
  explicit GavelPolicy(SchedulerOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "gavel"; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    OMNI_RETURN_IF_ERROR(validate_round_facts(facts));
    const detail::RoundView view(facts);
    const std::size_t jobs = facts.jobs.size();
    MaxMinProblem problem{view.capacity, std::vector<int>(jobs, 0), view.tput};
    for (std::size_t j = 0; j < jobs; ++j) {
      // Gavel runs a job on one kind per round at a fixed size: the largest in [min, max] that one kind holds.
      int largest = 0;
      for (std::size_t k = 0; k < view.kind_count(); ++k) {
        if (view.tput[j][k] > 0.0) largest = std::max(largest, view.capacity[k]);
      }
      const JobFacts& job = facts.jobs[j];
      if (largest < job.min_workers) {
        return Status::invalid_argument("job '" + job.id + "': min_workers " + std::to_string(job.min_workers) +
                                        " fits no single device kind it can run on (the largest has " +
                                        std::to_string(largest) + "); gavel runs a job on one kind per round");
      }
      problem.workers[j] = std::min(job.max_workers, largest);
    }
    auto fractions = solve_max_min_fairness(problem);
    if (!fractions) return fractions.status();
    // What each job has received: its time on each kind over its time in the system.
    std::vector<std::vector<double>> received(jobs, std::vector<double>(view.kind_count(), 0.0));
    for (std::size_t j = 0; j < jobs; ++j) {
      const double present_s = facts.now_s - facts.jobs[j].arrival_s;
      if (present_s <= 0.0) continue;
      for (std::size_t k = 0; k < view.kind_count(); ++k) {
        auto it = facts.jobs[j].service_by_kind.find(view.kinds[k]);
        if (it != facts.jobs[j].service_by_kind.end()) received[j][k] = it->second / problem.workers[j] / present_s;
      }
    }
    const std::vector<int> kind = assign_round(fractions->x, received, problem.workers, view.capacity);
    std::vector<std::vector<int>> counts(jobs, std::vector<int>(view.kind_count(), 0));
    for (std::size_t j = 0; j < jobs; ++j) {
      if (kind[j] >= 0) counts[j][static_cast<std::size_t>(kind[j])] = problem.workers[j];
    }
    return detail::place_counts(facts, options_, counts, detail::arrival_order(facts));
  }

 private:
  SchedulerOptions options_;
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_gavel_policy(const SchedulerOptions& options) {
  return detail::make_policy<GavelPolicy>(options);
}

}  // namespace omnilearn::scheduler
