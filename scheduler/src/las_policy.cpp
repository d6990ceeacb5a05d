// Tiresias's discretised 2D-LAS, on the fastest kinds (las) or kinds chosen speed-blind (las-blind);
// docs/scheduler.md has the rule.
#include <algorithm>

#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

class LasPolicy final : public detail::ValidatingPolicy {
 public:
  LasPolicy(SchedulerOptions options, bool blind) : ValidatingPolicy(std::move(options)), blind_(blind) {}
  std::string_view name() const override { return blind_ ? "las-blind" : "las"; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    OMNI_RETURN_IF_ERROR(validate(facts));
    const detail::RoundView view(facts);
    const detail::KindChoice choice = blind_ ? detail::KindChoice::kMostFree : detail::KindChoice::kFastest;
    const std::vector<std::size_t> order = detail::las_order(facts, options());
    std::vector<int> free = view.capacity;
    std::vector<std::vector<int>> counts(facts.jobs.size(), std::vector<int>(view.kind_count(), 0));
    // In priority order, every job that fits gets its minimum; one that does not fit lets the next ones try.
    for (std::size_t j : order) {
      std::vector<int> c = detail::choose_kinds(view, j, facts.jobs[j].min_workers, free, choice);
      if (c.empty()) continue;
      detail::take_counts(free, c);
      counts[j] = std::move(c);
    }
    // Then, in the same order, elastic jobs grow toward their maximum with what is left.
    for (std::size_t j : order) {
      const int have = detail::total(counts[j]);
      if (have == 0 || have == facts.jobs[j].max_workers) continue;
      detail::give_counts(free, counts[j]);
      const int n = std::min(facts.jobs[j].max_workers, view.usable(j, free));
      counts[j] = detail::choose_kinds(view, j, n, free, choice);
      detail::take_counts(free, counts[j]);
    }
    return detail::place_counts(facts, options(), counts, order);
  }

 private:
  bool blind_;
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_las_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<LasPolicy>(options, /*blind=*/false));
}

Result<std::unique_ptr<SchedulingPolicy>> make_las_blind_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<LasPolicy>(options, /*blind=*/true));
}

}  // namespace omnilearn::scheduler
