// FIFO: first come, first served; docs/scheduler.md has the rule.
#include <algorithm>

#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

class FifoPolicy final : public SchedulingPolicy {
 public:
  explicit FifoPolicy(SchedulerOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "fifo"; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    OMNI_RETURN_IF_ERROR(validate_round_facts(facts, checked_));
    const detail::RoundView view(facts);
    std::vector<int> free = view.capacity;
    std::vector<std::vector<int>> counts(facts.jobs.size(), std::vector<int>(view.kind_count(), 0));
    // Running jobs keep their devices: FIFO never preempts or resizes.
    for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
      counts[j] = view.held[j];
      detail::take_counts(free, counts[j]);
    }
    // Waiting jobs start in arrival order; the first that does not fit blocks those behind it.
    const std::vector<std::size_t> order = detail::arrival_order(facts);
    for (std::size_t j : order) {
      if (!facts.jobs[j].current.empty()) continue;
      const int usable = view.usable(j, free);
      if (usable < facts.jobs[j].min_workers) break;
      counts[j] = detail::choose_agnostic(view, j, std::min(facts.jobs[j].max_workers, usable), free);
      detail::take_counts(free, counts[j]);
    }
    return detail::place_counts(facts, options_, counts, order);
  }

 private:
  SchedulerOptions options_;
  mutable ValidatedCluster checked_;  // the cluster validated last (decide() is called round after round)
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_fifo_policy(const SchedulerOptions& options) {
  return detail::make_policy<FifoPolicy>(options);
}

}  // namespace omnilearn::scheduler
