#include "omnilearn/run/asp_schedule.h"

#include <algorithm>
#include <limits>

namespace omnilearn::run {

AspSchedule::AspSchedule(const scenarios::AspSpec& spec, std::size_t workers)
    : ssp_(spec.rule == scenarios::AspRule::kSsp),
      per_epoch_(spec.pull == scenarios::AspPull::kPerEpoch),
      bound_(spec.staleness_bound),
      finished_(workers, 0),
      held_(workers, false) {}

void AspSchedule::pushed(WorkerId k, bool epoch_ended) {
  ++finished_[k];
  if (per_epoch_ && epoch_ended) barrier_ = true;
  if (!held_[k]) {
    held_[k] = true;
    order_.push_back(k);
  }
}

std::int64_t AspSchedule::slowest_live(const LiveFn& live, WorkerId except) const {
  std::int64_t slowest = std::numeric_limits<std::int64_t>::max();
  for (WorkerId j = 0; j < finished_.size(); ++j) {
    if (j != except && live(j)) slowest = std::min(slowest, finished_[j]);
  }
  return slowest;
}

bool AspSchedule::ssp_allows(WorkerId k, const LiveFn& live) const {
  return !ssp_ || finished_[k] - bound_ <= std::min(finished_[k], slowest_live(live, k));
}

std::vector<WorkerId> AspSchedule::release(const LiveFn& live, bool& barrier_opened) {
  barrier_opened = false;
  std::vector<WorkerId> out;
  if (barrier_) {
    for (WorkerId j = 0; j < held_.size(); ++j) {
      if (live(j) && !held_[j]) return out;  // a live worker has not reached the barrier yet
    }
    barrier_ = false;
    barrier_opened = true;
  }
  std::vector<WorkerId> still;
  for (const WorkerId k : order_) {
    if (ssp_allows(k, live)) {
      out.push_back(k);
      held_[k] = false;
    } else {
      still.push_back(k);
    }
  }
  order_ = std::move(still);
  return out;
}

std::vector<WorkerId> AspSchedule::release_all() {
  std::vector<WorkerId> out = std::move(order_);
  order_.clear();
  for (const WorkerId k : out) held_[k] = false;
  barrier_ = false;
  return out;
}

void AspSchedule::rejoin(WorkerId k, const LiveFn& live) {
  const std::int64_t slowest = slowest_live(live, k);
  if (slowest != std::numeric_limits<std::int64_t>::max()) finished_[k] = std::max(finished_[k], slowest);
}

}  // namespace omnilearn::run
