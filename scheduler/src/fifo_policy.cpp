// FIFO: first come, first served, with EASY backfilling (fifo) or without (fifo-blind); docs/scheduler.md has the
// rules.
#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

using detail::KindChoice;
using detail::RoundView;

constexpr double kNever = std::numeric_limits<double>::infinity();

// Seconds job j needs to finish on `counts` at its effective throughput there (infinite at 0).
double seconds_left(const RoundFacts& facts, const RoundView& view, std::size_t j, const std::vector<int>& counts) {
  const double rate = view.rate(j, counts);
  return rate > 0.0 ? facts.jobs[j].remaining_samples / rate : kNever;
}

// EASY backfilling's reservation for the blocked head job h: the shadow time (seconds from now when, as the jobs
// given devices end at their estimated times, enough devices of kinds h runs on are free for its min_workers) and the
// extra devices (of h's kinds free then beyond what h needs), which a later job may take however long it runs.
struct Reservation {
  double shadow_s = kNever;
  int extra = 0;
};

Reservation reserve(const RoundFacts& facts, const RoundView& view, std::size_t h,
                    const std::vector<std::vector<int>>& counts, const std::vector<int>& free) {
  std::vector<std::pair<double, std::size_t>> ends;  // (estimated end, job) of the jobs holding devices
  for (std::size_t j = 0; j < counts.size(); ++j) {
    if (detail::total(counts[j]) > 0) ends.emplace_back(seconds_left(facts, view, j, counts[j]), j);
  }
  std::sort(ends.begin(), ends.end());
  const int need = facts.jobs[h].min_workers;
  int avail = view.usable(h, free);
  Reservation r;
  for (const auto& [end_s, j] : ends) {
    if (avail >= need) break;
    if (end_s == kNever) return r;  // never frees enough (a job that cannot progress): no reservation to keep
    avail += view.usable(h, counts[j]);
    r.shadow_s = end_s;
  }
  if (avail < need) return r;
  r.extra = avail - need;
  return r;
}

class FifoPolicy final : public detail::ValidatingPolicy {
 public:
  FifoPolicy(SchedulerOptions options, bool blind) : ValidatingPolicy(std::move(options)), blind_(blind) {}
  std::string_view name() const override { return blind_ ? "fifo-blind" : "fifo"; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    OMNI_RETURN_IF_ERROR(validate(facts));
    const RoundView view(facts);
    const KindChoice choice = blind_ ? KindChoice::kMostFree : KindChoice::kFastest;
    std::vector<int> free = view.capacity;
    std::vector<std::vector<int>> counts(facts.jobs.size(), std::vector<int>(view.kind_count(), 0));
    // Running jobs keep their devices: FIFO never preempts or resizes.
    for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
      counts[j] = view.held[j];
      detail::take_counts(free, counts[j]);
    }
    // Waiting jobs start in arrival order; the first that does not fit is the head. fifo-blind stops there; fifo
    // backfills behind it (EASY): a later job that fits now starts if it is estimated to end by the head's shadow
    // time, or if it takes no more of the head's devices than the extra ones (which it then uses up).
    const std::vector<std::size_t> order = detail::arrival_order(facts);
    std::optional<Reservation> head;
    std::size_t head_job = 0;
    for (std::size_t j : order) {
      if (!facts.jobs[j].current.empty()) continue;
      const int usable = view.usable(j, free);
      if (usable < facts.jobs[j].min_workers) {
        if (blind_) break;
        if (!head) head = reserve(facts, view, head_job = j, counts, free);
        continue;
      }
      std::vector<int> c = detail::choose_kinds(view, j, std::min(facts.jobs[j].max_workers, usable), free, choice);
      if (head && !backfills(facts, view, head_job, j, c, free, *head)) continue;
      detail::take_counts(free, c);
      counts[j] = std::move(c);
    }
    return detail::place_counts(facts, options(), counts, order);
  }

 private:
  // Whether job j may start on `c` (updated to its minimum when only that fits the extra devices) behind head h.
  bool backfills(const RoundFacts& facts, const RoundView& view, std::size_t h, std::size_t j, std::vector<int>& c,
                 const std::vector<int>& free, Reservation& r) const {
    if (seconds_left(facts, view, j, c) <= r.shadow_s) return true;
    if (view.usable(h, c) <= r.extra) {
      r.extra -= view.usable(h, c);
      return true;
    }
    std::vector<int> least = detail::choose_kinds(view, j, facts.jobs[j].min_workers, free, KindChoice::kFastest);
    if (least.empty() || view.usable(h, least) > r.extra) return false;
    r.extra -= view.usable(h, least);
    c = std::move(least);
    return true;
  }

  bool blind_;
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_fifo_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<FifoPolicy>(options, /*blind=*/false));
}

Result<std::unique_ptr<SchedulingPolicy>> make_fifo_blind_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<FifoPolicy>(options, /*blind=*/true));
}

}  // namespace omnilearn::scheduler
